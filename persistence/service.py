"""The abstract ``SessionPersistence`` service and its ``AbortSignal``."""

from __future__ import annotations

import builtins
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
        """Whether ``abort`` was called."""
        return self._aborted

    @property
    def reason(self) -> Any:
        """What ``abort`` was given ("aborted" when nothing)."""
        return self._reason

    def abort(self, reason: Any = None) -> None:
        """Abort once; every listener is told once."""
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason if reason is not None else "aborted"
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener(self._reason)

    def add_listener(self, listener: Callable[[Any], None]) -> Callable[[], None]:
        """Call ``listener(reason)`` on abort (at once when already aborted); returns its remover."""
        if self._aborted:
            listener(self._reason)
            return lambda: None
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def throw_if_aborted(self) -> None:
        """Raise the abort reason (an exception reason as itself) once aborted."""
        if self._aborted:
            if isinstance(self._reason, BaseException):
                raise self._reason
            raise SessionAbortedError(self._reason)

    @classmethod
    def aborted_with(cls, reason: Any = None) -> AbortSignal:
        """A signal that is already aborted with ``reason``."""
        s = cls()
        s.abort(reason)
        return s


HeaderLike = SessionHeader | dict[str, Any]
EventLike = SessionEvent | dict[str, Any]


class SessionPersistence(ABC):
    """Durable home of session logs. Every method but ``locate`` is a coroutine."""

    @abstractmethod
    def locate(self, meta: HeaderLike) -> SessionLocation | None:
        """Where the session ``meta`` describes is stored, or None."""

    @property
    @abstractmethod
    def supports_raw_artifacts(self) -> bool:
        """Whether ``read_raw`` returns artifacts."""

    @abstractmethod
    async def read_raw(self, session_id: str, signal: AbortSignal | None = None) -> SessionRawArtifact | None:
        """The artifact's text, or None when the session is absent."""

    @abstractmethod
    async def create(self, meta: HeaderLike) -> None:
        """Reserve a new session with its header."""

    @abstractmethod
    async def append(self, session_id: str, events: Sequence[EventLike]) -> None:
        """Durably append a contiguous batch of events."""

    @abstractmethod
    async def load(self, session_id: str) -> SessionInspection:
        """The balanced session, committing a pending crash repair first."""

    @abstractmethod
    async def inspect(self, session_id: str, signal: AbortSignal | None = None) -> SessionInspection:
        """The session with in-memory crash closers, never writing."""

    @abstractmethod
    async def read_from(self, session_id: str, from_seq: int, signal: AbortSignal | None = None) -> ReadFromResult:
        """The stored events from ``from_seq`` on."""

    @abstractmethod
    async def list(self, signal: AbortSignal | None = None) -> builtins.list[SessionHeader]:
        """Headers of the stored sessions, in the backend's list order."""

    @abstractmethod
    async def list_snapshots(self, signal: AbortSignal | None = None) -> builtins.list[SessionPersistenceSnapshot]:
        """Headers with each session's opaque revision."""

    async def close(self) -> None:
        """Release the store (idempotent)."""
        return None
