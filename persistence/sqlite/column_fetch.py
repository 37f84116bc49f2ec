"""The ``sessions`` table read column by column: one JSON array per column, built by SQLite, parsed by orjson.

Why: Python's ``sqlite3`` makes a tuple per row and an object per cell through its own per-cell calls;
for a 10,000-session listing of five columns that fetch was 6.9 ms of a 17.5 ms ``list()``, and its
10,000 row tuples fed the cyclic collector (1.8 ms of collections in the same call).  SQLite's
``json_group_array`` builds each column in C during the one table scan and ``orjson.loads`` makes the
values without a tuple per row: the same five columns in 3.8 ms (2 cores, SQLite 3.40, medians of 31).

Only what this path returns exactly as the row fetch would is used:

- integers, text and NULL round-trip exactly (SQLite prints integers in full; JSON escapes give back
  the same text);
- a REAL comes back as a float (``5.0`` stays a float), so every check that refuses a REAL refuses
  it here too; its digits may differ (SQLite prints 15 significant digits), so a caller that must name
  a bad value re-reads the rows first (``sessions.read_listing`` does: the columns are only ever used
  when every check passed);
- a BLOB cannot be held by JSON: SQLite refuses the query, and so does a SQLite without the JSON
  functions (before 3.38 they were an option): both give None, and the caller reads rows;
- text that is not UTF-8 is read leniently by the fetch (``Database.fetchall``, as node:sqlite does);
  whether SQLite copied its bytes into the array as the row fetch would is not something to rely on,
  so any U+FFFD in an array sends the caller to the rows as well.

Row order: the aggregate walks the table once, with no ``WHERE`` and no index covering the columns
read (the schema is validated as upstream's before any read), so it is the rowid order the row
queries ask for with ``ORDER BY rowid`` (``tests/sqlite/test_sqlite_column_fetch.py`` checks the plan).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

import orjson

Fetch = Callable[[str], list[tuple[Any, ...]]]

# What a read of the aggregated arrays may raise that the row read would not: the JSON functions
# missing, a BLOB cell, an array past SQLITE_MAX_LENGTH (SQLITE_TOOBIG is a DataError).
_NOT_AS_JSON = (sqlite3.OperationalError, sqlite3.DataError)
_REPLACEMENT = "\ufffd"


def columns_query(columns: Sequence[str]) -> str:
    """One row: a JSON array of each of ``columns`` over every ``sessions`` row, in rowid order."""
    return "SELECT " + ", ".join(f"json_group_array({name})" for name in columns) + " FROM sessions"


def fetch_columns(fetch: Fetch, sql: str) -> tuple[list[Any], ...] | None:
    """The columns ``sql`` (a ``columns_query``) reads, each a list of equal length; None: read the rows.

    Errors that are not about JSON (a busy or damaged file) are raised by the rows read that follows,
    exactly as they always were.
    """
    try:
        (cells,) = fetch(sql)
    except _NOT_AS_JSON:
        return None
    if any(type(cell) is not str or _REPLACEMENT in cell for cell in cells):
        return None
    try:
        columns = tuple(map(orjson.loads, cells))
    except orjson.JSONDecodeError:  # e.g. a REAL infinity, which SQLite prints as 9.0e+999
        return None
    if any(type(column) is not list for column in columns) or len(set(map(len, columns))) > 1:
        return None
    return columns
