"""The window's process pool, and the listing and diagnosis its worker *processes* run (no Qt here).

Diagnosing a session parses its whole log: pure Python that holds the GIL.  In the window's process
that competes with every ``data()`` call of a painting view, so a 10k-session root would keep the
list sluggish for minutes.  Worker processes scan project directories and parse logs in parallel on
other cores and send back only small values (``FoundArtifact``, ``Details``).  Each process keeps one
engine store per root and a header cache between calls.

May import: the public ``persistence`` package, ``app.timeline``, the Qt-free ``runtime`` modules and
``models.session_row`` (a plain value module); never Qt: a spawned worker imports this module.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

from app.gui.models.session_row import READABLE, Details
from app.gui.runtime.viewer_store import open_for_viewing
from app.listing.root_scan import FoundArtifact, artifacts_in_project_dir
from app.records import latest_title
from persistence import CoordinatedPersistence, SessionPersistenceError, upstream_class_of

Job = tuple[str, str, str | None]  # (row key, session id, revision the row shows)

_stores: dict[str, CoordinatedPersistence] = {}
_loop: asyncio.AbstractEventLoop | None = None


async def diagnose_one(store: Any, session_id: str, revision: str | None) -> Details:
    """Status, stored event count and title of one session (shared by the in-process path)."""
    try:
        d = await store.diagnose(session_id)
    except SessionPersistenceError as err:  # diagnose classifies engine errors itself; a safety net
        return Details(revision, "corrupt", str(err), None, 0, None, upstream_class_of(err))
    title = None
    if d.status in READABLE:
        try:
            ins = await store.inspect(session_id)
            title = latest_title(ins.events.record_table())
        except (SessionPersistenceError, OSError):
            title = None
    count = d.event_count - len(d.closers) if d.status in READABLE else None
    return Details(revision, d.status, d.reason, count, len(d.closers), title, d.error_class)


def diagnose_batch(root: str, jobs: list[Job]) -> list[tuple[str, Details]]:
    """Entry point in the worker process."""
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
    store = _stores.get(root)
    if store is None:
        store = _stores[root] = open_for_viewing(root)

    async def run() -> list[tuple[str, Details]]:
        return [(key, await diagnose_one(store, sid, rev)) for key, sid, rev in jobs]

    return _loop.run_until_complete(run())


_header_cache: dict[Any, Any] = {}


def scan_project(project_dir: str) -> list[FoundArtifact]:
    """Entry point in the worker process: every artifact of one project directory."""
    if len(_header_cache) > 200_000:
        _header_cache.clear()
    return list(artifacts_in_project_dir(project_dir, _header_cache))


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()
WORKER_NICENESS = 10


def _yield_cpu() -> None:
    """Worker processes run at a lower priority: on a busy machine the window's thread gets the CPU first."""
    try:
        os.nice(WORKER_NICENESS)
    except (AttributeError, OSError):  # not on Windows; an already-niced process may refuse
        pass


_pool_failed = False


def shared_pool() -> Executor | None:
    """One small process pool for the whole app (None when processes are unavailable or disabled)."""
    global _pool, _pool_failed
    with _pool_lock:  # the warm-up thread and the GUI thread may both ask first
        if _pool is not None or _pool_failed:
            return _pool
        if os.environ.get("SESSIONSCOPE_INPROCESS"):
            _pool_failed = True
            return None
        try:
            workers = max(1, min(4, (os.cpu_count() or 2)))
            _pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_yield_cpu)
        except (OSError, ValueError, NotImplementedError):
            _pool_failed = True
            return None
        return _pool


def warm_pool() -> None:
    """Start the worker processes now, on a plain thread, so the first listing does not wait for them."""

    def warm() -> None:
        pool = shared_pool()
        if pool is None:
            return
        try:
            for f in [pool.submit(os.getpid) for _ in range(getattr(pool, "_max_workers", 1))]:
                f.result(timeout=60)
        except Exception:
            pass

    threading.Thread(target=warm, name="sessionscope-pool-warmup", daemon=True).start()


def shutdown_pool() -> None:
    global _pool
    pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
