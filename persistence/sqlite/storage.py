"""``SqliteStorage``: the StorageBackend hooks over one schema-17 database (spec §8): the reads of
``reader.SqliteReader`` plus appends, repair commits and backups.

Each hook is one transaction on the store's single connection.  Batches are encoded
(packed, serialized, compressed) before the write lock is taken so the lock is held
only for the tail check and the inserts.
"""

from __future__ import annotations

import os
import re
import sqlite3
import urllib.parse
import uuid
from typing import Any

from persistence.backend import CancelToken, CutFacts, StoredLog, TornMarker
from persistence.errors import (
    SessionConflictError,
    SessionStorageCorruptError,
)
from persistence.lost import LostRecord
from persistence.sqlite.constants import (
    MEMORY_PATH,
)
from persistence.sqlite.errors import RowDecodeError
from persistence.sqlite.packing import EventRow, encode_batch, scalar_row
from persistence.sqlite.reader import SELECT_EVENTS, SELECT_EVENTS_FROM, SELECT_TAIL, SqliteReader, SqliteStoreWarning
from persistence.sqlite.rows import (
    EVENT_COLUMNS,
    decode_any_row,
    scan_rows,
)
from persistence.sqlite.sessions import (
    BUMP_REVISION,
    UPSERT_SESSION,
    upsert_params,
)

INSERT_EVENT = (
    "INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op, ignorable) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
DELETE_FROM = "DELETE FROM events WHERE session_id = ? AND seq >= ?"


class SqliteStorage(SqliteReader):
    """The SQLite hooks: reads (``SqliteReader``), appends, repair commits and backups."""

    # ------------------------------------------------------------ writes

    def _stored_next_seq(self, conn: sqlite3.Connection, session_id: str) -> int:
        """Tail probe (§8.2 step 4): decode only the last rows (and a packed row covering them)."""
        probe = self._events(conn, SELECT_TAIL, (session_id,))
        if not probe:
            return 0
        probe.reverse()
        span, _base = self._span_from(conn, session_id, probe[0][0])
        result = scan_rows(span, span[0][0])
        if result.torn_from is not None:
            raise SessionStorageCorruptError(f"session {session_id} has an invalid physical tail at seq {result.torn_from}")
        return int(result.preserved[-1]["seq"]) + 1

    def _insert(self, conn: sqlite3.Connection, session_id: str, rows: list[EventRow]) -> None:
        conn.executemany(INSERT_EVENT, [(session_id, *r) for r in rows])

    def _bump(self, conn: sqlite3.Connection, session_id: str) -> None:
        if conn.execute(BUMP_REVISION, (session_id,)).rowcount != 1:
            raise SessionConflictError(f"session {session_id} metadata row is missing")

    def append_batch(
        self,
        meta: dict[str, Any],
        events: list[dict[str, Any]],
        materialized: bool,
        token: CancelToken,
        *,
        expected_next_seq: int,
    ) -> None:
        """One transaction: check the stored tail, upsert the header when new, insert the rows, bump the revision."""
        session_id = meta["id"]
        with self.db.lock:
            self._connect(token)
        if not events:
            return
        rows = encode_batch(events, pack=self.pack_chunks)
        token.check()
        with self.db.write("appendBatch") as conn:
            token.check()  # the lock wait may have been long; nothing is written yet
            # The stored tail, not ``expected_next_seq`` (this instance's cursor), is the authority:
            # that is what rejects a stale writer in another process or connection (§8.2 step 5).
            expected = self._stored_next_seq(conn, session_id)
            first = events[0].get("seq")
            if first != expected:
                raise SessionConflictError(f"session {session_id} append starts at seq {first}, stored next seq is {expected}")
            if not materialized:
                conn.execute(UPSERT_SESSION, upsert_params(meta, str(uuid.uuid4())))
            self._insert(conn, session_id, rows)
            self._bump(conn, session_id)

    def describe_cut(self, session_id: str, torn: TornMarker, next_seq: int, token: CancelToken) -> CutFacts:
        """Rows a repair would delete and, among them, later rows that still decode (intact data)."""
        if isinstance(torn.evidence, list):
            rows = torn.evidence  # what the read that found the damage saw
        else:
            with self.db.lock:
                conn = self._connect(token)
                rows = self.db.fetchall(conn, SELECT_EVENTS_FROM, (session_id, int(torn.truncate_to)))
        intact, first = 0, None
        lost: list[LostRecord] = []
        for i, row in enumerate(rows):  # the first cut row is the damaged one
            try:
                events = decode_any_row(row)
            except RowDecodeError:
                lost.append(
                    LostRecord(row[0] if type(row[0]) is int else None, row[1] if isinstance(row[1], str) else None, None, False)
                )
                continue
            lost.extend(LostRecord(e.get("seq"), e.get("type"), e, True) for e in events)
            if i and type(row[0]) is int and row[0] >= next_seq:
                intact += 1
                first = row[0] if first is None else first
        return CutFacts(cut_rows=len(rows), intact_records=intact, first_intact_seq=first, lost=tuple(lost))

    def backup_candidates(self, token: CancelToken) -> list[tuple[str, str]]:
        """(session id, backup path) for each session of each ``<db>.bak-<stamp>`` backup database."""
        if self.path == MEMORY_PATH:
            return []
        folder, name = os.path.split(self.path)
        pattern = re.compile(re.escape(name) + r"\.bak-\d{8}T\d{6}Z(?:-\d+)?$")
        try:
            names = sorted(n for n in os.listdir(folder or ".") if pattern.match(n))
        except OSError:
            return []
        out: list[tuple[str, str]] = []
        for n in names:
            token.check()
            path = os.path.join(folder, n)
            uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
            try:
                con = sqlite3.connect(uri, uri=True)
                try:
                    ids = [r[0] for r in con.execute("SELECT id FROM sessions ORDER BY id")]
                finally:
                    con.close()
            except sqlite3.Error:
                continue
            out.extend((sid, path) for sid in ids if isinstance(sid, str))
        return out

    def read_backup(self, session_id: str, backup_path: str, token: CancelToken) -> StoredLog | None:
        """The session as a backup database (made with the online backup API) holds it; read-only."""
        twin = SqliteStorage(backup_path, read_only=True)
        try:
            return twin.load_stored(session_id, token)
        finally:
            twin.close()

    def restore_backup(self, session_id: str, backup_path: str, token: CancelToken, *, expected_revision: str) -> None:
        """Put the session's event rows back as the backup database holds them, in one transaction."""
        uri = "file:" + urllib.parse.quote(os.path.abspath(backup_path)) + "?mode=ro"
        src = sqlite3.connect(uri, uri=True)
        try:
            rows = src.execute(f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
        finally:
            src.close()
        with self.db.lock:
            self._connect(token)
        with self.db.write("restoreBackup") as conn:
            token.check()
            session = self._session(conn, session_id)
            if session is None:
                raise SessionConflictError(f"session {session_id} metadata row is missing")
            if self._revision(session.incarnation, session.revision) != expected_revision:
                raise SessionConflictError(f"session {session_id} restore is stale: revision changed since it was read")
            conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
            conn.executemany(INSERT_EVENT, [(session_id, *row) for row in rows])
            self._bump(conn, session_id)

    def commit_repair(
        self,
        meta: dict[str, Any],
        torn: TornMarker | None,
        closers: list[dict[str, Any]],
        token: CancelToken,
        *,
        expected_revision: str,
    ) -> None:
        """One transaction: delete the torn rows, insert the closers, bump the revision (pinned, stale-checked)."""
        session_id = meta["id"]
        with self.db.lock:
            self._connect(token)
        if torn is None and not closers:
            return
        rows = [scalar_row(c) for c in closers]  # closers are never packed
        with self.db.write("commitRepair") as conn:
            token.check()
            session = self._session(conn, session_id)
            if session is None:
                raise SessionConflictError(f"session {session_id} metadata row is missing")
            result = scan_rows(self._events(conn, SELECT_EVENTS, (session_id,)), 0)
            if torn is not None:
                if result.torn_from != torn.truncate_to:
                    raise SessionConflictError(
                        f"session {session_id} repair is stale: physical tail no longer starts at seq {torn.truncate_to}"
                    )
                conn.execute(DELETE_FROM, (session_id, torn.truncate_to))
            elif result.torn_from is not None:
                raise SessionConflictError(f"session {session_id} repair omitted current torn tail at seq {result.torn_from}")
            if closers:
                expected = int(result.preserved[-1]["seq"]) + 1 if result.preserved else 0
                first = closers[0].get("seq")
                if first != expected:
                    raise SessionConflictError(
                        f"session {session_id} repair is stale: closer starts at seq {first}, stored next seq is {expected}"
                    )
            # Extra guard beyond upstream: the coordinator read the revision outside this transaction.
            if self._revision(session.incarnation, session.revision) != expected_revision:
                raise SessionConflictError(f"session {session_id} repair is stale: revision changed since it was read")
            if closers:
                self._insert(conn, session_id, rows)
            self._bump(conn, session_id)


__all__ = ["DELETE_FROM", "INSERT_EVENT", "SqliteStorage", "SqliteStoreWarning"]
