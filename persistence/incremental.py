"""Incremental view: a log that only grew since its prepared source is extended, not read again.

Why: a window following a live session refreshes with one ``view`` per change, and on the 202k-event
session each cost a whole read (180-364 ms, issue 25) however small the append.  Here the prepared
source's ``ResumePoint`` (``persistence.resume_point``) hands the backend its mark; the backend returns
only what was stored after it (JSONL: the bytes after the last complete frame or line, the seam's 64
bytes checked; SQLite: the rows after the last preserved one, that row checked), and this module runs
the read pipeline's checks on those events alone, continuing the kept surface fold, then recomputes
what depends on the end of the log: the crash closers (an appended ``turn/end`` retires them) and the
torn tail (re-read from the last good boundary, so a torn line or frame the append completed is
parsed whole).  The result equals a fresh read: same events, closers, torn facts, header, revision.

Anything the continuation cannot vouch for falls back to the whole read, which then reports it with
its exact message: no mark (a backend without one), a mark the backend refuses (rewrite, truncation,
another inode or database, a changed seam), a record a legacy upgrade would rewrite (its upgrade may
borrow ids from earlier events), or any check that fails on the new part.

``STATS`` counts which path each read took; tests read it (engine-internal, not exported).

May import: ``persistence.pipeline``, ``persistence.resume_point``, ``persistence.backend``, the model.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from persistence.backend import CancelToken, StorageBackend
from persistence.errors import SessionPersistenceError
from persistence.model.event_table import EventTable
from persistence.model.repair import interrupted_turn_closers
from persistence.model.upgrade import check_identity_and_version, normalize_events
from persistence.model.validate import validate_header
from persistence.pipeline import PreparedSource, prepare_core
from persistence.resume_point import ResumePoint, continue_check


@dataclass(slots=True)
class ReadStats:
    """How many reads took each path (a test hook: cheap counters, not a public API)."""

    unchanged: int = 0  # the cached source's revision still held: nothing read
    extended: int = 0  # only what was appended after the mark was read and checked
    whole: int = 0  # the log was read whole (no usable source, or the mark was refused)

    def reset(self) -> None:
        """Zero every counter."""
        self.unchanged = self.extended = self.whole = 0


STATS = ReadStats()
_stats_lock = threading.Lock()  # reads run on worker threads


def _count(path: str) -> None:
    with _stats_lock:
        setattr(STATS, path, getattr(STATS, path) + 1)


def refreshed(
    backend: StorageBackend, session_id: str, cached: PreparedSource | None, token: CancelToken, *, keep_raw: bool = False
) -> PreparedSource:
    """The session's prepared source now: ``cached`` itself while its revision holds (unless the read's
    bytes are wanted), ``cached`` extended by what was appended, or a whole read."""
    if cached is not None:
        wants_bytes = keep_raw and backend.supports_raw_artifacts  # a cached source holds no bytes
        if not wants_bytes and backend.read_stored_revision(session_id, token) == cached.revision:
            _count("unchanged")
            return cached
        if cached.resume is not None:
            source = extended(backend, session_id, cached, cached.resume, token, keep_raw=keep_raw)
            if source is not None:
                _count("extended")
                return source
    _count("whole")
    return prepare_core(backend, session_id, token, keep_raw=keep_raw)


# What a check of the new part may raise: the whole read then raises its own exact error.
_CHECK_ERRORS = (SessionPersistenceError, ValueError, TypeError, KeyError, AttributeError)


def extended(
    backend: StorageBackend,
    session_id: str,
    source: PreparedSource,
    resume: ResumePoint,
    token: CancelToken,
    *,
    keep_raw: bool = False,
) -> PreparedSource | None:
    """``source`` plus what was stored after its mark, checked as a whole read checks it; None when the
    backend refuses the mark or the new part needs the whole log to judge (see the module docstring)."""
    try:
        stored = backend.load_after(session_id, resume.mark, token, since=source.revision, whole_raw=keep_raw)
    except (SessionPersistenceError, OSError):
        return None  # the whole read raises it (or its own, exact, error)
    if stored is None or stored.base_seq != resume.committed:
        return None
    raw, stored.raw = stored.raw, None
    fresh = stored.events
    try:
        check_identity_and_version(session_id, stored.meta, stored.raw_path, stored.location)
        validate_header(stored.meta, session_id)
        if normalize_events(session_id, fresh, stored.raw_path, stored.location) is not fresh:
            return None  # a legacy upgrade: it may borrow ids from earlier events (contract §2.8)
        base = source.stored_events
        kept = base if resume.committed == len(base) else base.between(0, resume.committed)
        events = joined(kept, fresh)
        closers = interrupted_turn_closers(events)
        committed = len(events) - (len(stored.torn.recovered) if stored.torn is not None else 0)
        fold = continue_check(resume.fold.copy(), fresh, committed, closers, shapes_checked=len(events), start=resume.committed)
    except _CHECK_ERRORS:
        return None
    backend.trust_tail(stored)
    point = None if stored.tail_mark is None else ResumePoint(stored.tail_mark, committed, fold)
    return PreparedSource(stored.meta, events, closers, stored.revision, stored.torn, raw if keep_raw else None, point)


def joined(base: EventTable, more: EventTable) -> EventTable:
    """A new table of ``base``'s events then ``more``'s, sharing their records (``base`` is left as it is:
    earlier views and a prepared Session may hold it).  Copies two lists of ~8.5k pointers on the 202k
    log instead of re-appending every item."""
    out = EventTable()
    out.items = base.items[:]
    out.starts = None if base.starts is None else base.starts[:]
    out._n = len(base)
    out.extend_items(more.items)
    return out


__all__ = ["STATS", "ReadStats", "extended", "joined", "refreshed"]
