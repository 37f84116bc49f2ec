"""Backend-neutral orchestration: per-id ordering, append rules, the read pipeline, repair commits.

``CoordinatedPersistence`` is the one implementation of ``SessionPersistence``; each
backend supplies only its ``StorageBackend`` hooks.  Hooks are synchronous and run on
worker threads; this facade keeps the event loop free and turns task cancellation or
an ``AbortSignal`` into a token the hooks check between I/O steps.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from persistence.backend import CancelToken, CutFacts, StorageBackend, StoredLog, TornMarker
from persistence.errors import (
    SessionArgumentError,
    SessionConflictError,
    SessionFormatUnsupportedError,
    SessionNotFoundError,
    SessionPersistenceCorruptionError,
    SessionPersistenceError,
    SessionValidationError,
    js_error_string,
    not_found,
    upstream_class_of,
)
from persistence.gcpause import gc_paused
from persistence.model.event import EventLog, SessionEvent, wire_of
from persistence.model.header import SessionHeader
from persistence.model.jsontext import NotLosslessError, is_nonneg_safe_integer, js_string, lossless_copy
from persistence.model.repair import has_open_turn, has_turn_start, interrupted_turn_closers
from persistence.model.upgrade import check_identity_and_version, legacy_refusal, normalize_events
from persistence.model.validate import validate_header, validate_seed_events
from persistence.service import AbortSignal, EventLike, HeaderLike, SessionPersistence
from persistence.values import (
    ReadFromResult,
    SessionInspection,
    SessionLocation,
    SessionPersistenceSnapshot,
    SessionRawArtifact,
)
from persistence.write_behind import SessionWriteBehind

T = TypeVar("T")
log = logging.getLogger(__name__)

DEFAULT_PREPARED_CACHE_SIZE = 5


@dataclass(slots=True)
class _State:
    meta: dict[str, Any]
    cursor: int
    materialized: bool
    owner: Any = None  # the live Session bound to this id, if any


@dataclass(slots=True)
class _LiveEntry:
    session: Any
    writer: SessionWriteBehind
    remove_observer: Callable[[], None] | None = None
    # Settles when attach_live has persisted the seed/suffix (upstream's ``init``, §6.8.5):
    # every flush of this entry waits for it and re-raises its failure.
    init: asyncio.Future[None] | None = None


@dataclass(frozen=True, slots=True)
class SessionDiagnosis:
    """What a viewer needs to label one stored session, computed without writing anything.

    status is one of ``ok``, ``open-turn`` (crashed mid-turn: closers would be appended),
    ``torn-tail`` (a damaged tail would be cut), ``corrupt``, ``unsupported``, ``missing``, or
    ``busy`` (a SQLite store locked by a writer: nothing can be judged now, nothing is wrong).
    ``cut`` says what a repair of a torn tail would destroy; ``intact_after_damage`` > 0 means the
    "torn tail" holds records that parse and continue past the kept ones, which is damage followed
    by data, not a torn write: a repair must not cut them without explicit consent.
    """

    session_id: str
    status: str
    reason: str
    event_count: int
    closers: tuple[dict[str, Any], ...]
    torn_offset: Any
    recovered_count: int
    revision: str | None
    error_class: str | None = None
    cut: CutFacts | None = None

    @property
    def repairable(self) -> bool:
        return self.status in ("open-turn", "torn-tail")

    @property
    def intact_after_damage(self) -> int:
        return 0 if self.cut is None else self.cut.intact_records


@dataclass(slots=True)
class PreparedSource:
    """A cold log read, normalized and validated, with the repair it still needs."""

    meta: dict[str, Any]
    stored_events: list[dict[str, Any]]
    closers: list[dict[str, Any]]
    revision: str
    torn: TornMarker | None

    @property
    def balanced(self) -> list[dict[str, Any]]:
        return self.stored_events + self.closers if self.closers else self.stored_events

    @property
    def needs_repair(self) -> bool:
        return self.torn is not None or bool(self.closers)


class SessionPreparation:
    """An unpublished Session reserved for resume. Context manager; ``dispose`` is idempotent."""

    def __init__(self, owner: CoordinatedPersistence, session: Any, meta: dict[str, Any],
                 release: Callable[[], None], on_release: Callable[[], None] | None = None) -> None:
        self._owner = owner
        self.session = session
        self.meta = SessionHeader.from_json(meta)
        self._release = release
        self._on_release = on_release
        self._published = False
        self._disposed = False

    @property
    def published(self) -> bool:
        return self._published

    def dispose(self) -> None:
        if self._disposed:
            return
        self._disposed = True
        if not self._published:
            self._release()
        if self._on_release is not None:
            self._on_release()

    def __enter__(self) -> SessionPreparation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()


def _is_busy(err: BaseException) -> bool:
    """A SQLite lock held by another connection: the store is in use, not damaged."""
    text = str(err).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def _cwd_text(cwd: Any) -> str:
    return "undefined" if cwd is None else str(cwd)


def _header_dict(meta: HeaderLike) -> Any:
    if isinstance(meta, SessionHeader):
        return meta.to_json()
    return meta


def prepare_core(backend: StorageBackend, session_id: str, token: CancelToken) -> PreparedSource:
    """Read pipeline steps 1-8 for a cold log (persistence-contract §4)."""
    with gc_paused():
        return _prepare_core(backend, session_id, token)


def _prepare_core(backend: StorageBackend, session_id: str, token: CancelToken) -> PreparedSource:
    stored = backend.load_stored(session_id, token)
    if stored is None:
        raise not_found(session_id)
    try:
        check_identity_and_version(session_id, stored.meta, stored.raw_path, stored.location)
        events = normalize_events(session_id, stored.events, stored.raw_path, stored.location)
        closers = interrupted_turn_closers(events)
        validate_header(stored.meta, session_id)
        validate_seed_events(events + closers if closers else events)
    except SessionFormatUnsupportedError:
        raise
    except (SessionPersistenceError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise SessionPersistenceCorruptionError(
            f'stored session "{session_id}" failed validation: {js_error_string(err)}'
        ) from err
    backend.trust_tail(stored)
    return PreparedSource(stored.meta, events, closers, stored.revision, stored.torn)


def read_from_core(backend: StorageBackend, session_id: str, from_seq: int, token: CancelToken) -> ReadFromResult:
    with gc_paused():
        return _read_from_core(backend, session_id, from_seq, token)


def _read_from_core(backend: StorageBackend, session_id: str, from_seq: int, token: CancelToken) -> ReadFromResult:
    stored, events = _normalized_span(backend, session_id, backend.load_suffix(session_id, from_seq, token), token)
    backend.trust_tail(stored)
    start = max(0, from_seq - stored.base_seq)
    return ReadFromResult(SessionHeader.from_json(stored.meta), EventLog(events[start:]))


def read_tail_core(backend: StorageBackend, session_id: str, min_events: int, token: CancelToken) -> ReadFromResult:
    with gc_paused():
        stored, events = _normalized_span(backend, session_id, backend.load_tail(session_id, min_events, token), token)
        return ReadFromResult(SessionHeader.from_json(stored.meta), EventLog(events))


def _normalized_span(backend: StorageBackend, session_id: str, stored: StoredLog | None,
                     token: CancelToken) -> tuple[StoredLog, list[dict[str, Any]]]:
    """A partial read (suffix or tail) checked and normalized like ``read_from`` does (pipeline steps 1-3)."""
    if stored is None:
        raise not_found(session_id)
    check_identity_and_version(session_id, stored.meta, stored.raw_path, stored.location)
    if stored.base_seq > 0 and any(_needs_earlier_facts(ev) for ev in stored.events):
        # Legacy upgrades of these shapes borrow ids from earlier events: read the whole log (§2.8).
        full = backend.load_stored(session_id, token)
        if full is None:
            raise not_found(session_id)
        stored = full
    return stored, normalize_events(session_id, stored.events, stored.raw_path, stored.location)


def _tail_start(records: Any, min_events: int) -> int:
    """Where a tail of at least ``min_events`` records that holds a ``turn/start`` begins."""
    start = max(0, len(records) - min_events)
    if has_turn_start(records, start):
        return start
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


class CoordinatedPersistence(SessionPersistence):
    def __init__(self, backend: StorageBackend, *, prepared_session_cache_size: int = DEFAULT_PREPARED_CACHE_SIZE) -> None:
        if prepared_session_cache_size is None:
            prepared_session_cache_size = DEFAULT_PREPARED_CACHE_SIZE
        if not (is_nonneg_safe_integer(prepared_session_cache_size) and prepared_session_cache_size >= 1):
            raise SessionArgumentError("preparedSessionCacheSize must be a positive safe integer")
        self._backend = backend
        self._states: dict[str, _State] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._lock_users: dict[str, int] = {}
        self._cache: OrderedDict[str, PreparedSource] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._cache_size = int(prepared_session_cache_size)
        self._live: dict[str, _LiveEntry] = {}
        self._reserved: dict[str, str] = {}  # id -> "committing" | "reserved"
        self._reservation_events: dict[str, asyncio.Event] = {}
        self.write_batch_max_delay_ms = 200
        self.on_background_error: Callable[[str, BaseException], None] | None = None

    @property
    def backend(self) -> StorageBackend:
        return self._backend

    # ------------------------------------------------------------ plumbing

    @asynccontextmanager
    async def _lock(self, session_id: str) -> AsyncIterator[None]:
        """The id's serialization chain; the entry is dropped once nobody holds or waits for it (S-56)."""
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        self._lock_users[session_id] = self._lock_users.get(session_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            left = self._lock_users[session_id] - 1
            if left:
                self._lock_users[session_id] = left
            else:
                del self._lock_users[session_id]
                del self._locks[session_id]

    async def _run(self, fn: Callable[[CancelToken], T], signal: AbortSignal | None = None) -> T:
        if signal is not None:
            signal.throw_if_aborted()
        token = CancelToken()
        remove = signal.add_listener(token.cancel) if signal is not None else None
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(None, fn, token)
        try:
            result = await asyncio.shield(fut)
        except asyncio.CancelledError:
            # Let the worker reach its next I/O boundary so no write is left half-done.
            token.cancel("cancelled")
            try:
                await fut
            except BaseException:
                pass
            raise
        except BaseException:
            # A hook stopped by the caller's abort raises SessionAbortedError(reason); the caller
            # must see the exact reason instead (§0.5, §2.5, §2.8: "failure after abort -> reason").
            if signal is not None and signal.aborted:
                signal.throw_if_aborted()
            raise
        finally:
            if remove is not None:
                remove()
        if signal is not None:
            signal.throw_if_aborted()
        return result

    # The LRU is touched from worker threads (inside hooks) and the loop thread alike: one lock.
    def _cache_put(self, session_id: str, source: PreparedSource) -> None:
        with self._cache_lock:
            self._cache[session_id] = source
            self._cache.move_to_end(session_id)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def _cache_drop(self, session_id: str, only: PreparedSource | None = None) -> None:
        with self._cache_lock:
            if only is None or self._cache.get(session_id) is only:
                self._cache.pop(session_id, None)

    def _cached_fresh(self, session_id: str, token: CancelToken) -> PreparedSource | None:
        with self._cache_lock:
            source = self._cache.get(session_id)
        if source is None:
            return None
        if self._backend.read_stored_revision(session_id, token) != source.revision:
            self._cache_drop(session_id, source)
            return None
        with self._cache_lock:
            if self._cache.get(session_id) is source:
                self._cache.move_to_end(session_id)
        return source

    # ------------------------------------------------------------ service

    def locate(self, meta: HeaderLike) -> SessionLocation | None:
        loc = self._backend.locate(_header_dict(meta))
        return None if loc is None else SessionLocation(loc["kind"], loc["path"])

    @property
    def supports_raw_artifacts(self) -> bool:
        return self._backend.supports_raw_artifacts

    async def read_raw(self, session_id: str, signal: AbortSignal | None = None) -> SessionRawArtifact | None:
        raw = await self._run(lambda t: self._backend.read_raw(session_id, t), signal)
        if raw is None:
            return None
        return SessionRawArtifact(SessionHeader.from_json(raw.meta), raw.filename, raw.content)

    async def create(self, meta: HeaderLike) -> None:
        try:
            header = lossless_copy(_header_dict(meta))
        except NotLosslessError:
            raise SessionArgumentError("session metadata must be losslessly JSON-serializable") from None
        if not isinstance(header, dict):
            raise SessionArgumentError("session metadata must be losslessly JSON-serializable")
        if not is_nonneg_safe_integer(header.get("createdAt")):
            raise SessionArgumentError("session metadata createdAt must be a non-negative safe integer")
        session_id = header.get("id")
        if type(session_id) is not str:
            raise SessionArgumentError("session metadata id must be a string")
        header.setdefault("version", 0)
        async with self._lock(session_id):
            if session_id in self._states or session_id in self._reserved or session_id in self._live:
                raise SessionConflictError(f'session "{session_id}" already exists in this backend')
            stored = await self._run(lambda t: self._backend.load_stored(session_id, t))
            if stored is not None:
                raise SessionConflictError(
                    f'session "{session_id}" already has a persisted log on disk; load/resume it instead of creating'
                )
            self._states[session_id] = _State(header, 0, False)

    async def append(self, session_id: str, events: Sequence[EventLike]) -> None:
        try:
            batch = lossless_copy([wire_of(e) if isinstance(e, SessionEvent) else e for e in events])
        except NotLosslessError:
            raise SessionArgumentError(
                "session event batch is not losslessly JSON-serializable because it contains non-JSON-serializable data"
            ) from None
        async with self._lock(session_id):
            await self._append_locked(session_id, batch)

    async def _append_locked(self, session_id: str, batch: list[dict[str, Any]]) -> None:
        """Append on the id's chain (the caller holds the id lock)."""
        for ev in batch:
            refusal = legacy_refusal(session_id, ev)
            if refusal is not None:
                raise SessionValidationError(refusal)
        if not batch:
            return
        if self._reserved.get(session_id) in ("committing", "reserved"):
            raise SessionConflictError(
                f'cannot append session "{session_id}" while its persisted preparation is reserved'
            )
        state = self._states.get(session_id)
        if state is None:
            state = await self._adopt(session_id)
        for i, ev in enumerate(batch):
            seq = ev.get("seq") if isinstance(ev, dict) else None
            if seq != state.cursor + i or type(seq) is bool:
                raise SessionConflictError(
                    f'append seq mismatch for "{session_id}": expected {state.cursor + i} at index {i}, '
                    f"got {js_string(seq)}"
                )
        st = state
        await self._run(
            lambda t: self._backend.append_batch(st.meta, batch, st.materialized, t,
                                                 expected_next_seq=st.cursor)
        )
        state.materialized = True
        state.cursor += len(batch)
        self._cache_drop(session_id)

    async def _adopt(self, session_id: str) -> _State:
        """Append to a session this instance has not seen: repair it first (contract §6.6.2)."""
        while True:
            source = await self._run(lambda t: prepare_core(self._backend, session_id, t))
            if not source.needs_repair:
                state = _State(source.meta, len(source.stored_events), True)
                self._states[session_id] = state
                return state
            await self._commit_repair(session_id, source)

    async def _commit_repair(self, session_id: str, source: PreparedSource) -> bool:
        """Commit closers/torn cut if the stored revision still matches; False when it moved."""

        def commit(t: CancelToken) -> bool:
            if self._backend.read_stored_revision(session_id, t) != source.revision:
                return False
            self._backend.commit_repair(source.meta, source.torn, source.closers, t,
                                        expected_revision=source.revision)
            return True

        committed = await self._run(commit)
        self._cache_drop(session_id)
        return committed

    async def load(self, session_id: str) -> SessionInspection:
        live = self._live.get(session_id)
        if live is not None:
            return await self._load_live(session_id, live)
        async with self._lock(session_id):
            while True:
                source = await self._run(
                    lambda t: self._cached_fresh(session_id, t) or prepare_core(self._backend, session_id, t)
                )
                if source.needs_repair:
                    await self._commit_repair(session_id, source)
                    continue
                current = await self._run(lambda t: self._backend.read_stored_revision(session_id, t))
                if current != source.revision:
                    self._cache_drop(session_id)
                    continue
                self._cache_put(session_id, source)
                self._states[session_id] = _State(source.meta, len(source.stored_events), True)
                return SessionInspection(SessionHeader.from_json(source.meta), EventLog(source.balanced))

    async def inspect(self, session_id: str, signal: AbortSignal | None = None) -> SessionInspection:
        if signal is not None:
            signal.throw_if_aborted()
        live = self._live.get(session_id)
        if live is not None:
            # The live Session is the authority: its current snapshot, no flush, no storage access.
            return SessionInspection(live.session.header, live.session.events)
        async with self._lock(session_id):
            def work(t: CancelToken) -> PreparedSource:
                return self._cached_fresh(session_id, t) or prepare_core(self._backend, session_id, t)

            source = await self._run(work, signal)
            self._cache_put(session_id, source)
            return SessionInspection(SessionHeader.from_json(source.meta), EventLog(source.balanced))

    async def read_from(self, session_id: str, from_seq: int, signal: AbortSignal | None = None) -> ReadFromResult:
        if not is_nonneg_safe_integer(from_seq):
            raise SessionArgumentError(f"readFrom fromSeq must be a non-negative safe integer, got {js_string(from_seq)}")
        seq = int(from_seq)
        async with self._lock(session_id):
            return await self._run(lambda t: read_from_core(self._backend, session_id, seq, t), signal)

    async def read_tail(self, session_id: str, min_events: int = 2000, signal: AbortSignal | None = None) -> ReadFromResult:
        """The newest stored events, cheaply: a viewer's first look at a huge log.

        At least ``min_events`` events (all of a shorter log) starting at some seq the backend chose,
        with a ``turn/start`` among them when the log has one; no crash closers, never writes.  Only the
        returned span is decoded and normalized, so a defect earlier in the log is *not* reported
        here: ``inspect``/``diagnose`` remain the verdict on the whole session.
        """
        if not is_nonneg_safe_integer(min_events) or min_events < 1:
            raise SessionArgumentError(f"readTail minEvents must be a positive safe integer, got {js_string(min_events)}")
        live = self._live.get(session_id)
        if live is not None:
            records = live.session.events.records()
            start = _tail_start(records, int(min_events))
            return ReadFromResult(live.session.header, EventLog(list(records[start:])))
        async with self._lock(session_id):
            return await self._run(lambda t: read_tail_core(self._backend, session_id, int(min_events), t), signal)

    async def list(self, signal: AbortSignal | None = None) -> list[SessionHeader]:
        """Headers of the stored sessions, in the backend's list order.

        One bad session never hides the others: a header the engine cannot represent (a number
        outside JSON's range, ``SessionHeader.from_listing``) is skipped here, and the JSONL backend
        skips unreadable and symlinked entries (``persistence.jsonl.discovery``).  ``verify`` and the
        window show each skipped one as its own bad row.  What the spec makes a root-level error
        (foreign layout, duplicate ids, SQLite's all-or-nothing row check) still raises.
        """
        metas = await self._run(self._backend.list_headers, signal)
        return [h for h in map(SessionHeader.from_listing, metas) if h is not None]

    async def list_snapshots(self, signal: AbortSignal | None = None) -> list[SessionPersistenceSnapshot]:
        """``list()`` with each session's opaque revision (same skipping rules)."""
        rows = await self._run(self._backend.list_snapshots, signal)
        out = []
        for m, r in rows:
            header = SessionHeader.from_listing(m)
            if header is not None:
                out.append(SessionPersistenceSnapshot(header, r))
        return out

    # ------------------------------------------------------------ preparation (cold -> unpublished Session)

    async def prepare(self, session_id: str, signal: AbortSignal | None = None) -> SessionPreparation:
        """Commit pending repair and build the exact unpublished Session a resume will publish."""
        from persistence.session import Session

        if signal is not None:
            signal.throw_if_aborted()
        while True:
            if session_id in self._live:
                raise SessionConflictError(f'cannot prepare session "{session_id}" while it is live')
            # A competing reservation is waited out (S-30): it ends in publication or release.
            if self._reserved.get(session_id) is not None:
                await self._wait_unreserved(session_id, signal)
                continue
            prepared = await self._prepare_once(session_id, signal, Session)
            if prepared is not None:
                return prepared

    async def _wait_unreserved(self, session_id: str, signal: AbortSignal | None) -> None:
        event = self._reservation_events.setdefault(session_id, asyncio.Event())
        if signal is None:
            await event.wait()
            return
        aborted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        remove = signal.add_listener(lambda _r: aborted.done() or aborted.set_result(None))
        waiter = asyncio.ensure_future(event.wait())
        try:
            await asyncio.wait({waiter, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            remove()
            waiter.cancel()
        signal.throw_if_aborted()

    def _unreserve(self, session_id: str) -> None:
        self._reserved.pop(session_id, None)
        event = self._reservation_events.pop(session_id, None)
        if event is not None:
            event.set()

    async def _prepare_once(self, session_id: str, signal: AbortSignal | None, Session: Any) -> SessionPreparation | None:
        async with self._lock(session_id):
            if self._reserved.get(session_id) is not None:
                return None
            self._reserved[session_id] = "committing"
            try:
                while True:
                    source = await self._run(
                        lambda t: self._cached_fresh(session_id, t) or prepare_core(self._backend, session_id, t), signal
                    )
                    if source.needs_repair:
                        await self._commit_repair(session_id, source)
                        continue
                    current = await self._run(lambda t: self._backend.read_stored_revision(session_id, t))
                    if current != source.revision:
                        self._cache_drop(session_id)
                        continue
                    break
                state = self._states.get(session_id)
                if state is not None and state.owner is not None:
                    raise SessionConflictError(f'session "{session_id}" already has a live persistence owner')
                self._states[session_id] = _State(source.meta, len(source.stored_events), True)
                self._cache_drop(session_id)
                session = Session(source.meta, source.stored_events, restore=True)
            except BaseException:
                self._unreserve(session_id)
                raise
            self._reserved[session_id] = "reserved"
        if session_id in self._live:
            self._unreserve(session_id)
            raise SessionConflictError(f'cannot prepare session "{session_id}" while it is live')
        initial_count = session.seq

        def release() -> None:
            if self._reserved.get(session_id) == "reserved" and getattr(session, "_prepared_for", None) is None:
                if session.seq == initial_count and session_id not in self._live:
                    self._cache_put(session_id, source)
                self._unreserve(session_id)

        return SessionPreparation(self, session, source.meta, release)

    # ------------------------------------------------------------ live sessions

    def is_live(self, session_id: str) -> bool:
        return session_id in self._live

    def live_session(self, session_id: str) -> Any:
        entry = self._live.get(session_id)
        return None if entry is None else entry.session

    async def attach_live(self, session: Any, *, preparation: SessionPreparation | None = None) -> None:
        """Bind a live Session to its log: persist its seed/suffix, then every append via write-behind."""
        session_id = session.id
        if session_id in self._live:
            raise SessionConflictError(f'session "{session_id}" is already bound to a different live session in this '
                                       "backend (id collision)")
        if preparation is not None:
            if preparation.session is not session or self._reserved.get(session_id) != "reserved":
                raise SessionConflictError(f'session "{session_id}" preparation is no longer reserved')
        elif session_id in self._reserved:
            raise SessionConflictError(f'cannot publish session "{session_id}": persisted state already owns this identity')
        writer = SessionWriteBehind(
            lambda batch: self._write_live(session_id, batch),
            max_delay_ms=self.write_batch_max_delay_ms,
            report_background_failure=lambda err: self._report_background(session_id, err),
        )
        init: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A failed init is re-raised by every flush that awaits it; none may be waiting.
        init.add_done_callback(lambda f: f.cancelled() or f.exception())
        entry = _LiveEntry(session, writer, init=init)
        self._live[session_id] = entry
        # Observe before the first await: appends made while the seed is written are queued,
        # and the writer skips whatever the seed write already persisted (seq < cursor).
        entry.remove_observer = session.add_observer(lambda _s, ev: writer.enqueue(ev.wire))
        claimed = False
        try:
            async with self._lock(session_id):
                state = self._states.get(session_id)
                if preparation is not None:
                    if state is None or state.owner is not None or state.cursor != session.first_live_seq:
                        raise SessionConflictError(
                            f'session "{session_id}" preparation no longer matches its persistence state'
                        )
                    self._unreserve(session_id)
                    preparation._published = True
                    state.owner = session
                elif state is not None and state.owner is None:
                    # Ownerless state left by this instance's public create/load/append: a live
                    # Session may claim it when it continues exactly that log at the same cwd
                    # (§6.8.3 case 1, R-28/R-37..R-44).  The durable header is kept.
                    await self._check_claim(session_id, session, state)
                    state.owner = session
                    claimed = True
                else:
                    if state is not None:
                        raise SessionConflictError(
                            f'session "{session_id}" already has a persisted log on disk that does not match this live '
                            "session (id collision)"
                        )
                    stored_rev = await self._run(lambda t: self._backend.read_stored_revision(session_id, t))
                    if stored_rev is not None:
                        raise SessionConflictError(
                            f'session "{session_id}" already has a persisted log on disk that does not match this '
                            "live session (id collision)"
                        )
                    state = _State(lossless_copy(session.raw_header), 0, False, session)
                    self._states[session_id] = state
                suffix = session.records()[state.cursor:]
                if suffix:
                    await self._append_locked(session_id, lossless_copy(suffix))
        except BaseException as err:
            entry.remove_observer()
            self._live.pop(session_id, None)
            # The Session was not published: its queued live events must never be written
            # later by an orphaned timer (they could land in another session with this id).
            writer.cancel_automatic_wait()
            writer.pending.clear()
            st = self._states.get(session_id)
            if st is not None and st.owner is session:
                if claimed or preparation is not None or st.materialized:
                    # The durable state is still accurate (a batch is all-or-nothing): release
                    # ownership so a later resume/claim is not refused as "live owner".
                    st.owner = None
                else:
                    self._states.pop(session_id, None)
            if isinstance(err, asyncio.CancelledError):
                init.cancel()
            else:
                init.set_exception(err)
            raise
        init.set_result(None)

    async def _check_claim(self, session_id: str, session: Any, state: _State) -> None:
        """Refuse a claim of ownerless state whose cwd or stored prefix the live log does not reproduce."""
        live_cwd = session.raw_header.get("cwd")
        stored_cwd = state.meta.get("cwd")
        if live_cwd != stored_cwd:
            raise SessionConflictError(
                f'session "{session_id}" is already persisted at a different cwd (persisted: {_cwd_text(stored_cwd)}, '
                f"live: {_cwd_text(live_cwd)}) (id collision)"
            )
        cursor = state.cursor
        if cursor == 0:
            return
        records = session.records()
        if len(records) >= cursor:
            stored = await self._run(lambda t: self._backend.load_stored(session_id, t))
            if stored is not None:
                events = normalize_events(session_id, stored.events, stored.raw_path, stored.location)
                if len(events) >= cursor and events[:cursor] == records[:cursor]:
                    return
        raise SessionConflictError(
            f'session "{session_id}" is already persisted with {cursor} event(s) that do not match this live session '
            "(id collision)"
        )

    async def _write_live(self, session_id: str, batch: list[dict[str, Any]]) -> None:
        async with self._lock(session_id):
            state = self._states.get(session_id)
            cursor = state.cursor if state is not None else 0
            fresh = [ev for ev in batch if ev["seq"] >= cursor]
            if fresh:
                await self._append_locked(session_id, fresh)

    def _report_background(self, session_id: str, err: BaseException) -> None:
        log.warning('%s: background write for session "%s" failed (buffered events retained): %s',
                    self._backend.kind, session_id, err)
        if self.on_background_error is not None:
            try:
                self.on_background_error(session_id, err)
            except Exception:
                log.exception("on_error callback failed")

    async def flush_live(self, session_id: str) -> None:
        entry = self._live.get(session_id)
        if entry is None:
            return
        entry.writer.cancel_automatic_wait()
        await self._initialized(entry)
        await entry.writer.flush()

    @staticmethod
    async def _initialized(entry: _LiveEntry) -> None:
        """Wait until attach_live persisted the seed (a flush must not report an unwritten seed as durable)."""
        if entry.init is not None:
            await asyncio.shield(entry.init)
            # an event admitted meanwhile may have re-armed the window; the barrier writes it
            entry.writer.cancel_automatic_wait()

    async def retire_live(self, session_id: str) -> None:
        """Drain a live session and release its ownership (live -> cold)."""
        entry = self._live.get(session_id)
        if entry is None:
            return
        await self._initialized(entry)
        await entry.writer.flush()
        if entry.remove_observer is not None:
            entry.remove_observer()
        async with self._lock(session_id):
            self._live.pop(session_id, None)
            state = self._states.get(session_id)
            if state is not None and state.owner is entry.session:
                del self._states[session_id]
        self._cache_drop(session_id)

    async def _load_live(self, session_id: str, entry: _LiveEntry) -> SessionInspection:
        snapshot = entry.session.events  # linearization point: before the flush
        await self.flush_live(session_id)
        if len(snapshot) == 0:
            raise not_found(session_id)
        if has_open_turn(snapshot.records()):
            raise SessionConflictError(
                f'cannot load session "{session_id}" while its live turn is open; use the live Session or wait for '
                "the turn to close"
            )
        state = self._states.get(session_id)
        meta = state.meta if state is not None else entry.session.raw_header
        return SessionInspection(SessionHeader.from_json(meta), snapshot)

    async def diagnose(self, session_id: str, signal: AbortSignal | None = None) -> SessionDiagnosis:
        """Classify a stored session (never writes; uses the same pipeline as ``inspect``)."""
        async with self._lock(session_id):
            return await self._run(lambda t: self._diagnose_core(session_id, t), signal)

    def _diagnose_core(self, session_id: str, t: CancelToken) -> SessionDiagnosis:
        try:
            source = self._cached_fresh(session_id, t) or prepare_core(self._backend, session_id, t)
        except SessionFormatUnsupportedError as err:
            return SessionDiagnosis(session_id, "unsupported", str(err), 0, (), None, 0, None, err.upstream_class)
        except SessionNotFoundError as err:
            return SessionDiagnosis(session_id, "missing", str(err), 0, (), None, 0, None, err.upstream_class)
        except (SessionPersistenceError, OSError) as err:
            status = "busy" if _is_busy(err) else "corrupt"
            reason = f"the store is busy, not damaged: {err}" if status == "busy" else str(err)
            return SessionDiagnosis(session_id, status, reason, 0, (), None, 0, None, upstream_class_of(err))
        self._cache_put(session_id, source)
        torn = source.torn
        cut = None
        if torn is not None:
            status = "torn-tail"
            cut = self._backend.describe_cut(session_id, torn, len(source.stored_events), t)
            reason = f"damaged tail after byte/row {torn.truncate_to} will be cut"
            if torn.recovered:
                reason += f"; {len(torn.recovered)} complete record(s) recovered from it"
            if cut.intact_records:
                reason += (f"; {cut.intact_records} intact record(s) after the damage (from seq {cut.first_intact_seq}) "
                           "would be cut with it: this is damage followed by data, not a torn write")
            if source.closers:
                reason += f"; the open turn gets {len(source.closers)} synthetic closer(s)"
        elif source.closers:
            status = "open-turn"
            reason = f"interrupted turn: {len(source.closers)} synthetic closer(s) would be appended"
        else:
            status, reason = "ok", "balanced log"
        return SessionDiagnosis(session_id, status, reason, len(source.balanced), tuple(source.closers),
                                None if torn is None else torn.truncate_to,
                                0 if torn is None else len(torn.recovered), source.revision, cut=cut)

    async def repair(self, session_id: str, *, expected_revision: str) -> str:
        """Commit the crash repair a diagnosis previewed, once, pinned to ``expected_revision``.

        Unlike ``load`` (upstream's loop: repair, re-read, repair again), this never retries: if the
        stored log is not exactly the previewed one it raises ``SessionConflictError`` and writes
        nothing, so records a writer appended meanwhile can never be taken for a torn tail and cut.
        Returns the revision after the commit.
        """
        if session_id in self._live or self._reserved.get(session_id) is not None:
            raise SessionConflictError(f'cannot repair session "{session_id}" while it is live or reserved for resume')
        async with self._lock(session_id):
            def work(t: CancelToken) -> str:
                source = prepare_core(self._backend, session_id, t)
                if source.revision != expected_revision:
                    raise SessionConflictError(
                        f'session "{session_id}" changed since its repair was previewed; nothing was changed'
                    )
                if source.needs_repair:
                    self._backend.commit_repair(source.meta, source.torn, source.closers, t,
                                                expected_revision=source.revision)
                revision = self._backend.read_stored_revision(session_id, t)
                return "" if revision is None else revision

            try:
                return await self._run(work)
            finally:
                self._cache_drop(session_id)
                self._states.pop(session_id, None)

    async def backup_candidates(self, signal: AbortSignal | None = None) -> list[tuple[str, str]]:
        """(session id, path) of every repair backup in the store, found without listing sessions
        (a root whose ``list`` fails still has its backups found)."""
        return await self._run(self._backend.backup_candidates, signal)

    def assert_writable_artifact(self, path: str) -> None:
        """Refuse (typed error) a write to ``path`` that the layout forbids, e.g. through a symlink."""
        self._backend.assert_writable_path(path)

    async def compare_backup(self, session_id: str, backup_path: str) -> tuple[int, int]:
        """(records in the backup, how many of them the current log lacks); reads both, writes nothing.

        The log lacks the backup's records from the first seq where the two differ on: a repair that
        re-appended every recovered record keeps the backup a prefix of the log (0 lacking), one that
        lost records does not.  A log that no longer reads lacks everything after its readable part.
        """
        def work(t: CancelToken) -> tuple[int, int]:
            backup = self._backend.read_backup(session_id, backup_path, t)
            if backup is None:
                return 0, 0
            kept = backup.events
            try:
                stored = self._backend.load_stored(session_id, t)
                current = [] if stored is None else stored.events
            except (SessionPersistenceError, OSError):
                current = []
            same = 0
            for a, b in zip(kept, current, strict=False):
                if a != b:
                    break
                same += 1
            return len(kept), len(kept) - same

        async with self._lock(session_id):
            return await self._run(work)

    async def restore_backup(self, session_id: str, backup_path: str, *, expected_revision: str) -> str:
        """Make the session what ``backup_path`` holds (atomically, pinned to ``expected_revision``)."""
        if session_id in self._live or self._reserved.get(session_id) is not None:
            raise SessionConflictError(f'cannot restore session "{session_id}" while it is live or reserved for resume')
        async with self._lock(session_id):
            def work(t: CancelToken) -> str:
                self._backend.restore_backup(session_id, backup_path, t, expected_revision=expected_revision)
                revision = self._backend.read_stored_revision(session_id, t)
                return "" if revision is None else revision

            try:
                return await self._run(work)
            finally:
                self._cache_drop(session_id)
                self._states.pop(session_id, None)

    async def read_stored_revision(self, session_id: str, signal: AbortSignal | None = None) -> str | None:
        return await self._run(lambda t: self._backend.read_stored_revision(session_id, t), signal)

    async def close(self) -> None:
        """Drain every live session, then close the backend (a drain failure is raised first)."""
        failures: list[BaseException] = []
        for session_id in list(self._live):
            try:
                await self.retire_live(session_id)
            except Exception as err:
                failures.append(err)
        # Teardown also waits for work still running on any id (a public append, a retirement
        # or a load): close must be the very last step (§6.9, S-44/S-45).
        for session_id in list(self._locks):
            async with self._lock(session_id):
                pass
        await asyncio.get_running_loop().run_in_executor(None, self._backend.close)
        if failures:
            raise SessionPersistenceError(f"{self._backend.kind} dispose failed: " + "; ".join(map(str, failures)))
