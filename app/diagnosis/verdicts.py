"""One session's verdict: what the window's status cells, ``verify`` and ``list --long`` show of a log.

Why one value for three readers: each used to read the log its own way (the window ``diagnose`` then
``inspect``, ``verify`` ``diagnose``, ``list`` ``view``), so a 10,000-session root was parsed again by
each of them and on every start (issue 25: ``verify`` 21.7 s cold, still 12.6 s on a second run).
One ``view`` yields everything they print (status, reason, error class, stored events, closers,
title, the last event's time), small enough to keep per revision in the diagnosis cache
(``app.diagnosis.cache``) and to send back from a worker process (~200 bytes pickled).

``judge`` never raises for a session: an engine failure is a ``corrupt`` verdict, as the window's
list and ``verify`` always reported it.  ``started_ns`` is the wall clock just before the read: the
cache keeps a JSONL verdict only when the log's last change is clearly older (see ``cacheable``).

May import: the public ``persistence`` package, ``app.records`` and the standard library.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.records import latest_title
from persistence import CoordinatedPersistence, SessionPersistenceError, upstream_class_of

READABLE = frozenset({"ok", "open-turn", "torn-tail"})
PREFIX_STATUSES = ("corrupt", "unsupported")  # refused logs whose readable prefix still names them (issue 24 item 5)
UNCACHEABLE = frozenset({"busy", "missing"})  # says nothing lasting about the log: judged again next time


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one read of a session says about it (``revision``: the log the read saw)."""

    session_id: str
    place: str  # JSONL: the transcript's path; SQLite: "" (the store file's identity is the cache's)
    revision: str | None
    status: str
    reason: str
    error_class: str | None
    events: int | None  # stored events (closers not counted); None when the log is refused
    closers: int
    title: str | None
    last_time: int | None  # ms of the last stored (or readable-prefix) event
    started_ns: int = 0  # wall clock before the read (0: unknown, never cached)

    @property
    def key(self) -> tuple[str, str]:
        return (self.session_id, self.place)


def _last_time(table: Any) -> int | None:
    if not len(table):
        return None
    t = table.last().get("time")
    return int(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None


async def _stored_revision(store: Any, session_id: str) -> str | None:
    """The log's revision as stored now (None when it cannot be said); the window's store wraps the engine."""
    engine = getattr(store, "engine", store)
    try:
        revision = await engine.read_stored_revision(session_id)
    except (SessionPersistenceError, OSError):
        return None
    return revision if isinstance(revision, str) else None


async def judge(store: Any, session_id: str, place: str = "", expected: str | None = None) -> Verdict:
    """The verdict of one session of ``store`` (a ``CoordinatedPersistence`` or the window's ``ViewerStore``).

    ``expected``: the revision the listing saw before this read.  A refused log's read names no revision;
    if the log still has ``expected`` after the read, it had it throughout (a revision never comes back:
    it holds the ctime), so the verdict is that revision's and may be kept."""
    started = time.time_ns()
    try:
        view = await store.view(session_id)
    except SessionPersistenceError as err:  # view makes failures a verdict; a safety net
        return Verdict(session_id, place, None, "corrupt", str(err), upstream_class_of(err), None, 0, None, None)
    except Exception as err:  # one session never stops a root's check
        return Verdict(session_id, place, None, "corrupt", f"{upstream_class_of(err)}: {err}", None, None, 0, None, None)
    return await _verdict_of(store, view, session_id, place, expected, started)


async def judge_many(store: CoordinatedPersistence, jobs: Sequence[tuple[str, str, str | None]]) -> list[Verdict]:
    """``judge`` of each (session id, place, expected revision), the reads done in one engine call
    (``CoordinatedPersistence.views``: half the cost of one ``view`` each on small sessions).

    Every verdict's ``started_ns`` is the batch's start: earlier than its own read, so the cache's
    racy-write rule (``cacheable``) is only stricter for it.  A batch the engine cannot read at all
    (a failure no single view would raise) falls back to one ``judge`` per session, so each gets its
    own verdict."""
    started = time.time_ns()
    try:
        views = await store.views([sid for sid, _place, _rev in jobs])
    except Exception:
        return [await judge(store, sid, place, rev) for sid, place, rev in jobs]
    return [await _verdict_of(store, view, sid, place, rev, started) for view, (sid, place, rev) in zip(views, jobs, strict=True)]


async def _verdict_of(store: Any, view: Any, session_id: str, place: str, expected: str | None, started: int) -> Verdict:
    d = view.diagnosis
    revision = d.revision
    table = view.stored.record_table()
    if not view.readable and d.status in PREFIX_STATUSES:
        try:
            prefix = await store.readable_prefix(session_id)
        except (SessionPersistenceError, OSError):
            prefix = None
        if prefix is not None:
            table = prefix.events
        if revision is None and expected is not None:
            revision = expected if await _stored_revision(store, session_id) == expected else None
    events = d.event_count - len(d.closers) if d.status in READABLE else None
    title = latest_title(table) if len(table) else None
    return Verdict(
        session_id,
        place,
        revision,
        d.status,
        d.reason,
        d.error_class,
        events,
        len(d.closers),
        title,
        _last_time(table),
        started,
    )


__all__ = ["PREFIX_STATUSES", "READABLE", "UNCACHEABLE", "Verdict", "judge", "judge_many"]
