"""``SqliteReader``: the read side of the SQLite backend's hooks (spec §8): the store's connection and
checks, reading a session whole, as a tail or from a seq, its readable prefix, and listing the store.

``storage.SqliteStorage`` adds the writes, repairs and backups on top.  Each hook is one transaction on
the store's single connection.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from persistence.artifact import SQLITE, ArtifactInfo, stat_artifact
from persistence.backend import NEVER_CANCELLED, CancelToken, StorageBackend, StoredLog, TornMarker
from persistence.errors import (
    SessionArgumentError,
    SessionPersistenceError,
    SessionStorageCorruptError,
)
from persistence.listing import BAD_ROW, SESSION, STATUS_CORRUPT, ListedEntry
from persistence.model.header import SessionHeader
from persistence.model.jsontext import is_nonneg_safe_integer
from persistence.model.repair import has_turn_start
from persistence.readable_prefix import PrefixStop, ReadablePrefix
from persistence.sqlite import extend, facts, fsprep
from persistence.sqlite.connection import Database
from persistence.sqlite.constants import (
    BACKEND_NAME,
    DEFAULT_BUSY_TIMEOUT_MS,
    JOURNAL_MODES,
    MAX_BUSY_TIMEOUT_MS,
    MAX_PACKED_ROW_MEMBERS,
    MEMORY_PATH,
    PACKED_TAGS,
    TAIL_PROBE_ROWS,
)
from persistence.sqlite.entries import listed_entries
from persistence.sqlite.errors import RowDecodeError, is_busy, wrap_sqlite
from persistence.sqlite.identity import revision_token
from persistence.sqlite.listing_cache import ListingCache
from persistence.sqlite.rows import (
    EVENT_COLUMNS,
    Row,
    packed_last_seq,
    readable_rows,
    scan_rows,
    validate_event_rows,
)
from persistence.sqlite.sessions import (
    SELECT_ALL_SESSIONS,
    SELECT_FIRST_SESSIONS,
    SELECT_REVISION,
    SELECT_SESSION,
    TINY_LISTING_ROWS,
    Listing,
    SessionRow,
    check_revision,
    empty_listing,
    exact_listing,
    lenient_meta,
    read_listing,
    row_id_text,
    session_from_row,
)
from persistence.values import SessionPersistenceSnapshot

T = TypeVar("T")

# A -wal beside the file up to this many bytes may be opened on the event loop: the first connection
# after a crash replays the whole log, so a bigger one (and a live writer's, which grows to about 4 MB
# between SQLite's checkpoints every 1000 pages) is opened on a worker thread instead.
INLINE_OPEN_MAX_WAL_BYTES = 1 << 20

SELECT_MAX_SEQ = "SELECT max(seq) FROM events WHERE session_id = ?"
SELECT_EVENTS = f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? ORDER BY seq"
SELECT_EVENTS_FROM = f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq >= ? ORDER BY seq"
SELECT_PACKED_PREDECESSORS = (
    f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq >= ? AND seq < ? "
    f"AND type IN ({', '.join('?' * len(PACKED_TAGS))}) AND ignorable = 0 ORDER BY seq"
)
SELECT_TAIL = f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT {TAIL_PROBE_ROWS}"


class SqliteStoreWarning(UserWarning):
    """A read-only store opened a file upstream (and a writable store) would refuse."""


def _check_config(journal_mode: Any, busy_timeout_ms: Any) -> None:
    if journal_mode not in JOURNAL_MODES:
        raise SessionArgumentError(f"journalMode must be one of {', '.join(JOURNAL_MODES)}")
    if not (is_nonneg_safe_integer(busy_timeout_ms) and busy_timeout_ms <= MAX_BUSY_TIMEOUT_MS):
        raise SessionArgumentError(f"busyTimeoutMs must be an integer between 0 and {MAX_BUSY_TIMEOUT_MS}")


class SqliteReader(StorageBackend):
    """The hooks over one schema-17 database file (or ``:memory:``)."""

    kind = "sqlite"
    name = BACKEND_NAME
    supports_raw_artifacts = False

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        journal_mode: str = "wal",
        pack_chunks: bool = True,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        read_only: bool = False,
    ) -> None:
        _check_config(journal_mode, busy_timeout_ms)
        raw = os.fspath(path)
        self.path = MEMORY_PATH if raw == MEMORY_PATH else fsprep.absolute_db_path(raw)
        self.read_only = bool(read_only)
        if self.read_only and self.path == MEMORY_PATH:
            raise SessionArgumentError("a :memory: store is private to its instance and cannot be opened read-only")
        self.pack_chunks = True if pack_chunks is None else bool(pack_chunks)
        self.warnings: list[str] = []
        # Phase (a) runs now; its failure is memoized and reported by every operation (spec §2).
        self._path_failure: BaseException | None = None
        if self.path != MEMORY_PATH:
            try:
                for message in fsprep.validate_path(self.path, read_only=self.read_only).warnings:
                    self._warn(message)
            except (OSError, SessionPersistenceError) as err:
                self._path_failure = err
        self.db = Database(
            self.path,
            journal_mode=journal_mode,
            busy_timeout_ms=int(busy_timeout_ms),
            read_only=self.read_only,
            on_warning=self._warn,
        )
        self._listings = ListingCache()

    @property
    def root_path(self) -> str:
        """The database file (``:memory:`` for a private in-memory store)."""
        return self.path

    def _warn(self, message: str) -> None:
        """Record (once) why upstream would refuse a file this read-only store opens anyway."""
        if message not in self.warnings:
            self.warnings.append(message)
            warnings.warn(f"{message} (opened read-only anyway)", SqliteStoreWarning, stacklevel=3)

    # ------------------------------------------------------------ plumbing

    def _connect(self, token: CancelToken) -> sqlite3.Connection:
        """The open connection; caller holds ``db.lock``. Checks the token before and after opening."""
        token.check()
        if self._path_failure is not None:
            raise self._path_failure
        conn = self.db.connection()
        token.check()
        return conn

    def _revision(self, incarnation: str, revision: int) -> str:
        identity = self.db.store_identity
        assert identity is not None
        return revision_token(identity, incarnation, revision)

    def _session(self, conn: sqlite3.Connection, session_id: str) -> SessionRow | None:
        rows = self.db.fetchall(conn, SELECT_SESSION, (session_id,))
        return session_from_row(rows[0]) if rows else None

    def _events(self, conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[Row]:
        rows = self.db.fetchall(conn, sql, params)
        validate_event_rows(rows)
        return rows

    def _span_from(self, conn: sqlite3.Connection, session_id: str, from_seq: int) -> tuple[list[Row], int]:
        """physicalSpanFrom (§8.1): rows from the packed row that covers ``from_seq``, or from ``from_seq``."""
        floor = max(0, from_seq - (MAX_PACKED_ROW_MEMBERS - 1))
        base = from_seq
        for row in self._events(conn, SELECT_PACKED_PREDECESSORS, (session_id, floor, from_seq, *PACKED_TAGS)):
            try:
                last = packed_last_seq(row[1], row[0], row[2], row[3], row[4], row[5])
            except RowDecodeError:
                base = min(base, row[0])  # fail closed: the scan will judge this row
                continue
            if last >= from_seq:
                base = min(base, row[0])
        return self._events(conn, SELECT_EVENTS_FROM, (session_id, base)), base

    # ------------------------------------------------------------ reads

    def locate(self, meta: dict[str, Any]) -> dict[str, str] | None:
        """None: one database, no per-session artifact."""
        return None

    def load_stored(self, session_id: str, token: CancelToken) -> StoredLog | None:
        """Every event row of the session, validated; rows from the first undecodable one are the torn tail."""
        with self.db.lock:
            self._connect(token)
            if self.db.pristine:
                return None
            with self.db.read() as conn:
                session = self._session(conn, session_id)
                if session is None:
                    return None
                rows = self._events(conn, SELECT_EVENTS, (session_id,))
        token.check()
        result = scan_rows(rows, 0)
        torn = None
        if result.torn_from is not None:
            # The rows a repair would delete, as this read saw them: describe_cut needs no second query.
            torn = TornMarker(result.torn_from, [], evidence=_rows_from(rows, result.torn_from))
        revision = self._revision(session.incarnation, session.revision)
        mark = extend.mark_of(self.db.store_identity, session.incarnation, rows, result.torn_from, len(result.preserved))
        return StoredLog(session.meta, result.preserved, revision, torn, tail_mark=mark)

    def load_after(
        self, session_id: str, mark: Any, token: CancelToken, *, since: str | None = None, whole_raw: bool = False
    ) -> StoredLog | None:
        """The rows after ``mark`` (``extend``), in one read transaction; None when the seam changed (the
        revision ``since`` need not be compared: the engine bumps it with every row it writes)."""
        if not isinstance(mark, extend.RowMark):
            return None
        with self.db.lock:
            self._connect(token)
            if self.db.pristine or self.db.store_identity != mark.identity:
                return None
            with self.db.read() as conn:
                session = self._session(conn, session_id)
                if session is None or session.incarnation != mark.incarnation:
                    return None
                rows = extend.rows_after(self.db, conn, session_id, mark)
        token.check()
        if rows is None:
            return None
        return extend.stored_after(session.meta, self._revision(session.incarnation, session.revision), rows, mark)

    def load_readable_prefix(self, session_id: str, token: CancelToken) -> ReadablePrefix | None:
        """The decodable rows before the first damaged one, leniently (``persistence.readable_prefix``);
        None when the session does not exist or its header row does not validate."""
        with self.db.lock:
            self._connect(token)
            if self.db.pristine:
                return None
            with self.db.read() as conn:
                heads = self.db.fetchall(conn, SELECT_SESSION, (session_id,))
                if not heads:
                    return None
                try:
                    meta = session_from_row(heads[0]).meta
                except (SessionPersistenceError, ValueError, TypeError):
                    # A header row that fails validation still names the session (title, cwd): as written.
                    meta = lenient_meta(heads[0])
                rows = self.db.fetchall(conn, SELECT_EVENTS, (session_id,))
        token.check()
        events, stop = readable_rows(rows)
        return ReadablePrefix(meta, events, None if stop is None else PrefixStop(*stop))

    def load_suffix(self, session_id: str, from_seq: int, token: CancelToken) -> StoredLog | None:
        """loadStoredFrom: seek, validate only the returned span, ignore a torn tail (§8)."""
        with self.db.lock:
            self._connect(token)
            if self.db.pristine:
                return None
            with self.db.read() as conn:
                session = self._session(conn, session_id)
                if session is None:
                    return None
                span, base = self._span_from(conn, session_id, from_seq)
        token.check()
        preserved = scan_rows(span, base).preserved
        events = preserved[from_seq - base :] if from_seq > base else preserved
        revision = self._revision(session.incarnation, session.revision)
        return StoredLog(session.meta, events, revision, None, base_seq=from_seq)

    def load_tail(self, session_id: str, min_events: int, token: CancelToken) -> StoredLog | None:
        """Seek to the newest rows (growing the span until it holds a ``turn/start``)."""
        rows = self._query_session(SELECT_MAX_SEQ, session_id, token)
        top = rows[0][0] if rows else None
        if not isinstance(top, int):
            return self.load_stored(session_id, token)
        want = min_events
        while True:
            start = max(0, top + 1 - want)
            stored = self.load_suffix(session_id, start, token)
            if stored is None or start == 0 or has_turn_start(stored.events):
                return stored
            want *= 4

    def _query_session(self, sql: str, session_id: str, token: CancelToken) -> list[Any] | None:
        """Rows of one per-session query; None for a store that does not exist yet."""
        with self.db.lock:
            conn = self._connect(token)
            if self.db.pristine:
                return None
            try:
                return self.db.fetchall(conn, sql, (session_id,))
            except sqlite3.Error as err:
                raise wrap_sqlite(err) from err

    def read_stored_revision(self, session_id: str, token: CancelToken) -> str | None:
        """The row's incarnation and revision as one token (None when the session has no row)."""
        rows = self._query_session(SELECT_REVISION, session_id, token)
        if not rows:
            return None
        incarnation, revision = rows[0]
        check_revision(incarnation, revision)
        return self._revision(incarnation, revision)

    def _list(self, token: CancelToken) -> list[SessionRow]:
        with self.db.lock:
            conn = self._connect(token)
            if self.db.pristine:
                return []
            try:
                rows = self.db.fetchall(conn, SELECT_ALL_SESSIONS)
            except sqlite3.Error as err:
                raise wrap_sqlite(err) from err
        token.check()
        return [session_from_row(r) for r in rows]

    def list_headers(self, token: CancelToken) -> list[dict[str, Any]]:
        """Headers of every session row, in insertion order (one bad row fails them all, as upstream)."""
        return [s.meta for s in self._list(token)]

    def list_entries(self, token: CancelToken) -> list[ListedEntry]:
        """Every row of ``sessions`` in list order, a row that fails validation as its own ``problem``.

        ``list()`` stays all-or-nothing as upstream's is (§13 Q7: one relative ``cwd`` hides every
        session); ``verify`` and the window use this so one bad row is one bad row.  A store-level
        failure (not a database, wrong schema, I/O) still raises: that is a bad store, shown as such.
        When every row validates they are the listing's, cached and all (``entries``).
        """
        try:
            listing = self._listing(token, None)
        except (SessionStorageCorruptError, TypeError, ValueError, OverflowError):
            listing = None  # a row fails: each row is judged on its own below
        if listing is not None:
            return listed_entries(self._listings.snapshots(listing, self.db.store_identity))
        with self.db.lock:
            conn = self._connect(token)
            if self.db.pristine:
                return []
            try:
                rows = self.db.fetchall(conn, SELECT_ALL_SESSIONS)
            except sqlite3.Error as err:
                raise wrap_sqlite(err) from err
        token.check()
        out = []
        for r in rows:
            try:
                s = session_from_row(r)
                revision = self._revision(s.incarnation, s.revision)
            except (SessionPersistenceError, TypeError, ValueError, OverflowError) as err:
                out.append(ListedEntry(BAD_ROW, row_id_text(r), problem=str(err), status=STATUS_CORRUPT, detail=str(err)))
                continue
            out.append(ListedEntry(SESSION, s.meta["id"], s.meta, revision))
        return out

    def artifact(self, session_id: str) -> ArtifactInfo | None:
        """The database file with this session's event-data bytes (None for ``:memory:``)."""
        if self.path == MEMORY_PATH:
            return None  # an in-memory store has no artifact to guard or back up
        sizes = facts.session_sizes(self.path, [session_id])
        size = sizes.get(session_id)
        return stat_artifact(SQLITE, self.path, None if size is None else size[0])

    def session_sizes(self, session_ids: list[str] | None, token: CancelToken) -> dict[str, tuple[int, int | None]]:
        """session id -> (bytes of its event data, its newest event time in ms), on a read-only connection."""
        if self.path == MEMORY_PATH:
            return {}
        token.check()
        return facts.session_sizes(self.path, session_ids)

    def integrity_check(self, token: CancelToken) -> str | None:
        """``PRAGMA quick_check`` on a read-only connection: None when ok (or busy), else the findings."""
        if self.path == MEMORY_PATH:
            return None
        token.check()
        return facts.quick_check(self.path)

    def list_snapshots(self, token: CancelToken) -> list[tuple[dict[str, Any], str]]:
        """(header, revision token) of every session row, in insertion order."""
        return [(s.meta, self._revision(s.incarnation, s.revision)) for s in self._list(token)]

    def _listing(self, token: CancelToken, at_most: int | None) -> Listing | None:
        """Every session row, validated (``read_listing``); with ``at_most``, None for a store with more rows."""
        with self.db.lock:
            conn = self._connect(token)
            if self.db.pristine:
                return empty_listing()
            listing: Listing | None
            if at_most is None:
                with self.db.read() as snapshot:  # one snapshot: read_listing asks more than one query
                    fetch = partial(self.db.fetchall, snapshot)  # reused while unchanged (listing_cache)
                    listing = self._listings.read(snapshot, self.db.commits, lambda: read_listing(fetch))
            else:
                try:  # one statement is one snapshot; a reusable listing of any size is as cheap as a tiny one
                    listing = self._listings.unchanged(conn, self.db.commits)
                    if listing is None:
                        rows = self.db.fetchall(conn, SELECT_FIRST_SESSIONS, (at_most + 1,))
                        listing = exact_listing(rows) if len(rows) <= at_most else None
                except sqlite3.Error as err:
                    raise wrap_sqlite(err) from err
        token.check()
        return listing

    def list_header_values(self, token: CancelToken, *, at_most: int | None = None) -> list[SessionHeader] | None:
        """``list()``: the headers of ``list_headers`` (same values, same error), built straight from the rows.

        A row validated here holds only integers, text and NULL, so none is unrepresentable: the
        listing's skip rule (``SessionHeader.from_listing``) never applies to SQLite.  With ``at_most``:
        None when the store has more rows than that (nothing else is read).
        """
        listing = self._listing(token, at_most)
        return None if listing is None else self._listings.headers(listing)

    def list_snapshot_values(self, token: CancelToken, *, at_most: int | None = None) -> list[SessionPersistenceSnapshot] | None:
        """``listSnapshots()``: ``list_snapshots`` as values (same headers, revisions and error); ``at_most`` as above."""
        listing = self._listing(token, at_most)
        return None if listing is None else self._listings.snapshots(listing, self.db.store_identity)

    def _opens_cheaply(self) -> bool:
        """Whether opening this store reads a few pages and writes nothing (judged by two stats, before it).

        Not when the file is missing or empty (the open initializes it: a durable commit, an fsync) nor
        when a ``-wal`` larger than ``INLINE_OPEN_MAX_WAL_BYTES`` is beside it (a crashed writer's log
        is replayed by the first connection, reading all of it).
        """
        if self.path == MEMORY_PATH:
            return True
        try:
            if os.stat(self.path).st_size == 0:
                return False
        except OSError:
            return False
        try:
            return os.stat(self.path + "-wal").st_size <= INLINE_OPEN_MAX_WAL_BYTES
        except FileNotFoundError:
            return True
        except OSError:
            return False

    def run_if_tiny(self, hook: Callable[..., T | None]) -> T | None:
        """Run a listing hook (``list_header_values``/``list_snapshot_values``) on the calling thread when
        that cannot stall it; None: it did not run (run it on a worker).

        Tiny means: no other thread is using this store's connection, the connection is open or opens
        cheaply (``_opens_cheaply``), it opens and reads without waiting on another connection's lock
        (``Database.without_waiting``), and ``sessions`` holds at most ``TINY_LISTING_ROWS`` rows or this
        instance's last full listing still holds (``ListingCache.unchanged``: one PRAGMA, any size).  The
        caller (the event loop) then skips the hop to a worker thread, which costs more than a one-session
        listing itself.  Any other failure is the hook's own, raised as a worker would raise it.  Nothing
        else runs on the caller's thread meanwhile, so nothing can cancel the hook: its token never is.
        """
        if not self.db.lock.acquire(blocking=False):
            return None  # a worker holds the connection: waiting for it would block the caller
        try:
            if self._path_failure is not None:
                raise self._path_failure
            if not self.db.opened and not self._opens_cheaply():
                return None
            with self.db.without_waiting() as conn:
                if conn is None:
                    return None
                try:
                    return hook(NEVER_CANCELLED, at_most=TINY_LISTING_ROWS)
                except SessionPersistenceError as err:
                    if is_busy(err):
                        return None  # another connection held a lock: the worker waits for it
                    raise
        finally:
            self.db.lock.release()

    def close(self) -> None:
        """Close the store's connection."""
        self.db.close()
        self._listings.clear()


def _rows_from(rows: list[Row], seq: int) -> list[Row]:
    """The rows at and after ``seq`` (``rows`` are ordered by seq, an INTEGER NOT NULL column)."""
    for i, row in enumerate(rows):
        if row[0] >= seq:
            return rows[i:]
    return []
