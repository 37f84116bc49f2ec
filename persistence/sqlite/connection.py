"""The one SQLite connection of a store: lazy open sequence, memoized failure, transactions (spec §2-§5, §8).

Upstream runs every transaction synchronously on one connection; hooks here run on a
thread pool, so one lock is held from BEGIN to COMMIT to keep transactions from
interleaving on the shared connection (§10, §12.1).
"""

from __future__ import annotations

import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from persistence.errors import SessionPersistenceError, SessionRollbackError
from persistence.sqlite import fsprep, schema
from persistence.sqlite.constants import BACKEND_NAME, JOURNAL_RETRY_INTERVAL_S, MEMORY_PATH
from persistence.sqlite.errors import SessionReadOnlyError, is_busy, wrap_sqlite
from persistence.sqlite.identity import file_store_identity, memory_store_identity


def _lossy_text(raw: bytes) -> str:
    # node:sqlite decodes TEXT leniently (U+FFFD); Python's default decoder raises instead.
    return raw.decode("utf-8", "replace")


def fetchall_lenient(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one query; a TEXT cell that is not UTF-8 is read again leniently, as node:sqlite reads it."""
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as err:
        if "decode" not in str(err).lower():
            raise
    conn.text_factory = _lossy_text
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.text_factory = str


class Database:
    """The store's one SQLite connection: opened lazily, validated, guarded by one lock."""

    def __init__(
        self, path: str, *, journal_mode: str, busy_timeout_ms: int, read_only: bool, on_warning: Callable[[str], None]
    ) -> None:
        self.path = path
        self.memory = path == MEMORY_PATH
        self.journal_mode = journal_mode
        self.busy_timeout_ms = busy_timeout_ms
        self.read_only = read_only
        self._on_warning = on_warning
        self.store_identity: str | None = None
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._failure: BaseException | None = None
        self._pristine = False
        self._closed = False
        # COMMITs this connection attempted: PRAGMA data_version moves for every other connection's
        # commits but never for its own, so a cache keyed by both (``listing_cache``) sees every change.
        self.commits = 0

    @property
    def lock(self) -> threading.RLock:
        """The lock every use of the connection holds."""
        return self._lock

    # ------------------------------------------------------------ open

    def _connect(self, busy_timeout_ms: int | None = None) -> sqlite3.Connection:
        timeout = (self.busy_timeout_ms if busy_timeout_ms is None else busy_timeout_ms) / 1000
        if self.read_only:
            # mode=ro honours a live -wal/-shm; "immutable" would not, and would show stale data.
            target = "file:" + urllib.parse.quote(self.path) + "?mode=ro"
            return sqlite3.connect(target, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
        return sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)

    def _retained(self, what: str, got: Any, want: str) -> SessionPersistenceError:
        return SessionPersistenceError(f'session database at "{self.path}" retained {what}={got}, expected {want}')

    def _open(self, busy_timeout_ms: int) -> sqlite3.Connection:
        deadline = time.monotonic() + busy_timeout_ms / 1000
        if not self.memory:
            for message in fsprep.prepare_file(self.path, read_only=self.read_only).warnings:
                self._on_warning(message)
        conn = self._connect() if busy_timeout_ms == self.busy_timeout_ms else self._connect(busy_timeout_ms)
        try:
            conn.execute("PRAGMA trusted_schema = OFF")
            value = conn.execute("PRAGMA trusted_schema").fetchone()[0]
            if value != 0:
                # A crafted file's functions, views and triggers must not run trusted.
                raise self._retained("trusted_schema", value, "0")
            conn.execute("PRAGMA mmap_size = 0")
            if not self.memory:
                row = conn.execute("PRAGMA mmap_size").fetchone()
                if row is None or row[0] != 0:
                    # Memory-mapped reads of an untrusted or truncated file can crash the process.
                    raise self._retained("mmap_size", None if row is None else row[0], "0")
            # Per connection and a no-op inside a transaction: must precede the first BEGIN.
            conn.execute("PRAGMA foreign_keys = ON")
            initialized = self._validate(conn)
            if not self.read_only:
                self._set_journal_mode(conn, deadline)
            conn.execute("PRAGMA synchronous = FULL")
            value = conn.execute("PRAGMA synchronous").fetchone()[0]
            if value != 2:
                # append() resolves only once durable; NORMAL+WAL could lose the last commit on power loss.
                raise self._retained("synchronous", value, "FULL (2)")
            self._pristine = not initialized
            if initialized:
                self._read_identity(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _validate(self, conn: sqlite3.Connection) -> bool:
        conn.execute("BEGIN" if self.read_only else "BEGIN IMMEDIATE")
        try:
            ok = schema.validate_ownership(conn, self.path, allow_init=not self.read_only)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # upstream ignores a failed rollback here and rethrows the cause
            raise
        return ok

    def _read_identity(self, conn: sqlite3.Connection) -> None:
        store_id = schema.read_store_id(conn, self.path)
        if self.memory:
            self.store_identity = memory_store_identity(store_id)
        else:
            self.store_identity = file_store_identity(self.path, store_id)

    def _set_journal_mode(self, conn: sqlite3.Connection, deadline: float) -> None:
        """§3 step 5: a journal switch can report BUSY without consulting the busy handler, so retry by hand."""
        while True:
            try:
                row = conn.execute(f"PRAGMA journal_mode = {self.journal_mode.upper()}").fetchone()
                break
            except sqlite3.OperationalError as err:
                if not is_busy(err):
                    raise
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise
                time.sleep(min(JOURNAL_RETRY_INTERVAL_S, remaining))
                if time.monotonic() >= deadline:
                    raise
        got = str(row[0]).lower() if row is not None else None
        want = "memory" if self.memory else self.journal_mode
        if got != want:
            raise SessionPersistenceError(f'session database at "{self.path}" selected journal mode {got}, expected {want}')

    def connection(self) -> sqlite3.Connection:
        """The open connection (opening it on first use). Caller holds ``lock``."""
        if self._closed:
            raise SessionPersistenceError(f"{BACKEND_NAME} store is closed")
        if self._failure is not None:
            raise self._failure  # a failed open stays failed for the life of the instance (§2)
        if self._conn is None:
            self._conn = self._first_open(self.busy_timeout_ms)
        elif self._pristine:
            self._recheck_pristine(self._conn)
        return self._conn

    def _first_open(self, busy_timeout_ms: int, *, busy_is_final: bool = True) -> sqlite3.Connection:
        """``_open`` with its failure memoized (§2); with ``busy_is_final=False`` SQLITE_BUSY is raised as it
        came and not memoized (another connection held a lock: the caller may open again, waiting)."""
        try:
            return self._open(busy_timeout_ms)
        except sqlite3.Error as err:
            if not busy_is_final and is_busy(err):
                raise
            self._failure = wrap_sqlite(err)
            raise self._failure from err
        except BaseException as err:
            self._failure = err
            raise

    @contextmanager
    def without_waiting(self) -> Iterator[sqlite3.Connection | None]:
        """The connection for a block that must never wait on another connection's lock; caller holds ``lock``.

        Opened if needed, and used for the block, with a zero busy timeout: where a lock held elsewhere
        would make a statement wait up to ``busy_timeout_ms`` it fails at once with SQLITE_BUSY instead.
        None when even the open would have waited (that failure is not memoized: the caller does its work
        the waiting way) and while a read-only store still looks at an empty file (its re-check reads).
        Any other open failure is memoized and raised exactly as ``connection`` does.  The configured
        busy timeout is back in force when the block ends.
        """
        if self._closed or self._failure is not None:
            self.connection()  # raises what every other use raises
        conn = self._conn
        if conn is None:
            try:
                conn = self._conn = self._first_open(0, busy_is_final=False)
            except sqlite3.Error:  # busy (any other failure was memoized and raised wrapped)
                conn = None
        elif self._pristine:
            conn = None
        else:
            conn.execute("PRAGMA busy_timeout = 0")
        if conn is None:
            yield None
            return
        try:
            yield conn
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")

    def _recheck_pristine(self, conn: sqlite3.Connection) -> None:
        """Read-only only: a file that was empty at open may have been initialized by its writer since."""
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) == 0:
            return
        try:
            self._validate(conn)
            self._read_identity(conn)
        except sqlite3.Error as err:
            self._failure = wrap_sqlite(err)
            raise self._failure from err
        except BaseException as err:
            self._failure = err
            raise
        self._pristine = False

    @property
    def opened(self) -> bool:
        """Whether the connection is open (a first use has opened it and it is not closed)."""
        return self._conn is not None

    @property
    def pristine(self) -> bool:
        """True while a read-only store looks at a file no writer has initialized yet (it is empty)."""
        return self._pristine

    # ------------------------------------------------------------ transactions

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A deferred transaction: one consistent snapshot of a session row and its events."""
        with self._lock:
            conn = self.connection()
            try:
                conn.execute("BEGIN")
                yield conn
                conn.execute("COMMIT")
            except sqlite3.Error as err:
                self._rollback(conn, "read", err)
                raise wrap_sqlite(err) from err
            except BaseException as err:
                self._rollback(conn, "read", err)
                raise

    @contextmanager
    def write(self, operation: str) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT, re-validating the file first (§4.5, §8)."""
        if self.read_only:
            raise SessionReadOnlyError(f'session database "{self.path}" is open read-only; {operation} needs a writable store')
        with self._lock:
            conn = self.connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
                schema.revalidate_for_mutation(conn, self.path)
                yield conn
                self.commits += 1  # before: a COMMIT that fails may still have changed the file
                conn.execute("COMMIT")
            except sqlite3.Error as err:
                self._rollback(conn, operation, err)
                raise wrap_sqlite(err) from err
            except BaseException as err:
                self._rollback(conn, operation, err)
                raise

    def _rollback(self, conn: sqlite3.Connection, operation: str, cause: BaseException) -> None:
        if not conn.in_transaction:
            return
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as rollback_err:
            raise SessionRollbackError(
                f"{BACKEND_NAME} {operation} failed and rollback also failed", [cause, rollback_err]
            ) from cause

    def fetchall(self, conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one query on the store's connection (``fetchall_lenient``)."""
        return fetchall_lenient(conn, sql, params)

    def close(self) -> None:
        """Close the connection (idempotent; later uses raise)."""
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()
