"""The background pass that fills status, event count and title into listed rows.

Sessions are diagnosed in batches, visible rows first, in worker processes when available (see
``runtime.worker_processes``) and through the window's ``ViewerStore`` otherwise.  Results are cached by revision:
a row whose artifact did not change is never diagnosed twice, and results reach the model in batches
so a 10k-row list is not repainted 10k times.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Executor
from concurrent.futures.process import BrokenProcessPool

from PySide6.QtCore import QObject, QTimer, Signal

from app.gui.controllers.open_root import OpenRoot
from app.gui.models.session_row import Details
from app.gui.models.sessions import SessionListModel
from app.gui.runtime.collector import settle
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.viewer_store import ViewerStore
from app.gui.runtime.worker_processes import Job, diagnose_batch, diagnose_one, shared_pool

log = logging.getLogger(__name__)
BATCH = 16


class DiagnosisPass(QObject):
    """Fills ``Details`` into listed rows in the background, visible rows first."""

    progressed = Signal(int)  # rows still waiting

    def __init__(
        self,
        model: SessionListModel,
        jobs: Jobs,
        *,
        flush_ms: int = 200,
        use_processes: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._model = model
        self._jobs = jobs
        self._use_processes = use_processes
        self._store: ViewerStore | None = None
        self._root: str | None = None
        self._pool: Executor | None = None
        self._queue: deque[str] = deque()
        self._urgent: deque[str] = deque()
        self._queued: set[str] = set()
        self._in_flight = 0
        self._workers = 0
        self._cache: dict[str, Details] = {}
        self._updates: dict[str, Details] = {}
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._generation = 0
        self._last_waiting = -1
        self._flush = QTimer(self)
        self._flush.setInterval(flush_ms)
        self._flush.timeout.connect(self.flush)
        model.on_pending = self.bump

    # ------------------------------------------------------------ control

    def set_root(self, opened: OpenRoot | None) -> None:
        """Diagnose the rows of ``opened`` from now on (None: stop); every cached result is dropped."""
        store = None if opened is None else opened.store
        root = None if opened is None else opened.path
        for i in range(self._workers):
            self._jobs.cancel(f"details-{i}")
        self._generation += 1
        self._store = store
        self._root = root
        self._queue.clear()
        self._urgent.clear()
        self._queued.clear()
        self._cache.clear()
        self._updates.clear()
        self._in_flight = 0
        self._idle.set()
        if store is None:
            self._flush.stop()
            self._workers = 0
            return
        self._pool = shared_pool() if self._use_processes and root is not None else None
        self._workers = getattr(self._pool, "_max_workers", 1) if self._pool is not None else 1
        for i in range(self._workers):
            self._jobs.spawn(self._worker(self._generation), name=f"details-{i}", key=f"details-{i}")
        self._flush.start()

    def request(self, keys: Iterable[str], *, front: bool = False) -> None:
        added = False
        for key in keys:
            if front:
                self._urgent.append(key)
            elif key not in self._queued:
                self._queue.append(key)
            self._queued.add(key)
            added = True
        if added:
            self._idle.clear()
            self._wake.set()

    def bump(self, key: str) -> None:
        """A pending row became visible: look at it soon (cheap enough to call from ``data()``)."""
        if key in self._queued and len(self._urgent) < 256:
            self._urgent.append(key)

    @property
    def waiting(self) -> int:
        return len(self._queued) + self._in_flight

    async def wait_idle(self) -> None:
        await self._idle.wait()

    def is_idle(self) -> bool:
        return self._idle.is_set() and not self._updates

    def forget(self, key: str) -> None:
        self._cache.pop(key, None)

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
            cached = self._cache.get(key)
            if cached is not None and cached.revision == row.revision:
                self._updates[key] = cached
                continue
            jobs.append((key, row.session_id, row.revision))
        return jobs

    async def _worker(self, generation: int) -> None:
        while generation == self._generation:
            jobs = self._take_batch()
            if not jobs:
                if self._in_flight == 0 and not self._queued:
                    self.flush()
                    self._idle.set()
                self._wake.clear()
                if self._queued:
                    continue
                await self._wake.wait()
                continue
            self._in_flight += len(jobs)
            try:
                results = await self._run(jobs)
            finally:
                self._in_flight -= len(jobs)
            if generation != self._generation:
                return
            for key, det in results:
                self._cache[key] = det
                self._updates[key] = det

    async def _run(self, jobs: list[Job]) -> list[tuple[str, Details]]:
        pool, root = self._pool, self._root
        if pool is not None and root is not None:
            try:
                return await asyncio.get_running_loop().run_in_executor(pool, diagnose_batch, root, jobs)
            except (BrokenProcessPool, OSError, RuntimeError) as err:
                log.warning("diagnosis workers unavailable (%s); diagnosing in the window's process", err)
                self._pool = None
        store = self._store
        assert store is not None
        return [(key, await diagnose_one(store, sid, rev)) for key, sid, rev in jobs]

    def flush(self) -> None:
        changed = bool(self._updates)
        if changed:
            updates, self._updates = self._updates, {}
            self._model.apply_details(updates)
            settle()
        if changed or self.waiting != self._last_waiting:
            self._last_waiting = self.waiting
            self.progressed.emit(self.waiting)
