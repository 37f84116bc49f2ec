"""Repair backups: find them, tell whether one holds records the log lacks, and restore one.

Every repair leaves ``<artifact>.bak-<UTC stamp>`` (complete by construction: written under a
``.partial-`` name, fsynced, then linked).  A backup matters when the log no longer holds all of
its records, which an earlier, non-atomic repair (or another tool) could cause: ``verify`` and the
window report such a backup and offer to restore it.  A restore is a transaction like a repair:
the liveness guard, a backup of the current state, then the engine's atomic, revision-pinned swap.

The pair both front ends use: ``plan_restore`` (reads only: the backups, what each holds, the
guard's file-level verdict; the window's dialog, ``sessionscope backups`` prints the same listing)
and ``restore_backup`` (the write; ``sessionscope restore`` names the backup itself).
May import the standard library, ``app.actions`` and the engine.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.actions.artifacts import ArtifactRef, artifact_of
from app.actions.repair import (
    DEFAULT_QUIET_SECONDS,
    RepairRefused,
    RepairWriteFailed,
    assess_artifact,
    backup_artifact,
    refuse_live_writer,
)
from persistence import CoordinatedPersistence, SessionConflictError, SessionPersistenceError

BACKUP_NAME = re.compile(r"\.bak-\d{8}T\d{6}Z(?:-\d+)?$")


@dataclass(frozen=True, slots=True)
class BackupInfo:
    path: str
    size: int
    mtime: float
    records: int  # records the backup holds (committed plus a recoverable torn tail)
    lacking: int  # how many of them the current log does not hold
    problem: str | None = None  # why the backup could not be read

    @property
    def holds_lost_records(self) -> bool:
        return self.lacking > 0


@dataclass(frozen=True, slots=True)
class RestoreResult:
    session_id: str
    restored_from: str
    backup_of_current: str
    revision: str


@dataclass(frozen=True, slots=True)
class RestorePlan:
    session_id: str
    artifact: ArtifactRef
    backups: tuple[BackupInfo, ...]  # oldest first
    liveness: str | None  # why the artifact looks live (file-level signals), or None when quiet


def backup_paths(ref: ArtifactRef) -> list[str]:
    """Complete backups of ``ref`` (``.partial-`` leftovers of a killed copy are not backups), oldest first."""
    folder, name = os.path.split(ref.path)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return []
    found = [os.path.join(folder, n) for n in names if n.startswith(name + ".bak-") and BACKUP_NAME.search(n)]
    return sorted(found)


async def list_backups(store: CoordinatedPersistence, session_id: str) -> list[BackupInfo]:
    """Every backup of the session with what it holds that the log lacks; reads only."""
    ref = artifact_of(store, session_id)
    return [] if ref is None else await _backups_of(store, session_id, ref)


async def _backups_of(store: CoordinatedPersistence, session_id: str, ref: ArtifactRef) -> list[BackupInfo]:
    out = []
    for path in backup_paths(ref):
        st = os.stat(path)
        try:
            records, lacking = await store.compare_backup(session_id, path)
            out.append(BackupInfo(path, st.st_size, st.st_mtime, records, lacking))
        except (SessionPersistenceError, OSError) as err:
            out.append(BackupInfo(path, st.st_size, st.st_mtime, 0, 0, str(err)))
    return out


async def plan_restore(
    store: CoordinatedPersistence, session_id: str, *, quiet_seconds: float = DEFAULT_QUIET_SECONDS
) -> RestorePlan:
    """The backups a restore can choose from and the guard's verdict; refuses a session without backups."""
    ref = artifact_of(store, session_id)
    found = [] if ref is None else await _backups_of(store, session_id, ref)
    if ref is None or not found:
        raise RepairRefused(f"{session_id} has no backups to restore (a repair or restore makes one beside the artifact)")
    liveness = (await assess_artifact(store, session_id, ref, quiet_seconds=quiet_seconds)).reason
    return RestorePlan(session_id, ref, tuple(found), liveness)


async def restore_backup(
    store: CoordinatedPersistence,
    session_id: str,
    backup_path: str,
    *,
    force: bool = False,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
) -> RestoreResult:
    """Put ``backup_path`` back as the session's log, after backing up the current state."""
    ref = artifact_of(store, session_id)
    if ref is None:
        raise RepairRefused(f'session "{session_id}" has no on-disk artifact to restore into; nothing was changed')
    if os.path.abspath(backup_path) not in {os.path.abspath(p) for p in backup_paths(ref)}:
        raise RepairRefused(f'{backup_path} is not a backup of session "{session_id}" (expected {ref.path}.bak-<stamp>)')
    if not force:
        # The same guard as a repair (open handles, a harness in the cwd, a call in flight), not file ages only.
        verdict = await assess_artifact(store, session_id, ref, quiet_seconds=quiet_seconds)
        if verdict.reason is not None:
            raise RepairRefused(f'refusing to restore "{session_id}": {verdict.reason}')
    refuse_live_writer(ref, session_id, "restore")
    try:
        store.assert_writable_artifact(ref.path)
    except SessionPersistenceError as err:
        raise RepairRefused(f"{err}; nothing was changed") from err
    revision = await store.read_stored_revision(session_id)
    if revision is None:
        raise RepairRefused(f'session "{session_id}" was not found; nothing was changed')
    current = await asyncio.to_thread(backup_artifact, ref)  # a whole copy: off the (GUI) event loop
    try:
        after = await store.restore_backup(session_id, backup_path, expected_revision=revision)
    except SessionConflictError as err:
        raise RepairRefused(
            f'restore of "{session_id}" was not committed: {err}. The current log was backed up to {current}.'
        ) from err
    except (SessionPersistenceError, OSError) as err:
        raise RepairWriteFailed(
            f'restore of "{session_id}" failed: {err}. The log was not changed; its current state is also backed up at {current}.'
        ) from err
    return RestoreResult(session_id, backup_path, current, after)


async def find_lost_records(
    store: CoordinatedPersistence, candidates: Sequence[tuple[str, str]] | None = None
) -> list[tuple[str, BackupInfo]]:
    """(session id, backup) for every backup in the store that holds records its session's log lacks.

    Backups are found by the engine without listing sessions, so a root with a broken session still
    has its backups checked; only sessions with a backup are read.  ``candidates`` ((session id,
    backup path), e.g. ``persistence.jsonl_backups_beside`` of a clean listing) stands for the engine's search.
    """
    found: list[tuple[str, BackupInfo]] = []
    for session_id, path in await store.backup_candidates() if candidates is None else candidates:
        try:
            records, lacking = await store.compare_backup(session_id, path)
        except (SessionPersistenceError, OSError):
            continue  # an unreadable backup is not evidence of lost records; `backups` names it
        if lacking:
            st = os.stat(path)
            found.append((session_id, BackupInfo(path, st.st_size, st.st_mtime, records, lacking)))
    return found
