"""Size and last-change time of sessions in a SQLite store, for the list's Size and Modified columns.

A SQLite session has no file of its own, so the list shows what its rows hold instead: the bytes of
its events' ``data`` and the time of its newest event.  Read on a read-only connection (the store
is never touched); the query runs in SQLite's C code, off the GIL.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from app.actions.artifacts import sqlite_uri

# length() of TEXT counts characters; of a BLOB, bytes.
ALL = "SELECT session_id, sum(length(CAST(data AS BLOB))), max(time) FROM events GROUP BY session_id"
ONE = "SELECT sum(length(CAST(data AS BLOB))), max(time) FROM events WHERE session_id = ?"

Facts = dict[str, tuple[int, int | None]]  # session id -> (bytes of event data, newest event time in ms)


def session_facts(db_path: str, ids: Iterable[str] | None = None) -> Facts:
    """Facts for ``ids`` (every session when None); {} when the store cannot be read that way."""
    try:
        con = sqlite3.connect(sqlite_uri(db_path, "ro"), uri=True, timeout=1.0)
    except sqlite3.Error:
        return {}
    try:
        if ids is None:
            rows = [(sid, size, last) for sid, size, last in con.execute(ALL)]
        else:
            rows = []
            for sid in ids:
                size, last = con.execute(ONE, (sid,)).fetchone()
                rows.append((sid, size, last))
    except sqlite3.Error:
        return {}
    finally:
        con.close()
    return {sid: (int(size or 0), int(last) if isinstance(last, (int, float)) else None) for sid, size, last in rows}
