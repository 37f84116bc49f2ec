"""Search across every session of the open root: the background index and the queries the pane asks for.

The index belongs to an ``IndexWorker`` (its own thread, loop and store: ``controllers.search_index``)
started a moment after the root's first listing (``start_delay_ms``: the list, the diagnoses and the
first session view go first).  Watched changes reach it through ``index_paths`` (the watcher's session
folders, a changed row's transcript), debounced by ``PATHS_DEBOUNCE_MS``, so a new session is
searchable within about a second.  A missing, corrupt or outdated index is rebuilt by the worker and
said in the status bar (``message``), never in a dialog.

Queries never run on the GUI thread: each runs on the executor (``in_thread``) on the index file's own
read connection; one runs at a time and only the newest asked for is run next, so typing fast costs
one query per pause, not one per key.  A result that is no longer the latest asked for is dropped.
A query is two steps: the hits shown (``results_ready``, ~4 ms of SQL for a common word on 10,000
sessions), then their whole counts (``counts_ready``, 30-100 ms), skipped when a newer query waits.

May import: PySide6 (QObject, QTimer, signals), ``runtime``, ``controllers.search_index`` and
``app.search``; never a widget.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.gui.controllers.search_index import IndexWorker
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.worker_threads import Progress, in_thread
from app.search import IndexReport, SearchFilters, SearchQueryError, SearchResult

log = logging.getLogger(__name__)

INDEX_START_DELAY_MS = 1500  # after the first listing: the list, diagnoses and first view go first
PATHS_DEBOUNCE_MS = 150  # watched changes are gathered this long before the index is asked to catch up
GATE_POLL_MS = 200  # while diagnosis goes first (``may_start`` says no), the start is tried again this often
GATE_MAX_MS = 30_000  # ...but never longer than this: a search index still gets built on a very slow root
COUNTS_POLL_MS = 500  # how often the pane's index line follows a running full run
SHOW_PROGRESS_MIN = 2  # runs planning fewer sessions than this are not shown in the status bar (a watched append)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One query the pane asked for."""

    query: str
    filters: SearchFilters
    serial: int


@dataclass(frozen=True, slots=True)
class IndexState:
    """What the pane says about the index under its results."""

    building: bool  # a full run is in progress
    done: int
    total: int
    stopped: bool  # the last full run was stopped before its end
    ready: bool  # a full run finished at least once (results cover the whole root)

    def text(self) -> str:
        if self.building:
            return f"Indexing {self.done:,} / {self.total:,} sessions: results so far cover the sessions indexed"
        if self.stopped:
            return (
                f"Indexing stopped at {self.done:,} / {self.total:,} sessions: results cover those "
                "(Search ▸ Update the search index goes on)"
            )
        return "" if self.ready else "The search index is being prepared …"


class SearchController(QObject):
    results_ready = Signal(object, object)  # SearchResult, SearchRequest
    counts_ready = Signal(object, object)  # the same SearchResult with its whole counts, SearchRequest
    query_failed = Signal(str, object)  # message, SearchRequest (a typo in the query: said next to the field)
    message = Signal(str)  # for the status bar: the index was created, rebuilt, fell back, failed
    state_changed = Signal(object)  # IndexState
    indexed = Signal(bool)  # a run finished (full?): results may have changed
    progress_started = Signal(object)  # Progress of a full run (the status bar tracks it)
    progress_finished = Signal(object)

    def __init__(
        self,
        jobs: Jobs,
        parent: QObject | None = None,
        *,
        start_delay_ms: int = INDEX_START_DELAY_MS,
        may_start: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.start_delay_ms = start_delay_ms
        # Diagnosis comes before indexing (issue 25): the first full run waits while this says no
        # (the window: some visible row of the list still has no status).
        self.may_start = may_start
        self.gate_waits = 0  # start attempts deferred by ``may_start`` (tests)
        self._gate_waited_ms = 0
        self.root: str | None = None
        self.worker: IndexWorker | None = None
        self.last_request: SearchRequest | None = None
        self.last_result: SearchResult | None = None
        self.runs_finished = 0  # full runs finished (tests and the pane's state)
        self._serial = 0
        self._pending: SearchRequest | None = None
        self._querying = False
        self._state = IndexState(False, 0, 0, False, False)
        self._tracked: Progress | None = None
        self._paths: set[str] = set()
        self._start_timer = QTimer(self)
        self._start_timer.setSingleShot(True)
        self._start_timer.timeout.connect(self._start_worker)
        self._paths_timer = QTimer(self)
        self._paths_timer.setSingleShot(True)
        self._paths_timer.setInterval(PATHS_DEBOUNCE_MS)
        self._paths_timer.timeout.connect(self._flush_paths)
        self._count_timer = QTimer(self)
        self._count_timer.setInterval(COUNTS_POLL_MS)
        self._count_timer.timeout.connect(self._poll_counts)

    @property
    def state(self) -> IndexState:
        return self._state

    @property
    def building(self) -> bool:
        return self._state.building

    # ------------------------------------------------------------ the root and its index

    def set_root(self, root: str | None) -> None:
        """Index ``root`` from now on (None: no root); the previous root's worker is stopped."""
        if root == self.root and (self.worker is not None or self._start_timer.isActive()):
            return
        self._stop_worker()
        self.root = root
        self.last_result = None
        self._state = IndexState(False, 0, 0, False, False)
        self.state_changed.emit(self._state)
        if root is not None:
            self._gate_waited_ms = 0
            self._start_timer.start(max(0, self.start_delay_ms))

    def _start_worker(self) -> None:
        if self.root is None or self.worker is not None:
            return
        if self.may_start is not None and self._gate_waited_ms < GATE_MAX_MS and not self.may_start():
            self.gate_waits += 1
            self._gate_waited_ms += GATE_POLL_MS
            self._start_timer.start(GATE_POLL_MS)
            return
        loop = asyncio.get_event_loop()
        box: list[IndexWorker] = []

        def notify(event: str, payload: Any) -> None:
            # Called on the index thread: hand the event to the GUI thread's loop.  The worker is looked
            # up there, when the box is surely filled (an event may come before the constructor returns).
            try:
                loop.call_soon_threadsafe(self._on_worker_event, box, event, payload)
            except RuntimeError:  # the loop is closed: the window is gone
                pass

        worker = IndexWorker(self.root, notify)
        box.append(worker)
        self.worker = worker
        worker.request_full()
        if self._paths:
            self._flush_paths()

    def _stop_worker(self) -> None:
        self._start_timer.stop()
        self._paths_timer.stop()
        self._paths.clear()
        self._untrack()
        worker, self.worker = self.worker, None
        if worker is not None:
            # Closing waits for the session being indexed: off the GUI thread, and awaited at shutdown.
            self.jobs.spawn(in_thread(worker.close), name="close search index")

    def update_index(self) -> None:
        """Bring the index up to date with the root (F5, Search ▸ Update): only changed sessions are read."""
        if self.worker is None:
            if self.root is not None:
                self._start_timer.start(0)
            return
        self.worker.request_full()

    def rebuild_index(self) -> None:
        """Drop the index and build it again (Search ▸ Rebuild)."""
        if self.worker is None:
            self.update_index()
            return
        self.worker.request_rebuild("asked to rebuild")

    def cancel_indexing(self) -> None:
        """Stop the full run (the status bar's Cancel): what is indexed stays searchable."""
        if self.worker is not None:
            self.worker.cancel()

    def index_paths(self, paths: list[str]) -> None:
        """The watcher saw these session folders change (or a row's transcript changed): index them soon."""
        if self.root is None:
            return
        self._paths.update(paths)
        if not self._paths_timer.isActive():
            self._paths_timer.start()

    def _flush_paths(self) -> None:
        if self.worker is None or not self._paths:
            return  # kept until the worker starts (its full run covers them anyway)
        paths, self._paths = self._paths, set()
        self.worker.request_paths(paths)

    def _on_worker_event(self, box: list[IndexWorker], event: str, payload: Any) -> None:
        worker = box[0] if box else None
        if worker is None or worker is not self.worker:
            return  # a closed root's worker
        if event == "messages":
            for m in payload:
                self.message.emit(f"Search index: {m}")
        elif event == "failed":
            self.message.emit(str(payload))
            self._untrack()
            self._set_state(building=False)
        elif event == "started":
            total, full = payload
            if full:
                self._set_state(building=True, done=0, total=total, stopped=False)
                self._count_timer.start()
                if total >= SHOW_PROGRESS_MIN:
                    self._track(worker.progress)
        elif event == "finished":
            report, full = payload
            self._finished(report, full)

    def _finished(self, report: IndexReport, full: bool) -> None:
        if full:
            self._untrack()
            self.runs_finished += 1
            if report.cancelled:
                self._set_state(building=False, done=report.done, total=report.planned, stopped=True)
            else:
                self._set_state(building=False, done=report.done, total=report.planned, stopped=False, ready=True)
        self.indexed.emit(full)

    def _set_state(self, **changes: Any) -> None:
        s = self._state
        values = {
            "building": s.building,
            "done": s.done,
            "total": s.total,
            "stopped": s.stopped,
            "ready": s.ready,
            **changes,
        }
        self._state = IndexState(**values)
        self.state_changed.emit(self._state)

    def _track(self, progress: Progress) -> None:
        if self._tracked is progress:
            return
        self._untrack()
        self._tracked = progress
        self.progress_started.emit(progress)

    def _untrack(self) -> None:
        tracked, self._tracked = self._tracked, None
        if tracked is not None:
            self.progress_finished.emit(tracked)

    def _poll_counts(self) -> None:
        """While a full run goes on, the pane's "Indexing 3,412 / 10,000 sessions" follows it."""
        worker = self.worker
        if worker is None or not self._state.building:
            self._count_timer.stop()
            return
        done, total = worker.counts
        if (done, total) != (self._state.done, self._state.total):
            self._set_state(done=done, total=total)

    # ------------------------------------------------------------ queries

    def search(self, query: str, filters: SearchFilters) -> SearchRequest | None:
        """Run ``query`` off the GUI thread (the newest request wins); None for an empty query."""
        self._serial += 1
        if not query.strip():
            self._pending = None
            self.last_request = None
            self.last_result = None
            return None
        request = SearchRequest(query, filters, self._serial)
        self.last_request = request
        self._pending = request
        if not self._querying:
            self.jobs.spawn(self._run_queries(), name="search", key="search")
        return request

    def search_again(self) -> None:
        """Run the last query again (the index changed under it)."""
        r = self.last_request
        if r is not None and not self._querying and self._pending is None:
            self.search(r.query, r.filters)

    async def _run_queries(self) -> None:
        self._querying = True
        try:
            while self._pending is not None:
                request, self._pending = self._pending, None
                worker = self.worker
                t0 = time.perf_counter()
                try:
                    if worker is None:
                        result = SearchResult(request.query, "none", 0, 0, True, (), 0.0, ("the search index is not built yet",))
                    else:
                        result = await in_thread(functools.partial(worker.search, count=False), request.query, request.filters)
                except SearchQueryError as err:
                    if request.serial == self._serial:
                        self.query_failed.emit(str(err), request)
                    continue
                log.debug("search %r: %.1f ms", request.query, (time.perf_counter() - t0) * 1000)
                if request.serial != self._serial:
                    continue  # the user typed on: a newer query is pending (or the field was cleared)
                self.last_result = result
                self.results_ready.emit(result, request)
                if result.counted or worker is None or self._pending is not None:
                    continue  # whole already, or the user typed on: the newer query goes first
                try:
                    counts = await in_thread(worker.count, request.query, request.filters)
                except SearchQueryError:
                    continue  # the same query just ran: it cannot fail now, but a changed index could
                if request.serial != self._serial:
                    continue
                result = self.last_result = result.with_counts(counts)
                self.counts_ready.emit(result, request)
        finally:
            self._querying = False

    # ------------------------------------------------------------ lifecycle

    async def close(self) -> None:
        """Stop indexing and wait for the index thread to finish (the window's shutdown awaits it)."""
        self._start_timer.stop()
        self._paths_timer.stop()
        self._untrack()
        worker, self.worker = self.worker, None
        self.root = None
        if worker is not None:
            await in_thread(worker.close)


__all__ = ["INDEX_START_DELAY_MS", "IndexState", "SearchController", "SearchRequest"]
