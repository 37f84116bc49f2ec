"""The read pipeline: one stored log -> checked, normalized events (persistence-contract §4), and the
one-pass diagnosis and view built from it.

Why a module of its own: the coordinator decides *when* to read (locks, cache, repair retries); this
module is *what* a read does, the same for every backend, as plain synchronous functions that run
on the coordinator's worker threads.  ``diagnose`` and ``view`` share ``diagnosis_of``, so the window
labels a session exactly as ``verify`` and ``repair`` do, from the same single read.

May import: ``persistence.backend``, ``persistence.errors``, ``persistence.model``, the value modules
(``values``, ``diagnosis``, ``artifact``); never the coordinator.

No GC pause around a read any more: with chunk runs packed (``EventTable``) a 202k-event read
allocates ~30k containers instead of ~630k, and pausing the collector made it slower (zstd
prepare: 111 ms paused against 99 ms not, median of 7, issue 12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from persistence.artifact import RawBytes
from persistence.backend import CancelToken, CutFacts, StorageBackend, StoredLog, TornMarker
from persistence.diagnosis import (
    BUSY,
    CORRUPT,
    MISSING,
    OK,
    OPEN_TURN,
    TORN_TAIL,
    UNSUPPORTED,
    SessionDiagnosis,
    SessionView,
    TornFacts,
    failed_view,
)
from persistence.errors import (
    SessionFormatUnsupportedError,
    SessionNotFoundError,
    SessionPersistenceCorruptionError,
    SessionPersistenceError,
    js_error_string,
    not_found,
    upstream_class_of,
)
from persistence.model.event import EventLog
from persistence.model.event_table import EventTable
from persistence.model.header import SessionHeader
from persistence.model.repair import has_turn_start, interrupted_turn_closers
from persistence.model.upgrade import check_identity_and_version, normalize_events
from persistence.model.validate import validate_header
from persistence.resume_point import ResumePoint, check_seed
from persistence.values import ReadFromResult


@dataclass(slots=True)
class PreparedSource:
    """A cold log read, normalized and validated, with the repair it still needs.

    ``raw`` is set only when the caller asked for the bytes the read parsed; a cached source never
    holds them (the coordinator strips them before caching).  ``resume``: where the read stopped, for
    ``persistence.incremental`` to check only what is appended later (None: the backend has no mark).
    """

    meta: dict[str, Any]
    stored_events: EventTable
    closers: list[dict[str, Any]]
    revision: str
    torn: TornMarker | None
    raw: RawBytes | None = None
    resume: ResumePoint | None = None

    @property
    def balanced(self) -> EventTable:
        """The stored events followed by the crash closers (what ``inspect`` returns)."""
        return self.stored_events + self.closers if self.closers else self.stored_events

    @property
    def needs_repair(self) -> bool:
        """Whether ``load`` would commit a repair first (a torn tail or an open turn)."""
        return self.torn is not None or bool(self.closers)


def _take_raw(stored: StoredLog) -> RawBytes | None:
    """Detach the bytes a backend kept on ``stored`` so they are freed as soon as nobody wants them."""
    raw, stored.raw = stored.raw, None
    return raw


def prepare_core(backend: StorageBackend, session_id: str, token: CancelToken, *, keep_raw: bool = False) -> PreparedSource:
    """Read pipeline steps 1-8 for a cold log (persistence-contract §4); ``keep_raw`` keeps the bytes read."""
    return _prepare_core(backend, session_id, token, keep_raw)


def _prepare_core(backend: StorageBackend, session_id: str, token: CancelToken, keep_raw: bool) -> PreparedSource:
    stored = backend.load_stored(session_id, token)
    if stored is None:
        raise not_found(session_id)
    raw = _take_raw(stored)
    if not keep_raw:
        raw = None  # the parsed bytes are dead weight from here on
    try:
        check_identity_and_version(session_id, stored.meta, stored.raw_path, stored.location)
        events = normalize_events(session_id, stored.events, stored.raw_path, stored.location)
        closers = interrupted_turn_closers(events)
        validate_header(stored.meta, session_id)
        committed = len(events) - (len(stored.torn.recovered) if stored.torn is not None else 0)
        fold = check_seed(events, committed, closers, shapes_checked=len(events))
    except SessionFormatUnsupportedError:
        raise
    except (SessionPersistenceError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise SessionPersistenceCorruptionError(
            f'stored session "{session_id}" failed validation: {js_error_string(err)}'
        ) from err
    backend.trust_tail(stored)
    resume = None if stored.tail_mark is None else ResumePoint(stored.tail_mark, committed, fold)
    return PreparedSource(stored.meta, events, closers, stored.revision, stored.torn, raw, resume)


def read_from_core(backend: StorageBackend, session_id: str, from_seq: int, token: CancelToken) -> ReadFromResult:
    """``read_from``: the events from ``from_seq`` on, checked like a whole read (no closers, no repair)."""
    return _read_from_core(backend, session_id, from_seq, token)


def _read_from_core(backend: StorageBackend, session_id: str, from_seq: int, token: CancelToken) -> ReadFromResult:
    stored, events = _normalized_span(backend, session_id, backend.load_suffix(session_id, from_seq, token), token)
    backend.trust_tail(stored)
    start = max(0, from_seq - stored.base_seq)
    return ReadFromResult(SessionHeader.from_json(stored.meta), EventLog(events[start:]))


def read_tail_core(backend: StorageBackend, session_id: str, min_events: int, token: CancelToken) -> ReadFromResult:
    """``read_tail``: at least ``min_events`` of the newest events, only that span checked."""
    stored, events = _normalized_span(backend, session_id, backend.load_tail(session_id, min_events, token), token)
    return ReadFromResult(SessionHeader.from_json(stored.meta), EventLog(events))


def _normalized_span(
    backend: StorageBackend, session_id: str, stored: StoredLog | None, token: CancelToken
) -> tuple[StoredLog, list[dict[str, Any]]]:
    """A partial read (suffix or tail) checked and normalized like ``read_from`` does (pipeline steps 1-3)."""
    if stored is None:
        raise not_found(session_id)
    stored.raw = None
    check_identity_and_version(session_id, stored.meta, stored.raw_path, stored.location)
    if stored.base_seq > 0 and any(_needs_earlier_facts(ev) for ev in stored.events):
        # Legacy upgrades of these shapes borrow ids from earlier events: read the whole log (§2.8).
        full = backend.load_stored(session_id, token)
        if full is None:
            raise not_found(session_id)
        full.raw = None
        stored = full
    return stored, normalize_events(session_id, stored.events, stored.raw_path, stored.location)


def tail_start(records: Any, min_events: int) -> int:
    """Where a tail of at least ``min_events`` records that holds a ``turn/start`` begins."""
    start = max(0, len(records) - min_events)
    if has_turn_start(records, start):
        return start
    if isinstance(records, EventTable):
        # Backwards over scalar records only: a packed run of chunk deltas is never a turn/start.
        k = records.locate(start)[0] if start < len(records) else len(records.items)
        for j in range(k - 1, -1, -1):
            it = records.items[j]
            if type(it) is dict and it.get("type") == "turn/start":
                return records.start_of(j)
        return 0
    for i in range(start - 1, -1, -1):
        if records[i].get("type") == "turn/start":
            return i
    return 0


def _needs_earlier_facts(ev: Any) -> bool:
    if type(ev) is not dict:
        return False
    etype = ev.get("type")
    data = ev.get("data")
    if etype == "steering/message":
        return True
    if not isinstance(data, dict):
        return False
    if etype == "user/message":
        return "id" not in data and "content" in data
    if etype in ("assistant/message", "tool/result"):
        return "message" not in data and ("content" in data or "callId" in data)
    return False


# ---------------------------------------------------------------- diagnosis and view (one read, two shapes)


def is_busy(err: BaseException) -> bool:
    """A SQLite lock held by another connection: the store is in use, not damaged."""
    text = str(err).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


# What a read may raise that ``diagnose`` turns into a value (anything else is a bug and propagates).
DIAGNOSABLE_ERRORS = (SessionPersistenceError, OSError)


def failure_diagnosis(session_id: str, err: BaseException) -> SessionDiagnosis:
    """The diagnosis of a read that raised ``err`` (one of ``DIAGNOSABLE_ERRORS``)."""
    if isinstance(err, SessionFormatUnsupportedError):
        return SessionDiagnosis(session_id, UNSUPPORTED, str(err), 0, (), None, 0, None, err.upstream_class)
    if isinstance(err, SessionNotFoundError):
        return SessionDiagnosis(session_id, MISSING, str(err), 0, (), None, 0, None, err.upstream_class)
    status = BUSY if is_busy(err) else CORRUPT
    reason = f"the store is busy, not damaged: {err}" if status == BUSY else str(err)
    return SessionDiagnosis(session_id, status, reason, 0, (), None, 0, None, upstream_class_of(err))


def diagnosis_of(backend: StorageBackend, session_id: str, source: PreparedSource, token: CancelToken) -> SessionDiagnosis:
    """Classify a prepared source (``ok``, ``open-turn``, ``torn-tail``), with what a repair would cut."""
    torn = source.torn
    cut = None
    if torn is not None:
        status = TORN_TAIL
        cut = backend.describe_cut(session_id, torn, len(source.stored_events), token)
        reason = f"damaged tail after byte/row {torn.truncate_to} will be cut"
        if torn.recovered:
            reason += f"; {len(torn.recovered)} complete record(s) recovered from it"
        if cut.intact_records:
            reason += (
                f"; {cut.intact_records} intact record(s) after the damage (from seq {cut.first_intact_seq}) "
                "would be cut with it: this is damage followed by data, not a torn write"
            )
        if source.closers:
            reason += f"; the open turn gets {len(source.closers)} synthetic closer(s)"
    elif source.closers:
        status = OPEN_TURN
        reason = f"interrupted turn: {len(source.closers)} synthetic closer(s) would be appended"
    else:
        status, reason = OK, "balanced log"
    return SessionDiagnosis(
        session_id,
        status,
        reason,
        len(source.balanced),
        tuple(source.closers),
        None if torn is None else torn.truncate_to,
        0 if torn is None else len(torn.recovered),
        source.revision,
        cut=cut,
    )


def view_of(diagnosis: SessionDiagnosis, source: PreparedSource | None, raw: RawBytes | None = None) -> SessionView:
    """The ``SessionView`` of one read: its diagnosis plus what the read produced (nothing when it failed)."""
    if source is None:
        return failed_view(diagnosis)
    balanced = source.balanced
    closer_start = len(source.stored_events)
    torn = source.torn
    facts = None
    if torn is not None:
        facts = TornFacts(int(torn.truncate_to), len(torn.recovered), diagnosis.cut or CutFacts())
    return SessionView(
        diagnosis,
        SessionHeader.from_json(source.meta),
        EventLog(balanced),
        EventLog(balanced, closer_start),
        diagnosis.closers,
        closer_start,
        facts,
        raw,
    )


__all__ = [
    "DIAGNOSABLE_ERRORS",
    "PreparedSource",
    "diagnosis_of",
    "failure_diagnosis",
    "is_busy",
    "prepare_core",
    "read_from_core",
    "read_tail_core",
    "tail_start",
    "view_of",
]
