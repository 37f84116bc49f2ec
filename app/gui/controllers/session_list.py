"""Keeps the session list in step with a root: first listing, watched changes, the periodic poll.

Every refresh is a diff against what the model holds: a changed revision updates one row, a new
artifact inserts a row, a vanished one removes its row.  The model is never reset while a root is open.

One bad session is one bad row (the scan turns every entry it cannot use into a row with its reason;
a SQLite store whose ``list()`` rejects as a whole is read row by row).  Only a bad root, one that
cannot be listed at all, is an error, and it is shown in the list area (``root_failed``), never left
as a traceback and an empty "0 sessions" list.

The opened root is one value, ``OpenRoot`` (path, read-only store, backend), that the loader, the
diagnosis pass and the session actions take from here.

Unseen sessions (issue 16): which revision of each session the user last opened, and when the root was
last visited, are kept per root in the window's QSettings (``seenSessions/<hash of the root>``, one JSON
value, at most ``SEEN_MAX_PER_ROOT`` sessions).  The model marks from them; this loads them when a
root opens and saves them ``SEEN_SAVE_MS`` after a change (and when the root closes).  A session never
opened counts as unseen when it was modified after the previous visit began; on a first visit, after
this one began (so what changes while the window is open is marked).

May import: PySide6 (QObject/QTimer/QSettings/signals only), the models, ``runtime``, the other
controllers' Qt-free values and the diagnosis pass, and the public ``persistence`` package; never a widget.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from PySide6.QtCore import QObject, QSettings, QTimer, Signal

from app.gui.controllers.diagnosis_pass import DiagnosisPass
from app.gui.controllers.open_root import OpenRoot
from app.gui.controllers.root_watcher import RootWatcher
from app.gui.models.session_row import SessionRow
from app.gui.models.sessions import SessionListModel
from app.gui.runtime.collector import collector_paused
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.viewer_store import ViewerStore, open_for_viewing
from app.gui.runtime.worker_processes import scan_project, shared_pool
from app.gui.runtime.worker_threads import in_thread
from app.listing.root_scan import (
    FoundArtifact,
    artifacts_in_project_dir,
    artifacts_in_session_dir,
    found_artifact,
    project_dirs,
    root_problem_rows,
    scan_root,
)
from persistence import CoordinatedPersistence, upstream_class_of

DEFAULT_POLL_MS = 5000
BATCH_MS = 120  # listing batches reach the model at most this often
FLUSH_ROWS = 1000  # rows moved into the model per GUI-thread slice (~10-25 ms)
SLICE_GAP_MS = 15  # between slices the view repaints (~25 ms for a full table) instead of queueing behind them
SEEN_SAVE_MS = 1000  # the looked-at state is written at most this long after it changed
SEEN_GROUP = "seenSessions"


def diff_listing(shown: dict[str, str | None], found: list[FoundArtifact]) -> tuple[list[str], list[FoundArtifact]]:
    """(keys that vanished, artifacts that are new or changed) — run off the GUI thread for big roots."""
    seen = set()
    fresh = []
    for a in found:
        seen.add(a.key)
        if shown.get(a.key, "\0absent") != a.revision:
            fresh.append(a)
    return [k for k in shown if k not in seen], fresh


class SessionListController(QObject):
    listing_finished = Signal(int)  # rows listed
    root_failed = Signal(str)
    session_changed = Signal(str)  # key of a row whose artifact changed
    session_removed = Signal(str)
    message = Signal(str)

    def __init__(
        self,
        model: SessionListModel,
        jobs: Jobs,
        details: DiagnosisPass,
        *,
        poll_ms: int = DEFAULT_POLL_MS,
        settings: QSettings | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.settings = settings  # where the looked-at state lives (None: kept for this run only)
        self._next_baseline_ns: int | None = None  # when this visit began: the next visit's baseline
        self._seen_timer = QTimer(self)
        self._seen_timer.setSingleShot(True)
        self._seen_timer.setInterval(SEEN_SAVE_MS)
        self._seen_timer.timeout.connect(self.save_seen)
        model.seen_changed.connect(self._seen_timer.start)
        self.jobs = jobs
        self.details = details
        self.root: str | None = None  # the root asked for (set even when it cannot be opened)
        self.opened: OpenRoot | None = None  # the root whose store is open
        self.listed = asyncio.Event()
        self._generation = 0
        self._header_cache: dict[Any, Any] = {}
        self._cancel_scan = threading.Event()
        self._dirty: set[str] = set()
        self._told_one_by_one = False  # the "rows shown one by one" note is said once per root, not every poll
        self.watcher = RootWatcher(parent=self)
        self.watcher.changed.connect(self.on_paths_changed)
        self.watcher.failed.connect(self.message)
        self._pending: list[FoundArtifact | SessionRow] = []
        self._batch_timer = QTimer(self)
        self._batch_timer.setSingleShot(True)
        self._batch_timer.setInterval(BATCH_MS)
        self._batch_timer.timeout.connect(self._flush_found)
        self._poll_ms = poll_ms
        self._poll_again = False
        self._poll = QTimer(self)
        self._poll.setInterval(poll_ms)
        self._poll.timeout.connect(self.poll)

    @property
    def store(self) -> ViewerStore | None:
        return None if self.opened is None else self.opened.store

    @property
    def is_jsonl(self) -> bool:
        return True if self.opened is None else self.opened.is_jsonl

    @property
    def scans_folder(self) -> bool:
        """Rows come from walking the root's folders (a JSONL root), else from the store's snapshots
        (a SQLite store, a lone transcript)."""
        return self.is_jsonl and (self.root is None or os.path.isdir(self.root))

    # ------------------------------------------------------------ opening a root

    def open_root(
        self,
        root: str,
        opener: Callable[[], CoordinatedPersistence] | None = None,
        shown_paths: tuple[tuple[str, str], ...] = (),
    ) -> asyncio.Task[Any]:
        """List ``root``; ``opener`` opens its store (a received source's part: read-only whatever it is);
        ``shown_paths`` names its files as the user knows them (``OpenRoot.shown``: a bundle's, not our extraction)."""
        return self.jobs.spawn(self._open_root(root, opener, shown_paths), name="open-root", key="list")

    async def _open_root(
        self, root: str, opener: Callable[[], CoordinatedPersistence] | None = None, shown_paths: tuple[tuple[str, str], ...] = ()
    ) -> None:
        await self._close_root()
        self._generation += 1
        generation = self._generation
        self.root = os.path.abspath(root)
        self._told_one_by_one = False
        self.listed.clear()
        self.model.clear()
        self.model.root_folder = None
        self._load_seen(self.root)
        if not os.path.exists(self.root):
            self.root_failed.emit(f"No session root at {self.root}")
            self.listed.set()
            self.listing_finished.emit(0)
            return
        try:
            path = self.root
            store = ViewerStore(await in_thread(opener or (lambda: open_for_viewing(path))))
        except Exception as err:
            self.root_failed.emit(f"Cannot open {self.root}: {err}")
            self.listed.set()
            self.listing_finished.emit(0)
            return
        # A lone transcript (a received file) is JSONL without a root folder: listed as a store is.
        opened = self.opened = OpenRoot(self.root, store, store.engine.kind == "jsonl", shown_paths)
        self.model.root_folder = self.root if os.path.isdir(self.root) else os.path.dirname(self.root)
        self.details.set_root(opened)
        with collector_paused():
            try:
                if self.scans_folder:
                    await self._list_jsonl(self.root, lambda batch: self._add_found(generation, batch))
                else:
                    rows = await self._snapshot_rows()
                    self._pending.extend(rows)
            except Exception as err:  # a bad root: say so where the sessions would be
                if generation != self._generation:
                    return
                self._batch_timer.stop()
                self._pending = []
                self.root_failed.emit(f"Cannot list {self.root}: {_error_text(err)}")
                self.listed.set()
                self.listing_finished.emit(self.model.total)
                return
            if generation != self._generation:
                return
            self._batch_timer.stop()
            while self._pending:
                self._flush_found()
                self._batch_timer.stop()  # this loop paces the remaining slices itself
                await asyncio.sleep(SLICE_GAP_MS / 1000)  # painting and input run between slices
            if generation != self._generation:
                return
        self.listed.set()
        self._seen_timer.start()  # this visit's start becomes the next visit's baseline
        self.listing_finished.emit(self.model.total)
        await self.watcher.start(self.root)
        self._poll.start()

    async def _list_jsonl(self, root: str, on_batch: Any) -> list[FoundArtifact]:
        """Every artifact under ``root``: project directories in worker processes when possible."""
        loop = asyncio.get_running_loop()
        pool = shared_pool()
        if pool is not None:
            projects = await in_thread(project_dirs, root)
            futures: list[asyncio.Future[list[FoundArtifact]]] = []
            found = await in_thread(root_problem_rows, root)
            if found and on_batch is not None:
                on_batch(list(found))
            try:
                futures = [loop.run_in_executor(pool, scan_project, p) for p in projects[1:]]
                if projects:
                    # The first project is read on a thread: its rows show while worker processes start up.
                    head, cache = projects[0], self._header_cache
                    futures.insert(0, asyncio.ensure_future(in_thread(lambda: list(artifacts_in_project_dir(head, cache)))))
                for fut in asyncio.as_completed(futures):
                    batch = await fut
                    found.extend(batch)
                    if batch and on_batch is not None:
                        on_batch(batch)
                return found
            except (BrokenProcessPool, OSError, RuntimeError):
                for f in futures:  # fall back to a thread scan; rows already shown are deduplicated by key
                    f.cancel()
        self._cancel_scan = cancel = threading.Event()

        def thread_batch(batch: list[FoundArtifact]) -> None:  # scanner thread
            if on_batch is not None:
                loop.call_soon_threadsafe(on_batch, batch)

        found = await in_thread(
            lambda: scan_root(root, on_batch=thread_batch, cancel=cancel, header_cache=self._header_cache), cancel=cancel
        )
        await asyncio.sleep(0)  # let the last batch callback run
        return found

    def _add_found(self, generation: int, batch: list[FoundArtifact]) -> None:
        """Listing batches are coalesced: the first shows at once, later ones every ~120 ms."""
        if generation != self._generation:
            return
        first = not self._pending and self.model.total == 0
        self._pending.extend(batch)
        if first:
            self._flush_found()
        elif not self._batch_timer.isActive():
            self._batch_timer.start(BATCH_MS)

    def _flush_found(self) -> None:
        """Move up to ``FLUSH_ROWS`` listed artifacts into the model; the rest follow in later slices."""
        batch, self._pending = self._pending[:FLUSH_ROWS], self._pending[FLUSH_ROWS:]
        rows = [a if isinstance(a, SessionRow) else SessionRow.from_artifact(a) for a in batch]
        self.model.append_rows(rows)
        self.details.request([r.key for r in rows if r.needs_details])
        if self._pending and not self._batch_timer.isActive():
            self._batch_timer.start(SLICE_GAP_MS)

    async def _snapshot_rows(self) -> list[SessionRow]:
        store, opened = self.store, self.opened
        assert store is not None and opened is not None
        if opened.is_jsonl:  # a lone transcript: what ``sessionscope list`` shows, a damaged header as a bad row
            rows = await self._transcript_rows(store)
        else:
            try:
                snaps = await store.list_snapshots()
            except Exception as err:
                rows = await self._rows_one_by_one(store, err)
            else:
                rows = []
                for s in snaps:
                    meta = s.header.to_json()
                    loc = store.locate(meta)
                    rows.append(SessionRow.from_snapshot(meta, s.revision, None if loc is None else loc.path))
        for r in rows:
            if r.problem is not None:  # a bad row's reason names a received file as the user knows it
                r.problem = opened.shown(r.problem)
        # Size/Modified: only sessions whose revision moved are measured again (all on the first listing);
        # a bad row keeps what its listing measured (the engine has no session of that id to ask about).
        changed = []
        for r in rows:
            if r.problem_status is not None:
                continue
            old = self.model.get(r.key)
            if old is not None and old.revision == r.revision:
                r.size, r.modified_ns = old.size, old.modified_ns
            else:
                changed.append(r)
        if changed:
            ids = None if len(changed) == len(rows) else [r.session_id for r in changed]
            facts = await store.session_sizes(ids)
            for r in changed:
                size, last_ms = facts.get(r.session_id, (None, None))
                r.size = size
                r.modified_ns = None if last_ms is None else last_ms * 1_000_000
        return rows

    @staticmethod
    async def _transcript_rows(store: ViewerStore) -> list[SessionRow]:
        """The rows of a lone transcript: its session, or one bad row saying why it is none (a header that
        fails validation: ``list_snapshots`` skips it, as a root's scan would not)."""
        rows = []
        for e in await store.list_entries():
            if e.problem is None and e.meta is not None and e.revision is not None:
                loc = store.locate(e.meta)
                rows.append(SessionRow.from_snapshot(e.meta, e.revision, None if loc is None else loc.path))
            else:
                rows.append(SessionRow.from_artifact(found_artifact(e)))
        return rows

    async def _rows_one_by_one(self, store: ViewerStore, list_error: Exception) -> list[SessionRow]:
        """Rows of a store whose ``list()`` rejects as a whole (SQLite: one row fails validation, upstream
        rejects them all): every valid row, and one bad row per invalid one.  Raises ``list_error`` when the
        store cannot be read row by row either (a bad store)."""
        try:
            entries = await store.list_entries()
        except Exception:
            raise list_error from None
        rows = []
        for e in entries:
            if e.problem is not None:
                rows.append(SessionRow.bad_row(f"id:{e.session_id}", e.session_id, e.problem, "corrupt"))
            elif e.meta is not None and e.revision is not None:  # a good row (``ListedEntry`` sets both)
                loc = store.locate(e.meta)
                rows.append(SessionRow.from_snapshot(e.meta, e.revision, None if loc is None else loc.path))
        if not self._told_one_by_one:
            self._told_one_by_one = True
            self.message.emit(f"This store's list() fails as a whole ({_error_text(list_error)}); its rows are shown one by one")
        return rows

    async def _close_root(self) -> None:
        if self._seen_timer.isActive():
            self.save_seen()
        self._poll.stop()
        self._batch_timer.stop()
        self._pending = []
        self._cancel_scan.set()
        await self.watcher.stop()
        self.details.set_root(None)
        opened, self.opened = self.opened, None
        if opened is not None:
            await opened.store.close()

    async def close(self) -> None:
        self._generation += 1
        await self._close_root()

    # ------------------------------------------------------------ unseen sessions

    @staticmethod
    def _seen_key(root: str) -> str:
        return f"{SEEN_GROUP}/{hashlib.sha1(root.encode('utf-8', 'surrogateescape'), usedforsecurity=False).hexdigest()[:20]}"

    def _load_seen(self, root: str) -> None:
        """Give the model ``root``'s looked-at state (a missing or unreadable value: nothing looked at yet)."""
        self._seen_timer.stop()
        now = time.time_ns()
        self._next_baseline_ns = now
        seen: dict[str, str | None] = {}
        baseline: int | None = None
        raw: Any = None if self.settings is None else self.settings.value(self._seen_key(root))
        if isinstance(raw, str):
            try:
                value = json.loads(raw)
            except ValueError:
                value = None
            if isinstance(value, dict) and value.get("root") == root:
                got = value.get("seen")
                if isinstance(got, dict):
                    seen = {k: v for k, v in got.items() if isinstance(k, str) and (v is None or isinstance(v, str))}
                b = value.get("baseline_ns")
                baseline = b if isinstance(b, int) and not isinstance(b, bool) else None
        self.model.set_seen_state(seen, baseline if baseline is not None else now)

    def save_seen(self) -> None:
        """Write the open root's looked-at state now (the model's, with this visit's start as the baseline)."""
        self._seen_timer.stop()
        if self.settings is None or self.root is None:
            return
        seen, _baseline = self.model.seen_state()
        value = {"root": self.root, "baseline_ns": self._next_baseline_ns, "seen": seen}
        self.settings.setValue(self._seen_key(self.root), json.dumps(value, separators=(",", ":")))

    # ------------------------------------------------------------ refreshing

    def on_paths_changed(self, targets: list[str]) -> None:
        if not self.scans_folder:  # a SQLite store changed: its snapshots say which sessions
            self.poll()
            return
        self._dirty.update(targets)
        if not self.jobs.running("refresh"):
            self.jobs.spawn(self._refresh_dirty(), name="refresh", key="refresh")

    async def _refresh_dirty(self) -> None:
        while self._dirty and self.root is not None:
            targets = sorted(self._dirty)
            self._dirty.clear()
            generation = self._generation
            found = await in_thread(self._scan_targets, self.root, targets)
            if generation != self._generation:
                return
            for target, artifacts in found:
                self._apply(target, artifacts)

    async def rescan(self, paths: list[str]) -> None:
        """Bring the rows under ``paths`` (session or project directories) up to date now, after our own write.

        A SQLite store has no per-session files: its snapshots are polled instead.
        """
        if self.root is None or self.store is None:
            return
        if not self.scans_folder:
            await self._poll_once()
            return
        generation = self._generation
        found = await in_thread(self._scan_targets, self.root, paths)
        if generation == self._generation:
            for target, artifacts in found:
                self._apply(target, artifacts)

    def _scan_targets(self, root: str, targets: list[str]) -> list[tuple[str, list[FoundArtifact]]]:
        out = []
        for target in targets:
            rel = os.path.relpath(target, root)
            depth = len([p for p in rel.split(os.sep) if p and p != "."])
            project = rel.split(os.sep)[0]
            if depth == 1 and os.path.islink(target):  # a project link: a problem row when it leads out of the root
                arts = [a for a in root_problem_rows(root) if a.path == target]
            elif depth == 1:
                arts = list(artifacts_in_project_dir(target, self._header_cache)) if os.path.isdir(target) else []
            elif os.path.isdir(target):
                arts = artifacts_in_session_dir(target, project, self._header_cache)
            elif os.path.isfile(target) and (target.endswith(".jsonl") or target.endswith(".jsonl.zstd")):
                arts = [a for a in artifacts_in_project_dir(os.path.dirname(target), self._header_cache) if a.path == target]
            else:
                arts = []
            out.append((target, arts))
        return out

    def poll(self) -> None:
        """The periodic safety net for what watching misses (and F5)."""
        if self.root is None or not self.listed.is_set():
            return
        if self.jobs.running("poll"):
            self._poll_again = True  # a change arrived mid-poll: look once more when this one ends
            return
        self.jobs.spawn(self._poll_loop(), name="poll", key="poll")

    async def _poll_loop(self) -> None:
        self._poll_again = True
        while self._poll_again:
            self._poll_again = False
            await self._poll_once()

    def refresh(self) -> None:
        self._header_cache.clear()
        self.poll()

    async def _poll_once(self) -> None:
        generation = self._generation
        root = self.root
        if root is None or self.store is None:
            return
        try:
            await self._poll_listing(generation, root)
        except Exception as err:  # the root went bad meanwhile: keep the rows, say why they are stale
            if generation == self._generation:
                self.message.emit(f"Cannot list {root}: {_error_text(err)}")

    async def _poll_listing(self, generation: int, root: str) -> None:
        if self.scans_folder:
            started = asyncio.get_running_loop().time()
            found = await self._list_jsonl(root, None)
            if generation != self._generation:
                return
            shown = {k: r.revision for k, r in ((k, self.model.get(k)) for k in list(self.model.keys())) if r is not None}
            gone, fresh = await in_thread(diff_listing, shown, found)
            if generation == self._generation and (gone or fresh):
                self._apply_rows(
                    set(gone) | {a.key for a in fresh if a.key in shown}, [SessionRow.from_artifact(a) for a in fresh]
                )
            # A big root is polled less often: never more than ~5% of the time spent listing.
            took_ms = int((asyncio.get_running_loop().time() - started) * 1000)
            self._poll.setInterval(max(self._poll_ms, 20 * took_ms))
        else:
            rows = await self._snapshot_rows()
            if generation == self._generation:
                self._apply_rows({r.key for r in self.model.rows()}, rows)

    def _apply(self, target: str, artifacts: list[FoundArtifact]) -> None:
        prefix = target.rstrip(os.sep) + os.sep
        old = {k for k in self.model.keys() if k == target or k.startswith(prefix)}
        self._apply_rows(old, [SessionRow.from_artifact(a) for a in artifacts])

    def _apply_rows(self, old_keys: set[str], rows: list[SessionRow]) -> None:
        """``old_keys``: the rows this listing covers; ``rows``: what the listing found for them."""
        new = {r.key: r for r in rows}
        gone = [k for k in old_keys if k not in new]
        if gone:
            self.model.remove_keys(gone)
            for k in gone:
                self.details.forget(k)
                self.session_removed.emit(k)
        added = [r for k, r in new.items() if k not in old_keys]
        if added:
            self.model.append_rows(added)
            self.details.request([r.key for r in added if r.needs_details])
        for k, r in new.items():
            if k not in old_keys:
                continue
            current = self.model.get(k)
            if current is None or current.same_listing(r):
                continue
            self.model.replace_row(r)
            if r.needs_details:
                self.details.request([k], front=True)
            self.session_changed.emit(k)


def _error_text(err: BaseException) -> str:
    return f"{upstream_class_of(err)}: {err}"
