"""Ownership validation and initialization of a database file (spec §4.3-4.5) [compat].

Runs inside the caller's transaction.  Nothing here touches the journal mode, so a
foreign file is rejected before it could be converted to WAL.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from typing import Any

from persistence.errors import SessionLayoutError
from persistence.sqlite.constants import (
    APPLICATION_ID,
    CREATE_STATEMENTS,
    SCHEMA_QUERY,
    SCHEMA_VERSION,
    UUID_RE,
)

_expected_lock = threading.Lock()
_expected: list[tuple[Any, ...]] | None = None


def _normalize(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    # Upstream collapses whitespace runs and trims (JS /\s+/g); str.split() does the same.
    return [(t, n, tbl, None if sql is None else " ".join(sql.split())) for t, n, tbl, sql in rows]


def expected_schema() -> list[tuple[Any, ...]]:
    """What upstream compares against: its DDL run in a fresh in-memory database."""
    global _expected
    with _expected_lock:
        if _expected is None:
            mem = sqlite3.connect(":memory:")
            try:
                for ddl in CREATE_STATEMENTS:
                    mem.execute(ddl)
                _expected = _normalize(mem.execute(SCHEMA_QUERY).fetchall())
            finally:
                mem.close()
        return _expected


def schema_matches(conn: sqlite3.Connection) -> bool:
    """Whether the database's schema is exactly upstream's schema 17."""
    return _normalize(conn.execute(SCHEMA_QUERY).fetchall()) == expected_schema()


def _pragma_int(conn: sqlite3.Connection, name: str) -> int:
    return int(conn.execute(f"PRAGMA {name}").fetchone()[0])


def validate_ownership(conn: sqlite3.Connection, label: str, *, allow_init: bool) -> bool:
    """Check identity/version/schema (§4.3); initialize a pristine file when allowed.

    Returns False only for a pristine file that was left untouched (read-only callers).
    """
    version = _pragma_int(conn, "user_version")
    app_id = _pragma_int(conn, "application_id")
    # The user object count n of §4.3 is the length of the schema listing (same filter): one query
    # instead of two saves a statement prepared on every open (about 8 us of a 0.35 ms listing).
    rows = conn.execute(SCHEMA_QUERY).fetchall()
    objects = len(rows)
    prefix = f'session database at "{label}"'
    if version == 0 and (app_id != 0 or objects > 0):
        raise SessionLayoutError(f"{prefix} has an unversioned schema or application identity")
    if version != 0 and version != SCHEMA_VERSION:
        raise SessionLayoutError(f"{prefix} has schema version {version}, incompatible with this build ({SCHEMA_VERSION})")
    if version != 0 and app_id != APPLICATION_ID:
        raise SessionLayoutError(f"{prefix} has application id {app_id}, expected {APPLICATION_ID}")
    if version == 0:
        if not allow_init:
            return False
        initialize(conn)
        return True
    if _normalize(rows) != expected_schema():
        raise SessionLayoutError(f"{prefix} does not contain the required schema objects")
    return True


def initialize(conn: sqlite3.Connection) -> None:
    """§4.4, in the open transaction: the header pragmas are transactional, so this is all-or-nothing.

    Statements run one at a time: ``executescript`` would COMMIT the open transaction first.
    """
    for ddl in CREATE_STATEMENTS:
        conn.execute(ddl)
    conn.execute("INSERT INTO persistence_state (singleton, store_id) VALUES (1, ?)", (str(uuid.uuid4()),))
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def revalidate_for_mutation(conn: sqlite3.Connection, label: str) -> None:
    """§4.5, inside every BEGIN IMMEDIATE: another connection may have changed the file since open."""
    app_id = _pragma_int(conn, "application_id")
    if app_id != APPLICATION_ID:
        raise SessionLayoutError(
            f"session database application id changed before mutation (expected {APPLICATION_ID}, got {app_id})"
        )
    if not schema_matches(conn):
        raise SessionLayoutError(f'session database at "{label}" does not contain the required schema objects')
    version = _pragma_int(conn, "user_version")
    if version != SCHEMA_VERSION:
        raise SessionLayoutError(f"session database schema changed before mutation (expected {SCHEMA_VERSION}, got {version})")


def read_store_id(conn: sqlite3.Connection, label: str) -> str:
    """§5.1: the persistence_state row must hold a UUID."""
    row = conn.execute("SELECT store_id FROM persistence_state WHERE singleton = 1").fetchone()
    if row is None or type(row[0]) is not str or UUID_RE.fullmatch(row[0]) is None:
        raise SessionLayoutError(f'session database at "{label}" has no valid store identity')
    return row[0]
