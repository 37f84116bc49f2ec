"""Error types specific to the SQLite store.

They all sit below the engine's ``SessionPersistenceError`` hierarchy so callers keep one
``except``; the classes only add what SQLite needs (the sqlite error code, JS's
``RangeError`` name for out-of-range integers, the read-only refusal).
"""

from __future__ import annotations

import sqlite3

from persistence.errors import (  # noqa: F401 - SessionReadOnlyError is re-exported for the backend modules
    SessionConflictError,
    SessionPersistenceError,
    SessionReadOnlyError,
    SessionStorageCorruptError,
)

SQLITE_BUSY = 5


class SqliteStoreError(SessionPersistenceError):
    """An error reported by SQLite itself (message kept verbatim, e.g. ``database is locked``)."""

    def __init__(self, message: str, *, sqlite_errorcode: int | None = None) -> None:
        super().__init__(message)
        self.sqlite_errorcode = sqlite_errorcode


class SqliteBusyError(SqliteStoreError, SessionConflictError):
    """The write lock was not obtained within ``busy_timeout_ms``."""


class JsRangeError(SessionStorageCorruptError):
    """An INTEGER cell outside +-(2**53-1): node:sqlite refuses to fetch it, so do we (spec §12.7)."""

    upstream_class = "RangeError"


class RowDecodeError(ValueError):
    """A physical row that does not decode; scanRows turns it into a torn tail or a corruption."""


def wrap_sqlite(err: sqlite3.Error) -> SqliteStoreError:
    """The engine error for a ``sqlite3.Error`` (busy as ``SqliteBusyError``)."""
    code = getattr(err, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) == SQLITE_BUSY:
        return SqliteBusyError(str(err), sqlite_errorcode=code)
    return SqliteStoreError(str(err), sqlite_errorcode=code)


def is_busy(err: BaseException) -> bool:
    """Whether ``err`` is SQLite's SQLITE_BUSY (another connection holds the lock)."""
    code = getattr(err, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) == SQLITE_BUSY


def range_error(value: int) -> JsRangeError:
    """Upstream's error for an integer a JS number cannot hold."""
    return JsRangeError(f"Value is too large to be represented as a JavaScript number: {value}")
