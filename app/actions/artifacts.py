"""Where a session's bytes live, whatever the backend."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from persistence import CoordinatedPersistence


@dataclass(frozen=True, slots=True)
class ArtifactRef:
    kind: str  # "jsonl" | "sqlite"
    path: str  # transcript file, or the database file


def artifact_of(store: CoordinatedPersistence, session_id: str) -> ArtifactRef | None:
    backend = store.backend
    if backend.kind == "jsonl":
        path = backend.find_log(session_id)  # type: ignore[attr-defined]
        return None if path is None else ArtifactRef("jsonl", path)
    path = getattr(backend, "path", None)
    if path is None or os.fspath(path) == ":memory:":
        return None  # an in-memory store has no artifact to guard or back up
    return ArtifactRef(backend.kind, os.fspath(path))


def sqlite_uri(path: str, mode: str) -> str:
    """``file:`` URI for ``path`` (percent-encoded, so ``?``, ``#`` and ``%`` in a path are not URI syntax)."""
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + f"?mode={mode}"


def last_modified_age_s(ref: ArtifactRef, now: float) -> float:
    """Seconds since the artifact (or a SQLite WAL/journal beside it) last changed.

    An empty ``-wal`` is ignored: SQLite creates one when any connection (our own preview included)
    opens a WAL database, and a commit always leaves frames in it, so its mtime says nothing about writers.
    """
    newest = os.stat(ref.path).st_mtime
    if ref.kind == "sqlite":
        for suffix in ("-wal", "-journal"):
            try:
                st = os.stat(ref.path + suffix)
            except FileNotFoundError:
                continue
            if suffix == "-wal" and st.st_size == 0:
                continue
            newest = max(newest, st.st_mtime)
    return now - newest


@asynccontextmanager
async def read_only_view(store: CoordinatedPersistence) -> AsyncIterator[CoordinatedPersistence]:
    """The store a write-nothing action (preview, dry run, verify) reads through.

    SQLite: a ``read_only`` store on the same file, closed afterwards.  A writable connection
    checkpoints a leftover ``-wal`` into the database file when it closes, so reading through it
    would rewrite a crashed database's bytes; a read-only connection never does.  JSONL, an
    in-memory or an already read-only store: ``store`` itself.
    """
    path = getattr(store.backend, "path", None)
    twin = None
    if store.backend.kind == "sqlite" and path is not None and os.fspath(path) != ":memory:" \
            and not getattr(store, "read_only", True):
        from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]

        if isinstance(store, SqliteSessionPersistence):
            twin = SqliteSessionPersistence(os.fspath(path), read_only=True)
    if twin is None:
        yield store
        return
    try:
        yield twin
    finally:
        await twin.close()
