"""``open_store(path)``: pick the backend from what is on disk."""

from __future__ import annotations

import os

from persistence.coordinator import CoordinatedPersistence
from persistence.errors import SessionLayoutError, SessionPersistenceError
from persistence.jsonl.backend import JsonlSessionPersistence
from persistence.jsonl.paths import RAW_SUFFIX, ZSTD_SUFFIX

BACKENDS = ("jsonl-zstd", "jsonl-none", "jsonl", "sqlite")


def detect_jsonl_compression(root: str) -> str:
    """The encoding of the artifacts under ``root``; zstd for an empty or absent root.

    Mixed roots open as zstd (the backend's preflight then names the stray artifact), so the first
    zstd artifact settles it; only a root of plain logs is walked to the end.
    """
    try:
        projects = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return "zstd"
    found_plain = False
    for project in sorted(projects, key=lambda e: e.name):
        for d in sorted(os.scandir(project.path), key=lambda e: e.name):
            if not d.is_dir(follow_symlinks=False):
                continue
            if os.path.exists(os.path.join(d.path, "session" + ZSTD_SUFFIX)):
                return "zstd"
            if not found_plain and os.path.exists(os.path.join(d.path, "session" + RAW_SUFFIX)):
                found_plain = True
    return "none" if found_plain else "zstd"


def open_store(path: str | os.PathLike[str], backend: str | None = None, *, read_only: bool = False) -> CoordinatedPersistence:
    """A directory (or a path that does not exist) is a JSONL root; a file is a SQLite store.

    ``read_only`` opens a SQLite store for browsing (``mode=ro``, honouring a live ``-wal``);
    JSONL reads never write, so it changes nothing there.
    """
    p = os.fspath(path)
    if backend is None:
        backend = "sqlite" if os.path.isfile(p) else "jsonl"
    if backend not in BACKENDS:
        raise SessionPersistenceError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "sqlite":
        try:
            from persistence.sqlite.backend import SqliteSessionPersistence
        except ImportError as err:
            raise SessionLayoutError(f"{p} is a file (a SQLite store) but the SQLite backend is not available") from err
        return SqliteSessionPersistence(p, read_only=read_only)
    if os.path.exists(p) and not os.path.isdir(p):
        raise SessionLayoutError(f"{p} is not a directory, so it cannot be a JSONL root")
    if backend == "jsonl":
        compression = detect_jsonl_compression(p)
    else:
        compression = "zstd" if backend == "jsonl-zstd" else "none"
    return JsonlSessionPersistence(p, compression=compression)
