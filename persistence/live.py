"""Live sessions attached to a coordinator: seed persistence, write-behind, flush, retirement (§6.8-§6.9).

Why a module of its own: binding a live ``Session`` to its log is a protocol of its own (claim
rules, an init barrier every flush waits for, background failures reported, not lost), and it used
to sit in the middle of the coordinator's read and repair code.  ``LiveSessions`` holds the live
entries; the coordinator delegates its ``attach_live``/``flush_live``/``retire_live`` to it, and what
both need (the per-id locks, ``IdState``, reservations, appends) is ``persistence.coordination``'s.

May import: ``persistence.errors``, ``persistence.model``, ``persistence.write_behind``,
``persistence.id_state``, ``persistence.values``; ``persistence.coordination`` only for type checking
(never ``persistence.coordinator``, which imports this module).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from persistence.errors import SessionConflictError, not_found
from persistence.id_state import IdState
from persistence.model.header import SessionHeader
from persistence.model.jsontext import lossless_copy
from persistence.model.repair import has_open_turn
from persistence.model.upgrade import normalize_events
from persistence.values import SessionInspection
from persistence.write_behind import SessionWriteBehind

if TYPE_CHECKING:
    from persistence.coordination import CoordinatorCore, SessionPreparation

log = logging.getLogger(__name__)


@dataclass(slots=True)
class LiveEntry:
    """One attached live Session and the write-behind controller that persists its appends."""

    session: Any
    writer: SessionWriteBehind
    remove_observer: Callable[[], None] | None = None
    # Settles when attach_live has persisted the seed/suffix (upstream's ``init``, §6.8.5):
    # every flush of this entry waits for it and re-raises its failure.
    init: asyncio.Future[None] | None = None
    # The header ``hold_writer`` was given (None: no hold), released on retire.
    held: dict[str, Any] | None = None


def _cwd_text(cwd: Any) -> str:
    return "undefined" if cwd is None else str(cwd)


class LiveSessions:
    """The live sessions of one coordinator, keyed by id (``entries`` is the coordinator's ``_live``)."""

    def __init__(self, owner: CoordinatorCore) -> None:
        # A weak reference: a strong one would make every coordinator part of a reference cycle, kept
        # alive (with its cache of decoded logs) until a full collection, which a host may defer (the
        # window pauses the collector): a benchmark that opened a fresh store per read peaked at 3.7x the memory.
        self._owner_ref = weakref.ref(owner)
        self.entries: dict[str, LiveEntry] = {}

    @property
    def _owner(self) -> CoordinatorCore:
        owner = self._owner_ref()
        assert owner is not None, "the coordinator owns its LiveSessions and outlives every call on it"
        return owner

    def session(self, session_id: str) -> Any:
        """The live Session bound to ``session_id``, or None."""
        entry = self.entries.get(session_id)
        return None if entry is None else entry.session

    async def attach(self, session: Any, preparation: SessionPreparation | None) -> None:
        """Bind a live Session to its log: persist its seed/suffix, then every append via write-behind."""
        owner = self._owner
        session_id = session.id
        if session_id in self.entries:
            raise SessionConflictError(
                f'session "{session_id}" is already bound to a different live session in this backend (id collision)'
            )
        if preparation is not None:
            if preparation.session is not session or owner._reserved.get(session_id) != "reserved":
                raise SessionConflictError(f'session "{session_id}" preparation is no longer reserved')
        elif session_id in owner._reserved:
            raise SessionConflictError(f'cannot publish session "{session_id}": persisted state already owns this identity')
        writer = SessionWriteBehind(
            lambda batch: self._write(session_id, batch),
            max_delay_ms=owner.write_batch_max_delay_ms,
            report_background_failure=lambda err: self._report_background(session_id, err),
        )
        init: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A failed init is re-raised by every flush that awaits it; none may be waiting.
        init.add_done_callback(lambda f: f.cancelled() or f.exception())
        entry = LiveEntry(session, writer, init=init)
        self.entries[session_id] = entry
        # Observe before the first await: appends made while the seed is written are queued,
        # and the writer skips whatever the seed write already persisted (seq < cursor).
        remove_observer = entry.remove_observer = session.add_observer(lambda _s, ev: writer.enqueue(ev.wire))
        claimed = False
        try:
            async with owner._lock(session_id):
                state = owner._states.get(session_id)
                if preparation is not None:
                    if state is None or state.owner is not None or state.cursor != session.first_live_seq:
                        raise SessionConflictError(f'session "{session_id}" preparation no longer matches its persistence state')
                    owner._unreserve(session_id)
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
                    stored_rev = await owner._run(lambda t: owner._backend.read_stored_revision(session_id, t))
                    if stored_rev is not None:
                        raise SessionConflictError(
                            f'session "{session_id}" already has a persisted log on disk that does not match this '
                            "live session (id collision)"
                        )
                    state = IdState(lossless_copy(session.raw_header), 0, False, session)
                    owner._states[session_id] = state
                table = session.table
                suffix = list(table.iter_range(state.cursor, len(table)))
                if suffix:
                    await owner._append_locked(session_id, lossless_copy(suffix))
                # From here until retire, a repair guard in any process can see this writer, however quiet
                # it is (issue 21 item 2); a session with nothing on disk yet is held from its first append.
                header = lossless_copy(session.raw_header)
                await owner._run(lambda _t: owner._backend.hold_writer(header))
                entry.held = header
        except BaseException as err:
            remove_observer()
            self.entries.pop(session_id, None)
            if entry.held is not None:
                self._release_hold(entry)
            # The Session was not published: its queued live events must never be written
            # later by an orphaned timer (they could land in another session with this id).
            writer.cancel_automatic_wait()
            writer.pending.clear()
            st = owner._states.get(session_id)
            if st is not None and st.owner is session:
                if claimed or preparation is not None or st.materialized:
                    # The durable state is still accurate (a batch is all-or-nothing): release
                    # ownership so a later resume/claim is not refused as "live owner".
                    st.owner = None
                else:
                    owner._states.pop(session_id, None)
            if isinstance(err, asyncio.CancelledError):
                init.cancel()
            else:
                init.set_exception(err)
            raise
        init.set_result(None)

    async def _check_claim(self, session_id: str, session: Any, state: IdState) -> None:
        """Refuse a claim of ownerless state whose cwd or stored prefix the live log does not reproduce."""
        owner = self._owner
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
        records = session.table
        if len(records) >= cursor:
            stored = await owner._run(lambda t: owner._backend.load_stored(session_id, t))
            if stored is not None:
                stored.raw = None
                events = normalize_events(session_id, stored.events, stored.raw_path, stored.location)
                if len(events) >= cursor and events[:cursor] == records[:cursor]:
                    return
        raise SessionConflictError(
            f'session "{session_id}" is already persisted with {cursor} event(s) that do not match this live session '
            "(id collision)"
        )

    async def _write(self, session_id: str, batch: list[dict[str, Any]]) -> None:
        """The write-behind's sink: append what the log does not hold yet, on the id's chain."""
        owner = self._owner
        async with owner._lock(session_id):
            state = owner._states.get(session_id)
            cursor = state.cursor if state is not None else 0
            fresh = [ev for ev in batch if ev["seq"] >= cursor]
            if fresh:
                await owner._append_locked(session_id, fresh)

    def _report_background(self, session_id: str, err: BaseException) -> None:
        owner = self._owner
        log.warning(
            '%s: background write for session "%s" failed (buffered events retained): %s', owner._backend.kind, session_id, err
        )
        if owner.on_background_error is not None:
            try:
                owner.on_background_error(session_id, err)
            except Exception:
                log.exception("on_error callback failed")

    async def flush(self, session_id: str) -> None:
        """Write everything the live session buffered (after its seed); no-op for an id that is not live."""
        entry = self.entries.get(session_id)
        if entry is None:
            return
        entry.writer.cancel_automatic_wait()
        await self._initialized(entry)
        await entry.writer.flush()

    @staticmethod
    async def _initialized(entry: LiveEntry) -> None:
        """Wait until attach persisted the seed (a flush must not report an unwritten seed as durable)."""
        if entry.init is not None:
            await asyncio.shield(entry.init)
            # an event admitted meanwhile may have re-armed the window; the barrier writes it
            entry.writer.cancel_automatic_wait()

    async def retire(self, session_id: str) -> None:
        """Drain a live session and release its ownership (live -> cold)."""
        owner = self._owner
        entry = self.entries.get(session_id)
        if entry is None:
            return
        await self._initialized(entry)
        await entry.writer.flush()
        if entry.remove_observer is not None:
            entry.remove_observer()
        async with owner._lock(session_id):
            self.entries.pop(session_id, None)
            state = owner._states.get(session_id)
            if state is not None and state.owner is entry.session:
                del owner._states[session_id]
            if entry.held is not None:
                self._release_hold(entry)
        owner._cache_drop(session_id)

    def _release_hold(self, entry: LiveEntry) -> None:
        """Drop the live writer's hold on its log (cheap: a close; never fails the caller)."""
        header, entry.held = entry.held, None
        if header is None:
            return
        try:
            self._owner._backend.release_writer(header)
        except Exception:
            log.exception("releasing the writer's hold on %s failed", entry.session.id)

    async def load(self, session_id: str, entry: LiveEntry) -> SessionInspection:
        """``load`` of a live id: its snapshot once flushed; refused while its turn is open."""
        snapshot = entry.session.events  # linearization point: before the flush
        await self.flush(session_id)
        if len(snapshot) == 0:
            raise not_found(session_id)
        if has_open_turn(snapshot.table[: len(snapshot)]):
            raise SessionConflictError(
                f'cannot load session "{session_id}" while its live turn is open; use the live Session or wait for '
                "the turn to close"
            )
        state = self._owner._states.get(session_id)
        meta = state.meta if state is not None else entry.session.raw_header
        return SessionInspection(SessionHeader.from_json(meta), snapshot)


__all__ = ["LiveEntry", "LiveSessions"]
