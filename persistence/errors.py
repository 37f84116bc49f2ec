"""Typed errors of the persistence engine.

Upstream raises plain ``Error`` for backend-level damage and only wraps coordinator
validation in ``SessionPersistenceCorruptionError``.  We keep the messages verbatim
(tests and users grep for them) but give every failure a class below
``SessionPersistenceError`` so callers can catch the engine's errors in one place.
``upstream_class`` names the JS class upstream would have thrown, which is what the
conformance fixtures record.
"""

from __future__ import annotations

from typing import Any


class SessionPersistenceError(Exception):
    """Base of every error the engine raises on purpose."""

    upstream_class = "Error"

    def __init__(self, message: str, *, location: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return self.message

    def js_string(self) -> str:
        """What JS ``String(error)`` prints (used inside wrapped messages)."""
        return f"{self.upstream_class}: {self.message}"


class SessionPersistenceCorruptionError(SessionPersistenceError):
    """A stored log was read but failed validation (coordinator level)."""

    upstream_class = "SessionPersistenceCorruptionError"


class SessionFormatUnsupportedError(SessionPersistenceError):
    """The log uses a format version or event vocabulary this build must not interpret."""

    upstream_class = "SessionFormatUnsupportedError"


class SessionStorageCorruptError(SessionPersistenceError):
    """Backend-level damage: unreadable header, bad frame, seq gap before a turn/end, identity mismatch."""


class SessionLayoutError(SessionPersistenceError):
    """The store's layout is foreign: flat files, mixed encodings, duplicate ids, wrong schema."""


class SessionUnreadableError(SessionPersistenceError):
    """The OS refuses a folder or transcript the operation needs (e.g. permission denied).

    Not a layout error: the layout may be fine, this process just may not read it."""


class SessionNotFoundError(SessionPersistenceError):
    """No session with that id exists in the store."""


class SessionConflictError(SessionPersistenceError):
    """The operation conflicts with existing state (already exists, stale writer, seq mismatch, live)."""


class SessionValidationError(SessionPersistenceError):
    """An event or header violates the session model (used inside wrapped corruption messages)."""


class SessionReadOnlyError(SessionPersistenceError):
    """A writing operation on a store opened read-only (a viewer browsing another process's store)."""


class SessionArgumentError(SessionPersistenceError, TypeError):
    """Bad argument (upstream ``TypeError``); still catchable as ``TypeError``."""

    upstream_class = "TypeError"


class SessionDataNotLosslessError(SessionArgumentError):
    """A live ``Session`` refused data that does not survive a JSON round trip (``-0``, ``NaN``, a set...).

    Upstream's ``Session`` throws a plain ``Error`` here, unlike the persistence coordinator's
    ``TypeError`` for the same data, so this reports ``Error``; Python callers still catch it as the
    argument error (and ``TypeError``) it is.
    """

    upstream_class = "Error"


class SessionAbortedError(SessionPersistenceError):
    """The operation was cancelled through an ``AbortSignal``."""

    upstream_class = "AbortError"

    def __init__(self, reason: Any = None) -> None:
        super().__init__("the operation was aborted" if reason is None else str(reason))
        self.reason = reason


class SessionRollbackError(SessionPersistenceError):
    """An append failed and restoring the previous file length failed too (upstream AggregateError)."""

    upstream_class = "AggregateError"

    def __init__(self, message: str, errors: list[BaseException]) -> None:
        super().__init__(message)
        self.errors = errors


def upstream_class_of(error: BaseException) -> str:
    """The JS class name upstream would report for ``error``."""
    if isinstance(error, SessionPersistenceError):
        return error.upstream_class
    if isinstance(error, TypeError):
        return "TypeError"
    return "Error"


def as_engine_error(error: BaseException) -> SessionPersistenceError:
    """``error`` as one of the engine's errors with a clean one-line message (engine errors unchanged).

    Callers that print failures (the command line, the search and export commands) show the engine's
    class, never a bare ``TypeError`` or a codec's text: a codec error names the bytes and where they
    are; a ``TypeError`` is an argument error (upstream's ``TypeError``); anything else keeps its text
    (an OS error says what the OS said, and the path).
    """
    if isinstance(error, SessionPersistenceError):
        return error
    if isinstance(error, UnicodeDecodeError):
        bad = " ".join(f"0x{b:02x}" for b in bytes(error.object[error.start : error.end][:4]))
        return SessionStorageCorruptError(f"bytes that are not valid UTF-8 ({bad} at byte {error.start})")
    if isinstance(error, UnicodeError):
        return SessionStorageCorruptError("text that cannot be encoded (a character outside the encoding)")
    if isinstance(error, TypeError):
        return SessionArgumentError(str(error) or type(error).__name__)
    return SessionPersistenceError(str(error) or type(error).__name__)


def error_fields(error: BaseException) -> dict[str, str]:
    """The typed form of any failure, ``{"class", "message"}`` (upstream's shape): the JS class upstream
    would throw for the engine error ``error`` becomes (``as_engine_error``) and its one-line message."""
    clean = as_engine_error(error)
    message = " ".join((str(clean) or type(clean).__name__).splitlines())
    return {"class": upstream_class_of(clean), "message": message}


def js_error_string(error: BaseException) -> str:
    """JS ``String(error)`` of an engine or OS error, as upstream's messages embed it."""
    if isinstance(error, SessionPersistenceError):
        return error.js_string()
    if isinstance(error, OSError):
        return f"Error: {error}"
    return f"{upstream_class_of(error)}: {error}"


def version_refusal_message(id_text: str, version: Any) -> str:
    """Upstream's refusal text for a log whose format version this harness does not read."""
    from persistence.model.jsontext import js_string

    v = js_string(version)
    if isinstance(version, (int, float)) and version > 0:
        return (
            f'session "{id_text}" uses log format v{v}, but this harness reads only v0: '
            "the log was written by a newer harness \u2014 upgrade the harness to open it"
        )
    return f'session "{id_text}" uses log format v{v}, older than the supported v0, and this build ships no upgrade path for it'


def not_found(session_id: str) -> SessionNotFoundError:
    """The ``SessionNotFoundError`` upstream raises for an absent session id."""
    return SessionNotFoundError(f'session "{session_id}" not found')
