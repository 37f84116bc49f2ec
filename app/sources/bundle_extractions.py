"""Where bundles are unpacked, and how an extraction is never left behind: a locked folder per open bundle.

Why its own module: the engine needs a file path to read a transcript, so a bundle is unpacked into
the cache folder (``app.paths.cache_dir()/bundles/<unique>``, 0700).  Each extraction holds an advisory
lock on ``<unique>.lock`` while open; it is removed by ``release`` (``close_bundle``), at interpreter
exit, on any failure while opening, and, after a crash, by the next ``sweep``: a lock nobody holds
marks an extraction whose process is gone (a half-made lock older than an hour is litter).  Removing
an extraction removes the caches made of its files too (search index, diagnosis and statistics
caches: ``app.sources.derived_caches``).  A received SQLite store's private copy (``received/``) is
claimed, released and swept the same way.  Split out
of ``app.sources.bundle`` when that file passed 600 lines (825).

May import the standard library, ``app.paths``, ``app.sources.bundle_check`` and
``app.sources.derived_caches``; never Qt.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import threading
import time
from pathlib import Path

from app.paths import cache_dir
from app.sources.bundle_check import BundleError
from app.sources.derived_caches import cache_files_of, files_below, remove_cache_files

try:  # POSIX: an advisory lock marks a live extraction; Windows refuses to delete an open file instead
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

EXTRACTIONS_DIR = "bundles"
# A half-made lock (a crash between creating and publishing it) older than this is litter.
STALE_TEMP_SECONDS = 3600.0

_lock = threading.Lock()
_held: dict[Path, int] = {}  # extraction folder -> the descriptor holding its lock


def extractions_root(cache_root: Path | None = None) -> Path:
    """Where extractions live: ``<cache>/bundles``."""
    return Path(cache_root if cache_root is not None else cache_dir()) / EXTRACTIONS_DIR


def try_lock(fd: int) -> bool:
    if fcntl is None:  # pragma: no cover - Windows: an open file cannot be deleted, see sweep
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def claim(base: Path) -> tuple[Path, int]:
    """A fresh extraction folder under ``base`` and the descriptor locking it.

    The lock file is locked under a temporary name and only then renamed into place, so a sweeping
    process never sees an unlocked lock of a live extraction.
    """
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = f"{os.getpid()}-{secrets.token_hex(8)}"
    temp = base / f".{token}.lock.tmp"
    fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        if not try_lock(fd):
            raise BundleError(f"could not lock {temp}")
        os.rename(temp, base / f"{token}.lock")
        folder = base / token
        folder.mkdir(mode=0o700)
    except BaseException:
        os.close(fd)
        for p in (temp, base / f"{token}.lock"):
            p.unlink(missing_ok=True)
        raise
    with _lock:
        _held[folder] = fd
    return folder, fd


def release(folder: Path, *, at_exit: bool = False) -> None:
    """Remove the extraction ``folder``, its lock and the caches made of its files (idempotent)."""
    with _lock:
        fd = _held.pop(folder, None)
    _remove(folder, at_exit=at_exit)
    (folder.parent / f"{folder.name}.lock").unlink(missing_ok=True)
    if fd is not None:
        os.close(fd)


def _remove(folder: Path, *, at_exit: bool = False) -> None:
    """The folder, then every cache file the window or the command line made of a file in it
    (``app.sources.derived_caches``: a search index, a diagnosis or statistics cache)."""
    caches = cache_files_of(files_below(folder), loaded_only=at_exit) if folder.is_dir() else []
    shutil.rmtree(folder, ignore_errors=True)
    remove_cache_files(caches)


def sweep(base: Path) -> None:
    """Remove extractions left by processes that are gone (a crash, a kill): their locks are free."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    now = time.time()
    for name in names:
        path = base / name
        if name.endswith(".lock.tmp"):
            try:
                if now - path.lstat().st_mtime > STALE_TEMP_SECONDS:
                    path.unlink(missing_ok=True)
            except OSError:
                pass
            continue
        if not name.endswith(".lock"):
            continue
        folder = base / name[: -len(".lock")]
        with _lock:
            if folder in _held:
                continue
        if fcntl is None:  # pragma: no cover - Windows: deleting a lock a live process holds open fails
            try:
                path.unlink()
            except OSError:
                continue
            _remove(folder)
            continue
        try:
            fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        try:
            if not try_lock(fd):
                continue  # a live SessionScope has it open
            _remove(folder)
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)


@atexit.register
def _release_all() -> None:
    # An extraction is a copy of someone else's data in our cache: never left behind by a clean exit.
    with _lock:
        folders = list(_held)
    for folder in folders:
        release(folder, at_exit=True)


__all__ = ["EXTRACTIONS_DIR", "STALE_TEMP_SECONDS", "claim", "extractions_root", "release", "sweep"]
