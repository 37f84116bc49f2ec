"""The window's process pool, and the listing its worker *processes* run (no Qt here).

Diagnosing a session parses its whole log: pure Python that holds the GIL.  In the window's process
that competes with every ``data()`` call of a painting view, so a 10k-session root would keep the
list sluggish for minutes.  Worker processes scan project directories and parse logs in parallel on
other cores and send back only small values (``FoundArtifact``; a session's ``Verdict`` from
``app.diagnosis.parallel.judge_chunk``, which the diagnosis pass submits here).  Each process keeps one
engine store per root and a header cache between calls.

A worker dies with the window's process, however that one ends (issue 21: killed windows left their
workers, ~45 MB each, running under init).  The initializer starts a thread that waits on
multiprocessing's parent sentinel (a pipe end that reads EOF the moment the parent is gone, SIGKILL
included, on every platform) and polls ``os.getppid()`` as a fallback; either way the worker exits.
Not ``PR_SET_PDEATHSIG``: Linux sends it when the parent *thread* that forked the child ends, and the
pool starts its workers from whichever thread submits first (the warm-up thread, which ends at once).
The start method stays ``spawn`` (``fork`` after Qt's threads exist is unsafe), which brings
multiprocessing's resource tracker: it exits on its own once every process holding its pipe (the
window and the workers) is gone.  Workers ignore SIGINT and SIGHUP: a terminal sends those to its
whole process group, and it is the window that decides to stop (it then shuts the pool down).

May import: the public ``persistence`` package, ``app.listing`` (the scan), the Qt-free ``runtime`` modules and
``models.session_row`` (a plain value module); never Qt: a spawned worker imports this module.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

from app.listing.root_scan import FoundArtifact, artifacts_in_project_dir

_header_cache: dict[Any, Any] = {}


def scan_project(project_dir: str) -> list[FoundArtifact]:
    """Entry point in the worker process: every artifact of one project directory."""
    if len(_header_cache) > 200_000:
        _header_cache.clear()
    return list(artifacts_in_project_dir(project_dir, _header_cache))


_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()
WORKER_NICENESS = 10


# How often the parent watch re-checks ``os.getppid()`` when the sentinel says nothing (a fallback only).
PARENT_POLL_S = 1.0


def _yield_cpu() -> None:
    """Worker processes run at a lower priority: on a busy machine the window's thread gets the CPU first."""
    try:
        os.nice(WORKER_NICENESS)
    except (AttributeError, OSError):  # not on Windows; an already-niced process may refuse
        pass


def parent_gone(parent_pid: int, sentinel: Any, timeout: float) -> bool:
    """True once the parent has ended: its sentinel became readable (EOF), or we were re-parented."""
    if sentinel is not None:
        try:
            if multiprocessing.connection.wait([sentinel], timeout=timeout):
                return True
        except (OSError, ValueError):  # a closed sentinel: the fallback below still decides
            time.sleep(timeout)
    else:
        time.sleep(timeout)
    return os.getppid() != parent_pid


def watch_parent(parent_pid: int, poll_s: float = PARENT_POLL_S) -> threading.Thread:
    """In a worker: a daemon thread that ends this process as soon as the parent ``parent_pid`` is gone."""
    parent = multiprocessing.parent_process()
    sentinel = parent.sentinel if parent is not None else None

    def watch() -> None:
        while not parent_gone(parent_pid, sentinel, poll_s):
            pass
        # No cleanup to run: the worker owns nothing the parent's shutdown would miss (read-only stores).
        os._exit(0)

    thread = threading.Thread(target=watch, name="sessionscope-parent-watch", daemon=True)
    thread.start()
    return thread


def _worker_start(parent_pid: int) -> None:
    """Initializer of every worker process: lower priority, the window's signals, die with the window."""
    _yield_cpu()
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    watch_parent(parent_pid)


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
            _pool = ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start, initargs=(os.getpid(),)
            )
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
