"""The listing read as JSON columns (``persistence.sqlite.column_fetch``) gives what the row read gives.

Random rows of every storage class are compared against the row-by-row reader in
``test_sqlite_listing_fast.py`` (that path now reads columns first); here: the real schema's plan and
order, and each case where the columns must not be used (a BLOB, text that is not UTF-8, a SQLite
without the JSON functions, a REAL SQLite prints as an overflow), each compared with the row read.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sessionkit import run
from sqlite_helpers import db_path, fill_sessions, fresh_listing, raw, typeless_sessions

from persistence.sqlite import column_fetch, sessions
from persistence.sqlite.column_fetch import columns_query, fetch_columns
from persistence.sqlite.connection import fetchall_lenient
from persistence.sqlite.sessions import (
    ALL_COLUMNS_JSON,
    CORE_COLUMNS_JSON,
    TINY_LISTING_ROWS,
    Listing,
    read_listing,
)

ROWS = TINY_LISTING_ROWS + 6  # listed by a worker, through read_listing


def rows_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``read_listing`` read rows, as it did before the column read."""
    monkeypatch.setattr(sessions, "fetch_columns", lambda fetch, sql: None)


def outcome(path: Path) -> tuple[list[Any], list[Any]] | tuple[type[BaseException], str]:
    try:
        return run(fresh_listing(path))
    except Exception as err:  # the error itself is what is compared
        return type(err), str(err)


@pytest.mark.parametrize("sql", [CORE_COLUMNS_JSON, ALL_COLUMNS_JSON])
def test_the_column_read_scans_the_table_in_rowid_order(tmp_path: Path, sql: str) -> None:
    # No index covers the columns read, so the one scan is the table's own: rowid order.
    path = db_path(tmp_path)
    fill_sessions(path, ["b", "a"])
    con = sqlite3.connect(path)
    try:
        plan = " ".join(str(row[-1]) for row in con.execute("EXPLAIN QUERY PLAN " + sql))
    finally:
        con.close()
    assert plan.startswith("SCAN sessions") and "INDEX" not in plan.upper()


@pytest.mark.parametrize("subagent_every", [0, 3])
def test_listing_order_is_insertion_order_not_id_order(tmp_path: Path, subagent_every: int) -> None:
    path = db_path(tmp_path)
    ids = [f"s-{ROWS - i:05d}" for i in range(ROWS)]  # descending: rowid order is not id order
    fill_sessions(path, ids, subagent_every=subagent_every)
    fill_sessions(path, ids[:5], subagent_every=subagent_every)  # upserts keep their rows (and rowids)
    headers, snaps = run(fresh_listing(path))
    assert [h.id for h in headers] == ids
    assert [s.header for s in snaps] == headers


@pytest.mark.parametrize("subagent_every", [0, 3])
def test_the_column_read_and_the_row_read_list_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, subagent_every: int
) -> None:
    path = db_path(tmp_path)
    fill_sessions(path, [str(uuid.uuid4()) for _ in range(ROWS)], subagent_every=subagent_every)
    read = []
    real = column_fetch.fetch_columns

    def spy(fetch: Callable[[str], list[tuple[Any, ...]]], sql: str) -> tuple[list[Any], ...] | None:
        got = real(fetch, sql)
        read.append(got is not None)
        return got

    monkeypatch.setattr(sessions, "fetch_columns", spy)
    by_columns = outcome(path)
    assert read == [True]  # list_snapshots() reuses the listing list() read (listing_cache)
    rows_only(monkeypatch)
    assert outcome(path) == by_columns


def cast_text(raw: bytes) -> str:
    return f"CAST(x'{raw.hex()}' AS TEXT)"


def typeless_listing(
    rows: list[tuple[Any, ...]], damage: str, params: tuple[Any, ...]
) -> Listing | tuple[type[BaseException], str]:
    """``read_listing`` as the store reads (``fetchall_lenient``) over ``rows`` changed by ``damage``, in a
    table without column types: a crafted file's cells of any storage class (the real tables are STRICT)."""
    with typeless_sessions(rows) as con:
        con.execute(damage, params)
        try:
            return read_listing(partial(fetchall_lenient, con))
        except Exception as err:  # the error itself is what is compared
            return type(err), str(err)


def as_compared(got: Listing | tuple[type[BaseException], str]) -> Any:
    if isinstance(got, Listing):
        return got.headers, list(got.incarnations), list(got.revisions)
    return got


# Each: a change to one row of a valid store that the column read must not be trusted with.
DAMAGE = {
    "a BLOB id": ("UPDATE sessions SET id = CAST(id AS BLOB) WHERE rowid = 3", ()),
    "a BLOB incarnation": ("UPDATE sessions SET incarnation = CAST(incarnation AS BLOB) WHERE rowid = 3", ()),
    "a cwd that is not UTF-8": ("UPDATE sessions SET cwd = " + cast_text(b"/p/caf\xe9") + " WHERE rowid = 3", ()),
    "an id that is not UTF-8": ("UPDATE sessions SET id = " + cast_text(b"id-\xff\xfe") + " WHERE rowid = 3", ()),
    "an id holding U+FFFD": ("UPDATE sessions SET id = ? WHERE rowid = 3", ("id-\ufffd",)),
    "a REAL created_at": ("UPDATE sessions SET created_at = 1.0 WHERE rowid = 3", ()),
    "an infinite created_at": ("UPDATE sessions SET created_at = 9e999 WHERE rowid = 3", ()),
    "a REAL revision with many digits": ("UPDATE sessions SET revision = 0.1 + 0.2 WHERE rowid = 3", ()),
    "a REAL seed length": ("UPDATE sessions SET seed_length = 2.0 WHERE rowid = 3", ()),
    "a text version": ("UPDATE sessions SET version = '0' WHERE rowid = 3", ()),
}


@pytest.mark.parametrize("subagent_every", [0, 3])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damage_lists_as_the_row_read_lists_it(monkeypatch: pytest.MonkeyPatch, damage: str, subagent_every: int) -> None:
    rows = []
    for i in range(ROWS):
        rich = subagent_every and i % subagent_every == 0
        rows.append(
            (f"s-{i:05d}", 0, i, f"/p/{i % 3}", "parent" if rich else None, None, "subagent" if rich else None,
             1 if rich else None, None, str(uuid.uuid4()), i)
        )  # fmt: skip
    sql, params = DAMAGE[damage]
    by_columns = as_compared(typeless_listing(rows, sql, params))
    rows_only(monkeypatch)
    assert as_compared(typeless_listing(rows, sql, params)) == by_columns


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE sessions SET cwd = " + cast_text(b"/p/caf\xe9") + " WHERE rowid = 3",
        "UPDATE sessions SET id = " + cast_text(b"id-\xff") + " WHERE rowid = 3",
        "UPDATE sessions SET cwd = '/p/\ufffd' WHERE rowid = 3",
        "UPDATE sessions SET incarnation = 'not-a-uuid' WHERE rowid = 7",
        "UPDATE sessions SET revision = -1 WHERE rowid = 7",
        "UPDATE sessions SET created_at = 9007199254740992 WHERE rowid = 7",
    ],
)
def test_a_damaged_store_lists_as_the_row_read_lists_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    # What a STRICT table can still hold: text that is not UTF-8, values the checks refuse.
    path = db_path(tmp_path)
    fill_sessions(path, [f"s-{i:05d}" for i in range(ROWS)])
    with raw(path) as con:
        con.execute(damage)
    by_columns = outcome(path)
    rows_only(monkeypatch)
    assert outcome(path) == by_columns


def test_a_sqlite_without_json_functions_reads_rows(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    fill_sessions(path, [f"s-{i:05d}" for i in range(ROWS)])
    con = sqlite3.connect(path)
    try:

        def fetch(sql: str) -> list[tuple[Any, ...]]:
            if "json_group_array" in sql:
                raise sqlite3.OperationalError("no such function: json_group_array")
            return con.execute(sql).fetchall()

        def plain_fetch(sql: str) -> list[tuple[Any, ...]]:
            return con.execute(sql).fetchall()

        without = read_listing(fetch)
        with_json = read_listing(plain_fetch)
    finally:
        con.close()
    assert isinstance(without, Listing)
    assert without.headers == with_json.headers
    assert list(without.incarnations) == list(with_json.incarnations)
    assert list(without.revisions) == list(with_json.revisions)


def test_fetch_columns_returns_equal_length_lists_or_none() -> None:
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE TABLE sessions (a, b)")
        con.executemany("INSERT INTO sessions VALUES (?, ?)", [(1, "x"), (None, "y\x00z"), (2**63 - 1, "é\n")])
        fetch: Callable[[str], list[tuple[Any, ...]]] = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        assert fetch_columns(fetch, columns_query(["a", "b"])) == ([1, None, 2**63 - 1], ["x", "y\x00z", "é\n"])
        con.execute("INSERT INTO sessions VALUES (?, ?)", (3, b"blob"))
        assert fetch_columns(fetch, columns_query(["a", "b"])) is None
        assert fetch_columns(fetch, columns_query(["a"])) == ([1, None, 2**63 - 1, 3],)
    finally:
        con.close()
    # What one scan never gives, refused all the same: arrays of unequal length, a value that is not one.
    assert fetch_columns(lambda sql: [("[1, 2]", "[1]")], "any") is None
    assert fetch_columns(lambda sql: [("[1]", "1")], "any") is None
    assert fetch_columns(lambda sql: [("[1]", None)], "any") is None
