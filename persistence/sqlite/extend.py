"""A session's rows after its last preserved row, for a ``view`` that checks only what was appended.

Why: following a live 202k-event session re-read every row on every refresh (196 ms in the window,
issue 25); an appended turn is a handful of rows.  A ``RowMark`` says where the last checked read
stopped: the store (its identity) and the session row (its incarnation, a UUID that changes when the row
is re-inserted), the next seq, how many physical rows precede it, and the last of them as it was read.
While the store and incarnation are the same, that row is unchanged and the count of rows before the
next seq still holds (0.25 ms on the 202k session's 8,661 rows: an index count), the rows before the
mark are what was read: the engine only ever appends rows and deletes a torn tail (rows at or after the
next seq); a restore or a re-created session changes the last row, the count or the incarnation, and a
row slipped in anywhere before the mark (inside the span a packed row covers, say) changes the count.
The rows from the next seq on are then scanned exactly as a whole read scans them (``scan_rows``: its
torn-tail rule looks only forward), so a repair between two reads, which deletes the torn rows and
appends closers, is read as what it left.

Not checked (the issue asks for the seam, not the whole log): a row before the last one updated in
place by a foreign program.  Hashing every row's data would cost most of a cold read.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from persistence.backend import StoredLog, TornMarker
from persistence.sqlite.connection import Database
from persistence.sqlite.rows import EVENT_COLUMNS, Row, scan_rows, validate_event_rows

SELECT_ROW_AT = f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq = ?"
SELECT_COUNT_BEFORE = "SELECT count(*) FROM events WHERE session_id = ? AND seq < ?"
SELECT_ROWS_FROM = f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq >= ? ORDER BY seq"


@dataclass(frozen=True, slots=True)
class RowMark:
    """Where a checked read of one session's rows stopped (see the module docstring)."""

    identity: str
    incarnation: str
    next_seq: int
    rows: int  # physical rows before ``next_seq``
    last_row: Row | None  # the last of them as read (None: there is none)


def mark_of(
    identity: str | None, incarnation: str, rows: list[Row], torn_from: int | None, next_seq: int, after: RowMark | None = None
) -> RowMark | None:
    """The mark after scanning ``rows`` (ordered by seq, the rows after ``after`` when extending it) up to
    ``torn_from``; None for a store without identity."""
    if identity is None:
        return None
    cut = len(rows) if torn_from is None else torn_cut(rows, torn_from)
    before, previous = (0, None) if after is None else (after.rows, after.last_row)
    return RowMark(identity, incarnation, next_seq, before + cut, tuple(rows[cut - 1]) if cut else previous)


def torn_cut(rows: list[Row], torn_from: int) -> int:
    """The index of the first row a repair of a tail torn at seq ``torn_from`` would delete."""
    return next((i for i, row in enumerate(rows) if row[0] >= torn_from), len(rows))


def rows_after(db: Database, conn: sqlite3.Connection, session_id: str, mark: RowMark) -> list[Row] | None:
    """The rows from ``mark.next_seq`` on (columns validated), or None when the seam changed."""
    last = mark.last_row
    if last is not None:
        now = db.fetchall(conn, SELECT_ROW_AT, (session_id, last[0]))
        if len(now) != 1 or tuple(now[0]) != last:
            return None
    if db.fetchall(conn, SELECT_COUNT_BEFORE, (session_id, mark.next_seq))[0][0] != mark.rows:
        return None  # a row deleted or slipped in before the mark: the whole read judges it
    rows = db.fetchall(conn, SELECT_ROWS_FROM, (session_id, mark.next_seq))
    validate_event_rows(rows)
    return rows


def stored_after(meta: dict[str, Any], revision: str, rows: list[Row], mark: RowMark) -> StoredLog:
    """The ``StoredLog`` of the rows after ``mark``: preserved events from ``mark.next_seq``, a torn tail as
    a whole read reports it (absolute seq, with the rows it would delete as evidence), the next mark."""
    result = scan_rows(rows, mark.next_seq)
    torn = None
    if result.torn_from is not None:
        torn = TornMarker(result.torn_from, [], evidence=rows[torn_cut(rows, result.torn_from) :])
    next_seq = mark.next_seq + len(result.preserved)
    new_mark = mark_of(mark.identity, mark.incarnation, rows, result.torn_from, next_seq, mark)
    return StoredLog(meta, result.preserved, revision, torn, base_seq=mark.next_seq, tail_mark=new_mark)


__all__ = ["RowMark", "mark_of", "rows_after", "stored_after", "torn_cut"]
