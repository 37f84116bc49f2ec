"""A worker process of a parallel cold build: read and extract a chunk of sessions into a scratch index file.

Why processes: reading a log (decompress, parse, validate), extracting its rows and tokenizing their
text are pure Python and SQLite work that holds one core each; on a 1,500-session root the serial run
spent 2.4-3.1 s tokenizing and ~2 s reading and extracting.  Each worker writes a *shard*: the chunk's
``docs`` rows under the rowids the parent allocated (``first_id`` onwards, oldest session first) and
the ``fts``/``cjk`` tables over them, optimized to one segment each; the parent adopts the shard
(``app.search.parallel``, ``app.search.segments``) and only copies.  What is written is what the
serial run writes (the same ``app.search.outcome`` functions).

Lifetime: a worker ends when its parent does, however that one ends (a thread waits on
multiprocessing's parent sentinel, which reads EOF the moment the parent is gone, SIGKILL included,
and polls ``os.getppid()`` as a fallback); it ignores SIGINT and SIGHUP (a terminal's Ctrl-C goes to
the whole process group: the parent decides, and shuts the pool down).  The pool's shared run number is
checked between two sessions: a chunk of a cancelled run is dropped.

May import: the standard library, the public ``persistence`` package and ``app.search``'s own modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from dataclasses import dataclass
from typing import Any

from app.search.db import clean_text, create_shard, fill_shard_index
from app.search.outcome import Outcome, full_outcome, ident_of, outcome_of, read_new, rows_of, same_encoding, session_fields
from app.search.progress import REMOVED, SKIPPED, IndexCancelled
from persistence import CoordinatedPersistence, ListedEntry, SessionPersistenceError, open_store

# Small transcripts are read and extracted READ_AHEAD at a time in one engine call (``map_views``): the
# hop to the engine's thread cost ~0.3 ms of a small session's ~1.1 ms in a worker.  Only transcripts
# of at most READ_AHEAD_MAX_BYTES go that way, so a batch holds little; the rest are read one by one.
READ_AHEAD = 16  # sessions
READ_AHEAD_MAX_BYTES = 512 * 1024  # bytes of one transcript as stored
PARENT_POLL_S = 1.0  # how often the parent watch re-checks ``os.getppid()`` (a fallback to the sentinel)
INSERT = "INSERT INTO docs(id, sid, seq, kind, etype, tool, turn, time, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"


@dataclass(frozen=True, slots=True)
class ShardJob:
    """One session for a worker: its listing row, row key and the revision the listing showed."""

    entry: ListedEntry
    key: str
    revision: str | None


@dataclass(frozen=True, slots=True)
class ShardSession:
    """What a worker did with one session; ``local`` is its ``sid`` inside the shard (None: nothing written)."""

    key: str
    session_id: str
    action: str
    local: int | None
    fields: dict[str, Any] | None  # the ``sessions`` columns (``outcome.session_fields``)
    rows: int
    events: int
    text_chars: int
    message: str | None


@dataclass(frozen=True, slots=True)
class Shard:
    """A finished chunk: its file, its sessions in order, and the rowids its rows use."""

    path: str
    sessions: tuple[ShardSession, ...]
    first_id: int
    next_id: int  # one past the last rowid written


class ShardCancelled(Exception):
    """The run was cancelled while this chunk was being built (its file is removed)."""


_generation: Any = None  # the pool's shared run number (set by the initializer)
_mine = 0  # the run number of the chunk being built
_stores: dict[tuple[str, str], CoordinatedPersistence] = {}
_loop: asyncio.AbstractEventLoop | None = None


def parent_gone(parent_pid: int, sentinel: Any, timeout: float) -> bool:
    """True once the parent has ended: its sentinel became readable (EOF), or we were re-parented."""
    if sentinel is not None:
        try:
            if multiprocessing.connection.wait([sentinel], timeout=timeout):
                return True
        except (OSError, ValueError):
            threading.Event().wait(timeout)
    else:
        threading.Event().wait(timeout)
    return os.getppid() != parent_pid


def worker_start(parent_pid: int, generation: Any) -> None:
    """Initializer of every worker process: the parent's signals are the parent's, die with the parent."""
    global _generation
    _generation = generation
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    sentinel = parent.sentinel if parent is not None else None

    def watch() -> None:
        while not parent_gone(parent_pid, sentinel, PARENT_POLL_S):
            pass
        os._exit(0)  # nothing to clean up: read-only stores, a scratch file the parent's run removes

    threading.Thread(target=watch, name="sessionscope-index-parent-watch", daemon=True).start()


def _cancelled() -> bool:
    """The run this chunk belongs to was cancelled or closed (the pool numbers another run now)."""
    return _generation is not None and _generation.value != _mine


def _store(root: str, backend: str) -> CoordinatedPersistence:
    store = _stores.get((root, backend))
    if store is None:
        store = _stores[(root, backend)] = open_store(root, backend, read_only=True, create=False)
    return store


def build_shard(
    root: str, backend: str, jobs: list[ShardJob], first_id: int, id_limit: int, path: str, generation: int = 0
) -> Shard:
    """Entry point in the worker: index ``jobs`` (oldest first) into a new shard file at ``path``, unless
    run ``generation`` is cancelled meanwhile (``ShardCancelled``)."""
    global _loop, _mine
    _mine = generation
    if _loop is None:
        _loop = asyncio.new_event_loop()
    store = _store(root, backend)
    conn = create_shard(path)
    try:
        sessions, next_id = _fill(conn, store, jobs, first_id, id_limit)
        conn.execute("BEGIN")
        fill_shard_index(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.close()
        with contextlib.suppress(OSError):
            os.remove(path)
        raise
    conn.close()
    return Shard(path, tuple(sessions), first_id, next_id)


def _fill(
    conn: Any, store: CoordinatedPersistence, jobs: list[ShardJob], first_id: int, id_limit: int
) -> tuple[list[ShardSession], int]:
    assert _loop is not None
    return _loop.run_until_complete(_walk(conn, store, jobs, first_id, id_limit))


async def _walk(
    conn: Any, store: CoordinatedPersistence, jobs: list[ShardJob], first_id: int, id_limit: int
) -> tuple[list[ShardSession], int]:
    """Each session's rows into the shard, oldest first.  No read-ahead thread here (the serial run has
    one): in a worker it bought nothing (1.56-2.07 ms a session against 1.52-2.27 ms, 5% more CPU), both
    threads wanting the one GIL.  Small sessions are instead read and extracted ``READ_AHEAD`` at a time
    in one engine call (``_read_ahead``: 1.06 -> 0.74 ms a session on the 10,000-session root)."""
    out: list[ShardSession] = []
    next_id = first_id
    local = 0
    ahead: dict[str, tuple[str | None, Outcome]] = {}
    conn.execute("BEGIN")
    for at, job in enumerate(jobs):
        if _cancelled():
            raise ShardCancelled()
        if at % READ_AHEAD == 0:
            ahead = await _read_ahead(store, jobs[at : at + READ_AHEAD])
        entry = job.entry
        if job.key in ahead:
            ident, outcome = ahead.pop(job.key)
        else:
            read = await read_new(store, entry)
            ident = read.ident
            try:
                outcome = outcome_of(store, entry, read, _cancelled)
            except IndexCancelled:
                raise ShardCancelled() from None
        if outcome.action in (SKIPPED, REMOVED):
            out.append(ShardSession(job.key, entry.session_id, outcome.action, None, None, 0, 0, 0, outcome.message))
            continue
        rows = rows_of(outcome, entry.session_id)
        if next_id + len(rows) > id_limit:
            raise OverflowError(f"a chunk of {len(jobs)} sessions has more than {id_limit - first_id} rows")
        conn.executemany(INSERT, ((next_id + n, local, *row) for n, row in enumerate(rows)))
        next_id += len(rows)
        fields = session_fields(entry, job.revision, outcome, ident, len(rows[0][6]))
        fields = {k: clean_text(v) if isinstance(v, str) else v for k, v in fields.items()}
        batch = outcome.batch
        events = batch.state.event_count if batch else 0
        chars = batch.text_chars if batch else 0
        out.append(
            ShardSession(job.key, entry.session_id, outcome.action, local, fields, len(rows), events, chars, outcome.message)
        )
        local += 1
    conn.execute("COMMIT")
    return out, next_id


async def _read_ahead(store: CoordinatedPersistence, jobs: list[ShardJob]) -> dict[str, tuple[str | None, Outcome]]:
    """job key -> (transcript identity, outcome) of the readable small sessions among ``jobs``, read
    and extracted in one engine call; every other job (a bad row, a refused or busy log, a big one, or
    a batch the engine could not read) is left for ``read_new``, one at a time, as before."""
    small = [
        j
        for j in jobs
        if j.entry.kind == ListedEntry.SESSION
        and same_encoding(store, j.entry)
        and j.entry.size is not None
        and j.entry.size <= READ_AHEAD_MAX_BYTES
    ]
    if len(small) < 2:
        return {}
    idents = [ident_of(j.entry) for j in small]  # stat'ed before the read, as read_new does
    try:
        outcomes = await store.map_views([j.entry.session_id for j in small], full_outcome)
    except (SessionPersistenceError, OSError):
        return {}
    return {j.key: (ident, o) for j, ident, o in zip(small, idents, outcomes, strict=True) if o is not None}


__all__ = ["Shard", "ShardCancelled", "ShardJob", "ShardSession", "build_shard", "parent_gone", "worker_start"]
