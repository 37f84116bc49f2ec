"""``SessionStore``: live sessions over a persistence service (create, fork, resume, flush, dispose)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from persistence.coordinator import CoordinatedPersistence
from persistence.errors import SessionArgumentError, SessionPersistenceError
from persistence.model.event import SessionEvent
from persistence.model.frozen import raw_of
from persistence.model.jsontext import deep_copy_json, is_nonneg_safe_integer, js_string
from persistence.session import END_SEED, Session, now_ms
from persistence.write_behind import check_delay

_META_FIELDS = ("cwd", "parentSession", "seedLength", "origin", "delegationDepth", "agentPreset")


class SessionForkError(SessionPersistenceError):
    """A fork was refused; ``code`` is upstream's (SESSION_NOT_FOUND, INVALID_BOUNDARY, OPEN_TURN, ...)."""

    upstream_class = "SessionForkError"  # upstream's own class (``name = 'SessionForkError'``), not a plain Error

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class SessionStore:
    """Live sessions over one persistence: create, resume, fork, flush and dispose them."""

    def __init__(
        self,
        persistence: CoordinatedPersistence,
        *,
        write_batch_max_delay_ms: int = 200,
        on_error: Callable[[str, BaseException], None] | None = None,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self._persistence = persistence
        persistence.write_batch_max_delay_ms = check_delay(write_batch_max_delay_ms)
        persistence.on_background_error = on_error
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._counter = 0

    @property
    def persistence(self) -> CoordinatedPersistence:
        """The persistence the live sessions are written to."""
        return self._persistence

    def get(self, session_id: str) -> Session | None:
        """The live session with this id, or None."""
        return self._sessions.get(session_id)

    def ids(self) -> list[str]:
        """Ids of the live sessions."""
        return list(self._sessions)

    def _mint_id(self) -> str:
        while True:
            self._counter += 1
            candidate = f"session-{self._counter}"
            if candidate not in self._sessions:
                return candidate

    def _header(self, session_id: str, meta: dict[str, Any] | None) -> dict[str, Any]:
        meta = dict(raw_of(meta) or {})
        created = meta.get("createdAt")
        header: dict[str, Any] = {"version": 0, "id": session_id, "createdAt": self._clock() if created is None else created}
        for key in _META_FIELDS:
            if key in meta:
                # An explicit None is rejected by header validation, like upstream's null.
                header[key] = meta[key]
        return header

    async def create(
        self,
        session_id: str | None = None,
        *,
        seed: Sequence[SessionEvent | dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Session:
        """A new live session; a seed (even empty) gets the ``session/end-seed`` marker."""
        sid = session_id if session_id is not None else self._mint_id()
        if type(sid) is not str:  # a non-string id used to escape as a raw TypeError from path encoding
            raise SessionArgumentError(f"session id must be a string, got {js_string(sid)}")
        if sid == "":
            raise SessionPersistenceError("session id must not be empty")
        if sid in self._sessions:
            raise SessionPersistenceError(f'session "{sid}" already exists')
        session = Session(self._header(sid, meta), seed, clock=self._clock)
        await self._persistence.attach_live(session)
        self._sessions[sid] = session
        return session

    async def fork(
        self, source_id: str, *, boundary: int | None = None, new_id: str | None = None, meta: dict[str, Any] | None = None
    ) -> Session:
        """Child session seeded with the source's events through ``boundary`` (inclusive).

        Upstream forks only live sources; a cold source is read with ``inspect`` (never
        written), so a viewer can fork without touching the parent's log.
        """
        if new_id is not None and new_id in self._sessions:
            raise SessionForkError(f'session "{new_id}" already exists', "SESSION_ALREADY_EXISTS")
        live = self._sessions.get(source_id)
        if live is not None:
            records = live.records()
            source_header = live.raw_header
        else:
            try:
                inspection = await self._persistence.inspect(source_id)
            except SessionPersistenceError as err:
                if "not found" in str(err):
                    raise SessionForkError(f'session "{source_id}" not found', "SESSION_NOT_FOUND") from err
                raise
            records = inspection.events.records()
            source_header = inspection.meta.to_json()
        prefix: list[dict[str, Any]] = []
        if boundary is None and records:
            # An omitted boundary is the last event's seq (session-model §5.2); the checks below
            # still apply, so forking a source mid-turn without a boundary is OPEN_TURN.
            boundary = len(records) - 1
        if boundary is not None:
            if type(boundary) is bool or not is_nonneg_safe_integer(boundary):
                raise SessionForkError(
                    f'fork boundary for session "{source_id}" must be a non-negative safe integer, got {js_string(boundary)}',
                    "INVALID_BOUNDARY",
                )
            if boundary >= len(records):
                last = str(len(records) - 1) if records else "none"
                raise SessionForkError(
                    f'fork boundary {boundary} does not exist in session "{source_id}" (last seq: {last})', "INVALID_BOUNDARY"
                )
            if records[boundary].get("seq") != boundary:
                raise SessionForkError(
                    f'fork boundary {boundary} does not match a contiguous event seq in session "{source_id}"', "INVALID_BOUNDARY"
                )
            prefix = list(records[: boundary + 1])
            for ev in reversed(prefix):
                t = ev.get("type")
                if t == "turn/end":
                    break
                if t == "turn/start":
                    data = ev.get("data")
                    turn = data.get("turn") if isinstance(data, dict) else None
                    raise SessionForkError(
                        f'fork boundary {boundary} in session "{source_id}" ends inside open turn {js_string(turn)}', "OPEN_TURN"
                    )
        child_meta: dict[str, Any] = {}
        if source_header.get("cwd") is not None:
            child_meta["cwd"] = source_header["cwd"]
        child_meta["parentSession"] = source_id
        child_meta["seedLength"] = len(prefix)
        if meta:
            child_meta.update(meta)
        child_id = new_id if new_id is not None else str(uuid.uuid4())
        return await self.create(child_id, seed=deep_copy_json(prefix), meta=child_meta)

    async def resume(self, session_id: str) -> Session:
        """Prepare (committing any pending repair), publish, and mark the seed's end."""
        if session_id in self._sessions:
            raise SessionPersistenceError(f'session "{session_id}" is already live')
        with await self._persistence.prepare(session_id) as preparation:
            session: Session = preparation.session
            session.adopt_clock(self._clock)  # built by the service, which does not know this store's clock
            await self._persistence.attach_live(session, preparation=preparation)
        self._sessions[session_id] = session
        return session

    async def flush(self, session_id: str) -> bool:
        """Write what the session buffered; False when it is not live here."""
        if session_id not in self._sessions:
            return False
        await self._persistence.flush_live(session_id)
        return True

    async def dispose(self, session_id: str) -> None:
        """Drain and release one live session (no-op when it is not live)."""
        if self._sessions.pop(session_id, None) is None:
            return
        await self._persistence.retire_live(session_id)

    async def close(self) -> None:
        """Dispose every live session (a failure is raised after all were tried)."""
        failures: list[BaseException] = []
        for sid in list(self._sessions):
            try:
                await self.dispose(sid)
            except Exception as err:
                failures.append(err)
        if failures:
            raise SessionPersistenceError("session store dispose failed: " + "; ".join(map(str, failures)))


__all__ = ["END_SEED", "SessionForkError", "SessionStore"]
