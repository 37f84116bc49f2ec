"""The JSONL crash-repair commit as one atomic, compare-and-swap file replacement.

Upstream commits a repair in two fsync'd steps on the live file: truncate the torn tail, then
append the recovered records and closers.  A kill between the two (on a 54 MB log the
re-encoding alone takes hundreds of ms) leaves a log that lost every recovered record, and a
writer that appends between the caller's read and the truncate has its acknowledged records cut.
We promise more, with the same resulting bytes:

1. everything is encoded before the log is touched (the caller passes the encoded suffix);
2. the kept prefix and the suffix are written to a temporary file in the session folder, fsynced;
3. the log's revision (device, inode, size, mtime, ctime) is compared with the one the repair was
   computed from, immediately before an atomic ``rename`` over the log (the swap);
4. after the swap, the old inode (still open here) and the new file are checked: a writer that
   slipped in between the check and the rename is detected, and the log is put back to the old
   bytes plus whatever was appended, so no acknowledged record is ever lost; the caller is told.

Every step from the first revision check to the end of the swap runs under ``LOCK_EX`` on the log
(``locks``): a SessionScope writer locks it too between its checks and its write, so none can be
half-way through an append while the file is swapped, and one that waited re-checks that its file
is still the one at the path (issue 21 item 1).  A live SessionScope session keeps a shared lock on
its log, so a repair or restore of it fails (``SessionConflictError``) after a short wait.  Step 4
remains for writers that take no lock (the upstream harness).

A kill at any point leaves either the original log or the repaired one under the log's name
(``rename`` is atomic on POSIX and on NTFS), plus at most a stray ``*.repair-<pid>-<hex>.tmp`` that
no reader looks at; the next commit in that folder removes strays whose process is gone.  The
swap gives the log a new inode; upstream reopens the log by path for every append, so that is
invisible to it.
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Callable

from persistence.errors import SessionConflictError, SessionPersistenceError
from persistence.jsonl import locks

COPY_CHUNK_BYTES = 1 << 20
# Headroom kept free on the volume beyond the new file itself: a repair never fills a disk to the
# last block (the harness, the OS and the backup need room too).
FREE_SPACE_MARGIN_BYTES = 4 << 20
TMP_MARKER = ".repair-"


class RepairSpaceError(SessionPersistenceError):
    """Not enough free space to write the repaired log; nothing was changed."""


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # Windows cannot open a directory; its rename is durable once it returns
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _stamp(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":
        return True  # Windows: os.kill(pid, 0) would terminate the process; strays stay until removed by hand
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_stray_temps(folder: str, log_name: str) -> None:
    """Delete ``<log>.repair-<pid>-*.tmp`` files left by a killed commit whose process is gone."""
    prefix = log_name + TMP_MARKER
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix) :].split("-", 1)[0]
        if pid_text.isdigit() and not _pid_alive(int(pid_text)):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def check_free_space(folder: str, needed_bytes: int, what: str) -> None:
    """Refuse before writing when the volume cannot hold ``needed_bytes`` plus the margin."""
    try:
        st = os.statvfs(folder)
    except (AttributeError, OSError):
        return  # no statvfs (Windows): ENOSPC during the write is still caught and cleaned up
    free = st.f_bavail * st.f_frsize
    if free < needed_bytes + FREE_SPACE_MARGIN_BYTES:
        raise RepairSpaceError(
            f"not enough free space to {what}: {needed_bytes:,} bytes needed plus a {FREE_SPACE_MARGIN_BYTES >> 20} MiB "
            f"margin, {free:,} free in {folder}; nothing was changed"
        )


def _copy_fd(src: int, dst: int, length: int | None) -> int:
    """Copy from ``src`` (from its offset 0) into ``dst``: ``length`` bytes, or to EOF when None."""
    done = 0
    while length is None or done < length:
        want = COPY_CHUNK_BYTES if length is None else min(COPY_CHUNK_BYTES, length - done)
        chunk = os.pread(src, want, done)
        if not chunk:
            break
        _write_all(dst, chunk)
        done += len(chunk)
    return done


def _write_temp(folder: str, log_name: str, mode: int, fill: Callable[[int], None]) -> str:
    tmp = os.path.join(folder, f"{log_name}{TMP_MARKER}{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            fill(fd)
            if hasattr(os, "fchmod"):  # keep the log's permissions (the harness writes 0600 logs)
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return tmp


def atomic_replace_tail(
    path: str, keep_bytes: int, suffix: bytes, expected_stamp: tuple[int, int, int, int, int], *, revision_text: str
) -> None:
    """Replace ``path`` by its first ``keep_bytes`` bytes followed by ``suffix``, atomically.

    ``expected_stamp`` is (dev, ino, size, mtime_ns, ctime_ns) of the log the repair was computed
    from; any difference refuses with ``SessionConflictError`` and nothing is written.  Raises
    ``SessionConflictError`` too when a writer appended during the swap (the log then holds the
    original bytes plus that writer's records again), and ``RepairSpaceError`` or the ``OSError``
    of a failed write with the log unchanged.
    """
    folder, log_name = os.path.split(path)
    remove_stray_temps(folder, log_name)
    old = os.open(path, os.O_RDONLY)
    try:
        # Held until ``old`` is closed: through the checks, the copy, the rename and the check after it.
        locks.lock_exclusive_bounded(old, path, "repair")
        st = os.fstat(old)
        if _stamp(st) != expected_stamp:
            raise SessionConflictError(
                f'repair of "{path}" is stale: the log changed since it was read (revision {revision_text}); nothing was changed'
            )
        if keep_bytes > st.st_size:
            raise SessionConflictError(f'repair of "{path}" is stale: the log is shorter than the cut point')
        check_free_space(folder, keep_bytes + len(suffix), "write the repaired log")

        def fill(fd: int) -> None:
            if _copy_fd(old, fd, keep_bytes) != keep_bytes:
                raise SessionConflictError(f'repair of "{path}" is stale: the log shrank while it was copied')
            _write_all(fd, suffix)

        try:
            tmp = _write_temp(folder, log_name, st.st_mode & 0o7777, fill)
        except OSError as err:
            if err.errno == errno.ENOSPC:
                raise RepairSpaceError(
                    f'the disk filled up while writing the repaired log of "{path}" ({err.strerror}); the log was not changed'
                ) from err
            raise
        _swap_in(tmp, path, old, expected_stamp, "repair")
        _verify_after_swap(path, old, st.st_size, keep_bytes + len(suffix), folder, log_name)
    finally:
        os.close(old)


def _swap_in(tmp: str, path: str, old: int, expected_stamp: tuple[int, int, int, int, int], what: str) -> None:
    """Rename the fsynced ``tmp`` over ``path`` if the log (open as ``old``) is still the expected one.

    The last check is as close to the rename as Python allows (microseconds); ``_verify_after_swap``
    catches a writer that slips into that gap.  ``tmp`` is removed on every failure.
    """
    try:
        if _stamp(os.fstat(old)) != expected_stamp or _stamp(os.stat(path)) != expected_stamp:
            raise SessionConflictError(
                f'{what} of "{path}" is stale: a writer appended while the {what} was prepared; nothing was changed'
            )
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(os.path.dirname(path))


def _verify_after_swap(path: str, old: int, old_size: int, new_size: int, folder: str, log_name: str) -> None:
    """Put the original back (plus anything appended meanwhile) when a writer raced the swap."""
    grown_old = os.fstat(old).st_size
    try:
        now = os.stat(path).st_size
    except FileNotFoundError:
        now = new_size
    if grown_old == old_size and now == new_size:
        return
    late = b""
    if now > new_size:
        # Appended to the repaired file after the swap: keep those bytes after the original ones.
        with open(path, "rb") as f:
            f.seek(new_size)
            late = f.read()

    def fill(fd: int) -> None:
        _copy_fd(old, fd, None)
        _write_all(fd, late)

    tmp = _write_temp(folder, log_name, os.fstat(old).st_mode & 0o7777, fill)
    os.replace(tmp, path)
    _fsync_dir(folder)
    raise SessionConflictError(
        f'a writer appended to "{path}" while the swap was committed; the swap was undone and the log holds '
        f"its original bytes plus the {grown_old - old_size + len(late)} appended byte(s) again; no record was lost"
    )


def atomic_replace_whole(
    path: str, source_path: str, expected_stamp: tuple[int, int, int, int, int], *, revision_text: str
) -> None:
    """Replace ``path`` by a copy of ``source_path`` (a backup being restored), with the same swap rules."""
    folder, log_name = os.path.split(path)
    remove_stray_temps(folder, log_name)
    old = os.open(path, os.O_RDONLY)
    try:
        locks.lock_exclusive_bounded(old, path, "restore")
        st = os.fstat(old)
        if _stamp(st) != expected_stamp:
            raise SessionConflictError(
                f'restore of "{path}" is stale: the log changed since it was read (revision {revision_text}); nothing was changed'
            )
        src = os.open(source_path, os.O_RDONLY)
        try:
            size = os.fstat(src).st_size
            check_free_space(folder, size, "restore the backup")

            def fill(fd: int) -> None:
                _copy_fd(src, fd, None)

            tmp = _write_temp(folder, log_name, st.st_mode & 0o7777, fill)
        finally:
            os.close(src)
        _swap_in(tmp, path, old, expected_stamp, "restore")
        _verify_after_swap(path, old, st.st_size, size, folder, log_name)
    finally:
        os.close(old)
