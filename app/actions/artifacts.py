"""Where a session's bytes live, whatever the backend."""

from __future__ import annotations

import os
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
    return None if path is None else ArtifactRef(backend.kind, os.fspath(path))


def last_modified_age_s(ref: ArtifactRef, now: float) -> float:
    """Seconds since the artifact (or a SQLite WAL beside it) last changed."""
    newest = os.stat(ref.path).st_mtime
    if ref.kind == "sqlite":
        for suffix in ("-wal", "-journal"):
            try:
                newest = max(newest, os.stat(ref.path + suffix).st_mtime)
            except FileNotFoundError:
                pass
    return now - newest
