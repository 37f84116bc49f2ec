"""Every export is a transaction: the target is the previous file or the complete new one, never a half,
and nothing the user did not agree to replace is ever replaced.

How: the document is encoded into a temporary file in the target's own folder (a rename across
file systems is not atomic), flushed and fsynced, then published and the folder fsynced, so the
publication itself survives a power cut.  Any failure (an exception, a full disk, Ctrl+C) removes
the temporary file and leaves the target as it was.  A process killed outright cannot clean up: its
temporary file is named ``.<target>.<pid>.<hex>.export-tmp``, and the next export to that folder
removes those whose process is gone.

Publishing (``app.export.exporter`` checked the target before the export began, but the document
takes seconds to encode and anything may appear there meanwhile):

- ``replace=False`` (the target was absent): the temporary file takes the name only if nothing holds
  it, in one step the kernel makes atomic, so a file, FIFO or link that appeared meanwhile is never
  clobbered (``TargetTaken``).  In order of preference: ``renameat2(RENAME_NOREPLACE)`` (Linux 3.15+,
  glibc 2.28+, through ctypes: one rename, nothing left behind by a kill); else ``link`` then
  ``unlink`` of the temporary name (POSIX; ``link`` fails with EEXIST whatever is at the target; a
  kill between the two leaves a temporary name the next export removes); else, on a file system
  with neither (FAT, some network shares), a check just before ``os.replace``: the only step with a
  window left, microseconds wide instead of the export's seconds.
- ``replace=True`` (the user agreed to replace a regular file): ``os.replace``, which replaces the
  directory entry and never writes through a link or into a FIFO; the target is checked again just
  before it, so a link or special file that took the name meanwhile is refused, not replaced.

May import: the standard library and psutil (a dependency already: the liveness guard uses it).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from typing import BinaryIO

import psutil

TEMP_SUFFIX = ".export-tmp"
WRITE_BUFFER_BYTES = 1 << 20  # 1 MiB: few system calls per document, small enough to never matter for RSS


class TargetTaken(FileExistsError):
    """Something that may not be replaced holds the target's name at the moment of publishing."""


def _load_renameat2() -> Callable[..., int] | None:
    """The C library's ``renameat2`` (Linux), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library older than glibc 2.28, or musl without it
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    fn.restype = ctypes.c_int
    return fn


_renameat2 = _load_renameat2()
_AT_FDCWD = -100  # <fcntl.h>: paths relative to the working directory (ours are absolute anyway)
_RENAME_NOREPLACE = 1  # <linux/fs.h>
# "This file system or kernel cannot do that": go on to the next way of publishing.
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM, errno.EMLINK, errno.EXDEV})


def describe(path: str) -> str | None:
    """What holds ``path`` when it is not a regular file (None: absent or a regular file); links not followed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _publish_new(tmp: str, target: str) -> None:
    """Give ``tmp`` the name ``target`` only if nothing holds it (see the module docstring)."""
    if _renameat2 is not None:
        if _renameat2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE) == 0:
            return
        code = ctypes.get_errno()
        if code == errno.EEXIST:
            raise TargetTaken(code, "something appeared at the target while exporting", target)
        if code not in _UNSUPPORTED:
            raise OSError(code, os.strerror(code), target)
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise TargetTaken(errno.EEXIST, "something appeared at the target while exporting", target) from None
    except OSError as err:
        if err.errno not in _UNSUPPORTED:
            raise
    else:
        with contextlib.suppress(OSError):  # a name left here is a stale temporary: the next export removes it
            os.unlink(tmp)
        return
    if os.path.lexists(target):
        raise TargetTaken(errno.EEXIST, "something appeared at the target while exporting", target)
    os.replace(tmp, target)


def _publish_over(tmp: str, target: str) -> None:
    """Replace a regular file (or take a free name) at ``target``; never a link or a special file."""
    what = describe(target)
    if what is not None:
        raise TargetTaken(errno.EEXIST, f"{what} took the target's name while exporting", target)
    os.replace(tmp, target)


def temp_name(target: str, pid: int | None = None) -> str:
    """The temporary file an export to ``target`` writes first (hidden, beside the target)."""
    folder, base = os.path.split(os.path.abspath(target))
    return os.path.join(folder, f".{base}.{os.getpid() if pid is None else pid}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def stale_temps(target: str) -> list[str]:
    """Temporary files of exports to ``target`` whose process no longer runs (a kill left them)."""
    folder, base = os.path.split(os.path.abspath(target))
    prefix = f".{base}."
    out: list[str] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        middle = name[len(prefix) : -len(TEMP_SUFFIX)]
        pid_text, _, token = middle.partition(".")
        if not pid_text.isdigit() or not token:
            continue
        pid = int(pid_text)
        if pid != os.getpid() and not psutil.pid_exists(pid):
            out.append(os.path.join(folder, name))
    return out


def _open_temp(path: str) -> BinaryIO:
    """Create the temporary file (exclusive, private: a transcript may hold secrets).  A seam for the
    fault-injection tests, which wrap the returned file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    return os.fdopen(fd, "wb", buffering=WRITE_BUFFER_BYTES)


def _fsync_folder(folder: str) -> None:
    if sys.platform == "win32":  # no directory handles to fsync; NTFS journals the rename
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_output(target: str, *, replace: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write the whole document to; on a clean exit it is published at ``target``
    atomically: only where nothing holds the name, or (``replace``) over a regular file.

    On any exception (including ``KeyboardInterrupt``, and ``TargetTaken`` when the name is held)
    the temporary file is removed, the exception propagates and ``target`` is untouched.
    """
    folder = os.path.dirname(os.path.abspath(target))
    for stale in stale_temps(target):
        with contextlib.suppress(OSError):
            os.unlink(stale)
    tmp = temp_name(target)
    f = _open_temp(tmp)
    try:
        try:
            yield f
            f.flush()
            os.fsync(f.fileno())
        finally:
            f.close()
        (_publish_over if replace else _publish_new)(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the new file is in place; a folder that refuses fsync changes nothing
        _fsync_folder(folder)


__all__ = ["TEMP_SUFFIX", "TargetTaken", "atomic_output", "describe", "stale_temps", "temp_name"]
