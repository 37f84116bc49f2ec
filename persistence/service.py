"""The abstract ``SessionPersistence`` service and its ``AbortSignal``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from persistence.errors import SessionAbortedError
from persistence.model.event import SessionEvent
from persistence.model.header import SessionHeader
from persistence.values import (
    ReadFromResult,
    SessionInspection,
    SessionLocation,
    SessionPersistenceSnapshot,
    SessionRawArtifact,
)


class AbortSignal:
    """Upstream's optional ``signal`` argument: abort once, observers are told once."""

    __slots__ = ("_aborted", "_listeners", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[Callable[[Any], None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def abort(self, reason: Any = None) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason if reason is not None else "aborted"
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener(self._reason)

    def add_listener(self, listener: Callable[[Any], None]) -> Callable[[], None]:
        if self._aborted:
            listener(self._reason)
            return lambda: None
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def throw_if_aborted(self) -> None:
        if self._aborted:
            if isinstance(self._reason, BaseException):
                raise self._reason
            raise SessionAbortedError(self._reason)

    @classmethod
    def aborted_with(cls, reason: Any = None) -> AbortSignal:
        s = cls()
        s.abort(reason)
        return s


HeaderLike = SessionHeader | dict[str, Any]
EventLike = SessionEvent | dict[str, Any]


class SessionPersistence(ABC):
    """Durable home of session logs. Every method but ``locate`` is a coroutine."""

    @abstractmethod
    def locate(self, meta: HeaderLike) -> SessionLocation | None: ...

    @property
    @abstractmethod
    def supports_raw_artifacts(self) -> bool: ...

    @abstractmethod
    async def read_raw(self, session_id: str, signal: AbortSignal | None = None) -> SessionRawArtifact | None: ...

    @abstractmethod
    async def create(self, meta: HeaderLike) -> None: ...

    @abstractmethod
    async def append(self, session_id: str, events: Sequence[EventLike]) -> None: ...

    @abstractmethod
    async def load(self, session_id: str) -> SessionInspection: ...

    @abstractmethod
    async def inspect(self, session_id: str, signal: AbortSignal | None = None) -> SessionInspection: ...

    @abstractmethod
    async def read_from(self, session_id: str, from_seq: int, signal: AbortSignal | None = None) -> ReadFromResult: ...

    @abstractmethod
    async def list(self, signal: AbortSignal | None = None) -> list[SessionHeader]: ...

    @abstractmethod
    async def list_snapshots(self, signal: AbortSignal | None = None) -> list[SessionPersistenceSnapshot]: ...

    async def close(self) -> None:
        return None
