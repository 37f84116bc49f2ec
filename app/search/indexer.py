"""The indexer: keeps a root's search index up to date, one session per step.

Why steps: the window runs the indexer on a worker thread and shows "Indexing 3,412 / 10,000
sessions"; a cold 10k-session root takes seconds, and the user may close the root or quit meanwhile.
``start()`` lists the root once and plans; each ``IndexRun.step()`` indexes one session
(``app.search.run``: what a step reads and writes), or, when at least ``parallel.BULK_MIN_SESSIONS``
sessions were never indexed, adopts one chunk of them built by worker processes on every core
(``app.search.parallel``; ``workers=0`` keeps all of it in this process).

Cancellation contract: ``cancel()`` may be called from any thread.  The run stops before the next
session, or inside a big one between two batches of ``INSERT_BATCH_ROWS`` rows, rolling that
session's savepoint back; what is done is committed and the read started ahead is dropped.  Every
session is written whole or not at all, together with its revision (sessions are committed in
groups, at most ``COMMIT_SECONDS`` apart), so a cancelled, abandoned or killed run leaves a
consistent index: sessions committed are searchable, the others keep their previous rows and
revision and are picked up by the next ``start()``.  ``start()`` clears an earlier cancel (and
commits a run left unfinished); ``IndexRun.close()``/``Indexer.close()`` commit too.

Threading: an ``Indexer`` and its runs belong to one thread and one event loop at a time (the
engine's per-session locks are loop-bound), so a window gives the worker thread its own store;
queries run on their own connection (``app.search.query.Searcher``) while the indexer writes.

May import: the standard library, the public ``persistence`` package and ``app.search``'s own modules.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from app.cache_db import DAMAGE_ERRORS, damage_text, is_damage
from app.search.db import IndexDb
from app.search.location import index_path, inside_root, root_identity
from app.search.parallel import ShardPool, default_workers
from app.search.progress import IndexProgress, IndexReport
from app.search.query import Searcher
from app.search.run import IndexRun
from persistence import CoordinatedPersistence, ListedEntry, open_store


class Indexer:
    """Keeps the search index of one store up to date (see the module docstring for the contract)."""

    def __init__(
        self,
        store: CoordinatedPersistence,
        *,
        index_file: str | None = None,
        cache_dir: str | None = None,
        in_memory: bool = False,
        workers: int | None = None,
    ) -> None:
        """``workers``: processes a cold build may use (None: every core; 0: none, one session at a time)."""
        self.store = store
        self.identity = root_identity(store.root_path, store.kind)
        path: str | None = None if in_memory else (index_file or index_path(store.root_path, store.kind, cache_dir))
        early: list[str] = []
        if path is not None and inside_root(path, store.root_path, store.kind):
            early.append(f"the cache folder {os.path.dirname(path)} is inside the session root; the index is kept in memory")
            path = None
        self.db = IndexDb.open(path, self.identity)
        self.db.messages[:0] = early
        self._cancel = threading.Event()
        self._run: IndexRun | None = None
        n = default_workers() if workers is None else workers
        self._pool: ShardPool | None = ShardPool(n) if n > 0 else None

    @classmethod
    def for_root(cls, root: str, backend: str | None = None, **kw: Any) -> Indexer:
        """An indexer over its own read-only store of ``root`` (close it with ``aclose``)."""
        return cls(open_store(root, backend, read_only=True, create=False), **kw)

    @property
    def index_file(self) -> str | None:
        """The index file (None: kept in memory)."""
        return self.db.path

    @property
    def messages(self) -> list[str]:
        """What the index had to say: rebuilt, created, fallbacks, sessions that failed (oldest first)."""
        return self.db.messages

    def take_messages(self) -> list[str]:
        """The messages so far, cleared (a window shows each once)."""
        out = list(self.db.messages)
        self.db.messages.clear()
        return out

    def searcher(self) -> Searcher:
        """A searcher over this index: its own connection to the file (or this one, for an index in memory)."""
        if self.db.path is None:
            return Searcher(None, conn=self.db.conn)
        return Searcher(self.db.path)

    def cancel(self) -> None:
        """Stop the running run before its next session (thread-safe; see the cancellation contract)."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def rebuild(self, why: str = "asked to rebuild") -> None:
        """Drop the whole index; the next run indexes every session again."""
        if self._run is not None:
            self._run.close()
            self._run = None
        self.db.reset(self.identity, why)

    def close(self) -> None:
        """Commit an unfinished run and close the index file (the store is the caller's, or see ``aclose``)."""
        if self._run is not None:
            self._run.close()
        if self._pool is not None:
            self._pool.close()
        self.db.close()

    async def aclose(self) -> None:
        """``close`` and close the store."""
        self.close()
        await self.store.close()

    # ------------------------------------------------------------ runs

    async def start(self, entries: Sequence[ListedEntry] | None = None) -> IndexRun:
        """Plan a run: the whole listing (vanished sessions are removed now), or just ``entries``
        (a watcher's new or changed rows: nothing is removed)."""
        if self._run is not None:
            self._run.close()
        self._cancel.clear()
        full = entries is None
        if entries is None:
            entries = await self.store.list_entries()
        try:
            self._run = IndexRun(self.db, self.store, self.identity, self._cancel, list(entries), full, self._pool)
        except DAMAGE_ERRORS as err:
            # The plan reads every session row: a flipped byte there is met now.  A fresh file is planned
            # whole (a second failure is not damage of this file: it propagates).
            if not is_damage(err):
                raise
            self.db.reset(self.identity, damage_text(err))
            self._run = IndexRun(self.db, self.store, self.identity, self._cancel, list(entries), full, self._pool)
        return self._run

    async def update(
        self, entries: Sequence[ListedEntry] | None = None, progress: Callable[[IndexProgress], None] | None = None
    ) -> IndexReport:
        """``start`` and every step (until done or cancelled)."""
        run = await self.start(entries)
        try:
            while not run.finished:
                p = await run.step()
                if progress is not None:
                    progress(p)
        finally:
            run.close()
        return run.report()


async def index_root(
    root: str,
    backend: str | None = None,
    *,
    cache_dir: str | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
) -> IndexReport:
    """Bring ``root``'s index up to date once (its own read-only store, closed afterwards)."""
    indexer = Indexer.for_root(root, backend, cache_dir=cache_dir)
    try:
        return await indexer.update(progress=progress)
    finally:
        await indexer.aclose()


def run_index(root: str, backend: str | None = None, **kw: Any) -> IndexReport:
    """``index_root`` from synchronous code (a worker thread without a loop, a script)."""
    return asyncio.run(index_root(root, backend, **kw))


__all__ = ["Indexer", "index_root", "run_index"]
