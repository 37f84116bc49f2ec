"""``list_entries`` of a store whose rows all validate is built from the listing (issue 25): the same
entries, header dicts with the same keys in the same order, as the row-by-row reader gives; a store
with a bad row is still judged row by row."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from sessionkit import run

from persistence.backend import NEVER_CANCELLED as T
from persistence.listing import BAD_ROW, SESSION, ListedEntry
from persistence.sqlite.backend import SqliteSessionPersistence
from persistence.sqlite.sessions import BUMP_REVISION, TINY_LISTING_ROWS, UPSERT_SESSION, upsert_params
from persistence.sqlite.storage import SqliteStorage


def private_db(tmp_path: Path) -> Path:
    d = tmp_path / "store"
    d.mkdir(mode=0o700)
    return d / "sessions.sqlite"


def fill(path: Path, count: int, *, rich_every: int = 0, no_cwd_every: int = 0) -> None:
    st = SqliteStorage(path)
    st.list_headers(T)
    with st.db.write("fill") as con:
        for i in range(count):
            m: dict[str, Any] = {"version": i % 2, "id": f"s-{i:05d}", "createdAt": i, "cwd": f"/p/{i % 3}"}
            if no_cwd_every and i % no_cwd_every == 0:
                del m["cwd"]
            if rich_every and i % rich_every == 1:
                m.update(parentSession="s-00000", origin="subagent", delegationDepth=i % 2, seedLength=i)
            if rich_every and i % rich_every == 2:
                m["agentPreset"] = "coder"
            con.execute(UPSERT_SESSION, upsert_params(m, str(uuid.uuid4())))
            for _ in range(i % 3):
                con.execute(BUMP_REVISION, (m["id"],))
    st.close()


def reference(path: Path) -> list[ListedEntry]:
    """Every row validates: one good entry per (header dict, revision) of the dict-based listing."""
    st = SqliteStorage(path, read_only=True)
    try:
        return [ListedEntry(SESSION, m["id"], m, r) for m, r in st.list_snapshots(T)]
    finally:
        st.close()


def entries(path: Path) -> list[ListedEntry]:
    async def body() -> list[ListedEntry]:
        store = SqliteSessionPersistence(path)
        try:
            first = await store.list_entries()
            assert await store.list_entries() == first  # the second one from the cached listing
            return first
        finally:
            await store.close()

    return run(body())


@pytest.mark.parametrize(
    ("count", "rich_every", "no_cwd_every"),
    [(0, 0, 0), (1, 0, 0), (3, 3, 2), (TINY_LISTING_ROWS + 7, 0, 0), (TINY_LISTING_ROWS + 7, 4, 5)],
)
def test_entries_equal_the_row_by_row_ones_key_order_included(
    tmp_path: Path, count: int, rich_every: int, no_cwd_every: int
) -> None:
    path = private_db(tmp_path)
    fill(path, count, rich_every=rich_every, no_cwd_every=no_cwd_every)
    got, want = entries(path), reference(path)
    assert got == want and len(got) == count
    assert [list(e.meta or ()) for e in got] == [list(e.meta or ()) for e in want]


def test_a_bad_row_is_one_bad_row_and_a_change_is_seen(tmp_path: Path) -> None:
    path = private_db(tmp_path)
    fill(path, TINY_LISTING_ROWS + 3)

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        assert all(e.kind == SESSION for e in await store.list_entries())
        raw = sqlite3.connect(path, isolation_level=None)
        try:
            raw.execute("UPDATE sessions SET cwd = 'relative' WHERE id = 's-00004'")
        finally:
            raw.close()
        listed = await store.list_entries()
        assert [e.session_id for e in listed if e.kind == BAD_ROW] == ["s-00004"]
        assert sum(e.kind == SESSION for e in listed) == TINY_LISTING_ROWS + 2
        assert "cwd must be absolute" in (listed[4].problem or "")
        await store.close()

    run(body())
