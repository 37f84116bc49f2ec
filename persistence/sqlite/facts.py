"""Facts about a SQLite store read on a private read-only connection: sizes, integrity, a backup copy.

Why a separate connection: these are asked for by a viewer or a repair guard while the store's own
connection may be busy in a worker thread (its lock would stall the caller), and a read-only
``mode=ro`` connection can neither checkpoint a crashed store's ``-wal`` into the database file nor
create a store.  The queries run in SQLite's C code, off the GIL.

May import: the standard library only (no other engine module needs to be loaded for these).
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Iterable

# length() of TEXT counts characters; of a BLOB, bytes: the CAST makes it bytes for both.
SIZES_ALL = "SELECT session_id, sum(length(CAST(data AS BLOB))), max(time) FROM events GROUP BY session_id"
SIZES_ONE = "SELECT sum(length(CAST(data AS BLOB))), max(time) FROM events WHERE session_id = ?"
# A viewer must not wait long for a store a writer holds: after this the facts are simply absent.
FACTS_TIMEOUT_S = 1.0
# How many quick_check findings a refusal quotes.
QUICK_CHECK_FINDINGS_SHOWN = 5

SessionSizes = dict[str, tuple[int, int | None]]  # session id -> (bytes of event data, newest event time in ms)


def sqlite_uri(path: str, mode: str) -> str:
    """``file:`` URI for ``path`` (percent-encoded, so ``?``, ``#`` and ``%`` in a path are not URI syntax)."""
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + f"?mode={mode}"


def session_sizes(db_path: str, ids: Iterable[str] | None = None) -> SessionSizes:
    """(event-data bytes, newest event time in ms) for ``ids`` (every session when None); {} when unreadable."""
    try:
        con = sqlite3.connect(sqlite_uri(db_path, "ro"), uri=True, timeout=FACTS_TIMEOUT_S)
    except sqlite3.Error:
        return {}
    try:
        if ids is None:
            rows = [(sid, size, last) for sid, size, last in con.execute(SIZES_ALL)]
        else:
            rows = []
            for sid in ids:
                size, last = con.execute(SIZES_ONE, (sid,)).fetchone()
                rows.append((sid, size, last))
    except sqlite3.Error:
        return {}
    finally:
        con.close()
    return {sid: (int(size or 0), int(last) if isinstance(last, (int, float)) else None) for sid, size, last in rows}


def schema_version(db_path: str) -> int | None:
    """The database's ``PRAGMA user_version`` on a read-only connection; None when it cannot be read
    that way (gone, not a database, or a WAL database whose folder refuses the shared-memory file)."""
    try:
        con = sqlite3.connect(sqlite_uri(db_path, "ro"), uri=True, timeout=FACTS_TIMEOUT_S)
    except sqlite3.Error:
        return None
    try:
        return int(con.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error:
        return None
    finally:
        con.close()


def writer_lock_held(db_path: str) -> str | None:
    """Why another connection holds (or waits on) the write lock, or None when none does; writes nothing.

    ``BEGIN IMMEDIATE``/``ROLLBACK`` runs while a read-only connection pins the file, so closing the
    probe cannot checkpoint a leftover ``-wal`` into the database (a crashed store's bytes stay as
    they are until the backup is taken).
    """
    try:
        pin = sqlite3.connect(sqlite_uri(db_path, "ro"), uri=True, timeout=0, isolation_level=None)
        try:
            pin.execute("SELECT count(*) FROM sqlite_master").fetchone()
            probe = sqlite3.connect(sqlite_uri(db_path, "rw"), uri=True, timeout=0, isolation_level=None)
            try:
                probe.execute("BEGIN IMMEDIATE")
                probe.execute("ROLLBACK")
            finally:
                probe.close()
        finally:
            pin.close()
    except sqlite3.OperationalError as err:
        return str(err)
    return None


def quick_check(db_path: str) -> str | None:
    """SQLite's own structural check (indexes included) on a read-only connection; None when ok.

    A busy store is None too: a lock is reported by the liveness guard, it is not damage.
    """
    try:
        con = sqlite3.connect(sqlite_uri(db_path, "ro"), uri=True, timeout=FACTS_TIMEOUT_S)
        try:
            rows = con.execute("PRAGMA quick_check").fetchall()
        finally:
            con.close()
    except sqlite3.OperationalError as err:
        if "locked" in str(err) or "busy" in str(err):
            return None
        return str(err)
    except sqlite3.DatabaseError as err:
        return str(err)
    found = [str(r[0]) for r in rows]
    return None if found == ["ok"] else "; ".join(found[:QUICK_CHECK_FINDINGS_SHOWN])


def backup_database(db_path: str, target: str) -> None:
    """Copy the store into ``target`` (an existing empty file) with the online backup API, through any ``-wal``."""
    src = sqlite3.connect(sqlite_uri(db_path, "ro"), uri=True)
    try:
        dst = sqlite3.connect(target)  # the empty file just created is an empty database
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()


__all__ = ["SessionSizes", "backup_database", "quick_check", "session_sizes", "sqlite_uri"]
