"""Every export is a transaction: the target is the previous file or the complete new one, never a half.

How: the document is encoded into a temporary file in the target's own folder (a rename across
file systems is not atomic), flushed and fsynced, then renamed over the target with ``os.replace``
and the folder fsynced, so the rename itself survives a power cut.  Any failure (an exception, a
full disk, Ctrl+C) removes the temporary file and leaves the target as it was.  A process killed
outright cannot clean up: its temporary file is named ``.<target>.<pid>.<hex>.export-tmp``, and the
next export to that folder removes those whose process is gone.

May import: the standard library and psutil (a dependency already: the liveness guard uses it).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections.abc import Iterator
from typing import BinaryIO

import psutil

TEMP_SUFFIX = ".export-tmp"
WRITE_BUFFER_BYTES = 1 << 20  # 1 MiB: few system calls per document, small enough to never matter for RSS


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
def atomic_output(target: str) -> Iterator[BinaryIO]:
    """A binary file to write the whole document to; on a clean exit it replaces ``target`` atomically.

    On any exception (including ``KeyboardInterrupt``) the temporary file is removed, the exception
    propagates and ``target`` is untouched.
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
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the new file is in place; a folder that refuses fsync changes nothing
        _fsync_folder(folder)


__all__ = ["TEMP_SUFFIX", "atomic_output", "stale_temps", "temp_name"]
