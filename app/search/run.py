"""One indexing run: the planned sessions, each read through the engine and written whole or not at all.

What a step reads (the engine's public API only):

- a session never indexed, or whose last read was not a clean one: ``view`` (verdict, header and
  stored events in one read), walked a packed run at a time (``app.search.extract``);
- a session whose revision changed after a clean read: ``read_from(last indexed seq)``.  The first
  event returned must be the one indexed last (same seq, type and time) and at least one must be
  new; then only the tail is extracted and appended.  Anything else (fewer events, another event
  there, a read error, a JSONL file that shrank) means the log was rewritten: it is read whole again;
- a log the engine refuses (corrupt, unsupported) and a bad listing row (flat file, bad header):
  whatever of its artifact still decodes (``app.search.damaged``), with the log's status on every
  hit; a refused SQLite session: its rows before the first damaged one (the engine's ``readable_prefix``);
  an unreadable/symlinked entry has nothing readable: only its id is indexed;
- ``busy`` (a SQLite store locked by a writer): skipped now, retried by the next run.

Sessions never indexed, when there are at least ``parallel.BULK_MIN_SESSIONS`` of them (a cold root), are
read the same way by worker processes, a chunk at a time, and each step adopts one finished chunk
(``app.search.parallel``); the other sessions follow, one per step.

Cancellation: the run checks the indexer's cancel flag before each session and between two batches of
``INSERT_BATCH_ROWS`` rows inside a big one, rolling that session's savepoint back (see ``indexer``);
while chunks are built it looks every ``parallel.POLL_S`` (50 ms), and the workers drop their chunks.

May import: the standard library, the public ``persistence`` package and ``app.search``'s own modules.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from app.cache_db import DAMAGE_ERRORS, damage_text, is_busy
from app.search.db import IndexDb, IndexedSession
from app.search.extract import Batch, TailState, extract
from app.search.outcome import (
    Outcome,
    Read,
    ident_of,
    outcome_of,
    read_bad_row,
    read_new,
    read_whole,
    rows_of,
    same_encoding,
    session_fields,
)
from app.search.parallel import (
    BULK_MIN_SESSIONS,
    MERGE_ABOVE_SEGMENTS,
    AdoptionRefused,
    ParallelBuild,
    ShardPool,
    adopt,
    adopting_connection,
    backend_of,
)
from app.search.progress import (
    CANCELLED,
    FULL,
    REMOVED,
    SKIPPED,
    TAIL,
    IndexCancelled,
    IndexProgress,
    IndexReport,
    entry_key,
    entry_revision,
)
from app.search.segments import UnsupportedStructure
from app.search.shards import ShardJob
from persistence import (
    CoordinatedPersistence,
    EventType,
    ListedEntry,
    PackedRun,
    SessionPersistenceError,
)

INSERT_BATCH_ROWS = 4000  # rows inserted between two cancel checks inside one session (~20-40 ms of work)
# A group of sessions is committed when it holds this many sessions or rows, or is this old (seconds): few
# commits for a cold root, and a new session is searchable within COMMIT_SECONDS of being indexed.
COMMIT_SESSIONS = 200
COMMIT_ROWS = 50_000
COMMIT_SECONDS = 0.25
READ_AHEAD = True  # read the next session on the engine's thread while this one is written
MAX_RESETS_PER_RUN = 2  # a run rebuilds a damaged index file at most this often (then the error propagates)
CLEAN_STATUSES = frozenset({"ok", "open-turn"})  # a read after which an append can be indexed by its tail alone


@dataclass(slots=True)
class _Job:
    entry: ListedEntry
    key: str
    revision: str | None


@dataclass(slots=True)
class _Counters:
    actions: dict[str, int] = field(default_factory=dict)
    events: int = 0
    rows: int = 0
    text_chars: int = 0


def _recency(entry: ListedEntry) -> int:
    if entry.mtime_ns is not None:
        return entry.mtime_ns
    created = (entry.meta or {}).get("createdAt")
    return int(created) * 1_000_000 if isinstance(created, (int, float)) and not isinstance(created, bool) else 0


class IndexRun:
    """One planned pass over a listing; ``step()`` until ``finished`` (or cancel the indexer), then
    ``close()`` (``Indexer.update`` does all of it).

    The next session's read is started before the current one is written (the engine decodes on
    its worker thread while this one extracts and SQLite tokenizes), and sessions are committed in
    groups (``COMMIT_SESSIONS``/``COMMIT_ROWS``/``COMMIT_SECONDS``), each session inside its own
    savepoint: a session is in the index whole or not at all.
    """

    def __init__(
        self,
        db: IndexDb,
        store: CoordinatedPersistence,
        identity: str,
        cancel: threading.Event,
        entries: list[ListedEntry],
        full: bool,
        pool: ShardPool | None = None,
    ) -> None:
        self.db = db
        self.store = store
        self._identity = identity
        self._cancel = cancel
        self._t0 = time.perf_counter()
        self._entries = entries
        self._full = full
        self._counters = _Counters()
        self._cancelled = False
        self._closed = False
        self._messages_at = len(self.db.messages)
        self._ahead: dict[str, asyncio.Future[Read]] = {}
        self._group_sessions = 0
        self._group_rows = 0
        self._group_t0 = 0.0
        self._resets = 0
        self._pool = pool
        self._bulk: ParallelBuild | None = None
        self._adopter: sqlite3.Connection | None = None
        self._adopted = 0
        self.done = 0
        self._plan()

    def _plan(self) -> None:
        indexed = self.db.sessions()
        jobs: list[_Job] = []
        seen: set[str] = set()
        for entry in self._entries:
            key = entry_key(entry)
            if key in seen:
                continue
            seen.add(key)
            rev = entry_revision(entry)
            prev = indexed.get(key)
            if prev is not None and prev.revision == rev and prev.status != "pending":
                continue
            jobs.append(_Job(entry, key, rev))
        # Oldest first: rows of newer sessions get higher rowids, and results list newest rowids first.
        jobs.sort(key=lambda j: _recency(j.entry))
        self.total = len(jobs)
        if self._full:
            gone = [s.sid for k, s in indexed.items() if k not in seen]
            if gone:
                with self.db.transaction():
                    self.db.remove_sessions(gone)
                self._count(REMOVED, len(gone))
        self._close_bulk()
        self._queue: deque[_Job] = deque(self._start_bulk(jobs, indexed))
        self._next: _Job | None = self._queue.popleft() if self._queue else None

    def _start_bulk(self, jobs: list[_Job], indexed: dict[str, IndexedSession]) -> list[_Job]:
        """Hand the sessions never indexed to the worker processes when there are enough of them (see
        ``app.search.parallel``); the jobs left to the serial steps, which come after."""
        backend = backend_of(self.store)
        new = [j for j in jobs if j.key not in indexed]
        if self._pool is None or backend is None or not self.db.fts or self.db.path is None or len(new) < BULK_MIN_SESSIONS:
            return jobs
        self.db.commit()
        first_id = self.db.next_doc_id()
        self._adopter = adopting_connection(self.db.path)
        self._bulk = ParallelBuild(
            self._pool, self.store, backend, self.db.path, [ShardJob(j.entry, j.key, j.revision) for j in new], first_id
        )
        return [j for j in jobs if j.key in indexed]

    def _close_bulk(self) -> None:
        bulk, self._bulk = self._bulk, None
        if bulk is not None:
            bulk.close()
        adopter, self._adopter = self._adopter, None
        if adopter is not None:
            adopter.close()

    @property
    def finished(self) -> bool:
        return self._cancelled or (self._next is None and (self._bulk is None or self._bulk.finished))

    def progress(self, session_id: str | None = None, action: str | None = None) -> IndexProgress:
        return IndexProgress(self.done, self.total, session_id, action)

    def _count(self, action: str, n: int = 1) -> None:
        self._counters.actions[action] = self._counters.actions.get(action, 0) + n

    async def step(self) -> IndexProgress:
        """Index the next session (or adopt the next chunk built in parallel) and say where the run is
        (the run's last step also commits)."""
        if self._cancelled or self.finished:
            self.close()
            return self.progress()
        if self._cancel.is_set():
            return self._stop(None)
        if self._bulk is not None and not self._bulk.finished:
            return await self._bulk_step(self._bulk)
        job = self._next
        assert job is not None
        read = self._ahead.pop(job.key, None) or asyncio.ensure_future(self._read(job))
        self._next = self._queue.popleft() if self._queue else None
        if self._next is not None and READ_AHEAD:
            self._ahead[self._next.key] = asyncio.ensure_future(self._read(self._next))
        try:
            action = await self._apply(job, await read)
        except IndexCancelled:
            return self._stop(job.entry.session_id)
        except DAMAGE_ERRORS as err:
            if not is_busy(err):
                return self._heal(job.entry.session_id, err)
            self.db.messages.append(f"{job.entry.session_id}: the index is busy ({err}); retried by the next run")
            action = SKIPPED
        self._count(action)
        self.done += 1
        if self._next is None:
            self.close()
        else:
            self._maybe_commit()
        return self.progress(job.entry.session_id, action)

    async def _bulk_step(self, bulk: ParallelBuild) -> IndexProgress:
        """Adopt the next chunk the workers built; a chunk that cannot be adopted goes to the serial steps."""
        got = await bulk.next(self._cancel.is_set)
        if got is None:
            return self._stop(None)
        chunk, shard = got
        jobs = bulk.jobs_of(chunk)
        if isinstance(shard, BaseException):  # a worker failed (or was stopped): read these sessions here
            return self._to_serial(jobs, f"a worker could not index {len(jobs)} sessions ({type(shard).__name__}: {shard})")
        assert self._adopter is not None
        try:
            adopt(self._adopter, shard)
        except (AdoptionRefused, UnsupportedStructure) as err:
            return self._to_serial(jobs, None if isinstance(err, AdoptionRefused) else str(err))
        except DAMAGE_ERRORS as err:
            if is_busy(err):
                return self._to_serial(jobs, None)
            return self._heal(jobs[-1].entry.session_id, err)
        self._adopted += 1
        for s in shard.sessions:
            self._count(s.action)
            self._counters.rows += s.rows
            self._counters.events += s.events
            self._counters.text_chars += s.text_chars
            if s.message is not None:
                self.db.messages.append(s.message)
        self.done += len(shard.sessions)
        if bulk.finished:
            self._after_bulk()
        return self.progress(jobs[-1].entry.session_id, FULL)

    def _to_serial(self, jobs: list[ShardJob], message: str | None) -> IndexProgress:
        if message is not None:
            self.db.messages.append(message)
        self._queue.extend(_Job(j.entry, j.key, j.revision) for j in jobs)
        if self._next is None:
            self._next = self._queue.popleft()
        if self._bulk is not None and self._bulk.finished:
            self._after_bulk()
        return self.progress()

    def _after_bulk(self) -> None:
        """Every chunk is in: merge their segments when there are many (each adopted chunk left one), and
        move the write-ahead log into the file once (adoptions do not checkpoint)."""
        if self._adopted > MERGE_ABOVE_SEGMENTS:
            self.db.optimize()
        if self._adopted:
            self.db.checkpoint()
        if self._pool is not None:
            self._pool.release()
        self._adopted = 0
        if self._next is None:
            self.close()

    def _heal(self, session_id: str | None, err: BaseException) -> IndexProgress:
        """The index file broke under us (a flipped byte met by a read or a write): start again on a fresh
        one, every session planned again.  A fresh file that keeps breaking is not damage: it propagates."""
        self._resets += 1
        if self._resets > MAX_RESETS_PER_RUN:
            raise err
        self._drop_reads()
        self.db.reset(self._identity, damage_text(err))
        self._count(SKIPPED)
        self._group_sessions = self._group_rows = 0
        self.done = 0
        self._plan()
        return self.progress(session_id, SKIPPED)

    def _stop(self, session_id: str | None) -> IndexProgress:
        self._cancelled = True
        self.close()
        return self.progress(session_id, CANCELLED)

    def close(self) -> None:
        """Commit what is done and drop reads started ahead; the run is finished after it (idempotent)."""
        self._drop_reads()
        self._close_bulk()
        self._next = None
        self._queue.clear()
        if not self._closed:
            self._closed = True
            self.db.commit()

    def _drop_reads(self) -> None:
        for fut in self._ahead.values():
            fut.cancel()
        self._ahead.clear()

    def _maybe_commit(self) -> None:
        if not self.db.conn.in_transaction:
            return
        due = (
            self._group_sessions >= COMMIT_SESSIONS
            or self._group_rows >= COMMIT_ROWS
            or time.perf_counter() - self._group_t0 >= COMMIT_SECONDS
        )
        if due:
            self.db.commit()
            self._group_sessions = self._group_rows = 0

    def _open_group(self) -> None:
        if not self.db.conn.in_transaction:
            self.db.begin()
            self._group_t0 = time.perf_counter()

    def report(self) -> IndexReport:
        c = self._counters
        return IndexReport(
            len(self._entries),
            self.total,
            self.done,
            dict(c.actions),
            c.events,
            c.rows,
            c.text_chars,
            time.perf_counter() - self._t0,
            self._cancelled,
            tuple(self.db.messages[self._messages_at :]),
        )

    # ------------------------------------------------------------ reading (engine calls only)

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise IndexCancelled()

    async def _read(self, job: _Job) -> Read:
        entry = job.entry
        prev = self.db.session(job.key)
        if prev is None:
            return await read_new(self.store, entry)
        out = Read(prev, ident_of(entry))
        try:
            if entry.kind != ListedEntry.SESSION or not same_encoding(self.store, entry):
                out.raw = await read_bad_row(self.store, entry)
                return out
            if self._tail_possible(prev, entry, out.ident):
                try:
                    out.tail = await self.store.read_from(entry.session_id, self._tail_from(prev))
                    return out
                except SessionPersistenceError as err:
                    out.tail = err
            await read_whole(self.store, entry, out)
        except (SessionPersistenceError, OSError) as err:
            out.error = err
        return out

    def _tail_possible(self, prev: IndexedSession, entry: ListedEntry, ident: str | None) -> bool:
        """Whether the log can only have grown since ``prev``: read clean then, and (JSONL) the same
        file, not shorter (the window's follow rule).  A SQLite session is checked by its content
        (``_tail_from``)."""
        if prev.source != "events" or prev.status not in CLEAN_STATUSES:
            return False
        if self.store.kind != "jsonl":
            return True
        if ident is None or ident != prev.ident:
            return False
        return not (entry.size is not None and prev.size is not None and entry.size < prev.size)

    def _tail_from(self, prev: IndexedSession) -> int:
        """The seq a tail read starts at.  JSONL: the first new one, so the engine decodes only the bytes
        appended since its last read of the file (a tail mark serves ``from_seq >= next seq`` only).
        SQLite: the last indexed one again (a seek costs the same), which must still be the same event."""
        if self.store.kind == "jsonl":
            return prev.last_seq + 1
        return max(prev.last_seq, 0)

    # ------------------------------------------------------------ writing one session

    async def _apply(self, job: _Job, read: Read) -> str:
        entry, prev = job.entry, read.prev
        if read.error is None and read.tail is not None and not isinstance(read.tail, BaseException):
            assert prev is not None
            if self._apply_tail(job, prev, read.tail, read.ident):
                return TAIL
        if read.error is None and read.view is None and entry.kind == ListedEntry.SESSION and same_encoding(self.store, entry):
            try:  # the tail read was refused: the log is read whole now
                await read_whole(self.store, entry, read)
            except (SessionPersistenceError, OSError) as err:
                read.error = err
        outcome = outcome_of(self.store, entry, read, self._cancel.is_set)
        if outcome.message is not None:
            self.db.messages.append(outcome.message)
        if outcome.action == REMOVED and prev is not None:
            with self.db.transaction():
                self.db.remove_sessions([prev.sid])
        if outcome.action not in (SKIPPED, REMOVED):
            self._write(job, prev, outcome, read.ident)
        return outcome.action

    def _apply_tail(self, job: _Job, prev: IndexedSession, rf: Any, ident: str | None) -> bool:
        """Index only what was appended since ``prev``; False when the log was not simply appended to."""
        segments = rf.events.segments()
        first_new = prev.last_seq + 1
        if self._tail_from(prev) == prev.last_seq and prev.last_seq >= 0:
            first = next(segments, None)
            if first is None or not _is_event(first, prev.last_seq, prev.last_type, prev.last_time):
                return False
            if type(first) is PackedRun and len(first) > 1:
                segments = chain((first.sub(1, len(first)),), segments)
        items = list(segments)
        if not items or _first_seq(items[0]) != first_new:
            return False  # changed without a new event (a torn write, a rewrite): a whole read says what it is
        self._check_cancel()
        state = TailState(
            prev.last_seq, prev.last_type, prev.last_time, prev.turn, prev.open_turn, prev.title, prev.updated, prev.event_count
        )
        batch = extract(items, state, lambda seq: self.db.tool_at(prev.sid, seq))
        status = "open-turn" if batch.state.open_turn else "ok"
        self._open_group()
        with self.db.transaction():
            self.db.drop_cited_streams(prev.sid, batch.cited, first_new)
            self._insert(prev.sid, [*batch.id_rows, *batch.rows])
            self._update(
                prev.sid, job, batch, status=status, reason=None, source="events", text_chars=prev.text_chars, ident=ident
            )
        self._group_sessions += 1
        self._counters.events += batch.state.event_count - prev.event_count
        return True

    def _write(self, job: _Job, prev: IndexedSession | None, outcome: Outcome, ident: str | None) -> None:
        """Replace a session's rows by its header row and the outcome's rows (one savepoint in the open group)."""
        entry = job.entry
        rows = rows_of(outcome, entry.session_id)
        self._open_group()
        with self.db.transaction():
            sid = prev.sid if prev is not None else self.db.new_session(job.key, entry.session_id)
            if prev is not None:
                self.db.clear_session(sid)
            self._insert(sid, rows)
            self.db.update_session(sid, **session_fields(entry, job.revision, outcome, ident, len(rows[0][6])))
        self._group_sessions += 1
        if outcome.batch is not None:
            self._counters.events += outcome.batch.state.event_count
            self._counters.text_chars += outcome.batch.text_chars

    def _insert(self, sid: int, rows: Sequence[Any]) -> None:
        for lo in range(0, len(rows), INSERT_BATCH_ROWS):
            self._check_cancel()
            self.db.insert_rows(sid, rows[lo : lo + INSERT_BATCH_ROWS])
        self._counters.rows += len(rows)
        self._group_rows += len(rows)

    def _update(
        self,
        sid: int,
        job: _Job,
        batch: Batch,
        *,
        status: str,
        reason: str | None,
        source: str,
        text_chars: int,
        revision: str | None = None,
        ident: str | None = None,
    ) -> None:
        """Record the session's state after ``batch``.  ``revision``: what the read saw (a log that grew
        between the listing and the read is indexed as read, so the next run finds nothing to do)."""
        st = batch.state
        self._counters.text_chars += batch.text_chars
        self.db.update_session(
            sid,
            revision=revision or job.revision,
            size=job.entry.size,
            ident=ident,
            status=status,
            reason=reason,
            source=source,
            title=st.title,
            updated=st.updated,
            event_count=st.event_count,
            last_seq=st.last_seq,
            last_type=st.last_type,
            last_time=st.last_time,
            turn=st.turn,
            open_turn=int(st.open_turn),
            text_chars=text_chars + batch.text_chars,
        )


def _first_seq(item: Any) -> Any:
    return item.seq0 if type(item) is PackedRun else item.get("seq") if type(item) is dict else None


def _is_event(item: Any, seq: int, etype: str | None, tm: int | None) -> bool:
    """Whether ``item`` starts with the event indexed last (same seq, type and time)."""
    if type(item) is PackedRun:
        return item.seq0 == seq and etype == EventType.ASSISTANT_CHUNK and item.time0 == tm
    if type(item) is not dict:
        return False
    return item.get("seq") == seq and item.get("type") == etype and item.get("time") == tm
