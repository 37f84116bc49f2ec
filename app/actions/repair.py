"""One-click repair: preview (no writes), liveness guard, fsynced backup, then the engine's ``load``."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

from app.actions.artifacts import ArtifactRef, artifact_of, last_modified_age_s
from persistence import CoordinatedPersistence, SessionPersistenceError

DEFAULT_QUIET_SECONDS = 10.0


class RepairRefused(SessionPersistenceError):
    """The repair was not attempted; ``reason`` says why and nothing was written."""


@dataclass(frozen=True, slots=True)
class RepairPreview:
    session_id: str
    status: str
    reason: str
    artifact: ArtifactRef | None
    cut_from: Any  # byte offset (JSONL) or backend marker where the damaged tail starts
    cut_bytes: int | None  # how many bytes a JSONL repair removes
    recovered_count: int
    closers: tuple[dict[str, Any], ...]
    revision: str | None

    @property
    def repairable(self) -> bool:
        return self.status in ("open-turn", "torn-tail")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.session_id,
            "status": self.status,
            "reason": self.reason,
            "artifact": None if self.artifact is None else {"kind": self.artifact.kind, "path": self.artifact.path},
            "cutFrom": self.cut_from,
            "cutBytes": self.cut_bytes,
            "recoveredCount": self.recovered_count,
            "closers": list(self.closers),
        }


@dataclass(frozen=True, slots=True)
class RepairResult:
    preview: RepairPreview
    backup: str | None
    status_after: str
    events_after: int
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"preview": self.preview.to_json(), "backup": self.backup, "statusAfter": self.status_after,
                "eventsAfter": self.events_after}


async def preview_repair(store: CoordinatedPersistence, session_id: str) -> RepairPreview:
    """What a repair would do, computed with ``diagnose`` (the same pipeline as ``inspect``): writes nothing."""
    diag = await store.diagnose(session_id)
    ref = artifact_of(store, session_id) if diag.status != "missing" else None
    cut_bytes = None
    if ref is not None and ref.kind == "jsonl" and isinstance(diag.torn_offset, int):
        cut_bytes = os.stat(ref.path).st_size - diag.torn_offset
    return RepairPreview(session_id, diag.status, diag.reason, ref, diag.torn_offset, cut_bytes,
                         diag.recovered_count, diag.closers, diag.revision)


def check_liveness(ref: ArtifactRef, *, quiet_seconds: float = DEFAULT_QUIET_SECONDS, now: float | None = None) -> str | None:
    """Why the artifact looks like it is still being written, or None when it is quiet."""
    age = last_modified_age_s(ref, time.time() if now is None else now)
    if age < quiet_seconds:
        return (f"the artifact changed {age:.1f} s ago (less than {quiet_seconds:g} s): an agent may still be "
                "writing it; wait, or confirm/--force to repair anyway")
    if ref.kind == "sqlite":
        try:
            con = sqlite3.connect(ref.path, timeout=0)
            try:
                con.execute("BEGIN IMMEDIATE")
                con.execute("ROLLBACK")
            finally:
                con.close()
        except sqlite3.OperationalError as err:
            return f"the database is busy ({err}): another process holds a write transaction"
    return None


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def backup_artifact(ref: ArtifactRef, *, now: float | None = None) -> str:
    """Copy the artifact aside (fsynced) before any write; returns the backup path."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    target = f"{ref.path}.bak-{stamp}"
    n = 1
    while os.path.exists(target):
        n += 1
        target = f"{ref.path}.bak-{stamp}-{n}"
    if ref.kind == "sqlite":
        src = sqlite3.connect(f"file:{ref.path}?mode=ro", uri=True)
        try:
            dst = sqlite3.connect(target)
            try:
                src.backup(dst)
            finally:
                dst.close()
        finally:
            src.close()
        os.chmod(target, 0o600)
    else:
        # Upstream ignores other files in the session folder, so the backup can live beside the transcript.
        shutil.copy2(ref.path, target)
    _fsync_file(target)
    return target


async def repair_session(
    store: CoordinatedPersistence,
    session_id: str,
    *,
    force: bool = False,
    dry_run: bool = False,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
) -> RepairResult:
    preview = await preview_repair(store, session_id)
    if preview.status in ("corrupt", "unsupported"):
        raise RepairRefused(
            f'session "{session_id}" is {preview.status}, not repairable: {preview.reason}. Nothing was changed; '
            "copy the raw artifact for analysis instead."
        )
    if preview.status == "missing":
        raise RepairRefused(preview.reason)
    if not preview.repairable or dry_run:
        return RepairResult(preview, None, preview.status, 0,
                            ["dry run: nothing was written"] if dry_run else ["nothing to repair"])
    assert preview.artifact is not None
    if not force:
        why = check_liveness(preview.artifact, quiet_seconds=quiet_seconds)
        if why is not None:
            raise RepairRefused(f'refusing to repair "{session_id}": {why}')
    backup = backup_artifact(preview.artifact)
    inspection = await store.load(session_id)
    after = await store.diagnose(session_id)
    return RepairResult(preview, backup, after.status, len(inspection.events))
