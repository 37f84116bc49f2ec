"""One-click repair as a transaction that can never destroy a session.

The steps, each refusing with nothing written when its check fails:
1. preview with ``diagnose`` (read-only: a SQLite store through a read-only twin);
2. refuse corrupt / unsupported / busy logs, and a torn tail that holds intact records after the
   damage unless the user accepted that loss (``accept_loss``);
3. the liveness guard (``--force`` is the only override);
4. SQLite: ``PRAGMA quick_check`` and write permission *before* a backup is made;
5. free space for the backup plus the repaired copy;
6. the backup: copied under a temporary name, fsynced, then linked to its final name, so a
   ``.bak-`` file is always complete; its source is checked to be the previewed revision;
7. the engine's pinned commit (``CoordinatedPersistence.repair``): one compare-and-swap, never
   upstream's ``load`` loop that would re-read a racing writer's records as a torn tail.

Both front ends call the same pair: ``plan_repair`` (steps 1 and the liveness verdict, reads only;
the window shows it in a dialog, ``sessionscope repair --dry-run`` prints it) and ``execute_repair``
(steps 2-7, pinned to the planned revision).  ``repair_session`` is the two back to back.
May import the standard library, psutil, ``app.actions`` and the engine.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass, field
from typing import Any

import psutil

from app.actions import repair_words
from app.actions.artifacts import ArtifactRef, artifact_of, read_only_view
from app.actions.liveness import (
    DEFAULT_IN_FLIGHT_SECONDS,
    DEFAULT_QUIET_SECONDS,
    LivenessVerdict,
    assess_liveness,
)
from app.actions.repair_words import LostEvent
from app.records.fields import get_path
from persistence import (
    ArtifactInfo,
    CoordinatedPersistence,
    EventType,
    SessionConflictError,
    SessionPersistenceError,
    copy_artifact_to,
    jsonl_writer_holds,
)

# Room left on the volume beyond the backup and the repaired copy (the harness and the OS need some too).
FREE_SPACE_MARGIN_BYTES = 4 << 20


class RepairRefused(SessionPersistenceError):
    """The repair was not attempted; ``reason`` says why and nothing was written."""


class RepairWriteFailed(RepairRefused, OSError):
    """The commit failed on an OS error (disk full, I/O); the log is unchanged and the backup is named."""


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
    intact_after_damage: int = 0  # records after the damage that parse and would be cut with it
    # What a quiet liveness verdict saw when the plan was made ("idle for 40 s — no harness process found;
    # possibly crashed"): the window's dialog shows it for the user to confirm (``RepairPlan.idle_note``).
    idle_note: str | None = None
    lost: tuple[LostEvent, ...] = ()  # the events the cut destroys (issue 24 item 8)

    @property
    def story(self) -> str:
        """What the repair does to the conversation, before any byte count (``repair_words.story``)."""
        return repair_words.story(
            kind=self.artifact.kind if self.artifact is not None else "jsonl",
            cut_bytes=self.cut_bytes,
            cut_rows=self.cut_rows,
            lost=self.lost,
            recovered=self.recovered_count if (self.cut_bytes or self.cut_rows) else 0,
            closers=self.closers,
        )

    @property
    def lost_lines(self) -> list[str]:
        """One line per lost event (seq, what it is, a short summary)."""
        return repair_words.lost_lines(self.lost, self.artifact.kind if self.artifact is not None else "jsonl")

    @property
    def repairable(self) -> bool:
        return self.status in ("open-turn", "torn-tail")

    def to_json(self) -> dict[str, Any]:
        out = {
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
        if self.intact_after_damage:  # only when there is such damage: the usual preview keeps its shape
            out["intactAfterDamage"] = self.intact_after_damage
        return out


@dataclass(frozen=True, slots=True)
class RepairResult:
    preview: RepairPreview
    backup: str | None
    status_after: str
    events_after: int | None  # None when nothing was written (dry run, nothing to repair)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "preview": self.preview.to_json(),
            "backup": self.backup,
            "statusAfter": self.status_after,
            "eventsAfter": self.events_after,
        }


@dataclass(frozen=True, slots=True)
class RepairPlan:
    """What a repair would write (the preview) and what the liveness guard says about it now."""

    preview: RepairPreview
    # None when it was not assessed: nothing would be written, there is no artifact, or it was not asked for.
    liveness: LivenessVerdict | None = None

    @property
    def session_id(self) -> str:
        return self.preview.session_id

    @property
    def objection(self) -> str | None:
        """The guard's objection as a dialog shows it (see ``LivenessVerdict.objection``); None when quiet."""
        return None if self.liveness is None else self.liveness.objection

    @property
    def idle_note(self) -> str | None:
        """A quiet verdict's facts for the user to confirm ("idle for 40 s — no harness process found; possibly
        crashed"); None when the guard objects or was not asked.  Repairing anyway is the confirmation."""
        return None if self.liveness is None else self.liveness.idle


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
    cut = diag.cut
    cut_bytes = cut.cut_bytes if cut is not None else None
    cut_rows = cut.cut_rows if cut is not None else None
    lost: tuple[LostEvent, ...] = ()
    if cut is not None and cut.lost:
        open_turn = repair_words.closed_turn(diag.closers)
        if open_turn is None:  # no closers: the kept log's last event says which turn the cut falls in
            last = (await read_session_tail(store, session_id)).last_event
            event = last.to_json() if hasattr(last, "to_json") else last
            turn = get_path(event, "data", "turn")
            open_turn = turn if type(turn) is int and get_path(event, "type") != EventType.TURN_END else None
        lost = repair_words.lost_events(cut.lost, open_turn)
    return RepairPreview(
        session_id,
        diag.status,
        diag.reason,
        ref,
        diag.torn_offset,
        cut_bytes,
        diag.recovered_count,
        diag.closers,
        diag.revision,
        cut_rows,
        diag.intact_after_damage,
        lost=lost,
    )


def check_liveness(ref: ArtifactRef, *, quiet_seconds: float = DEFAULT_QUIET_SECONDS, now: float | None = None) -> str | None:
    """Why the artifact looks like it is still being written (file-level signals only), or None."""
    return assess_liveness(ref, quiet_seconds=quiet_seconds, now=now).reason


@dataclass(frozen=True, slots=True)
class SessionTail:
    """The two facts the guard (and the resume command) need from the end of a log."""

    cwd: str | None  # the header's working directory
    last_event: Any  # the last stored event, or None (empty or unreadable log)


async def read_session_tail(store: CoordinatedPersistence, session_id: str) -> SessionTail:
    """The session's cwd and last event from a one-event tail read; empty facts when the tail is damaged."""
    try:
        async with read_only_view(store) as view:
            tail = await view.read_tail(session_id, 1)
    except (SessionPersistenceError, OSError):
        return SessionTail(None, None)  # a damaged tail still gets the file and process checks
    cwd = tail.meta.cwd if isinstance(tail.meta.cwd, str) else None
    return SessionTail(cwd, tail.events[-1] if len(tail.events) else None)


async def assess_session(
    store: CoordinatedPersistence,
    preview: RepairPreview,
    *,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    in_flight_seconds: float = DEFAULT_IN_FLIGHT_SECONDS,
    tail: SessionTail | None = None,
) -> LivenessVerdict:
    """Every liveness signal for the previewed session (see ``assess_artifact``)."""
    assert preview.artifact is not None
    return await assess_artifact(
        store,
        preview.session_id,
        preview.artifact,
        quiet_seconds=quiet_seconds,
        in_flight_seconds=in_flight_seconds,
        tail=tail,
    )


async def assess_artifact(
    store: CoordinatedPersistence,
    session_id: str,
    ref: ArtifactRef,
    *,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    in_flight_seconds: float = DEFAULT_IN_FLIGHT_SECONDS,
    tail: SessionTail | None = None,
) -> LivenessVerdict:
    """Every liveness signal for a session's artifact: file ages, open handles, a harness in its cwd, and
    a call or request still in flight at the end of its log (``tail``: read here when not given).
    Reads only; the process scan runs off the event loop."""
    facts = tail if tail is not None else await read_session_tail(store, session_id)
    return await asyncio.to_thread(
        lambda: assess_liveness(
            ref,
            quiet_seconds=quiet_seconds,
            session_cwd=facts.cwd,
            last_event=facts.last_event,
            in_flight_seconds=in_flight_seconds,
        )
    )


async def plan_repair(
    store: CoordinatedPersistence,
    session_id: str,
    *,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    in_flight_seconds: float = DEFAULT_IN_FLIGHT_SECONDS,
    assess: bool = True,
) -> RepairPlan:
    """The preview and, when a repair would write (and ``assess``), the liveness verdict.  Reads only."""
    preview = await preview_repair(store, session_id)
    verdict = None
    if assess and preview.repairable and preview.artifact is not None:
        verdict = await assess_session(store, preview, quiet_seconds=quiet_seconds, in_flight_seconds=in_flight_seconds)
        if verdict.idle is not None:
            preview = dataclasses.replace(preview, idle_note=verdict.idle)
    return RepairPlan(preview, verdict)


def _partial_name(path: str) -> str:
    return f"{path}.partial-{os.getpid()}-{secrets.token_hex(3)}"


_PARTIAL = re.compile(r"\.bak-\d{8}T\d{6}Z\.partial-(\d+)-[0-9a-f]+(?:-journal)?$")


def remove_stray_partials(ref: ArtifactRef) -> list[str]:
    """Delete half-made backup copies (``.partial-<pid>-…``, and a SQLite copy's ``-journal``) of ``ref``
    whose process is gone: a killed backup leaves one, and each is a full copy of the log."""
    folder, name = os.path.split(ref.path)
    removed: list[str] = []
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return removed
    for n in names:
        m = _PARTIAL.search(n) if n.startswith(name + ".bak-") else None
        if m is None or _pid_alive(int(m.group(1))):
            continue
        try:
            os.unlink(os.path.join(folder, n))
            removed.append(n)
        except OSError:
            pass
    return removed


def _pid_alive(pid: int) -> bool:
    return pid == os.getpid() or bool(psutil.pid_exists(pid))


def _publish(partial: str, base: str) -> str:
    """Give the complete, fsynced ``partial`` its final name ``base`` (or ``base-2``, ``-3``...), never replacing."""
    n = 1
    while True:
        target = base if n == 1 else f"{base}-{n}"
        try:
            os.link(partial, target)  # a link never replaces an earlier backup
        except FileExistsError:
            n += 1
            continue
        except OSError:
            # No hard links on this file system (FAT, some network shares): exclusive create + rename.
            if os.path.exists(target):
                n += 1
                continue
            os.replace(partial, target)
            _fsync_dir(os.path.dirname(target) or ".")
            return target
        _unlink_quietly(partial)
        _fsync_dir(os.path.dirname(target) or ".")
        return target


def _fsync_dir(path: str) -> None:
    try:
        dfd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # Windows cannot open a directory
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _copy_artifact_to(ref: ArtifactRef, target: str) -> None:
    """Copy the artifact into a new private file ``target`` (0600, fsynced): the engine's copy (JSONL bytes and
    times; SQLite's online backup API on a read-only connection, through any ``-wal``)."""
    copy_artifact_to(ArtifactInfo(ref.kind, ref.path, 0, 0.0), target)


def backup_artifact(ref: ArtifactRef, *, now: float | None = None) -> str:
    """Copy the artifact aside before any write; returns the backup path.

    The copy is made under a temporary name, fsynced, then linked to ``<artifact>.bak-<UTC stamp>``
    (``-2``, ``-3``... on collision, never replacing an earlier backup), so a backup under its final
    name is always complete; a kill leaves at most a ``.partial-`` file.  Mode 0600 from the start.
    Upstream ignores other files in the session folder, so a JSONL backup can live beside the transcript.
    """
    remove_stray_partials(ref)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    base = f"{ref.path}.bak-{stamp}"
    partial = _partial_name(base)
    try:
        _copy_artifact_to(ref, partial)
        return _publish(partial, base)
    except BaseException as err:
        _unlink_quietly(partial)
        if isinstance(err, OSError) and err.errno == errno.ENOSPC:
            raise RepairRefused(
                f"the disk filled up while backing up {ref.path}; the partial backup was removed and nothing was changed"
            ) from err
        raise


def export_artifact(ref: ArtifactRef, dest: str) -> str:
    """Copy the raw artifact to ``dest`` (a corrupt log's bytes for analysis); the source is only read.

    The copy is written beside ``dest`` under a temporary name and renamed into place, so an
    interrupted copy never leaves a half file where the user asked for one.
    """
    dest = os.path.abspath(dest)
    if os.path.exists(dest) and os.path.samefile(dest, ref.path):
        raise RepairRefused(f"{dest} is the artifact itself; choose another destination")
    partial = _partial_name(dest)
    try:
        _copy_artifact_to(ref, partial)
        os.replace(partial, dest)
        _fsync_dir(os.path.dirname(dest))
    except BaseException:
        _unlink_quietly(partial)
        raise
    return dest


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _refuse_unrepairable(session_id: str, preview: RepairPreview, accept_loss: bool) -> None:
    if preview.status in ("corrupt", "unsupported"):
        raise RepairRefused(
            f'session "{session_id}" is {preview.status}, not repairable: {preview.reason}. Nothing was changed; '
            "copy the raw artifact for analysis instead."
        )
    if preview.status == "busy":
        raise RepairRefused(
            f'session "{session_id}" cannot be repaired now: {preview.reason}. Nothing was changed; '
            "try again when the writer is done."
        )
    if preview.status == "missing":
        raise RepairRefused(preview.reason)
    if preview.intact_after_damage and not accept_loss:
        raise RepairRefused(
            f'refusing to repair "{session_id}": {preview.intact_after_damage} intact record(s) after the damage would '
            "be cut with the damaged tail (damage followed by valid records is corruption, not a torn write). Nothing "
            "was changed; copy the raw artifact for analysis, or accept the loss explicitly "
            "(--accept-loss on the command line, the confirmation box in the window)."
        )


def refuse_live_writer(ref: ArtifactRef, session_id: str, action: str) -> None:
    """Refuse, even with ``--force``, while a live SessionScope session holds the log: the engine's commit would
    wait for its lock and fail anyway (issue 21 item 1), so no backup is made for nothing."""
    if ref.kind == "jsonl" and jsonl_writer_holds(ref.path):
        raise RepairRefused(
            f'refusing to {action} "{session_id}": a SessionScope writer holds {ref.path} (a live session); '
            "--force cannot override a live writer. Nothing was changed and no backup was made; close that session first."
        )


def _check_writable(ref: ArtifactRef) -> None:
    """Refuse before the backup when the artifact (or, SQLite, its folder for the journal) is not writable."""
    folder = os.path.dirname(ref.path) or "."
    if not os.access(ref.path, os.W_OK) or (ref.kind == "sqlite" and not os.access(folder, os.W_OK)):
        raise RepairRefused(
            f"{ref.path} is not writable by this user (permission denied); nothing was changed and no backup was made"
        )


def _check_space(ref: ArtifactRef) -> None:
    """The backup and the repaired copy (JSONL writes a new file, then swaps it in) must both fit."""
    size = os.stat(ref.path).st_size
    needed = size * (2 if ref.kind == "jsonl" else 1) + FREE_SPACE_MARGIN_BYTES
    free = shutil.disk_usage(os.path.dirname(ref.path) or ".").free
    if free < needed:
        raise RepairRefused(
            f"not enough free space to repair {ref.path}: about {needed:,} bytes needed for the backup and the "
            f"repaired copy, {free:,} free; nothing was changed and no backup was made"
        )


async def repair_session(
    store: CoordinatedPersistence,
    session_id: str,
    *,
    force: bool = False,
    dry_run: bool = False,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    expected_revision: str | None = None,
    accept_loss: bool = False,
    in_flight_seconds: float = DEFAULT_IN_FLIGHT_SECONDS,
) -> RepairResult:
    """Plan and execute in one call (see the module docstring for the steps).

    ``expected_revision`` pins the repair to a preview a user saw earlier; without it the repair is
    pinned to the preview computed here.  The guard is not assessed twice: ``execute_repair`` runs it.
    """
    plan = await plan_repair(store, session_id, assess=False)
    if expected_revision is not None and plan.preview.revision != expected_revision:
        raise RepairRefused(_changed_since_preview(session_id))
    return await execute_repair(
        store,
        plan,
        force=force,
        dry_run=dry_run,
        quiet_seconds=quiet_seconds,
        accept_loss=accept_loss,
        in_flight_seconds=in_flight_seconds,
    )


def _changed_since_preview(session_id: str) -> str:
    return f'session "{session_id}" changed since its repair was previewed; nothing was changed — preview it again'


async def execute_repair(
    store: CoordinatedPersistence,
    plan: RepairPlan,
    *,
    force: bool = False,
    accept_loss: bool = False,
    dry_run: bool = False,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    in_flight_seconds: float = DEFAULT_IN_FLIGHT_SECONDS,
) -> RepairResult:
    """Commit the planned repair unless refused; the commit is pinned to the planned revision.

    ``force`` overrides only the liveness guard, which runs again here on fresh evidence (a dialog may
    have been open for minutes); ``accept_loss`` only the refusal to cut intact records that follow
    damage.  ``dry_run`` stops after the refusals: nothing is written.
    """
    preview = plan.preview
    session_id = preview.session_id
    _refuse_unrepairable(session_id, preview, accept_loss)
    if not preview.repairable or dry_run:
        return RepairResult(
            preview, None, preview.status, None, ["dry run: nothing was written"] if dry_run else ["nothing to repair"]
        )
    ref = preview.artifact
    if ref is None or preview.revision is None:
        raise RepairRefused(f'session "{session_id}" has no on-disk artifact to back up; nothing was changed')
    async with read_only_view(store) as view:  # read-only: a refusal below must leave a SQLite -wal alone
        if await view.read_stored_revision(session_id) != preview.revision:
            raise RepairRefused(_changed_since_preview(session_id))
    if not force:
        verdict = await assess_session(store, preview, quiet_seconds=quiet_seconds, in_flight_seconds=in_flight_seconds)
        refusal = verdict.refusal(session_id)
        if refusal is not None:
            raise RepairRefused(refusal)
    refuse_live_writer(ref, session_id, "repair")
    if ref.kind == "sqlite":
        async with read_only_view(store) as view:
            damage = await view.integrity_check()
        if damage is not None:
            raise RepairRefused(
                f'session "{session_id}" cannot be repaired: the database is damaged (quick_check: '
                f"{damage}). Nothing was changed and no backup was made; copy the raw artifact instead."
            )
    try:
        store.assert_writable_artifact(ref.path)
    except SessionPersistenceError as err:
        raise RepairRefused(f"{err}; nothing was changed and no backup was made") from err
    _check_writable(ref)
    _check_space(ref)
    # A whole copy of the log: off the event loop (in the window that loop is the GUI thread).
    backup = await asyncio.to_thread(backup_artifact, ref)
    if await store.read_stored_revision(session_id) != preview.revision:
        _unlink_quietly(backup)  # a copy of a moving log proves nothing
        raise RepairRefused(f'session "{session_id}" changed while it was backed up; nothing was changed — preview it again')
    try:
        await store.repair(session_id, expected_revision=preview.revision)
    except SessionConflictError as err:
        raise RepairRefused(f'repair of "{session_id}" was not committed: {err}. The backup is at {backup}.') from err
    except (SessionPersistenceError, OSError) as err:
        raise RepairWriteFailed(
            f'repair of "{session_id}" failed: {err}. The log was not changed (the repaired copy is '
            f"swapped in atomically or not at all); the backup is at {backup}."
        ) from err
    async with read_only_view(store) as view:
        after = await view.diagnose(session_id)
    return RepairResult(preview, backup, after.status, after.event_count)
