"""The window's session actions: repair, restore, fork, resume and copying the raw artifact.

Each action is one job (a second one waits its turn: the user is told, nothing is queued).  The
action opens its own writable store on the root for just as long as it runs, while the browser keeps
its read-only one, calls the Qt-free ``plan_*`` of ``app.actions`` (reads only), asks the user
through the window's ``ActionPrompts`` (``controllers.prompts``: the window opens the dialog), and
only then calls the matching ``execute_*`` with the user's choices: the same pair the command line
calls, so the two cannot drift.  A rejected dialog or a cancelled job writes nothing.
Afterwards the list rows it touched are re-scanned at once and the open session is reloaded.

Our own writes are remembered (``app.actions.liveness.OWN_WRITES``, after the writing store has
closed): the guard does not take the fork, repair or restore the window just made for an agent at
work (issue 16 bug 5).  The resume dialog's guard is judged again every second while it is open.
A repair's backup is remembered per session so the banner can offer "Restore backup …" (undo).

A received source (a lone transcript, a support bundle: ``read_only`` says why) is never written:
repair and fork then run on a copy of the session made in a folder the user picks ("Repair a copy …",
"Fork into …"), and the window opens that copy afterwards (``open_copy``); restore and resume are
not offered (a received file has no backups of ours, and resuming would append to it).

Every engine call of an action (each plan and each execute, the backup check) runs inside the
window's collector pause (``runtime.collector``), never the wait for a dialog: the engine's own pause
then nests inside ours and the window's policy stays the one owner of the collector.

May import PySide6.QtCore/QtGui, ``app.actions``, ``app.paths``, the public ``persistence`` package and the
window's runtime, models and other controllers; never a dialog or QtWidgets (it asks through ``prompts``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication

from app.actions import backups as backup_action
from app.actions import copy_artifact as copy_action
from app.actions import fork as fork_action
from app.actions import repair as repair_action
from app.actions import resume as resume_action
from app.actions.artifacts import ArtifactRef
from app.actions.liveness import OWN_WRITES
from app.glossary import EVENT, plural
from app.gui.controllers.prompts import COPY, TERMINAL, ActionPrompts, ResumeQuestion
from app.gui.controllers.session_list import SessionListController
from app.gui.controllers.session_loader import SessionLoader
from app.gui.models.session_row import READABLE, SessionRow
from app.gui.models.sessions import SessionListModel
from app.gui.runtime.collector import collector_paused
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.worker_threads import in_thread
from app.gui.settings import AppSettings
from app.paths import home_dir
from persistence import CoordinatedPersistence, SessionPersistenceError, open_store

log = logging.getLogger(__name__)
REPAIRABLE = ("open-turn", "torn-tail")
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame's first bytes (RFC 8878 §3.1.1)


@asynccontextmanager
async def writable_store(root: str) -> AsyncIterator[CoordinatedPersistence]:
    store = await in_thread(lambda: open_store(root, create=False))
    try:
        yield store
    finally:
        await store.close()


class SessionActions(QObject):
    done = Signal(str, str, str)  # action, outcome ("done" | "cancelled" | "refused" | "failed"), message
    message = Signal(str)
    lost_records_found = Signal(object)  # [(session id, BackupInfo)]: backups holding records their log lacks

    def __init__(
        self,
        *,
        parent: QObject,
        prompts: ActionPrompts,
        jobs: Jobs,
        controller: SessionListController,
        model: SessionListModel,
        loader: SessionLoader,
        settings: AppSettings,
        select_session: Callable[[str], bool],
        show_header: Callable[[], None],
        open_copy: Callable[[str, str], object] | None = None,
    ) -> None:
        super().__init__(parent)
        self.prompts = prompts
        self.jobs = jobs
        self.controller = controller
        self.model = model
        self.loader = loader
        self.settings = settings
        self.select_session = select_session
        self.show_header = show_header
        self.session_id: str | None = None  # the session the last action started on (View > Activity records it)
        self.repair_backups: dict[str, str] = {}  # session id -> the backup its last repair here made
        self.read_only: str | None = None  # why the open source may not be written (None: it may)
        self.open_copy = open_copy  # (root, session id): show a copy "Repair a copy …" / "Fork into …" made

    # What the prompts show now (tests drive them): the action's dialog, the last error box, the file chooser.
    @property
    def dialog(self) -> Any:
        return self.prompts.dialog

    @property
    def error_box(self) -> Any:
        return self.prompts.error_box

    @property
    def file_dialog(self) -> Any:
        return self.prompts.file_dialog

    # ------------------------------------------------------------ what is offered

    @staticmethod
    def can_repair(row: SessionRow | None) -> bool:
        """Repair is offered for crashed and torn logs; for corrupt/unsupported ones the dialog explains why not."""
        return row is not None and row.status in (*REPAIRABLE, "corrupt", "unsupported")

    @staticmethod
    def can_fork(row: SessionRow | None) -> bool:
        return row is not None and row.status in READABLE

    can_resume = can_fork

    @staticmethod
    def can_copy_raw(row: SessionRow | None) -> bool:
        return row is not None and row.path is not None

    @property
    def busy(self) -> bool:
        return self.jobs.running("action")

    def has_repair_backup(self, session_id: str) -> bool:
        """A repair made here left a backup of this session: "Restore backup …" can undo it."""
        return session_id in self.repair_backups

    async def _remember_own_write(self, ref: ArtifactRef | None) -> None:
        """After the writing store closed: this change is ours, not an agent's (the guard skips it)."""
        if ref is not None:
            await in_thread(OWN_WRITES.remember, ref)

    # ------------------------------------------------------------ entry points

    def repair(self, row: SessionRow) -> asyncio.Task[Any] | None:
        return self._spawn("repair", self._repair(row), row)

    def fork(self, row: SessionRow, turn: int | None = None) -> asyncio.Task[Any] | None:
        return self._spawn("fork", self._fork(row, turn), row)

    def resume(self, row: SessionRow) -> asyncio.Task[Any] | None:
        return self._spawn("resume", self._resume(row), row)

    def restore(self, row: SessionRow) -> asyncio.Task[Any] | None:
        return self._spawn("restore", self._restore(row), row)

    def repair_copy(self, row: SessionRow) -> asyncio.Task[Any] | None:
        """Repair a copy of the session in a folder the user picks; the source is only read."""
        return self._spawn("repair", self._on_copy("repair", row, None), row)

    def fork_into(self, row: SessionRow, turn: int | None = None) -> asyncio.Task[Any] | None:
        """Copy the session into a folder the user picks and fork it there; the source is only read."""
        return self._spawn("fork", self._on_copy("fork", row, turn), row)

    can_restore = can_copy_raw

    def ask_copy_raw(self, row: SessionRow) -> None:
        """Choose a destination, then copy (the dialog is non-blocking; ``copy_raw`` does the work)."""
        self.session_id = row.session_id
        ref = self._artifact(row)
        if ref is None:
            self._report("copy", "refused", "This session has no artifact file to copy.")
            return
        plan = copy_action.plan_copy(row.session_id, ref)
        suggested = os.path.join(home_dir(), plan.suggested_name)
        self.prompts.ask_save_path("Copy the raw artifact to …", suggested, lambda path: self.copy_raw(row, path))

    def copy_raw(self, row: SessionRow, dest: str) -> asyncio.Task[Any] | None:
        return self._spawn("copy", self._copy_raw(row, dest), row)

    def _spawn(self, action: str, coro: Any, row: SessionRow) -> asyncio.Task[Any] | None:
        if self.busy:
            coro.close()
            self.message.emit("Another session action is still running; try again when it has finished.")
            return None
        if self.controller.root is None:
            coro.close()
            return None
        self.session_id = row.session_id
        return self.jobs.spawn(self._guard(action, coro), name=f"{action} {row.session_id}", key="action")

    async def _guard(self, action: str, coro: Any) -> None:
        """Typed failures become a report to the user and a ``done`` signal, never a lost task error."""
        try:
            await coro
        except asyncio.CancelledError:
            self.done.emit(action, "cancelled", "cancelled")
            raise
        except repair_action.RepairRefused as err:
            self._report(action, "refused", str(err))
        except resume_action.ResumeLaunchError as err:
            self._report(action, "failed", str(err))
        except (SessionPersistenceError, OSError) as err:
            self._report(action, "failed", f"{type(err).__name__}: {err}")
        except Exception as err:  # a bug must still end in a message, not in a silently dead job
            log.exception("%s failed", action)
            self._report(action, "failed", f"unexpected {type(err).__name__}: {err}")

    # ------------------------------------------------------------ repair

    async def _repair(self, row: SessionRow, copy_root: str | None = None) -> None:
        root = copy_root or self.controller.root
        assert root is not None
        quiet = self.settings.quiet_seconds()
        async with writable_store(root) as store:
            self.message.emit(f"Previewing the repair of {row.session_id} …")
            with collector_paused():
                plan = await repair_action.plan_repair(store, row.session_id, quiet_seconds=quiet)
            answer = await self.prompts.ask_repair(plan.preview, plan.objection)
            force, accept_loss = answer.force, answer.accept_loss
            if answer.copy_requested:
                self.ask_copy_raw(row)
                self.done.emit("repair", "cancelled", "copy the raw artifact instead")
                return
            if not answer.accepted or not plan.preview.repairable:
                if copy_root is not None:
                    raise _CopyUnused
                self.done.emit("repair", "cancelled", "nothing was changed")
                return
            self.message.emit(f"Repairing {row.session_id} …")
            with collector_paused():
                result = await repair_action.execute_repair(
                    store, plan, force=force, quiet_seconds=quiet, accept_loss=accept_loss
                )
        await self._remember_own_write(plan.preview.artifact)
        if result.backup:
            self.repair_backups[row.session_id] = result.backup
        events = plural(result.events_after or 0, EVENT)
        text = f"Repaired {row.session_id}: now {result.status_after}, {events}; backup at {result.backup}"
        if copy_root is not None:
            now = f"now {result.status_after}, {events}"
            text = f"Repaired a copy of {row.session_id} in {copy_root}: {now}"
            self._show_copy(copy_root, row.session_id)
        else:
            await self._refresh(row, reopen=True)
        self.message.emit(text)
        self.done.emit("repair", "done", text)

    # ------------------------------------------------------------ restore a backup

    def check_backups(self) -> asyncio.Task[Any] | None:
        """Look (read-only, in the background) for backups that hold records their log lacks."""
        root = self.controller.root
        if root is None or self.jobs.running("backups"):
            return None
        return self.jobs.spawn(self._check_backups(root), name=f"backup check {root}", key="backups")

    async def _check_backups(self, root: str) -> None:
        try:
            store = await in_thread(lambda: open_store(root, read_only=True, create=False))
            try:
                with collector_paused():
                    found = await backup_action.find_lost_records(store)
            finally:
                await store.close()
        except (SessionPersistenceError, OSError) as err:
            log.warning("backup check of %s failed: %s", root, err)  # a listing problem is shown by the list itself
            return
        if found and root == self.controller.root:
            self.lost_records_found.emit(found)

    async def _restore(self, row: SessionRow) -> None:
        root = self.controller.root
        assert root is not None
        quiet = self.settings.quiet_seconds()
        async with writable_store(root) as store:
            with collector_paused():
                plan = await backup_action.plan_restore(store, row.session_id, quiet_seconds=quiet)
            answer = await self.prompts.ask_restore(
                row.session_id, list(plan.backups), plan.liveness, preferred=self.repair_backups.get(row.session_id)
            )
            chosen, force = answer.chosen, answer.force
            if chosen is None:
                self.done.emit("restore", "cancelled", "nothing was changed")
                return
            with collector_paused():
                result = await backup_action.restore_backup(store, row.session_id, chosen.path, force=force, quiet_seconds=quiet)
        await self._remember_own_write(plan.artifact)
        text = (
            f"Restored {row.session_id} from {os.path.basename(result.restored_from)}; "
            f"the replaced state is backed up at {result.backup_of_current}"
        )
        await self._refresh(row, reopen=True)
        self.message.emit(text)
        self.done.emit("restore", "done", text)

    # ------------------------------------------------------------ fork

    async def _fork(self, row: SessionRow, turn: int | None, copy_root: str | None = None) -> None:
        root = copy_root or self.controller.root
        assert root is not None
        async with writable_store(root) as store:
            # Planned first: the dialog's name field defaults to "<parent title> (fork after turn N)".
            with collector_paused():
                plan = await fork_action.plan_fork(store, row.session_id, turn)
            title = await self.prompts.ask_fork_title(plan, last_turn=turn is None)
            if not title:
                if copy_root is not None:
                    raise _CopyUnused
                self.done.emit("fork", "cancelled", "no session was created")
                return
            with collector_paused():
                result = await fork_action.execute_fork(store, plan, title=title)
        loc = result.location
        new_id = result.child_id
        if copy_root is not None:
            into = f"into {new_id} “{result.title}” in {copy_root}"
            text = f"Forked a copy of {row.session_id} after turn {result.after_turn} {into}"
            self._show_copy(copy_root, new_id)
            self.message.emit(text)
            self.done.emit("fork", "done", text)
            return
        if self.controller.is_jsonl:
            await self._remember_own_write(ArtifactRef("jsonl", loc.path) if loc is not None else None)
        else:
            await self._remember_own_write(ArtifactRef("sqlite", root))
        paths = [os.path.dirname(os.path.dirname(loc.path))] if loc is not None and self.controller.is_jsonl else []
        await self.controller.rescan(paths)
        if self.select_session(new_id):
            self.show_header()  # the Header tab shows the lineage
        events = plural(result.events, EVENT)
        text = f"Forked {row.session_id} after turn {result.after_turn} into {new_id} “{result.title}” ({events})"
        self.message.emit(text)
        self.done.emit("fork", "done", text)

    # ------------------------------------------------------------ resume

    async def _resume(self, row: SessionRow) -> None:
        root = self.controller.root
        assert root is not None
        quiet = self.settings.quiet_seconds()
        async with writable_store(root) as store:
            with collector_paused():
                plan = await resume_action.plan_resume(
                    store, row.session_id, self.settings.resume_template(), root=root, quiet_seconds=quiet
                )
            checker = _LivenessRecheck(store, quiet)
            try:
                answer = await self.prompts.ask_resume(plan, checker.start)
            finally:
                await checker.stop()
            code, command, force, confirmed, template = (
                answer.choice,
                answer.command,
                answer.force,
                answer.repair_confirmed,
                answer.template,
            )
            plan = answer.plan  # with the guard's latest verdict
            if code not in (TERMINAL, COPY) or command is None:
                self.done.emit("resume", "cancelled", "nothing was changed")
                return
            self.settings.set_resume_template(template)
            if code == COPY and not plan.repair_on_copy(repair_confirmed=confirmed, force=force):
                # Copying writes nothing: no guard, no repair, no store call.
                QGuiApplication.clipboard().setText(command.text)
                note = " (nothing was written: the session needs repair first)" if plan.needs_repair else ""
                text = f"Copied to the clipboard: {command.text}{note}"
                self.message.emit(text)
                self.done.emit("resume", "done", text)
                return
            with collector_paused():
                outcome = await resume_action.execute_resume(
                    store,
                    plan,
                    repair_confirmed=confirmed,
                    force=force,
                    open_terminal=code == TERMINAL,
                    quiet_seconds=quiet,
                )
        repaired = "" if outcome.backup is None else f" (repaired first; backup at {outcome.backup})"
        if outcome.backup is not None:
            await self._remember_own_write(plan.preview.artifact)
            self.repair_backups[row.session_id] = outcome.backup
            await self._refresh(row, reopen=True)
        if outcome.launched:
            text = f"Started in a terminal: {outcome.command.text}{repaired}"
        else:
            QGuiApplication.clipboard().setText(outcome.command.text)
            text = f"Copied to the clipboard: {outcome.command.text}{repaired}"
        self.message.emit(text)
        self.done.emit("resume", "done", text)

    # ------------------------------------------------------------ on a copy (a received, read-only source)

    async def _on_copy(self, action: str, row: SessionRow, turn: int | None) -> None:
        verb = "Repair a copy of" if action == "repair" else "Fork a copy of"
        folder = await self.prompts.ask_folder(f"{verb} {row.session_id} into …", home_dir())
        if not folder:
            self.done.emit(action, "cancelled", "nothing was written")
            return
        copy = await self._copy_into(row, os.path.abspath(folder))
        try:
            await in_thread(OWN_WRITES.remember, ArtifactRef(copy.kind, copy.artifact))  # our copy, not an agent at work
            if action == "repair":
                await self._repair(row, copy.root)
            else:
                await self._fork(row, turn, copy.root)
        except _CopyUnused:
            await in_thread(copy.remove)  # cancelled: the folder is left as it was
            self.done.emit(action, "cancelled", "nothing was written")
        except BaseException:
            await in_thread(copy.remove)
            raise

    async def _copy_into(self, row: SessionRow, folder: str) -> SessionCopy:
        """The session's artifact copied to where a store in ``folder`` keeps it (the folder becomes, or
        joins, a root); a SQLite store is copied whole, under its own name."""
        ref = self._artifact(row)
        if ref is None or ref.kind == "sqlite" or row.meta is None:
            target = os.path.join(folder, os.path.basename(ref.path if ref is not None else "store.sqlite"))
            copy = await in_thread(copy_session_into, ref, target)
            return replace(copy, root=target)
        backend = "jsonl-zstd" if await in_thread(_is_zstd, ref.path) else "jsonl-none"  # by content, not by name
        dest = await in_thread(lambda: open_store(folder, backend, create=False))
        try:
            loc = dest.locate(row.meta)
        finally:
            await dest.close()
        if loc is None:
            raise repair_action.RepairRefused(f"{folder} has no place for session {row.session_id}")
        copy = await in_thread(copy_session_into, ref, loc.path)
        return replace(copy, root=folder)

    def _show_copy(self, root: str, session_id: str) -> None:
        if self.open_copy is not None:
            self.open_copy(root, session_id)

    # ------------------------------------------------------------ copy raw

    def _artifact(self, row: SessionRow) -> ArtifactRef | None:
        if self.controller.is_jsonl:
            return ArtifactRef("jsonl", row.path) if row.path else None
        root = self.controller.root
        return ArtifactRef("sqlite", root) if root else None

    async def _copy_raw(self, row: SessionRow, dest: str) -> None:
        plan = copy_action.plan_copy(row.session_id, self._artifact(row))
        path = await in_thread(copy_action.execute_copy, plan, dest)
        text = f"Copied the raw artifact of {row.session_id} to {path}"
        self.message.emit(text)
        self.done.emit("copy", "done", text)

    # ------------------------------------------------------------ plumbing

    async def _refresh(self, row: SessionRow, *, reopen: bool) -> None:
        """Our own write: re-list the row now (not at the next watch event) and reload it if it is open."""
        await self.controller.rescan([os.path.dirname(row.path)] if row.path and self.controller.is_jsonl else [])
        fresh = self.model.get(row.key)
        if reopen and fresh is not None:
            self.loader.reopen(fresh)

    def _report(self, action: str, outcome: str, text: str) -> None:
        self.prompts.report(f"{action.capitalize()} — {outcome}", text)
        self.message.emit(text)
        self.done.emit(action, outcome, text)


class _CopyUnused(Exception):
    """The user cancelled after the copy was made: it is removed again."""


@dataclass(frozen=True, slots=True)
class SessionCopy:
    """A session copied into a folder the user picked: the root a store opens there, and what was made."""

    root: str  # the folder (a JSONL root) or the copied SQLite store file (set once made)
    kind: str  # "jsonl" | "sqlite"
    artifact: str  # the copied file
    made_dirs: tuple[str, ...]  # folders created for it, innermost first

    def remove(self) -> None:
        """Undo the copy: the file, then the folders made for it while they are empty."""
        for path in (self.artifact, self.artifact + "-wal", self.artifact + "-shm"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        for folder in self.made_dirs:
            try:
                os.rmdir(folder)
            except OSError:
                break


def _is_zstd(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == ZSTD_MAGIC


def copy_session_into(ref: ArtifactRef | None, target: str) -> SessionCopy:
    """Copy one session's artifact to ``target`` (never over a file), making the folders it needs.

    The source is only read (``repair.export_artifact``: a temporary name, then a rename).
    """
    if ref is None:
        raise repair_action.RepairRefused("this session has no artifact file to copy")
    if os.path.lexists(target):
        raise repair_action.RepairRefused(f"{target} already exists; choose another folder (nothing was written)")
    made: list[str] = []
    parent = os.path.dirname(target)
    while not os.path.isdir(parent):
        made.append(parent)
        parent = os.path.dirname(parent)
    for d in reversed(made):
        os.mkdir(d)
    copy = SessionCopy("", ref.kind, target, tuple(made))
    try:
        repair_action.export_artifact(ref, target)
    except BaseException:
        copy.remove()
        raise
    return copy


class _LivenessRecheck:
    """Answers the resume question's re-check requests with a fresh guard verdict, one check at a time."""

    def __init__(self, store: CoordinatedPersistence, quiet_seconds: float) -> None:
        self.store = store
        self.quiet_seconds = quiet_seconds
        self.task: asyncio.Task[Any] | None = None
        self.stopped = False

    def start(self, question: ResumeQuestion) -> None:
        if self.stopped or (self.task is not None and not self.task.done()):
            return  # the previous check is still running (a slow process scan): skip this tick
        self.task = asyncio.ensure_future(self._check(question))

    async def _check(self, question: ResumeQuestion) -> None:
        try:
            with collector_paused():
                fresh = await resume_action.recheck_liveness(self.store, question.plan, quiet_seconds=self.quiet_seconds)
        except (SessionPersistenceError, OSError) as err:
            log.warning("re-checking the liveness guard failed: %s", err)  # the last verdict stands
            return
        if not self.stopped:
            question.set_plan(fresh)

    async def stop(self) -> None:
        """Before the store closes: no check may still be using it."""
        self.stopped = True
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
