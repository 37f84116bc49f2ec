"""One-click repair: preview (no writes), liveness guard, fsynced backup, then the engine's ``load``."""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

from app.actions.artifacts import ArtifactRef, artifact_of, last_modified_age_s, read_only_view, sqlite_uri
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
    cut_rows: int | None = None  # how many event rows a SQLite repair deletes

    @property
    def repairable(self) -> bool:
        return self.status in ("open-turn", "torn-tail")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.session_id,
            "status": self.status,
            "reason": self.reason,
            "artifact": None if self.artifact is None else {"kind": self.artifact.kind, "path": self.artifact.path},
            "cutFrom": _json_marker(self.cut_from),
            "cutBytes": self.cut_bytes,
            "cutRows": self.cut_rows,
            "recoveredCount": self.recovered_count,
            "closers": list(self.closers),
        }


@dataclass(frozen=True, slots=True)
class RepairResult:
    preview: RepairPreview
    backup: str | None
    status_after: str
    events_after: int | None  # None when nothing was written (dry run, nothing to repair)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"preview": self.preview.to_json(), "backup": self.backup, "statusAfter": self.status_after,
                "eventsAfter": self.events_after}


def _json_marker(value: Any) -> Any:
    """``cutFrom`` as JSON: an offset stays a number; an opaque backend marker becomes its text."""
    if value is None or isinstance(value, (int, float, str)):
        return value
    return str(value)


async def preview_repair(store: CoordinatedPersistence, session_id: str) -> RepairPreview:
    """What a repair would do, computed with ``diagnose`` (the same pipeline as ``inspect``): writes nothing.

    A SQLite store is read through a read-only twin (see ``read_only_view``), so not even a WAL
    checkpoint happens before the liveness guard and the backup.
    """
    async with read_only_view(store) as view:
        diag = await view.diagnose(session_id)
    ref = None
    if diag.status != "missing":
        try:
            ref = artifact_of(store, session_id)
        except (SessionPersistenceError, OSError):
            # A foreign layout makes the lookup itself fail; diagnose already classified the session.
            if diag.status in ("open-turn", "torn-tail"):
                raise
    cut_bytes = None
    if ref is not None and ref.kind == "jsonl" and isinstance(diag.torn_offset, int):
        cut_bytes = os.stat(ref.path).st_size - diag.torn_offset
    cut_rows = None
    if ref is not None and ref.kind == "sqlite" and isinstance(diag.torn_offset, int):
        cut_rows = _sqlite_rows_from(ref.path, session_id, diag.torn_offset)
    return RepairPreview(session_id, diag.status, diag.reason, ref, diag.torn_offset, cut_bytes,
                         diag.recovered_count, diag.closers, diag.revision, cut_rows)


def _sqlite_rows_from(path: str, session_id: str, seq: int) -> int | None:
    """Event rows a SQLite repair deletes (its torn marker is the first bad seq), read on a read-only connection."""
    try:
        con = sqlite3.connect(sqlite_uri(path, "ro"), uri=True, timeout=1.0)
        try:
            row = con.execute("SELECT count(*) FROM events WHERE session_id = ? AND seq >= ?", (session_id, seq)).fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return int(row[0])


def check_liveness(ref: ArtifactRef, *, quiet_seconds: float = DEFAULT_QUIET_SECONDS, now: float | None = None) -> str | None:
    """Why the artifact looks like it is still being written, or None when it is quiet.

    Writes nothing: the SQLite probe (``BEGIN IMMEDIATE`` then ``ROLLBACK``) runs while a read-only
    connection holds the file open, so closing the probe cannot checkpoint a leftover ``-wal`` into the
    database before the backup is taken.
    """
    age = last_modified_age_s(ref, time.time() if now is None else now)
    if age < quiet_seconds:
        return (f"the artifact changed {age:.1f} s ago (less than {quiet_seconds:g} s): an agent may still be "
                "writing it; wait, or override the guard (confirm in the window, --force on the command line)")
    if ref.kind == "sqlite":
        try:
            pin = sqlite3.connect(sqlite_uri(ref.path, "ro"), uri=True, timeout=0, isolation_level=None)
            try:
                pin.execute("SELECT count(*) FROM sqlite_master").fetchone()
                probe = sqlite3.connect(sqlite_uri(ref.path, "rw"), uri=True, timeout=0, isolation_level=None)
                try:
                    probe.execute("BEGIN IMMEDIATE")
                    probe.execute("ROLLBACK")
                finally:
                    probe.close()
            finally:
                pin.close()
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


def _claim_backup_name(path: str, stamp: str) -> tuple[str, int]:
    """Create ``<path>.bak-<stamp>`` (or ``-2``, ``-3``...) exclusively, private from the start: (name, fd)."""
    n = 1
    while True:
        target = f"{path}.bak-{stamp}" if n == 1 else f"{path}.bak-{stamp}-{n}"
        try:
            return target, os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            n += 1


def _copy_artifact_to(ref: ArtifactRef, target: str, fd: int) -> None:
    """Copy the artifact into ``target`` (already created, open as ``fd``, which this closes); fsynced.

    JSONL: the transcript's bytes (and times).  SQLite: the online backup API, reading through any ``-wal``.
    """
    try:
        if ref.kind == "sqlite":
            os.close(fd)
            fd = -1
            src = sqlite3.connect(sqlite_uri(ref.path, "ro"), uri=True)
            try:
                dst = sqlite3.connect(target)  # the empty file created by the caller is an empty database
                try:
                    src.backup(dst)
                finally:
                    dst.close()
            finally:
                src.close()
        else:
            with open(ref.path, "rb") as f:
                while chunk := f.read(1 << 20):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
            st = os.stat(ref.path)
            os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        if fd >= 0:
            os.close(fd)
    _fsync_file(target)


def backup_artifact(ref: ArtifactRef, *, now: float | None = None) -> str:
    """Copy the artifact aside (fsynced) before any write; returns the backup path.

    The backup is created exclusively with mode 0600 (never replacing an earlier backup).  Upstream
    ignores other files in the session folder, so a JSONL backup can live beside the transcript.
    """
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    target, fd = _claim_backup_name(ref.path, stamp)
    try:
        _copy_artifact_to(ref, target, fd)
    except BaseException:
        _unlink_quietly(target)
        raise
    return target


def export_artifact(ref: ArtifactRef, dest: str) -> str:
    """Copy the raw artifact to ``dest`` (a corrupt log's bytes for analysis); the source is only read.

    The copy is written beside ``dest`` under a temporary name and renamed into place, so an
    interrupted copy never leaves a half file where the user asked for one.
    """
    dest = os.path.abspath(dest)
    if os.path.exists(dest) and os.path.samefile(dest, ref.path):
        raise RepairRefused(f"{dest} is the artifact itself; choose another destination")
    partial = f"{dest}.partial-{os.getpid()}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _copy_artifact_to(ref, partial, fd)
        os.replace(partial, dest)
    except BaseException:
        _unlink_quietly(partial)
        raise
    return dest


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


async def repair_session(
    store: CoordinatedPersistence,
    session_id: str,
    *,
    force: bool = False,
    dry_run: bool = False,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    expected_revision: str | None = None,
) -> RepairResult:
    """Repair ``session_id`` unless refused; ``expected_revision`` pins the repair to the preview a user saw."""
    preview = await preview_repair(store, session_id)
    if expected_revision is not None and preview.revision != expected_revision:
        raise RepairRefused(
            f'session "{session_id}" changed since its repair was previewed; nothing was changed — preview it again'
        )
    if preview.status in ("corrupt", "unsupported"):
        raise RepairRefused(
            f'session "{session_id}" is {preview.status}, not repairable: {preview.reason}. Nothing was changed; '
            "copy the raw artifact for analysis instead."
        )
    if preview.status == "missing":
        raise RepairRefused(preview.reason)
    if not preview.repairable or dry_run:
        return RepairResult(preview, None, preview.status, None,
                            ["dry run: nothing was written"] if dry_run else ["nothing to repair"])
    if preview.artifact is None:
        raise RepairRefused(f'session "{session_id}" has no on-disk artifact to back up; nothing was changed')
    if not force:
        why = check_liveness(preview.artifact, quiet_seconds=quiet_seconds)
        if why is not None:
            raise RepairRefused(f'refusing to repair "{session_id}": {why}')
    backup = backup_artifact(preview.artifact)
    inspection = await store.load(session_id)
    after = await store.diagnose(session_id)
    return RepairResult(preview, backup, after.status, len(inspection.events))
