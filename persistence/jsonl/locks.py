"""Advisory ``flock`` locks on a JSONL transcript: who may write it, and whether a writer holds it.

Three parties touch a transcript, and each takes a lock on it (``flock``: a lock belongs to one open
file description, so two descriptors conflict even inside one process):

* a **repair or restore** takes ``LOCK_EX`` on the transcript before its compare-and-swap and keeps
  it through the rename, so no SessionScope writer can be between its checks and its write while
  the file is swapped (issue 21 item 1); it waits at most ``REPAIR_LOCK_WAIT_S`` and then fails
  with a conflict, because a live writer (below) holds its lock for as long as its session is open;
* an **appender** takes ``LOCK_SH`` on the transcript (it excludes a repair, not other writers'
  holds) and ``LOCK_EX`` on the session *folder* (it excludes other appenders between the size
  check and the write).  The folder is used rather than a side lock file: it always exists where a
  transcript does, is never renamed by a repair, and leaves nothing behind in the user's root.
  Once locked, the appender re-checks that its descriptor is still the file at the path (device and
  inode): a repair that swapped the file while it waited has orphaned that inode, and writing there
  would acknowledge an append no reader ever sees;
* a **live writer** (a ``SessionStore`` holding a session) keeps ``LOCK_SH`` on a descriptor of its
  own for the life of the session, released on dispose (issue 21 item 2): upstream opens the
  transcript only per append, so without it an idle writer left no trace the repair guard could
  see.  ``LOCK_SH`` lets that writer's own appends (and another writer's) through, and blocks a
  repair.  ``writer_holds`` is the guard's probe: a non-blocking ``LOCK_EX`` that fails while any
  writer holds its lock (or is mid-append, or a repair runs).

Windows has no ``fcntl``; a file system without ``flock`` (some network mounts: ENOLCK, EOPNOTSUPP)
behaves the same: nothing is locked, the probe answers None ("cannot tell"), and the size and
identity checks still refuse what they can see.

May import: the standard library and ``persistence.errors``.
"""

from __future__ import annotations

import errno
import os
import time

from persistence.errors import SessionConflictError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

# How long a repair or restore waits for writers to let go of the transcript before it gives up:
# an append holds its lock for milliseconds, a live session for as long as it is open.
REPAIR_LOCK_WAIT_S = 2.0
POLL_S = 0.01
# errno values meaning "this file system does not do flock (this way)": treated as "no locking here".
# EBADF: NFS emulates flock with byte-range locks, which refuse LOCK_EX on a descriptor not open for
# writing (a folder, or the read-only descriptor a repair holds): there it locks nothing, as before.
_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP), errno.EINVAL, errno.EBADF}


def supported() -> bool:
    """Whether this platform has ``flock`` at all."""
    return fcntl is not None


def _flock(fd: int, op: int) -> bool:
    """``flock(fd, op)``; False when the file system does not support it (nothing is locked)."""
    assert fcntl is not None
    try:
        fcntl.flock(fd, op)
    except OSError as err:
        if err.errno in _UNSUPPORTED:
            return False
        raise
    return True


def lock_shared(fd: int) -> None:
    """Blocking ``LOCK_SH`` (waits only for a repair's swap or a probe: both are short)."""
    if fcntl is not None:
        _flock(fd, fcntl.LOCK_SH)


def lock_folder(folder: str) -> int | None:
    """Blocking ``LOCK_EX`` on the session folder (appenders exclude each other); the descriptor to close."""
    if fcntl is None:
        return None
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None  # a folder we cannot open (Windows-like file systems): the size check still runs
    try:
        _flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def lock_exclusive_bounded(fd: int, path: str, what: str, wait_s: float | None = None) -> None:
    """``LOCK_EX`` on the transcript for a repair or restore, waiting at most ``wait_s`` (``REPAIR_LOCK_WAIT_S``).

    Raises ``SessionConflictError`` (nothing was changed) when a writer still holds the transcript
    then: a live SessionScope session, or an append that does not finish.
    """
    if fcntl is None:
        return
    wait_s = REPAIR_LOCK_WAIT_S if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    while True:
        try:
            _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # an unsupported file system locks nothing: go on
            return
        except BlockingIOError:
            pass
        if time.monotonic() >= deadline:
            raise SessionConflictError(
                f'{what} of "{path}" was not started: a SessionScope writer holds the log (a live session, or an '
                f"append in progress) and did not let go within {wait_s:g} s; nothing was changed"
            )
        time.sleep(POLL_S)


def same_file(fd: int, path: str) -> bool:
    """Whether ``fd`` is still the file at ``path`` (same device and inode): a swap orphans the old one."""
    st = os.fstat(fd)
    try:
        now = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino)


def writer_holds(path: str) -> bool | None:
    """Whether a SessionScope writer holds the transcript at ``path`` now; None when it cannot be told
    (no ``flock`` here, or the file cannot be opened).  Reads and writes nothing.

    The probe is a non-blocking ``LOCK_EX``, released at once: it fails while a live session keeps
    its shared lock, while an append or a repair runs.  A process that writes without locks (the
    upstream harness) is invisible to it.
    """
    if fcntl is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        try:
            if not _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB):
                return None
        except BlockingIOError:
            return True
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


class WriterHold:
    """A live writer's shared lock on its transcript, kept from attach to dispose."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> bool:
        """Open and share-lock the transcript (again, if a swap replaced it); False when it does not exist."""
        if fcntl is None:
            return False
        if self.fd is not None and same_file(self.fd, self.path):
            return True
        self.release()
        for _attempt in range(3):
            try:
                fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except OSError:
                return False  # not written yet (held from the first append on), or not ours to open
            try:
                lock_shared(fd)
            except OSError:
                os.close(fd)
                return False  # a sign, not a safeguard: the writer's checks do not depend on it
            except BaseException:
                os.close(fd)
                raise
            if same_file(fd, self.path):
                self.fd = fd
                return True
            os.close(fd)  # swapped between the open and the lock: hold the file that is there now
        return False

    def release(self) -> None:
        """Close the held descriptor (its lock goes with it); a no-op when nothing is held."""
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor drops its lock
