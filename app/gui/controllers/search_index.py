"""The window's search index, kept up to date on a thread of its own (no Qt here).

Why a thread with its own event loop: ``app.search.Indexer`` and its runs belong to one thread and
one loop (the engine's per-session locks are loop-bound), and a cold index of a 10k-session root
takes tens of seconds of Python that must not run on the GUI thread.  The thread has its own
read-only store of the root, so indexing never queues behind the window's own engine calls, and
it runs at a lower OS priority (``INDEX_NICENESS``, Linux: per thread, inherited by the engine's
executor threads it starts) so a busy machine gives the window the CPU first.  The GIL is shared
through the window's 0.2 ms switch interval (``runtime.responsiveness``).

What it does, one request at a time, in this order of precedence:

- ``request_rebuild(why)``: drop the index (a damaged file, the user's "Rebuild"), then a full run;
- ``request_full()``: a full run (the whole listing; sessions gone from the root lose their rows);
- ``request_paths(paths)``: the sessions under these paths (the watcher's session folders, or a
  changed row's transcript) are indexed now.  During a full run they interrupt it at most once per
  ``URGENT_GAP_S`` (the run commits what it did, the paths are indexed, the full run starts again
  and skips what is already indexed), so a new session is searchable within about a second even
  while a cold index is being built.

``cancel()`` stops the running full run between two sessions (what is done is committed and
searchable; the next request goes on from there).  Queries run elsewhere: on their own connection
(``search``), on whichever thread the caller likes, one at a time.

Every state change is reported through ``notify(event, payload)`` *from the worker thread*: the
caller marshals it to its own thread (the controller uses its loop's ``call_soon_threadsafe``).
Events: ``opened`` (index file), ``started`` (planned sessions, full?), ``finished`` (IndexReport,
full?), ``messages`` (list of str), ``failed`` (str).  Progress is a ``Progress`` record the status
bar polls.

May import: the standard library, ``app.search``, ``runtime.worker_threads`` (``Progress``, ``lower_thread_priority``) and the
public ``persistence`` package; never Qt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from app.gui.runtime.worker_threads import Progress, lower_thread_priority
from app.search import HitCounts, Indexer, IndexReport, Searcher, SearchFilters, SearchResult
from persistence import ListedEntry, list_part

log = logging.getLogger(__name__)
T = TypeVar("T")

INDEX_NICENESS = 10  # added to the index thread's nice value (Linux); the window's threads keep theirs
URGENT_GAP_S = 2.0  # a full run is interrupted for watched paths at most this often (each restart re-lists the root)
CLOSE_TIMEOUT_S = 10.0  # how long closing waits for the thread to finish its current session
QUERY_LIMIT = 100  # hits a window query returns (grouped by session; ~0.1 ms each to show; two screenfuls)
QUERY_PER_SESSION = 20  # hits shown per session (its group row says how many it has in all)

Notify = Callable[[str, Any], None]


def entries_under(root: str, paths: Iterable[str]) -> list[ListedEntry]:
    """The listing rows of the JSONL sessions under ``paths`` (session folders, project folders or
    transcripts inside them); paths outside the root or gone from disk are skipped (a full run
    removes vanished sessions)."""
    out: list[ListedEntry] = []
    seen: set[str] = set()
    for path in sorted(set(paths)):
        if os.path.isfile(path):
            path = os.path.dirname(path)
        try:
            rel = os.path.relpath(path, root)
        except ValueError:
            continue
        parts = [p for p in rel.split(os.sep) if p and p != "."]
        if not parts or parts[0] == ".." or not os.path.isdir(path):
            continue
        key = os.path.join(root, *parts[:2])
        if key in seen:
            continue
        seen.add(key)
        out.extend(list_part(root, key))
    return out


class IndexWorker:
    """One root's index on its own thread (see the module docstring)."""

    def __init__(self, root: str, notify: Notify, *, cache_dir: str | None = None, niceness: int = INDEX_NICENESS) -> None:
        self.root = root
        self.is_jsonl = os.path.isdir(root)
        self.progress = Progress("Indexing …")
        self.index_file: str | None = None
        self.opened = threading.Event()  # the indexer is open (or failed to open)
        self._notify = notify
        self._cache_dir = cache_dir
        self._niceness = niceness
        self._lock = threading.Lock()
        self._want_full = False
        self._want_rebuild: str | None = None
        self._stop_full = False  # the user stopped the full run: an interruption does not restart it
        self._paths: set[str] = set()
        self._closing = False
        self._indexer: Indexer | None = None
        self._searcher: Searcher | None = None
        self._search_lock = threading.Lock()
        self._last_urgent = 0.0
        self.busy = False  # a run is in progress (read from any thread: a plain bool)
        self.counts = (0, 0)  # (done, planned) of the running full run (one tuple: read atomically)
        self._loop = asyncio.new_event_loop()
        self._wake: asyncio.Event | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._main, name="sessionscope-search-index", daemon=True)
        self._thread.start()
        self._started.wait()

    # ------------------------------------------------------------ requests (any thread)

    def request_full(self) -> None:
        with self._lock:
            self._want_full = True
        self._kick()

    def request_rebuild(self, why: str) -> None:
        with self._lock:
            self._want_rebuild = why
            self._want_full = True
        self._cancel_run()
        self._kick()

    def request_paths(self, paths: Iterable[str]) -> None:
        with self._lock:
            self._paths.update(paths)
        self._kick()

    def cancel(self) -> None:
        """Stop the running full run before its next session (what is indexed stays searchable;
        watched paths are still indexed as they change)."""
        with self._lock:
            self._want_full = False
            self._stop_full = True
        self._cancel_run()

    def _cancel_run(self) -> None:
        indexer = self._indexer
        if indexer is not None:
            indexer.cancel()

    def _kick(self) -> None:
        wake = self._wake
        if wake is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(wake.set)

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Stop the thread: the running session is finished or rolled back, the index committed and closed."""
        with self._lock:
            self._closing = True
            self._want_full = False
            self._paths.clear()
        self._cancel_run()
        self._kick()
        self._thread.join(timeout)
        with self._search_lock:
            if self._searcher is not None:
                self._searcher.close()
                self._searcher = None

    # ------------------------------------------------------------ queries (any one thread at a time)

    def search(self, query: str, filters: SearchFilters, *, limit: int = QUERY_LIMIT, count: bool = True) -> SearchResult:
        """Run one query on the index file's own read connection (raises ``SearchQueryError`` on a typo).

        ``count=False``: only the hits shown are read (``count`` gives the whole counts afterwards).
        An index kept in memory (the cache folder is inside the root) is only reachable through the
        indexer's connection: the query then runs on the index thread, between two sessions.
        """
        return self._with_searcher(lambda s: s.search(query, filters, limit=limit, per_session=QUERY_PER_SESSION, count=count))

    def count(self, query: str, filters: SearchFilters) -> HitCounts:
        """The whole counts of ``query`` (up to the scan cap): the second step of a window query."""
        return self._with_searcher(lambda s: s.count(query, filters))

    def _with_searcher(self, ask: Callable[[Searcher], T]) -> T:
        if self.index_file is None and self._indexer is not None:
            return self.call(self._in_memory(ask))
        with self._search_lock:
            if self._searcher is None:
                self._searcher = Searcher(self.index_file)
            answer = ask(self._searcher)
            damaged = self._searcher.damaged
            if damaged is not None:
                self._searcher.close()
                self._searcher = None
        if damaged is not None:
            self.request_rebuild(damaged)
        return answer

    async def _in_memory(self, ask: Callable[[Searcher], T]) -> T:
        assert self._indexer is not None
        return ask(self._indexer.searcher())

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the index thread's loop and wait for it (from another thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    # ------------------------------------------------------------ the thread

    def _main(self) -> None:
        lower_thread_priority(self._niceness)
        asyncio.set_event_loop(self._loop)
        self._wake = asyncio.Event()
        self._started.set()
        try:
            self._loop.run_until_complete(self._drive())
        except Exception as err:  # never a traceback in a thread nobody joins: say it once
            log.exception("search indexing stopped")
            self._notify("failed", f"search indexing stopped: {type(err).__name__}: {err}")
        finally:
            with contextlib.suppress(Exception):
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    async def _drive(self) -> None:
        assert self._wake is not None
        try:
            self._indexer = Indexer.for_root(self.root, cache_dir=self._cache_dir)
        except Exception as err:
            self.opened.set()
            self._notify("failed", f"search is off for this root: {type(err).__name__}: {err}")
            return
        self.index_file = self._indexer.index_file
        self.opened.set()
        self._notify("opened", self.index_file)
        self._say(self._indexer.take_messages())
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while True:
                    with self._lock:
                        if self._closing:
                            return
                        rebuild, self._want_rebuild = self._want_rebuild, None
                        full, self._want_full = self._want_full, False
                        paths, self._paths = self._paths, set()
                    if rebuild is not None:
                        self._indexer.rebuild(rebuild)
                        self._say(self._indexer.take_messages())
                    if full:
                        # Its listing is taken after these paths changed: it covers them.
                        await self._full_run()
                    elif paths:
                        await self._paths_run(paths)
                    else:
                        break
        finally:
            with contextlib.suppress(Exception):
                await self._indexer.aclose()

    def _say(self, messages: list[str]) -> None:
        if messages:
            self._notify("messages", messages)

    async def _entries_for(self, paths: set[str]) -> list[ListedEntry]:
        assert self._indexer is not None
        if not self.is_jsonl:
            # A SQLite store: its listing is one query; the plan skips every unchanged session.
            return list(await self._indexer.store.list_entries())
        return entries_under(self.root, paths)

    async def _paths_run(self, paths: set[str]) -> None:
        assert self._indexer is not None
        entries = await self._entries_for(paths)
        if not entries:
            return
        self.busy = True
        self._notify("started", (len(entries), False))
        try:
            report = await self._indexer.update(entries)
        finally:
            self.busy = False
        self._say(self._indexer.take_messages())
        self._notify("finished", (report, False))

    async def _full_run(self) -> None:
        """The whole listing, one session per step; watched paths interrupt it (see the module docstring)."""
        indexer = self._indexer
        assert indexer is not None
        with self._lock:
            self._stop_full = False
        self.busy = True
        try:
            while True:
                run = await indexer.start()
                self.progress.set(0.0 if run.total else None, run.progress().label)
                self.counts = (0, run.total)
                self._notify("started", (run.total, True))
                interrupted = False
                while not run.finished:
                    p = await run.step()
                    self.progress.set(p.done / p.total if p.total else None, p.label)
                    self.counts = (p.done, p.total)
                    if self._paths and not run.finished and time.monotonic() - self._last_urgent >= URGENT_GAP_S:
                        indexer.cancel()
                        await run.step()  # stops at once and commits what is done
                        interrupted = True
                run.close()
                report = run.report()
                self._say(indexer.take_messages())
                with self._lock:
                    stop = self._stop_full or self._closing or self._want_rebuild is not None
                    paths: set[str] = set()
                    if interrupted and not stop:
                        paths, self._paths = self._paths, set()
                if not interrupted or stop:
                    # Done, stopped by the user, closing, or a rebuild asked for (it plans a full run itself).
                    self._notify("finished", (report, True))
                    return
                # Watched paths first (a new session searchable now), then the full run goes on: its next
                # plan skips every session already indexed at its revision.
                self._last_urgent = time.monotonic()
                entries = await self._entries_for(paths)
                if entries:
                    done = await indexer.update(entries)
                    self._say(indexer.take_messages())
                    self._notify("finished", (done, False))
        finally:
            self.busy = False


__all__ = ["INDEX_NICENESS", "QUERY_LIMIT", "IndexReport", "IndexWorker", "entries_under", "lower_thread_priority"]
