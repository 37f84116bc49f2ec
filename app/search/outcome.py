"""What a whole read of one session gives the index: the reads, and the rows and session fields they make.

Why a module of its own: a cold build reads and extracts sessions in worker processes
(``app.search.shards``) and the serial run (``app.search.run``) does the same one session at a time;
both go through these functions, so a parallel build writes exactly the rows and session fields a
serial one does (``tests/search/test_search_parallel.py`` compares their hits).

What a whole read is (the engine's public API only): ``view`` (verdict, header and events in one read);
for a log the engine refuses, the decodable part of its artifact (JSONL, ``app.search.damaged``) or its
rows before the first damaged one (SQLite, ``readable_prefix``); for a bad listing row, its artifact's
bytes; nothing readable: the session's id (and cwd) only.

May import: the standard library, the public ``persistence`` package and ``app.search``'s own modules.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.search.damaged import decode_damaged
from app.search.extract import Batch, DocRow, TailState, extract, header_row
from app.search.progress import DAMAGED, FULL, HEADER_ONLY, REMOVED, SKIPPED, IndexCancelled
from persistence import READABLE_STATUSES, CoordinatedPersistence, ListedEntry, SessionPersistenceError


@dataclass(slots=True)
class Read:
    """What the engine returned for one session (read ahead of its turn; errors kept as values)."""

    prev: Any  # the IndexedSession indexed before (None: never)
    ident: str | None = None  # JSONL: device:inode of the transcript, stat'ed before the read
    tail: Any = None  # ReadFromResult of a tail read, or the SessionPersistenceError it raised
    view: Any = None  # SessionView of a whole read
    raw: Any = None  # RawBytes of a refused log or bad row (None: nothing readable)
    prefix: Any = None  # ReadablePrefix of a refused SQLite session (it has no bytes of its own to decode)
    error: BaseException | None = None  # the read failed (SessionPersistenceError, OSError)


@dataclass(slots=True)
class Outcome:
    """What to write for one session after a whole read (``action`` SKIPPED/REMOVED: nothing to write)."""

    action: str
    meta: dict[str, Any] | None = None
    batch: Batch | None = None
    revision: str | None = None
    status: str = "unreadable"
    reason: str | None = None
    source: str = "listing"
    message: str | None = None  # for the index's messages (a read that failed)


def same_encoding(store: CoordinatedPersistence, entry: ListedEntry) -> bool:
    return store.kind != "jsonl" or entry.compression in (None, store.compression)


def ident_of(entry: ListedEntry) -> str | None:
    """``device:inode`` of a JSONL transcript now (None: not a file we can stat)."""
    if entry.path is None:
        return None
    try:
        st = os.stat(entry.path)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


async def read_whole(store: CoordinatedPersistence, entry: ListedEntry, out: Read) -> None:
    out.view = view = await store.view(entry.session_id)
    if view.status not in READABLE_STATUSES and view.status not in ("busy", "missing"):
        try:
            if store.kind == "jsonl":
                out.raw = await store.read_raw_bytes(entry.session_id)
            else:  # its rows before the first damaged one, decoded by the engine (issue 24 item 5)
                out.prefix = await store.readable_prefix(entry.session_id)
        except (SessionPersistenceError, OSError):
            out.raw = out.prefix = None


async def read_bad_row(store: CoordinatedPersistence, entry: ListedEntry) -> Any:
    if not (entry.path and entry.compression) or entry.kind in (ListedEntry.SYMLINK, ListedEntry.UNREADABLE):
        return None
    try:
        return await store.read_artifact_bytes(entry.path)
    except (SessionPersistenceError, OSError):
        return None


async def read_new(store: CoordinatedPersistence, entry: ListedEntry) -> Read:
    """The whole read of a session never indexed (what a shard worker does for each of its sessions)."""
    out = Read(None, ident_of(entry))
    try:
        if entry.kind != ListedEntry.SESSION or not same_encoding(store, entry):
            out.raw = await read_bad_row(store, entry)
        else:
            await read_whole(store, entry, out)
    except (SessionPersistenceError, OSError) as err:
        out.error = err
    return out


def outcome_of(store: CoordinatedPersistence, entry: ListedEntry, read: Read, cancelled: Callable[[], bool]) -> Outcome:
    """What to write after ``read`` (a whole read, or a bad row's bytes); raises ``IndexCancelled``."""
    if read.error is not None:
        return Outcome(
            HEADER_ONLY, entry.meta, reason=str(read.error), message=f"{entry.session_id}: cannot be indexed ({read.error})"
        )
    if entry.kind != ListedEntry.SESSION or not same_encoding(store, entry):
        data = read.raw
        return _damaged(
            entry,
            data.data if data else None,
            data.compression if data else entry.compression,
            entry.status or "corrupt",
            entry.problem,
            cancelled,
        )
    view = read.view
    status = view.status
    if status == "busy":
        return Outcome(SKIPPED)
    if status == "missing":
        return Outcome(REMOVED)
    if cancelled():
        raise IndexCancelled()
    full = full_outcome(view)
    if full is not None:
        return full
    if read.prefix is not None:
        prefix = read.prefix
        part = extract(prefix.events.segments()) if len(prefix.events) else None
        meta = entry.meta or prefix.meta
        return Outcome(DAMAGED if part else HEADER_ONLY, meta, part, None, status, view.reason, "raw" if part else "listing")
    raw = read.raw
    return _damaged(entry, raw.data if raw else None, raw.compression if raw else None, status, view.reason, cancelled)


def full_outcome(view: Any) -> Outcome | None:
    """What to write for a readable ``view``: its header and every event's rows (None: the view is of a
    busy, missing or refused log, which ``outcome_of`` handles with the reads it needs).  Pure: a shard
    worker runs it on the engine's thread (``CoordinatedPersistence.map_views``)."""
    if view.status in READABLE_STATUSES and view.header is not None:
        batch = extract(view.stored.segments())
        return Outcome(FULL, view.header.to_json(), batch, view.revision, view.status, view.reason, "events")
    return None


def _damaged(
    entry: ListedEntry,
    data: bytes | None,
    compression: str | None,
    status: str,
    reason: str | None,
    cancelled: Callable[[], bool],
) -> Outcome:
    meta = entry.meta
    batch = None
    if data is not None and compression is not None:
        found, items = decode_damaged(data, compression, cancelled)
        meta = meta or found
        if cancelled():
            raise IndexCancelled()
        batch = extract(items)
    return Outcome(DAMAGED if batch else HEADER_ONLY, meta, batch, None, status, reason, "raw" if batch else "listing")


def rows_of(outcome: Outcome, session_id: str) -> list[DocRow]:
    """The session's rows: its header row, then the id rows, then the text rows (the order they are stored)."""
    batch = outcome.batch
    head = header_row(outcome.meta, session_id)
    return [head, *(batch.id_rows if batch else ()), *(batch.rows if batch else ())]


def session_fields(
    entry: ListedEntry, job_revision: str | None, outcome: Outcome, ident: str | None, head_chars: int
) -> dict[str, Any]:
    """The ``sessions`` columns a whole write sets (``IndexDb.update_session`` takes them as they are)."""
    meta = outcome.meta
    cwd = meta.get("cwd") if meta else None
    created = meta.get("createdAt") if meta else None
    batch = outcome.batch or Batch([], [], TailState(), 0)
    st = batch.state
    return {
        "session_id": entry.session_id,
        "path": entry.path,
        "cwd": cwd if isinstance(cwd, str) else None,
        "created_at": created if isinstance(created, int) and not isinstance(created, bool) else None,
        # A bad row has no engine revision: its stat-based one stands in (see ``entry_revision``).
        "revision": outcome.revision or job_revision,
        "size": entry.size,
        "ident": ident if outcome.action == FULL else None,  # only an events read proves the file's identity
        "status": outcome.status,
        "reason": outcome.reason,
        "source": outcome.source,
        "title": st.title,
        "updated": st.updated,
        "event_count": st.event_count,
        "last_seq": st.last_seq,
        "last_type": st.last_type,
        "last_time": st.last_time,
        "turn": st.turn,
        "open_turn": int(st.open_turn),
        "text_chars": head_chars + batch.text_chars,
    }


__all__ = [
    "Outcome",
    "Read",
    "full_outcome",
    "ident_of",
    "outcome_of",
    "read_bad_row",
    "read_new",
    "read_whole",
    "rows_of",
    "same_encoding",
    "session_fields",
]
