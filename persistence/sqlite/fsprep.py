"""Filesystem preparation before SQLite ever sees the path (spec §2).

A writable store refuses anything upstream refuses.  A read-only viewer may browse a
file with loose permissions (someone else's export, a copied fixture) but reports why
upstream would refuse it, through the returned warning texts.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from persistence.errors import SessionLayoutError

_POSIX = os.name == "posix"


@dataclass(frozen=True, slots=True)
class PathCheck:
    """What the path checks found that upstream would refuse but a read-only store accepts."""

    warnings: tuple[str, ...] = ()


def absolute_db_path(path: str | os.PathLike[str]) -> str:
    """The absolute database path, resolved lexically (links are judged later, never followed)."""
    p = os.fspath(path)
    if "\0" in p:
        raise ValueError("session database path must not contain NUL bytes")
    # Lexical resolve like Node's path.resolve: symlinks are not followed (they are rejected later).
    return os.path.abspath(p)


def _mkdir_private(directory: str) -> None:
    """``mkdir -p`` where every directory this call creates gets 0o700 (Node's recursive mode)."""
    missing: list[str] = []
    d = directory
    while not os.path.lexists(d):
        missing.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            continue


def _not_private(st: os.stat_result, bits: int) -> bool:
    return _POSIX and (st.st_uid != os.getuid() or (st.st_mode & bits) != 0)


def check_parent(parent: str, *, read_only: bool) -> list[str]:
    """Refuse a parent that is not a real private folder (read-only stores get warnings instead)."""
    st = os.lstat(parent)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise SessionLayoutError(f'session database parent "{parent}" must be a real directory')
    if _not_private(st, 0o022):
        message = f'session database parent "{parent}" must be owned by the current user and not group/world-writable'
        if not read_only:
            raise SessionLayoutError(message)
        return [message]
    return []


def check_file(path: str, *, must_exist: bool, read_only: bool) -> list[str]:
    """Refuse a database path that is not a real private file (read-only stores get warnings instead)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if must_exist:
            if read_only:
                raise SessionLayoutError(
                    f'session database "{path}" does not exist; a read-only store never creates it'
                ) from None
            raise
        return []
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise SessionLayoutError(f'session database "{path}" must be a regular file, not a symbolic link')
    if _not_private(st, 0o077):
        message = f'session database "{path}" must be owned by the current user and accessible only by that user'
        if not read_only:
            raise SessionLayoutError(message)
        return [message]
    return []


def validate_path(path: str, *, read_only: bool) -> PathCheck:
    """Phase (a), at service construction."""
    parent = os.path.dirname(path)
    if not read_only:
        _mkdir_private(parent)
    warnings = check_parent(parent, read_only=read_only)
    warnings += check_file(path, must_exist=False, read_only=read_only)
    return PathCheck(tuple(warnings))


def prepare_file(path: str, *, read_only: bool) -> PathCheck:
    """Phase (b), lazily before the first connection: create the file 0600 so SQLite never picks the mode."""
    if not read_only:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileExistsError:
            pass
        except OSError as err:
            if err.errno != errno.EEXIST:
                raise
        else:
            os.close(fd)
    return PathCheck(tuple(check_file(path, must_exist=True, read_only=read_only)))
