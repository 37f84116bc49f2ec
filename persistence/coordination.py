"""The coordinator's plumbing: per-id ordering, worker-thread hook calls, the preparation cache, the append
rules and repair commits, and the reservation a prepared Session holds.

``CoordinatorCore`` is what ``persistence.live`` works with (the id locks, the backend's hooks, the id
states, the write path); ``persistence.coordinator.CoordinatedPersistence`` builds the public service on it.
Keeping it below both is what keeps the coordinator and the live sessions from importing each other.

May import: the engine modules below the coordinator (backend, pipeline, values, errors, model); never Qt
or ``app``.
"""

from __future__ import annotations

import asyncio
import builtins
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from persistence.backend import CancelToken, StorageBackend
from persistence.errors import SessionArgumentError, SessionConflictError, SessionValidationError
from persistence.id_state import IdState
from persistence.incremental import refreshed
from persistence.model.header import SessionHeader
from persistence.model.jsontext import is_nonneg_safe_integer, js_string
from persistence.model.upgrade import legacy_refusal
from persistence.pipeline import PreparedSource, prepare_core
from persistence.service import AbortSignal, HeaderLike

T = TypeVar("T")

DEFAULT_PREPARED_CACHE_SIZE = 5  # prepared sources (whole decoded logs) kept per instance, most recent first


class SessionPreparation:
    """An unpublished Session reserved for resume. Context manager; ``dispose`` is idempotent."""

    def __init__(
        self,
        owner: CoordinatorCore,
        session: Any,
        meta: dict[str, Any],
        release: Callable[[], None],
        on_release: Callable[[], None] | None = None,
    ) -> None:
        self._owner = owner
        self.session = session
        self.meta = SessionHeader.from_json(meta)
        self._release = release
        self._on_release = on_release
        self._published = False
        self._disposed = False

    @property
    def published(self) -> bool:
        """Whether ``attach_live`` published the reserved Session (the reservation is consumed)."""
        return self._published

    def dispose(self) -> None:
        """Release the reservation unless it was published (idempotent)."""
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


def header_dict(meta: HeaderLike) -> Any:
    """A header as the dict the backend hooks take (a ``SessionHeader`` turned into its JSON form)."""
    if isinstance(meta, SessionHeader):
        return meta.to_json()
    return meta


class CoordinatorCore:
    """The state and plumbing of one coordinator over one ``StorageBackend`` (see the module docstring)."""

    def __init__(self, backend: StorageBackend, *, prepared_session_cache_size: int = DEFAULT_PREPARED_CACHE_SIZE) -> None:
        if prepared_session_cache_size is None:
            prepared_session_cache_size = DEFAULT_PREPARED_CACHE_SIZE
        if not (is_nonneg_safe_integer(prepared_session_cache_size) and prepared_session_cache_size >= 1):
            raise SessionArgumentError("preparedSessionCacheSize must be a positive safe integer")
        self._backend = backend
        self._states: dict[str, IdState] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._lock_users: dict[str, int] = {}
        self._cache: OrderedDict[str, PreparedSource] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._cache_size = int(prepared_session_cache_size)
        self._reserved: dict[str, str] = {}  # id -> "committing" | "reserved"
        self._reservation_events: dict[str, asyncio.Event] = {}
        self.write_batch_max_delay_ms = 200  # write-behind window of attached live sessions, in milliseconds
        self.on_background_error: Callable[[str, BaseException], None] | None = None

    @property
    def backend(self) -> StorageBackend:
        """The storage hooks (engine-internal; callers outside the engine use the public methods)."""
        return self._backend

    @property
    def kind(self) -> str:
        """The storage kind: ``"jsonl"`` or ``"sqlite"``."""
        return self._backend.kind

    @property
    def root_path(self) -> str:
        """Where the store lives: the JSONL root directory or the SQLite database file."""
        return self._backend.root_path

    @property
    def compression(self) -> str | None:
        """JSONL: the transcripts' encoding (``"zstd"`` or ``"none"``); None for SQLite."""
        return self._backend.compression

    @property
    def read_only(self) -> bool:
        """Whether the store was opened for browsing only (SQLite ``read_only=True``; JSONL reads never write)."""
        return self._backend.read_only

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

    def _cached_or_prepared(self, session_id: str, token: CancelToken) -> PreparedSource:
        return self._cached_fresh(session_id, token) or prepare_core(self._backend, session_id, token)

    def _cached_or_extended(self, session_id: str, token: CancelToken, *, keep_raw: bool = False) -> PreparedSource:
        """``view``'s read: the cached source while it is fresh, else it extended by what was appended
        (``persistence.incremental``), else a whole read.  ``inspect``, ``load`` and ``prepare`` keep
        ``_cached_or_prepared``: the contract counts their whole reads (S-20, S-21)."""
        with self._cache_lock:
            cached = self._cache.get(session_id)
        try:
            return refreshed(self._backend, session_id, cached, token, keep_raw=keep_raw)
        except BaseException:
            if cached is not None:
                self._cache_drop(session_id, cached)  # what it held no longer reads: never offer it again
            raise

    async def _balanced_source(
        self, session_id: str, signal: AbortSignal | None = None, *, settled: bool = True
    ) -> PreparedSource:
        """Prepare the cold log; while it needs a repair, commit that repair and prepare it again.

        ``settled`` (``load``, ``prepare``): start from the cached source when it is still fresh, and
        accept a result only while the stored revision still equals the one it was read at (a writer
        that moved the log meanwhile means another round), because the caller caches it and bases an
        append cursor on it.  An append's adoption passes False (contract §6.6.2): it reads afresh and
        needs no confirmation, since the backend's own tail check refuses an append to a moved log.
        Only the read is abortable by ``signal``; a repair commit is never left half-done.
        """
        while True:
            if settled:
                source = await self._run(lambda t: self._cached_or_prepared(session_id, t), signal)
            else:
                source = await self._run(lambda t: prepare_core(self._backend, session_id, t), signal)
            if source.needs_repair:
                await self._commit_repair(session_id, source)
                continue
            if settled:
                current = await self._run(lambda t: self._backend.read_stored_revision(session_id, t))
                if current != source.revision:
                    self._cache_drop(session_id)
                    continue
            return source

    async def _commit_repair(self, session_id: str, source: PreparedSource) -> bool:
        """Commit closers/torn cut if the stored revision still matches; False when it moved."""

        def commit(t: CancelToken) -> bool:
            if self._backend.read_stored_revision(session_id, t) != source.revision:
                return False
            self._backend.commit_repair(source.meta, source.torn, source.closers, t, expected_revision=source.revision)
            return True

        committed = await self._run(commit)
        self._cache_drop(session_id)
        return committed

    async def _append_locked(self, session_id: str, batch: builtins.list[dict[str, Any]]) -> None:
        """Append on the id's chain (the caller holds the id lock)."""
        for ev in batch:
            refusal = legacy_refusal(session_id, ev)
            if refusal is not None:
                raise SessionValidationError(refusal)
        if not batch:
            return
        if self._reserved.get(session_id) in ("committing", "reserved"):
            raise SessionConflictError(f'cannot append session "{session_id}" while its persisted preparation is reserved')
        state = self._states.get(session_id)
        if state is None:
            state = await self._adopt(session_id)
        for i, ev in enumerate(batch):
            seq = ev.get("seq") if isinstance(ev, dict) else None
            if seq != state.cursor + i or type(seq) is bool:
                raise SessionConflictError(
                    f'append seq mismatch for "{session_id}": expected {state.cursor + i} at index {i}, got {js_string(seq)}'
                )
        st = state
        await self._run(lambda t: self._backend.append_batch(st.meta, batch, st.materialized, t, expected_next_seq=st.cursor))
        state.materialized = True
        state.cursor += len(batch)
        self._cache_drop(session_id)

    async def _adopt(self, session_id: str) -> IdState:
        """Append to a session this instance has not seen: repair it first (contract §6.6.2)."""
        source = await self._balanced_source(session_id, settled=False)
        state = IdState(source.meta, len(source.stored_events), True)
        self._states[session_id] = state
        return state

    def _unreserve(self, session_id: str) -> None:
        self._reserved.pop(session_id, None)
        event = self._reservation_events.pop(session_id, None)
        if event is not None:
            event.set()
