"""Where a session's bytes live, whatever the backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from persistence import CoordinatedPersistence, newest_change


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


def last_modified_age_s(ref: ArtifactRef, now: float) -> float:
    """Seconds since the artifact (or a non-empty SQLite ``-wal``, or a ``-journal``) last changed."""
    return now - newest_change(ref.kind, ref.path)[1]


@asynccontextmanager
async def read_only_view(store: CoordinatedPersistence) -> AsyncIterator[CoordinatedPersistence]:
    """The store a write-nothing action (preview, dry run, verify) reads through: the engine's twin."""
    async with store.read_only_twin() as twin:
        yield twin
