"""The fast listing fetches no ``version`` cell for a plain row (issue 25): every row whose version is
not the integer 0 is read whole and judged by ``session_from_row``, so a listing of rows with any
version, of any storage class, equals the row-by-row reader's, error included."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlite_helpers import typeless_sessions

from persistence.model.header import SessionHeader
from persistence.sqlite.sessions import read_listing, session_from_row


def rows_with(version: Any, count: int = 5, at: int = 2) -> list[tuple[Any, ...]]:
    rows = [(f"s{i}", 0, i, "/p", None, None, None, None, None, str(uuid.uuid4()), i) for i in range(count)]
    rows[at] = (rows[at][0], version, *rows[at][2:])
    return rows


def listed(rows: list[tuple[Any, ...]]) -> Any:
    with typeless_sessions(rows) as con:
        try:
            listing = read_listing(lambda sql: con.execute(sql).fetchall())
        except Exception as err:
            return type(err), str(err)
        return [h.to_json() for h in listing.headers], list(listing.incarnations), list(listing.revisions)


def expected(rows: list[tuple[Any, ...]]) -> Any:
    try:
        checked = [session_from_row(r) for r in rows]
    except Exception as err:
        return type(err), str(err)
    headers = [SessionHeader.from_json(s.meta) for s in checked]
    return [h.to_json() for h in headers], [s.incarnation for s in checked], [s.revision for s in checked]


@pytest.mark.parametrize("version", [0, 1, -1, 2**53 - 1, 2**53, -(2**53), 0.0, 1.0, "0", b"0", None, ""])
@pytest.mark.parametrize("at", [0, 2, 4])
def test_any_version_in_any_row_lists_as_the_row_by_row_reader_does(version: Any, at: int) -> None:
    rows = rows_with(version, at=at)
    got, want = listed(rows), expected(rows)
    assert got == want
    if isinstance(got, tuple) and isinstance(got[0], list):
        assert [type(h["version"]) for h in got[0]] == [type(h["version"]) for h in want[0]]


def test_a_mixed_store_keeps_each_rows_version() -> None:
    rows = rows_with(7, count=8, at=3)
    rows[5] = (*rows[5][:8], "coder", *rows[5][9:])  # a rich row too
    assert listed(rows) == expected(rows)
