"""The root's statistics cache (``app.insight.InsightCache``) on a thread of its own (no Qt here).

Why a thread with its own event loop: an ``InsightCache`` and its engine store belong to one thread
and one loop (the engine's per-session locks are loop-bound), and the first update of a 10,000-session
root folds every log (minutes of Python) that must not run on the GUI thread.  The thread has its own
read-only store of the root, so computing never queues behind the window's engine calls, and it runs
at a lower OS priority (``CACHE_NICENESS``) so a busy machine gives the window the CPU first.

Reads (the dashboard's ``aggregate``, the lineage) run on the same loop: ``InsightCache.update``
awaits the engine between two sessions, so a read scheduled meanwhile runs there, on the cache's own
connection, and sees every session committed so far; the dashboard opens at once from what is
cached while an update goes on.  (A cache kept in memory has no other connection to read from.)

``submit(coro)`` runs a coroutine on the thread and returns a ``concurrent.futures.Future``; the
window awaits it with ``asyncio.wrap_future``.  ``cancel_update()`` stops a running update between
two sessions (what is done stays cached).  Progress is a ``Progress`` record the window polls.

May import: the standard library, ``app.insight``, ``app.cache_db`` (what counts as damage),
``runtime.worker_threads`` (``Progress``, ``lower_thread_priority``) and the public ``persistence``
package; never Qt.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from app.cache_db import DAMAGE_ERRORS, damage_text, is_damage
from app.gui.runtime.worker_threads import Progress, lower_thread_priority
from app.insight import (
    CacheProgress,
    CacheReport,
    InsightCache,
    Lineage,
    PriceTable,
    RootFilter,
    RootTotals,
    SessionInfo,
    aggregate,
    lineage_from_cache,
)
from persistence import open_store

log = logging.getLogger(__name__)
T = TypeVar("T")

CACHE_NICENESS = 10  # added to the cache thread's nice value (Linux); the window's threads keep theirs
CLOSE_TIMEOUT_S = 10.0  # how long closing waits for the thread to finish the session it is folding


class InsightWorker:
    """One root's statistics cache on its own thread (see the module docstring)."""

    def __init__(self, root: str, *, cache_dir: str | None = None, niceness: int = CACHE_NICENESS) -> None:
        self.root = root
        self.progress = Progress("Computing statistics …")
        self.cache: InsightCache | None = None
        self.error: str | None = None  # why the cache could not be opened
        self._cache_dir = cache_dir
        self._niceness = niceness
        self._loop = asyncio.new_event_loop()
        self._opened = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name="sessionscope-insight", daemon=True)
        self._thread.start()
        self._opened.wait()

    # ------------------------------------------------------------ the thread

    def _main(self) -> None:
        lower_thread_priority(self._niceness)
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._drive())
        except Exception:  # never a traceback in a thread nobody joins
            log.exception("the statistics thread stopped")
        finally:
            self._opened.set()
            with contextlib.suppress(Exception):
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    async def _drive(self) -> None:
        self._stop = asyncio.Event()
        try:
            store = open_store(self.root, read_only=True, create=False)
            self.cache = InsightCache(store, cache_dir=self._cache_dir)
        except Exception as err:
            self.error = f"{type(err).__name__}: {err}"
            self._opened.set()
            return
        self._opened.set()
        try:
            await self._stop.wait()
        finally:
            # Submitted work still running (an update mid-root) is cancelled between two engine calls, so
            # its caller's future settles and no task is left pending on a closed loop.
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in others:
                t.cancel()
            await asyncio.gather(*others, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self.cache.aclose()

    # ------------------------------------------------------------ calls (any thread)

    @property
    def alive(self) -> bool:
        return self.cache is not None and self._thread.is_alive() and not self._loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the cache thread."""
        if not self.alive:
            coro.close()
            fut: concurrent.futures.Future[T] = concurrent.futures.Future()
            fut.set_exception(RuntimeError(self.error or "the statistics cache is closed"))
            return fut
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def update(self) -> concurrent.futures.Future[CacheReport]:
        """Bring the cache up to date with the root (sessions whose revision changed are folded again)."""
        return self.submit(self._update())

    async def _update(self) -> CacheReport:
        cache = self.cache
        assert cache is not None
        progress = self.progress
        progress.cancel.clear()
        progress.set(None, "Listing sessions for statistics …")

        def step(p: CacheProgress) -> None:
            progress.set(p.done / p.total if p.total else None, p.label)
            if progress.cancel.is_set():
                cache.cancel()

        return await cache.update(progress=step)

    def cancel_update(self) -> None:
        """Stop a running update before its next session (thread-safe)."""
        self.progress.cancel.set()
        if self.cache is not None:
            self.cache.cancel()

    def totals(self, filt: RootFilter, prices: PriceTable | None) -> concurrent.futures.Future[RootTotals]:
        return self.submit(self._call(lambda c: aggregate(c.conn, filt, prices)))

    def lineage(self) -> concurrent.futures.Future[Lineage]:
        return self.submit(self._call(lineage_from_cache))

    def session_infos(self) -> concurrent.futures.Future[dict[str, SessionInfo]]:
        """Every cached session's lineage fields (title, status, the turn a fork falls after), by id."""
        return self.submit(self._call(lambda c: {s.session_id: SessionInfo.from_summary(s) for s in c.summaries()}))

    def messages(self) -> concurrent.futures.Future[list[str]]:
        """What the cache said since the last call (a rebuilt file, a session it could not read)."""

        def take(c: InsightCache) -> list[str]:
            out, c.messages[:] = list(c.messages), []
            return out

        return self.submit(self._call(take))

    async def _call(self, fn: Callable[[InsightCache], T]) -> T:
        """``fn`` on the cache; a read that finds the file damaged (a flipped byte in a row only the
        dashboard reads) rebuilds it, computes it again and asks once more (the messages say so)."""
        cache = self.cache
        assert cache is not None
        try:
            return fn(cache)
        except DAMAGE_ERRORS as err:
            if not is_damage(err):
                raise
            cache.reset(damage_text(err))
        await self._update()
        return fn(cache)

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Stop the thread: a running update stops after its session, the cache and its store close."""
        self.cancel_update()
        stop = self._stop
        if stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(stop.set)
        self._thread.join(timeout)


__all__ = ["CACHE_NICENESS", "InsightWorker", "lower_thread_priority"]
