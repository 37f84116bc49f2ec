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
from persistence import CoordinatedPersistence, SessionDiagnosis, SessionPersistenceError, SessionView, upstream_class_of

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
    return await _finished(store, _digest(view), session_id, place, expected, started)


async def judge_many(store: CoordinatedPersistence, jobs: Sequence[tuple[str, str, str | None]]) -> list[Verdict]:
    """``judge`` of each (session id, place, expected revision), the reads and all but a refused log's
    follow-up done in one engine call (``CoordinatedPersistence.map_views``: half the cost of one
    ``view`` each on small sessions; one view held at a time, however big the logs).

    Every verdict's ``started_ns`` is the batch's start: earlier than its own read, so the cache's
    racy-write rule (``cacheable``) is only stricter for it.  A batch the engine cannot read at all
    (a failure no single view would raise) falls back to one ``judge`` per session, so each gets its
    own verdict."""
    started = time.time_ns()
    try:
        digests = await store.map_views([sid for sid, _place, _rev in jobs], _digest)
    except Exception:
        return [await judge(store, sid, place, rev) for sid, place, rev in jobs]
    return [
        await _finished(store, digest, sid, place, rev, started) for digest, (sid, place, rev) in zip(digests, jobs, strict=True)
    ]


# What a view says of its session, but where it is and when it was read: (revision, status, reason,
# error class, events, closers, title, last time); a refused log's diagnosis when its readable prefix
# must be read for the title (``_finished`` reads it).
_Digest = tuple[str | None, str, str, str | None, int | None, int, str | None, int | None]


def _digest(view: SessionView) -> _Digest | SessionDiagnosis:
    """The verdict fields ``view`` gives (pure: it runs on the engine's worker thread too)."""
    d = view.diagnosis
    if not view.readable and d.status in PREFIX_STATUSES:
        return d
    return _fields(d, d.revision, view.stored.record_table())


async def _finished(
    store: Any, digest: _Digest | SessionDiagnosis, session_id: str, place: str, expected: str | None, started: int
) -> Verdict:
    """A digest's verdict: a refused log's readable prefix read for its title and last time, and the
    listed revision kept when the log provably still has it."""
    if not isinstance(digest, SessionDiagnosis):
        return Verdict(session_id, place, *digest, started)
    d = digest
    try:
        prefix = await store.readable_prefix(session_id)
    except (SessionPersistenceError, OSError):
        prefix = None
    revision = d.revision
    if revision is None and expected is not None:
        revision = expected if await _stored_revision(store, session_id) == expected else None
    return Verdict(session_id, place, *_fields(d, revision, prefix.events if prefix is not None else ()), started)


def _fields(d: SessionDiagnosis, revision: str | None, table: Any) -> _Digest:
    events = d.event_count - len(d.closers) if d.status in READABLE else None
    title = latest_title(table) if len(table) else None
    return (revision, d.status, d.reason, d.error_class, events, len(d.closers), title, _last_time(table))


__all__ = ["PREFIX_STATUSES", "READABLE", "UNCACHEABLE", "Verdict", "judge", "judge_many"]
