"""The verdicts of many sessions of one root: the diagnosis cache first, then every core for the rest.

Why worker processes: judging a session parses its whole log, pure Python that holds the GIL, so a
cold ``verify`` of 10,000 sessions ran on one core for 21.7 s (issue 25).  The sessions the cache
does not know are cut into chunks of ``CHUNK`` and judged by one process per core (``spawn``: the
engine may have threads running, and ``fork`` after threads is unsafe), each opening its own
read-only store of the root once; what comes back is ~200 bytes per session.  Fewer than
``POOL_MIN`` sessions are judged in this process: starting a worker costs ~0.3 s of imports.

Cancellation: Ctrl+C reaches the whole process group; workers ignore SIGINT (so no traceback per
worker), and this process cancels the queued chunks and ends the workers at once (they only read);
the verdicts already stored stay, so the next run starts from them.  A worker also exits when this
process is gone.

May import: the standard library, the public ``persistence`` package and ``app.diagnosis``'s own modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from app.diagnosis.cache import DiagnosisCache, Wanted, cacheable_root
from app.diagnosis.verdicts import Verdict, judge, judge_many
from persistence import CoordinatedPersistence, open_store

CHUNK = 48  # sessions per task sent to a worker (~0.1-0.5 s of work: cancellation stays prompt)
POOL_MIN = 64  # fewer sessions to judge than this: in this process
MAX_WORKERS = 8
STORE_EVERY = 64  # in-process judging stores its verdicts this often (an interrupted run keeps them)
Progress = Callable[[int, int, str], None]  # (done, total, session id)
Job = tuple[str, str, str | None]  # (session id, place, the revision the listing saw)

_stores: dict[tuple[str, str], CoordinatedPersistence] = {}
_loop: asyncio.AbstractEventLoop | None = None


def backend_name(store: CoordinatedPersistence) -> str:
    """The ``open_store`` backend that reopens ``store``'s root the same way in a worker."""
    return "sqlite" if store.kind == "sqlite" else f"jsonl-{store.compression or 'zstd'}"


def judge_chunk(root: str, backend: str, jobs: list[Job]) -> list[Verdict]:
    """Entry point in a worker process: the verdicts of ``jobs`` ((session id, place, listed revision))."""
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
    store = _stores.get((root, backend))
    if store is None:  # backend "": what the path holds (the window's ``open_for_viewing``)
        store = _stores[(root, backend)] = open_store(root, backend or None, read_only=True, create=False)

    return _loop.run_until_complete(judge_many(store, jobs))


def _watch_parent(parent_pid: int) -> None:
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(0)  # read-only work: nothing to clean up

    threading.Thread(target=watch, name="sessionscope-parent-watch", daemon=True).start()


def _worker_start(parent_pid: int) -> None:
    """Every worker: leave Ctrl+C and hang-ups to the parent, and end when it does."""
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    _watch_parent(parent_pid)


def worker_count(sessions: int) -> int:
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS, -(-sessions // CHUNK)))


async def _store(cache: DiagnosisCache | None, verdicts: list[Verdict]) -> None:
    if cache is not None and verdicts:
        await asyncio.to_thread(cache.store, verdicts)


async def _in_process(
    store: CoordinatedPersistence,
    jobs: Sequence[Job],
    cache: DiagnosisCache | None,
    out: dict[tuple[str, str], Verdict],
    tick: Callable[[str], None],
) -> None:
    pending: list[Verdict] = []
    for sid, place, rev in jobs:
        if (sid, place) in out:
            continue
        tick(sid)
        v = out[(sid, place)] = await judge(store, sid, place, rev)
        pending.append(v)
        if len(pending) >= STORE_EVERY:
            await _store(cache, pending)
            pending = []
    await _store(cache, pending)


async def _in_processes(
    store: CoordinatedPersistence,
    jobs: Sequence[Job],
    cache: DiagnosisCache | None,
    out: dict[tuple[str, str], Verdict],
    tick: Callable[[str], None],
) -> None:
    chunks = [list(jobs[i : i + CHUNK]) for i in range(0, len(jobs), CHUNK)]
    pool = ProcessPoolExecutor(
        worker_count(len(jobs)),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_start,
        initargs=(os.getpid(),),
    )
    loop = asyncio.get_running_loop()
    root, backend = store.root_path, backend_name(store)
    try:
        futures = [loop.run_in_executor(pool, judge_chunk, root, backend, chunk) for chunk in chunks]
        for fut in asyncio.as_completed(futures):
            verdicts = await fut
            for v in verdicts:
                out[v.key] = v
                tick(v.session_id)
            await _store(cache, verdicts)
    except (BrokenProcessPool, OSError) as err:
        del err  # workers could not run (a locked-down system): judge the rest here
        pool.shutdown(wait=False, cancel_futures=True)
        await _in_process(store, jobs, cache, out, tick)
    except BaseException:
        _stop_now(pool)  # Ctrl+C or cancelled: the chunks in hand are not waited for
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """End the workers at once: they only read, so nothing is left half-done."""
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            proc.terminate()


async def judge_all(
    store: CoordinatedPersistence,
    wanted: Sequence[Wanted],
    *,
    cache: DiagnosisCache | None,
    processes: bool = True,
    progress: Progress | None = None,
) -> dict[tuple[str, str], Verdict]:
    """The verdict of every (session id, place) of ``wanted``: stored ones whose revision is the
    listing's, the rest judged (in worker processes when there are many) and stored."""
    out: dict[tuple[str, str], Verdict] = {}
    if cache is not None:
        out.update(await asyncio.to_thread(cache.lookup, wanted))
    todo: dict[tuple[str, str], str | None] = {}
    for sid, place, rev in wanted:
        if (sid, place) not in out:
            todo.setdefault((sid, place), rev)
    jobs = [(sid, place, rev) for (sid, place), rev in todo.items()]
    total = len(out) + len(jobs)
    done = len(out)

    def tick(sid: str) -> None:
        nonlocal done
        if progress is not None:
            progress(done, total, sid)
        done += 1

    if not jobs:
        return out
    if processes and len(jobs) >= POOL_MIN and worker_count(len(jobs)) > 1 and cacheable_root(store.root_path, store.kind):
        await _in_processes(store, jobs, cache, out, tick)
    else:
        await _in_process(store, jobs, cache, out, tick)
    return out


def open_cache(store: CoordinatedPersistence, *, use: bool = True, cache_dir: str | None = None) -> DiagnosisCache | None:
    """The diagnosis cache of ``store``'s root (None: not wanted, or a root that has none)."""
    if not use or not cacheable_root(store.root_path, store.kind):
        return None
    return DiagnosisCache(store.root_path, store.kind, cache_dir=cache_dir)


def relative_place(root: str, path: str) -> str:
    """A transcript's ``place``: its path below the root (the window and the command line may name
    the same root differently: absolute, relative, through a link; the cache file is the real root's)."""
    prefix = _prefix(root)
    if prefix and path.startswith(prefix):
        return path[len(prefix) :]  # what relpath says of a path the listing joined below the root (~0.2 s less per 10k)
    try:
        return os.path.relpath(path, root)
    except ValueError:  # another drive (Windows)
        return path


@functools.lru_cache(maxsize=8)
def _prefix(root: str) -> str:
    """``root`` with a separator when it is already normal (no ``.``, ``..``, doubled or trailing separators)."""
    return root + os.sep if root and os.path.normpath(root) == root and root != os.sep else ""


def place_of(store: CoordinatedPersistence, path: str | None, sqlite_place: str) -> str:
    """The ``place`` of a session: its transcript below the root (JSONL) or the store file's identity (SQLite)."""
    if store.kind == "sqlite":
        return sqlite_place
    return relative_place(store.root_path, path) if path else ""


__all__ = [
    "CHUNK",
    "POOL_MIN",
    "backend_name",
    "judge_all",
    "judge_chunk",
    "open_cache",
    "place_of",
    "relative_place",
    "worker_count",
]
