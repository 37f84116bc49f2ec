"""The background pass that fills status, event count and title into listed rows.

First the root's diagnosis cache (``app.diagnosis.cache``, shared with ``verify`` and ``list``): it
is read once when a root opens (10,000 verdicts, ~1 MB, ~30 ms on a thread), and every listed row
whose log still has the revision a verdict was read at gets its status at once, so a warm reopen
of a 10,000-session root shows every status as soon as the rows are listed (issue 25: 12-48 s
before).  The rest are judged in batches, visible rows first, in worker processes when available
(see ``runtime.worker_processes``) and through the window's ``ViewerStore`` otherwise, and their
verdicts are stored back (on a thread: a command line holding the file makes a write wait).
Results reach the model in batches so a 10k-row list is not repainted 10k times.

Visible rows come first in two ways: a pending row the view paints is ``bump``-ed to the front, and
``visible_settled`` tells the search indexer to wait until every painted row has its status.

The session the window has open (``in_window``) is judged through the window's store even when workers
exist: that store extends its last read of the log by what was appended (``persistence.incremental``),
while a worker read the whole log again on every append of a followed session (~350 ms of a core on
the 202k-event session, issue 25).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from concurrent.futures.process import BrokenProcessPool

from PySide6.QtCore import QObject, QTimer, Signal

from app.diagnosis.cache import DiagnosisCache, cacheable_root, sqlite_place
from app.diagnosis.parallel import judge_chunk, relative_place
from app.diagnosis.verdicts import Verdict, judge
from app.gui.controllers.open_root import OpenRoot
from app.gui.models.session_row import Details, SessionRow
from app.gui.models.sessions import SessionListModel
from app.gui.runtime.collector import settle
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.viewer_store import ViewerStore
from app.gui.runtime.worker_processes import shared_pool
from app.gui.runtime.worker_threads import in_thread

log = logging.getLogger(__name__)
BATCH = 16
Job = tuple[str, str, str, str | None]  # (row key, session id, place, the row's revision)
Known = dict[tuple[str, str], Verdict]


def details_of(v: Verdict, revision: str | None, shown: Callable[[str], str] | None = None) -> Details:
    """What a row shows of a verdict (``revision``: the row's, so the row knows it is up to date; ``shown``:
    ``OpenRoot.shown``, so a received bundle's file is cited by its name in the bundle, not our extraction)."""
    reason = v.reason if shown is None else shown(v.reason)
    return Details(revision, v.status, reason, v.events, v.closers, v.title, v.error_class)


class DiagnosisPass(QObject):
    """Fills ``Details`` into listed rows in the background: from the cache, then visible rows first."""

    progressed = Signal(int)  # rows still waiting
    messages = Signal(list)  # what the cache says of itself (rebuilt, kept in memory), for the status bar

    def __init__(
        self,
        model: SessionListModel,
        jobs: Jobs,
        *,
        flush_ms: int = 200,
        use_processes: bool = True,
        use_cache: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._model = model
        self._jobs = jobs
        self._use_processes = use_processes
        self._use_cache = use_cache
        self._store: ViewerStore | None = None
        self._root: str | None = None
        self._shown: Callable[[str], str] | None = None  # a received source's names for our paths (``OpenRoot.shown``)
        self._backend = ""
        self._sqlite_place = ""
        self._pool: Executor | None = None
        self._cache: DiagnosisCache | None = None
        self._known: Known | None = None  # the cache's verdicts (None: still being read)
        self._held: list[str] = []  # requested before the cache was read
        self._queue: deque[str] = deque()
        self._urgent: deque[str] = deque()
        self._queued: set[str] = set()
        self._painted: set[str] = set()  # pending rows the view painted: the indexer waits for them
        self._in_flight = 0
        self._workers = 0
        self._updates: dict[str, Details] = {}
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._generation = 0
        self._last_waiting = -1
        self.from_cache = 0  # rows whose status came from the cache since the root opened (tests, benchmark)
        self.in_window: Callable[[str], bool] = lambda _key: False  # the row key the window has open
        self._flush = QTimer(self)
        self._flush.setInterval(flush_ms)
        self._flush.timeout.connect(self.flush)
        model.on_pending = self.bump

    # ------------------------------------------------------------ control

    def set_root(self, opened: OpenRoot | None) -> None:
        """Diagnose the rows of ``opened`` from now on (None: stop); what the previous root knew is dropped."""
        store = None if opened is None else opened.store
        root = None if opened is None else opened.path
        for i in range(self._workers):
            self._jobs.cancel(f"details-{i}")
        self._jobs.cancel("details-cache")
        self._generation += 1
        self._close_cache()
        self._store = store
        self._root = root
        self._shown = opened.shown if opened is not None and opened.shown_paths else None
        self._queue.clear()
        self._urgent.clear()
        self._queued.clear()
        self._held.clear()
        self._painted.clear()
        self._updates.clear()
        self._in_flight = 0
        self.from_cache = 0
        self._known = None
        self._idle.set()
        if store is None or root is None:
            self._flush.stop()
            self._workers = 0
            return
        self._backend = ""  # workers open the path as the window did (``open_for_viewing``: sniffed)
        self._sqlite_place = ""
        self._pool = shared_pool() if self._use_processes else None
        self._workers = getattr(self._pool, "_max_workers", 1) if self._pool is not None else 1
        for i in range(self._workers):
            self._jobs.spawn(self._worker(self._generation), name=f"details-{i}", key=f"details-{i}")
        self._jobs.spawn(self._read_cache(self._generation, root, store.engine.kind), name="details-cache", key="details-cache")
        self._flush.start()

    def request(self, keys: Iterable[str], *, front: bool = False) -> None:
        keys = list(keys)
        if not keys:
            return
        self._idle.clear()
        if self._known is None:
            self._held.extend(keys)
            return
        self._enqueue(self._from_cache(keys), front=front)

    def bump(self, key: str) -> None:
        """A pending row became visible: look at it soon (cheap enough to call from ``data()``)."""
        self._painted.add(key)
        if key in self._queued and len(self._urgent) < 256:
            self._urgent.append(key)

    @property
    def waiting(self) -> int:
        return len(self._queued) + self._in_flight + len(self._held)

    async def wait_idle(self) -> None:
        await self._idle.wait()

    def is_idle(self) -> bool:
        return self._idle.is_set() and not self._updates

    def visible_settled(self) -> bool:
        """Whether every row the view painted pending has its status (the search indexer waits for it)."""
        if self._store is None:
            return True
        if self._known is None or self._held:
            return False
        self._painted = {k for k in self._painted if (row := self._model.get(k)) is not None and row.needs_details}
        return not self._painted and not self._urgent

    def forget(self, key: str) -> None:
        """A row left the list (its verdict stays in the cache: the log may come back unchanged)."""
        self._painted.discard(key)

    # ------------------------------------------------------------ the cache

    async def _read_cache(self, generation: int, root: str, kind: str) -> None:
        cache: DiagnosisCache | None = None
        known: Known = {}
        if self._use_cache and cacheable_root(root, kind):
            try:
                cache = await asyncio.to_thread(DiagnosisCache, root, kind)
                known = await asyncio.to_thread(cache.snapshot)
            except Exception as err:  # a cache never stops the list: judge everything instead
                log.warning("the diagnosis cache of %s cannot be used (%s)", root, err)
        if kind == "sqlite":
            place = await asyncio.to_thread(sqlite_place, root)
        else:
            place = ""
        if generation != self._generation:
            if cache is not None:
                cache.close()
            return
        self._cache, self._known, self._sqlite_place = cache, known, place
        if cache is not None and cache.messages:
            self.messages.emit(list(cache.messages))
        held, self._held = self._held, []
        self._enqueue(self._from_cache(held))
        self.flush()  # warm statuses show now, not at the next tick

    def _close_cache(self) -> None:
        cache, self._cache = self._cache, None
        if cache is not None:
            # Off the GUI thread: a store in flight may be waiting out another process's write lock.
            self._jobs.spawn(in_thread(cache.close), name="close diagnosis cache")

    def _place(self, row: SessionRow) -> str:
        if self._sqlite_place:
            return self._sqlite_place
        root = self._root or ""
        prefix = root.rstrip(os.sep) + os.sep
        if row.key.startswith(prefix):  # the listing joins the (absolute) root and the entries' names
            return row.key[len(prefix) :]
        return relative_place(root, row.key)

    def _from_cache(self, keys: list[str]) -> list[str]:
        """Fill the rows the cache knows at their revision; the keys still to judge."""
        known = self._known or {}
        misses: list[str] = []
        for key in keys:
            row = self._model.get(key)
            if row is None or not row.needs_details:
                continue
            v = known.get((row.session_id, self._place(row)))
            if v is not None and row.revision is not None and v.revision == row.revision:
                self._updates[key] = details_of(v, row.revision, self._shown)
                self.from_cache += 1
            else:
                misses.append(key)
        return misses

    def _enqueue(self, keys: list[str], *, front: bool = False) -> None:
        for key in keys:
            if front:
                self._urgent.append(key)
            elif key not in self._queued:
                self._queue.append(key)
            self._queued.add(key)
        if keys:
            self._idle.clear()
            self._wake.set()
        elif not self._queued and self._in_flight == 0 and not self._held:
            self._idle.set()

    async def _keep(self, verdicts: list[Verdict]) -> None:
        if self._known is not None:
            for v in verdicts:
                self._known[v.key] = v
        cache = self._cache
        if cache is not None:
            try:
                await asyncio.to_thread(cache.store, verdicts)
            except Exception as err:  # the list goes on without it
                log.warning("cannot store verdicts in the diagnosis cache (%s)", err)

    # ------------------------------------------------------------ work

    def _take_batch(self) -> list[Job]:
        jobs: list[Job] = []
        while len(jobs) < BATCH and (self._urgent or self._queue):
            key = self._urgent.popleft() if self._urgent else self._queue.popleft()
            if key not in self._queued:
                continue  # already taken through the other queue
            self._queued.discard(key)
            row = self._model.get(key)
            if row is None or not row.needs_details:
                continue
            if not self._from_cache([key]):
                continue  # judged meanwhile (the same log listed again)
            jobs.append((key, row.session_id, self._place(row), row.revision))
        return jobs

    async def _worker(self, generation: int) -> None:
        while generation == self._generation:
            jobs = self._take_batch()
            if not jobs:
                if self._in_flight == 0 and not self._queued and not self._held and self._known is not None:
                    self.flush()
                    self._idle.set()
                self._wake.clear()
                if self._queued:
                    continue
                await self._wake.wait()
                continue
            self._in_flight += len(jobs)
            try:
                verdicts = await self._run(jobs)
                if generation != self._generation:
                    return
                for (key, _, _, revision), v in zip(jobs, verdicts, strict=True):
                    self._updates[key] = details_of(v, revision, self._shown)
                await self._keep(verdicts)  # in flight until stored: idle means the cache holds them too
            finally:
                if generation == self._generation:
                    self._in_flight -= len(jobs)

    async def _run(self, jobs: list[Job]) -> list[Verdict]:
        opened = [i for i, job in enumerate(jobs) if self.in_window(job[0])]
        if opened and self._pool is not None and self._store is not None:
            # The open session: the window's store reads only what was appended since its last read.
            rest = [job for i, job in enumerate(jobs) if i not in opened]
            mine = [await judge(self._store, sid, place, revision) for _, sid, place, revision in (jobs[i] for i in opened)]
            others = iter(await self._run_all(rest) if rest else [])
            return [mine[opened.index(i)] if i in opened else next(others) for i in range(len(jobs))]
        return await self._run_all(jobs)

    async def _run_all(self, jobs: list[Job]) -> list[Verdict]:
        pool, root = self._pool, self._root
        triples = [(sid, place, revision) for _, sid, place, revision in jobs]
        if pool is not None and root is not None:
            try:
                return await asyncio.get_running_loop().run_in_executor(pool, judge_chunk, root, self._backend, triples)
            except (BrokenProcessPool, OSError, RuntimeError) as err:
                log.warning("diagnosis workers unavailable (%s); diagnosing in the window's process", err)
                self._pool = None
        store = self._store
        assert store is not None
        return [await judge(store, sid, place, revision) for sid, place, revision in triples]

    def flush(self) -> None:
        changed = bool(self._updates)
        if changed:
            updates, self._updates = self._updates, {}
            self._model.apply_details(updates)
            settle()
        if changed or self.waiting != self._last_waiting:
            self._last_waiting = self.waiting
            self.progressed.emit(self.waiting)
