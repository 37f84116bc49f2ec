"""SessionScope's persistence engine: read and write coding-agent session logs byte-compatibly
with the upstream harness.  No Qt anywhere in this package."""

from persistence.backend import CancelToken, StorageBackend
from persistence.coordinator import CoordinatedPersistence, SessionDiagnosis, SessionPreparation
from persistence.errors import (
    SessionAbortedError,
    SessionArgumentError,
    SessionConflictError,
    SessionFormatUnsupportedError,
    SessionLayoutError,
    SessionNotFoundError,
    SessionPersistenceCorruptionError,
    SessionPersistenceError,
    SessionReadOnlyError,
    SessionRollbackError,
    SessionStorageCorruptError,
    SessionUnreadableError,
    SessionValidationError,
)
from persistence.jsonl.backend import JsonlSessionPersistence
from persistence.model.event import EventLog, SessionEvent
from persistence.model.header import SESSION_FORMAT_VERSION, SessionHeader
from persistence.open import open_store
from persistence.service import AbortSignal, SessionPersistence
from persistence.session import Session
from persistence.store import SessionForkError, SessionStore
from persistence.values import (
    ReadFromResult,
    SessionInspection,
    SessionLocation,
    SessionPersistenceSnapshot,
    SessionRawArtifact,
)
from persistence.write_behind import SessionWriteBehind

__all__ = [
    "SESSION_FORMAT_VERSION",
    "AbortSignal",
    "CancelToken",
    "CoordinatedPersistence",
    "EventLog",
    "JsonlSessionPersistence",
    "ReadFromResult",
    "Session",
    "SessionAbortedError",
    "SessionArgumentError",
    "SessionConflictError",
    "SessionDiagnosis",
    "SessionEvent",
    "SessionForkError",
    "SessionFormatUnsupportedError",
    "SessionHeader",
    "SessionInspection",
    "SessionLayoutError",
    "SessionLocation",
    "SessionNotFoundError",
    "SessionPersistence",
    "SessionPersistenceCorruptionError",
    "SessionPersistenceError",
    "SessionPersistenceSnapshot",
    "SessionPreparation",
    "SessionRawArtifact",
    "SessionReadOnlyError",
    "SessionRollbackError",
    "SessionStorageCorruptError",
    "SessionStore",
    "SessionUnreadableError",
    "SessionValidationError",
    "SessionWriteBehind",
    "StorageBackend",
    "open_store",
]
