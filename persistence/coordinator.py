"""Backend-neutral orchestration: per-id ordering, append rules, the read pipeline, repair commits.

``CoordinatedPersistence`` is the one implementation of ``SessionPersistence``; each
backend supplies only its ``StorageBackend`` hooks.  Hooks are synchronous and run on
worker threads; this facade keeps the event loop free and turns task cancellation or
an ``AbortSignal`` into a token the hooks check between I/O steps.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from persistence.backend import CancelToken, StorageBackend, StoredLog, TornMarker
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
from persistence.model.repair import interrupted_turn_closers
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

T = TypeVar("T")

DEFAULT_PREPARED_CACHE_SIZE = 5


@dataclass(slots=True)
class _State:
    meta: dict[str, Any]
    cursor: int
    materialized: bool


@dataclass(frozen=True, slots=True)
class SessionDiagnosis:
    """What a viewer needs to label one stored session, computed without writing anything.

    status is one of ``ok``, ``open-turn`` (crashed mid-turn: closers would be appended),
    ``torn-tail`` (a damaged tail would be cut), ``corrupt``, ``unsupported``, ``missing``.
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

    @property
    def repairable(self) -> bool:
        return self.status in ("open-turn", "torn-tail")


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
    return PreparedSource(stored.meta, events, closers, stored.revision, stored.torn)


def read_from_core(backend: StorageBackend, session_id: str, from_seq: int, token: CancelToken) -> ReadFromResult:
    with gc_paused():
        return _read_from_core(backend, session_id, from_seq, token)


def _read_from_core(backend: StorageBackend, session_id: str, from_seq: int, token: CancelToken) -> ReadFromResult:
    stored: StoredLog | None = backend.load_suffix(session_id, from_seq, token)
    if stored is None:
        raise not_found(session_id)
    check_identity_and_version(session_id, stored.meta, stored.raw_path, stored.location)
    events = normalize_events(session_id, stored.events, stored.raw_path, stored.location)
    start = max(0, from_seq - stored.base_seq)
    return ReadFromResult(SessionHeader.from_json(stored.meta), EventLog(events[start:]))


class CoordinatedPersistence(SessionPersistence):
    def __init__(self, backend: StorageBackend, *, prepared_session_cache_size: int = DEFAULT_PREPARED_CACHE_SIZE) -> None:
        if prepared_session_cache_size is None:
            prepared_session_cache_size = DEFAULT_PREPARED_CACHE_SIZE
        if not (is_nonneg_safe_integer(prepared_session_cache_size) and prepared_session_cache_size >= 1):
            raise SessionArgumentError("preparedSessionCacheSize must be a positive safe integer")
        self._backend = backend
        self._states: dict[str, _State] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._cache: OrderedDict[str, PreparedSource] = OrderedDict()
        self._cache_size = int(prepared_session_cache_size)

    @property
    def backend(self) -> StorageBackend:
        return self._backend

    # ------------------------------------------------------------ plumbing

    def _lock(self, session_id: str) -> asyncio.Lock:
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

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
        finally:
            if remove is not None:
                remove()
        if signal is not None:
            signal.throw_if_aborted()
        return result

    def _cache_put(self, session_id: str, source: PreparedSource) -> None:
        self._cache[session_id] = source
        self._cache.move_to_end(session_id)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def _cached_fresh(self, session_id: str, token: CancelToken) -> PreparedSource | None:
        source = self._cache.get(session_id)
        if source is None:
            return None
        if self._backend.read_stored_revision(session_id, token) != source.revision:
            self._cache.pop(session_id, None)
            return None
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
            if session_id in self._states:
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
            for ev in batch:
                refusal = legacy_refusal(session_id, ev)
                if refusal is not None:
                    raise SessionValidationError(refusal)
            if not batch:
                return
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
            self._cache.pop(session_id, None)

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
        self._cache.pop(session_id, None)
        return committed

    async def load(self, session_id: str) -> SessionInspection:
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
                    self._cache.pop(session_id, None)
                    continue
                self._cache_put(session_id, source)
                self._states[session_id] = _State(source.meta, len(source.stored_events), True)
                return SessionInspection(SessionHeader.from_json(source.meta), EventLog(source.balanced))

    async def inspect(self, session_id: str, signal: AbortSignal | None = None) -> SessionInspection:
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

    async def list(self, signal: AbortSignal | None = None) -> list[SessionHeader]:
        metas = await self._run(self._backend.list_headers, signal)
        return [SessionHeader.from_json(m) for m in metas]

    async def list_snapshots(self, signal: AbortSignal | None = None) -> list[SessionPersistenceSnapshot]:
        rows = await self._run(self._backend.list_snapshots, signal)
        return [SessionPersistenceSnapshot(SessionHeader.from_json(m), r) for m, r in rows]

    async def diagnose(self, session_id: str, signal: AbortSignal | None = None) -> SessionDiagnosis:
        """Classify a stored session (never writes; uses the same pipeline as ``inspect``)."""
        async with self._lock(session_id):
            def work(t: CancelToken) -> SessionDiagnosis:
                try:
                    source = self._cached_fresh(session_id, t) or prepare_core(self._backend, session_id, t)
                except SessionFormatUnsupportedError as err:
                    return SessionDiagnosis(session_id, "unsupported", str(err), 0, (), None, 0, None,
                                            err.upstream_class)
                except SessionNotFoundError as err:
                    return SessionDiagnosis(session_id, "missing", str(err), 0, (), None, 0, None, err.upstream_class)
                except (SessionPersistenceError, OSError) as err:
                    return SessionDiagnosis(session_id, "corrupt", str(err), 0, (), None, 0, None,
                                            upstream_class_of(err))
                self._cache_put(session_id, source)
                torn = source.torn
                if torn is not None:
                    status = "torn-tail"
                    reason = f"damaged tail after byte/row {torn.truncate_to} will be cut"
                    if torn.recovered:
                        reason += f"; {len(torn.recovered)} complete record(s) recovered from it"
                    if source.closers:
                        reason += f"; the open turn gets {len(source.closers)} synthetic closer(s)"
                elif source.closers:
                    status = "open-turn"
                    reason = f"interrupted turn: {len(source.closers)} synthetic closer(s) would be appended"
                else:
                    status, reason = "ok", "balanced log"
                return SessionDiagnosis(session_id, status, reason, len(source.balanced), tuple(source.closers),
                                        None if torn is None else torn.truncate_to,
                                        0 if torn is None else len(torn.recovered), source.revision)

            return await self._run(work, signal)

    async def read_stored_revision(self, session_id: str, signal: AbortSignal | None = None) -> str | None:
        return await self._run(lambda t: self._backend.read_stored_revision(session_id, t), signal)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._backend.close)
