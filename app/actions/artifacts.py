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
    """The transcript (JSONL) or database file (SQLite) of a session; None without one (in-memory)."""
    info = store.artifact(session_id)
    if info is not None:
        return ArtifactRef(info.kind, info.path)
    if store.kind == "sqlite" and store.root_path != ":memory:":
        return ArtifactRef("sqlite", store.root_path)  # the database file, even before its first write
    return None


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
    """The store a write-nothing action (preview, dry run, verify) reads through: the engine's twin."""
    async with store.read_only_twin() as twin:
        yield twin
