"""The window's statistics: the open session's numbers, the root's cached totals, its lineage, and a
fork compared with its parent, each computed off the GUI thread.

- Session stats fold the events the loader already holds (``TimelineModel.records``, the stored part
  only, as the root cache does) on a worker thread (``in_thread``): nothing is read twice.
- The root's numbers come from ``InsightCache`` on its own thread (``controllers.insight_cache``),
  made for the root the window shows when the dashboard or the lineage is first asked for, and kept
  until another root opens.  Its file persists, so the dashboard of a computed root opens from the
  cache at once while an incremental update runs behind it.
- Costs come from the user's price table (``app.insight.prices``), read again whenever its file
  changed; a table that cannot be read is reported once and treated as absent (tokens only).

Every result is a signal; every job is keyed on the window's ``Jobs`` (a new request replaces the
previous one of its kind) and fails into ``failed(what, message)``, never a lost traceback.

May import: PySide6 (QObject and signals), ``app.insight``, ``runtime``, ``controllers.insight_cache``
and the public ``persistence`` package; never a widget.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.cache_db import CACHE_ERRORS
from app.glossary import EVENT, plural, status_name
from app.gui.controllers.insight_cache import InsightWorker
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.viewer_store import ViewerStore
from app.gui.runtime.worker_threads import Progress, in_thread
from app.insight import (
    CacheReport,
    Cost,
    ForkComparison,
    Lineage,
    PriceTable,
    PriceTableError,
    RootFilter,
    RootTotals,
    SessionInfo,
    SessionStats,
    TurnDigest,
    build_lineage,
    compare_with_parent,
    cost_of,
    fold_stats,
    load_prices,
    prices_path,
    turn_digests,
)
from persistence import EventTable, SessionPersistenceError

log = logging.getLogger(__name__)
# What asking the statistics cache's worker may raise: the engine's typed errors, a worker that is gone,
# and the cache file's own errors (busy or damaged), which stay behind ``app.cache_db``.
_CACHE_READ_ERRORS: tuple[type[BaseException], ...] = (SessionPersistenceError, RuntimeError, *CACHE_ERRORS)
_CACHE_WORK_ERRORS: tuple[type[BaseException], ...] = (OSError, *_CACHE_READ_ERRORS)


@dataclass(frozen=True, slots=True)
class SessionInsight:
    """The open session's numbers as the Stats tab shows them."""

    key: str
    session_id: str
    stats: SessionStats
    cost: Cost | None  # None: no table, or nothing of this session priced
    model_costs: tuple[Cost | None, ...]  # pairs with ``stats.models``
    priced: bool  # a price table exists (so "no cost" means "no price for these models")
    partial: str | None = None  # a refused log's status: the numbers are its readable part's (issue 24 item 5)

    @property
    def heading(self) -> str:
        title = self.stats.title or "Untitled session"
        head = f"{title} — {self.session_id} · {plural(self.stats.events, EVENT)}"
        if self.partial is not None:
            head += f" · {status_name(self.partial)} log: the readable part before the damage only"
        return head


@dataclass(frozen=True, slots=True)
class Comparison:
    """A fork beside its parent, with what the compare view names them by."""

    fork_id: str
    parent_id: str
    fork_title: str | None
    parent_title: str | None
    result: ForkComparison
    shared: tuple[TurnDigest, ...]  # the identical prefix's turns (shown when the collapsed part is opened)


def stored_part(records: Sequence[dict[str, Any]], stored: int) -> Sequence[dict[str, Any]]:
    """The first ``stored`` records (the log; the in-memory crash closers after them are not the session's work)."""
    if isinstance(records, EventTable):
        return records.between(0, min(stored, len(records)))
    return records[:stored]


def merge_infos(listed: Sequence[SessionInfo], cached: dict[str, SessionInfo]) -> list[SessionInfo]:
    """The listed sessions, each completed from its cached summary: the listing says which sessions
    exist and their status now, the cache adds what needs the log (title, fork turn)."""
    out = []
    for info in listed:
        c = cached.get(info.session_id)
        if c is None:
            out.append(info)
            continue
        out.append(
            replace(
                info,
                title=info.title or c.title,
                fork_turn=c.fork_turn,
                seed_length=info.seed_length if info.seed_length is not None else c.seed_length,
                start_ms=info.start_ms if info.start_ms is not None else c.start_ms,
            )
        )
    return out


def model_costs(prices: PriceTable | None, stats: SessionStats) -> tuple[Cost | None, tuple[Cost | None, ...]]:
    """(the session's cost, each model's cost) by ``prices``."""
    rows = [
        (m.provider, m.model, m.tokens.input, m.tokens.output, m.tokens.cache_read, m.tokens.cache_write) for m in stats.models
    ]
    return cost_of(prices, rows), tuple(cost_of(prices, [r]) for r in rows)


class InsightController(QObject):
    stats_ready = Signal(object)  # SessionInsight
    stats_unavailable = Signal(str, str)  # key, why there are no numbers
    progress_started = Signal(object)  # Progress of a cache update
    progress_finished = Signal(object)
    cache_updated = Signal(object)  # CacheReport
    totals_ready = Signal(object, object)  # RootTotals, the RootFilter it answers
    lineage_ready = Signal(object)  # Lineage
    comparison_ready = Signal(object)  # Comparison
    failed = Signal(str, str)  # what ("session statistics", "statistics", "dashboard", "lineage", "compare"), message
    message = Signal(str)

    def __init__(
        self, jobs: Jobs, *, cache_dir: str | None = None, prices_file: str | None = None, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.cache_dir = cache_dir
        self.prices_file = prices_file
        self.root: str | None = None
        self.worker: InsightWorker | None = None
        self.last_report: CacheReport | None = None
        self._prices: PriceTable | None = None
        self._prices_stamp: tuple[int, int] | None = None
        self.prices_error: str | None = None
        self._opening = asyncio.Lock()

    # ------------------------------------------------------------ prices

    @property
    def prices_location(self) -> str:
        return self.prices_file or prices_path()

    def prices(self) -> PriceTable | None:
        """The price table (None: no file, or one that cannot be used; ``prices_error`` says why)."""
        path = self.prices_location
        try:
            st = os.stat(path)
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if stamp != self._prices_stamp or (stamp is None and self._prices is not None):
            self._prices_stamp = stamp
            try:
                self._prices = load_prices(path) if stamp is not None else None
                self.prices_error = None
            except PriceTableError as err:
                self._prices = None
                if str(err) != self.prices_error:
                    self.message.emit(f"The price table is not used: {err}")
                self.prices_error = str(err)
        table = self._prices
        return table if table is not None and not table.empty else None

    def prices_changed(self) -> None:
        """The price table was edited: read it again at the next use."""
        self._prices_stamp = (-1, -1)

    # ------------------------------------------------------------ the open session

    def session_stats(
        self,
        key: str,
        session_id: str,
        records: Sequence[dict[str, Any]],
        stored: int,
        seed_length: int | None,
        partial: str | None = None,
    ) -> asyncio.Task[Any]:
        """Fold the open session's stored events (the loader's table, never copied) on a worker thread;
        ``partial``: the status of a refused log whose readable prefix ``records`` are."""
        return self.jobs.spawn(
            self._guard("session statistics", self._session_stats(key, session_id, records, stored, seed_length, partial)),
            name=f"statistics {session_id}",
            key="insight-stats",
        )

    async def _session_stats(
        self,
        key: str,
        session_id: str,
        records: Sequence[dict[str, Any]],
        stored: int,
        seed_length: int | None,
        partial: str | None = None,
    ) -> None:
        events = stored_part(records, stored)
        stats = await in_thread(lambda: fold_stats(events, seed_length=seed_length))
        prices = self.prices()
        cost, per_model = model_costs(prices, stats)
        self.stats_ready.emit(SessionInsight(key, session_id, stats, cost, per_model, prices is not None, partial))

    def cancel_session(self) -> None:
        self.jobs.cancel("insight-stats")

    # ------------------------------------------------------------ the root's cache

    def set_root(self, root: str | None) -> None:
        """The window shows ``root`` now: a cache of another root is closed (in the background)."""
        if root == self.root:
            return
        self.root = root
        self.last_report = None
        for k in ("insight-cache", "insight-totals", "insight-lineage", "insight-compare"):
            self.jobs.cancel(k)
        old, self.worker = self.worker, None
        if old is not None:
            old.cancel_update()
            self.jobs.spawn(in_thread(old.close), name="close statistics cache")

    async def _worker(self) -> InsightWorker:
        root = self.root
        if root is None:
            raise SessionPersistenceError("no root is open")
        # One opening at a time: two caches of one root opened at once would both create (or both
        # "rebuild") the same file, and one would then write to a file the other has replaced.
        async with self._opening:
            if self.worker is None or self.worker.root != root:
                worker = await in_thread(lambda: InsightWorker(root, cache_dir=self.cache_dir))
                if root != self.root:  # another root was opened meanwhile
                    self.jobs.spawn(in_thread(worker.close), name="close statistics cache")
                    raise asyncio.CancelledError()
                if worker.error is not None:
                    raise SessionPersistenceError(f"no statistics for {root}: {worker.error}")
                self.worker = worker
            return self.worker

    @property
    def updating(self) -> bool:
        return self.jobs.running("insight-cache")

    def update_cache(self) -> asyncio.Task[Any] | None:
        """Bring the root's cache up to date (unless an update is running: it covers the same sessions)."""
        if self.root is None:
            return None
        if self.updating:
            return None
        return self.jobs.spawn(self._guard("statistics", self._update()), name="statistics cache", key="insight-cache")

    async def _update(self) -> None:
        worker = await self._worker()
        self.progress_started.emit(worker.progress)
        try:
            report = await asyncio.wrap_future(worker.update())
        except asyncio.CancelledError:
            worker.cancel_update()
            raise
        finally:
            self.progress_finished.emit(worker.progress)
        for m in await asyncio.wrap_future(worker.messages()):
            self.message.emit(m)
        self.last_report = report
        self.cache_updated.emit(report)

    def cancel_update(self) -> None:
        if self.worker is not None:
            self.worker.cancel_update()

    @property
    def progress(self) -> Progress | None:
        return None if self.worker is None else self.worker.progress

    def request_totals(self, filt: RootFilter) -> asyncio.Task[Any] | None:
        if self.root is None:
            return None
        return self.jobs.spawn(self._guard("dashboard", self._totals(filt)), name="dashboard totals", key="insight-totals")

    async def _totals(self, filt: RootFilter) -> None:
        worker = await self._worker()
        totals: RootTotals = await asyncio.wrap_future(worker.totals(filt, self.prices()))
        self.totals_ready.emit(totals, filt)

    def request_lineage(self, listed: Sequence[SessionInfo]) -> asyncio.Task[Any] | None:
        """The lineage of the ``listed`` sessions (the window's rows: every session the root holds now),
        each with what the cache knows of it (its title, and the turn a fork falls after) when it has it."""
        if self.root is None:
            return None
        return self.jobs.spawn(self._guard("lineage", self._lineage(list(listed))), name="lineage", key="insight-lineage")

    async def _lineage(self, listed: list[SessionInfo]) -> None:
        cached: dict[str, SessionInfo] = {}
        try:
            worker = await self._worker()
            cached = await asyncio.wrap_future(worker.session_infos())
        except _CACHE_READ_ERRORS as err:
            self.message.emit(f"The lineage shows the listing only (no fork turns): {err}")
        lineage: Lineage = await in_thread(lambda: build_lineage(merge_infos(listed, cached)))
        self.lineage_ready.emit(lineage)

    # ------------------------------------------------------------ compare with parent

    def compare(
        self,
        store: ViewerStore,
        fork_id: str,
        parent_id: str,
        seed_length: int,
        titles: tuple[str | None, str | None] = (None, None),
    ) -> asyncio.Task[Any]:
        return self.jobs.spawn(
            self._guard("compare", self._compare(store, fork_id, parent_id, seed_length, titles)),
            name=f"compare {fork_id}",
            key="insight-compare",
        )

    async def _compare(
        self, store: ViewerStore, fork_id: str, parent_id: str, seed: int, titles: tuple[str | None, str | None]
    ) -> None:
        parent = await store.view(parent_id)
        fork = await store.view(fork_id)
        for v in (parent, fork):
            if not v.readable:
                raise SessionPersistenceError(f"session {v.session_id} cannot be read ({v.status}): {v.reason}")

        def work() -> tuple[ForkComparison, tuple[TurnDigest, ...]]:
            result = compare_with_parent(parent.stored, fork.stored, seed)
            shared = turn_digests(stored_part(fork.stored.record_table(), result.shared_count))
            return result, shared

        result, shared = await in_thread(work)
        self.comparison_ready.emit(Comparison(fork_id, parent_id, titles[0], titles[1], result, shared))

    # ------------------------------------------------------------ plumbing

    async def _guard(self, what: str, coro: Any) -> None:
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except _CACHE_WORK_ERRORS as err:
            self.failed.emit(what, str(err) or type(err).__name__)
        except Exception as err:  # a bug must still end in a message, not a silently dead job
            log.exception("%s failed", what)
            self.failed.emit(what, f"unexpected {type(err).__name__}: {err}")

    async def close(self) -> None:
        for k in ("insight-stats", "insight-cache", "insight-totals", "insight-lineage", "insight-compare"):
            self.jobs.cancel(k)
        worker, self.worker = self.worker, None
        self.root = None
        if worker is not None:
            await in_thread(worker.close)


__all__ = ["Comparison", "InsightController", "SessionInsight", "merge_infos", "model_costs", "stored_part"]
