"""The parallel cold build: sessions never indexed are read, extracted and tokenized by worker processes,
one chunk at a time, and each finished chunk is adopted into the index file whole.

Why: a cold index of a 10,000-session root took 30-32 s (about 33x the root's ``list``) on one core:
tokenizing alone is over half of it and a SQLite file has one writer.  Here every core builds
*shards* (``app.search.shards``) and the indexer only copies them in (``adopt``: the ``docs`` rows by
one ``INSERT … SELECT``, the FTS5 segments by ``app.search.segments``), a few milliseconds per
chunk; a run that adopted more than ``MERGE_ABOVE_SEGMENTS`` chunks merges their segments at its end.

Rowids: a chunk's rows use ``ID_STRIDE`` rowids from ``first_id + chunk * ID_STRIDE``, so chunks are
numbered oldest first and rows of newer sessions keep higher rowids (results list newest rowids first),
whatever order the workers finish in.  An adoption checks that no row or session key of the chunk is
already in the index (another process indexing the same root); if one is, or the FTS5 structure is
not one ``segments`` can merge, the chunk's sessions go back to the serial run (read again, written
through the triggers): slower, never wrong.

Durability: an adoption is one transaction (``BEGIN IMMEDIATE``: the triggers it drops are created
again, with the same text, before its ``COMMIT``), so readers and a killed run only ever see whole
chunks, and a cancelled run keeps every chunk adopted so far.

May import: the standard library, the public ``persistence`` package and ``app.search``'s own modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from app.cache_db import BUSY_TIMEOUT_MS
from app.search.db import INSERT_TRIGGERS, SESSION_COLUMNS
from app.search.segments import adopt_segments
from app.search.shards import Shard, ShardJob, build_shard, worker_start
from persistence import CoordinatedPersistence

BULK_MIN_SESSIONS = 200  # fewer new sessions than this are indexed serially (a pool costs ~0.5 s to start)
# Sessions per chunk: enough chunks to keep every worker busy to the end, few enough that the segments
# adopted (one per chunk) need no merge: a 10,000-session root is 32 chunks (16, 32, ... 256, 400s, then
# shrinking to 100).
CHUNK_MIN, CHUNK_MAX = 16, 400
CHUNKS_PER_WORKER = 8
# Above this many adopted segments the run merges them into one (``optimize``).  Below it queries stay
# fast without: on the 10,000-session root 50 segments cost 0-7 ms a query (6-31 ms against 0.1-28 ms
# merged) and merging them cost 0.6-1.3 s, 5-9% of the build.
MERGE_ABOVE_SEGMENTS = 48
ID_STRIDE = 1 << 32  # rowids a chunk may use
POLL_S = 0.05  # how often a wait for a chunk looks at the cancel flag


SHARDS_PREFIX = "shards-"  # a run's scratch folder beside the index: shards-<pid>-<random>


def remove_stale_shards(folder: str) -> None:
    """Remove the scratch folders of runs whose process is gone (killed before it could clean up)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.startswith(SHARDS_PREFIX):
            continue
        pid = name[len(SHARDS_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process (EPERM): alive
        return True
    return True


class AdoptionRefused(Exception):
    """A chunk cannot be adopted as built (its sessions are indexed serially instead)."""


def default_workers() -> int:
    """Every core this process may run on (0: processes are off, ``SESSIONSCOPE_INPROCESS``)."""
    if os.environ.get("SESSIONSCOPE_INPROCESS"):
        return 0
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def backend_of(store: CoordinatedPersistence) -> str | None:
    """The ``open_store`` backend a worker opens ``store``'s root with (None: not one it can)."""
    if store.kind == "sqlite":
        return "sqlite"
    if store.kind == "jsonl" and os.path.isdir(store.root_path):
        return "jsonl-zstd" if store.compression == "zstd" else "jsonl-none"
    return None


class ShardPool:
    """The worker processes of an ``Indexer`` (started on first use, kept across its runs)."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._ctx = multiprocessing.get_context("spawn")  # ``fork`` after threads exist (Qt's, the engine's) is unsafe
        # The run whose chunks the workers may build: a chunk of any other run stops at its next session.
        self.generation = self._ctx.Value("q", 0, lock=False)
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is not None and getattr(self._executor, "_broken", False):
                # A worker died (killed, out of memory): that run's chunks went serial; the next run gets new workers.
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    self.workers, mp_context=self._ctx, initializer=worker_start, initargs=(os.getpid(), self.generation)
                )
            return self._executor

    def next_generation(self) -> int:
        """Stop every chunk built so far (at its next session) and number the next run."""
        self.generation.value += 1
        return int(self.generation.value)

    def release(self) -> None:
        """Let the worker processes end (a finished cold build: a window keeps its indexer open for hours,
        and idle workers hold ~50 MB each); the next cold build starts new ones."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self.next_generation()
        self.release()


def chunk_sizes(n: int, workers: int) -> list[int]:
    """Sessions per chunk, in order: doubling from ``CHUNK_MIN`` (the first results are searchable within a
    second) up to a size that gives every worker about ``CHUNKS_PER_WORKER`` chunks (at most ``CHUNK_MAX``),
    and shrinking again over the last chunks (half of what is left per worker, down to a quarter of the
    size), so the workers finish together instead of one waiting for the other's last big chunk."""
    size = max(CHUNK_MIN, min(CHUNK_MAX, n // max(1, workers * CHUNKS_PER_WORKER)))
    out: list[int] = []
    step = CHUNK_MIN
    while n > 0:
        tail = max(CHUNK_MIN, size // 4, n // (2 * max(1, workers)))
        take = min(step, size, tail, n)
        out.append(take)
        n -= take
        step *= 2
    return out


class ParallelBuild:
    """The chunks of one run: submitted to the pool a few at a time, each returned once built."""

    def __init__(
        self,
        pool: ShardPool,
        store: CoordinatedPersistence,
        backend: str,
        index_file: str,
        jobs: Sequence[ShardJob],
        first_id: int,
    ) -> None:
        self.pool = pool
        self._generation = pool.next_generation()
        self._root = store.root_path
        self._backend = backend
        folder = os.path.dirname(index_file)
        remove_stale_shards(folder)
        self._dir = tempfile.mkdtemp(prefix=f"{SHARDS_PREFIX}{os.getpid()}-", dir=folder)
        self._chunks: list[list[ShardJob]] = []
        at = 0
        for size in chunk_sizes(len(jobs), pool.workers):
            self._chunks.append(list(jobs[at : at + size]))
            at += size
        self._first_id = first_id
        self._next_chunk = 0
        self._running: dict[Future[Shard], int] = {}
        self._closed = False

    @property
    def finished(self) -> bool:
        return self._closed or (self._next_chunk >= len(self._chunks) and not self._running)

    def jobs_of(self, chunk: int) -> list[ShardJob]:
        return self._chunks[chunk]

    def _fill(self) -> None:
        executor = self.pool.executor()
        while self._next_chunk < len(self._chunks) and len(self._running) < self.pool.workers * 2:
            c = self._next_chunk
            self._next_chunk += 1
            first = self._first_id + c * ID_STRIDE
            path = os.path.join(self._dir, f"chunk-{c:06d}.sqlite")
            fut: Future[Shard]
            try:
                args = (self._root, self._backend, self._chunks[c], first, first + ID_STRIDE, path, self._generation)
                fut = executor.submit(build_shard, *args)
            except (RuntimeError, OSError) as err:  # a broken pool (a worker was killed): this chunk goes serial
                fut = Future()
                fut.set_exception(err)
            self._running[fut] = c

    async def next(self, cancelled: Any) -> tuple[int, Shard | BaseException] | None:
        """The next chunk built (its number and shard, or the error that stopped it); None when cancelled."""
        self._fill()
        while True:
            if cancelled():
                return None
            done = [f for f in self._running if f.done()]
            if done:
                fut = min(done, key=lambda f: self._running[f])
                chunk = self._running.pop(fut)
                self._fill()
                err = fut.exception()
                return chunk, (err if err is not None else fut.result())
            # Polled, not awaited through callbacks: a chunk abandoned at close must not call into a closed loop.
            await asyncio.sleep(POLL_S)

    def close(self) -> None:
        """Drop what is not adopted: queued chunks, running ones (told to stop), the scratch folder."""
        if self._closed:
            return
        self._closed = True
        if self._running:
            self.pool.next_generation()
        for fut in self._running:
            fut.cancel()
        self._running.clear()
        shutil.rmtree(self._dir, ignore_errors=True)


def adopt(conn: sqlite3.Connection, shard: Shard) -> dict[str, int]:
    """Copy ``shard`` into the index ``conn`` holds (its own connection: see ``segments``), in one
    transaction; the sid each written session got, by key.  Raises ``AdoptionRefused`` (nothing written)."""
    written = [s for s in shard.sessions if s.local is not None]
    conn.execute("ATTACH DATABASE ? AS shard", (shard.path,))
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            sids = _adopt(conn, shard, written)
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("DETACH DATABASE shard")
        with contextlib.suppress(OSError):
            os.remove(shard.path)
    return sids


def _adopt(conn: sqlite3.Connection, shard: Shard, written: list[Any]) -> dict[str, int]:
    if conn.execute(
        "SELECT 1 FROM docs WHERE id >= ? AND id < ? LIMIT 1", (shard.first_id, max(shard.next_id, shard.first_id + 1))
    ).fetchone():
        raise AdoptionRefused("rows of the chunk's rowids are in the index already")
    keys = [s.key for s in written]
    for lo in range(0, len(keys), 500):
        part = keys[lo : lo + 500]
        if conn.execute(f"SELECT 1 FROM sessions WHERE key IN ({', '.join('?' * len(part))}) LIMIT 1", part).fetchone():
            raise AdoptionRefused("a session of the chunk is in the index already")
    base = int(conn.execute("SELECT coalesce(max(sid), 0) + 1 FROM sessions").fetchone()[0])
    names = [c for c in SESSION_COLUMNS if c not in ("sid", "key")]
    now = time.time()
    conn.executemany(
        f"INSERT INTO sessions(sid, key, {', '.join(names)}, indexed_at) VALUES (?, ?, {', '.join('?' * len(names))}, ?)",
        [(base + s.local, s.key, *(s.fields[n] for n in names), now) for s in written],
    )
    triggers = conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN ({', '.join('?' * len(INSERT_TRIGGERS))})",
        INSERT_TRIGGERS,
    ).fetchall()
    if len(triggers) != len(INSERT_TRIGGERS):
        raise AdoptionRefused("the index has no insert triggers to stand in for")
    for name, _sql in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute(
        "INSERT INTO docs(id, sid, seq, kind, etype, tool, turn, time, body) "
        "SELECT id, sid + ?, seq, kind, etype, tool, turn, time, body FROM shard.docs ORDER BY id",
        (base,),
    )
    adopt_segments(conn, "fts", "shard")
    adopt_segments(conn, "cjk", "shard")
    for _name, sql in triggers:
        conn.execute(sql)
    return {s.key: base + s.local for s in written}


def adopting_connection(path: str) -> sqlite3.Connection:
    """A connection for adoptions only: it never touches the FTS5 tables through FTS5 (see ``segments``)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous = NORMAL")
    # No checkpoint after each adoption: a checkpoint every 1,000 pages (each with its syncs) made adopting
    # a 10,000-session root 3.0-3.3 s instead of 1.4 s.  The run checkpoints once, after its optimize.
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    return conn


__all__ = [
    "BULK_MIN_SESSIONS",
    "MERGE_ABOVE_SEGMENTS",
    "AdoptionRefused",
    "ParallelBuild",
    "ShardPool",
    "adopt",
    "adopting_connection",
    "backend_of",
    "chunk_sizes",
    "default_workers",
]
