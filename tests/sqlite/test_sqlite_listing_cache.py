"""A store instance reuses its last full listing only while the file provably did not change (issue 25).

``persistence.sqlite.listing_cache``: the key is the connection, ``PRAGMA data_version`` (moved by every
other connection's commit, in this process or another) and the instance's own commit count (which
``data_version`` never reflects).  Each test lists a store big enough to be listed on a worker (the
tiny on-loop path never caches), changes it some way, and checks the next listing equals a fresh
instance's.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sessionkit import meta, one_turn_log, open_turn2, run
from sqlite_helpers import db_path, fill_sessions, fresh_listing

from persistence.errors import SessionStorageCorruptError
from persistence.sqlite.backend import SqliteSessionPersistence
from persistence.sqlite.listing_cache import ListingCache
from persistence.sqlite.sessions import BUMP_REVISION, TINY_LISTING_ROWS, empty_listing

ROWS = TINY_LISTING_ROWS + 6  # listed by a worker through the cache, never inline


def fill(path: Path, count: int = ROWS) -> None:
    fill_sessions(path, [f"s-{i:05d}" for i in range(count)])


async def same(store: SqliteSessionPersistence, path: Path) -> None:
    headers, snaps = await fresh_listing(path)
    assert await store.list() == headers
    assert await store.list_snapshots() == snaps


def test_a_repeated_listing_gives_equal_values_in_lists_of_the_callers_own(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    fill(path)

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        first, snaps = await store.list(), await store.list_snapshots()
        first.clear()
        snaps.pop()
        again, snaps_again = await store.list(), await store.list_snapshots()
        assert len(again) == ROWS and len(snaps_again) == ROWS
        assert again is not first and snaps_again is not snaps
        await same(store, path)
        await store.close()

    run(body())


def test_the_instances_own_writes_are_seen(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    fill(path)

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        before = await store.list_snapshots()
        await store.create(meta("new", "/p/new"))
        await store.append("new", one_turn_log())
        mid = await store.list_snapshots()
        assert mid[:-1] == before and mid[-1].header.id == "new"
        await same(store, path)
        await store.append("new", open_turn2())
        after = await store.list_snapshots()
        assert after[:-1] == before and after[-1].revision != mid[-1].revision
        await same(store, path)
        await store.close()

    run(body())


def test_another_instance_or_connection_committing_is_seen(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    fill(path)

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        viewer = SqliteSessionPersistence(path, read_only=True)
        await store.list_snapshots()
        await viewer.list_snapshots()

        other = SqliteSessionPersistence(path)  # another connection of this process
        await other.create(meta("elsewhere", "/p/x"))
        await other.append("elsewhere", one_turn_log())
        await other.close()
        for s in (store, viewer):
            assert [h.id for h in await s.list()][-1] == "elsewhere"
            await same(s, path)

        raw = sqlite3.connect(path, isolation_level=None)
        try:
            raw.execute("UPDATE sessions SET cwd = '/moved' WHERE id = 's-00003'")
            raw.execute(BUMP_REVISION, ("s-00004",))
        finally:
            raw.close()
        for s in (store, viewer):
            assert next(h for h in await s.list() if h.id == "s-00003").cwd == "/moved"
            await same(s, path)
        await viewer.close()
        await store.close()

    run(body())


def test_a_row_spoiled_by_another_connection_fails_the_next_listing_as_a_fresh_one_does(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    fill(path)

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        await store.list()
        await store.list_snapshots()
        raw = sqlite3.connect(path, isolation_level=None)
        try:
            raw.execute("UPDATE sessions SET incarnation = 'not-a-uuid' WHERE id = 's-00007'")
        finally:
            raw.close()
        fresh = SqliteSessionPersistence(path)
        with pytest.raises(SessionStorageCorruptError) as expected:
            await fresh.list()
        await fresh.close()
        for call in (store.list, store.list_snapshots):
            with pytest.raises(SessionStorageCorruptError) as got:
                await call()
            assert str(got.value) == str(expected.value)
        await store.close()

    run(body())


def test_the_cache_builds_once_while_unchanged_and_again_after_any_commit(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    fill(path, 3)
    conn = sqlite3.connect(path, isolation_level=None)
    other = sqlite3.connect(path, isolation_level=None)
    cache = ListingCache()
    builds: list[int] = []

    def build() -> Any:
        builds.append(1)
        return empty_listing()

    def read(commits: int) -> Any:
        conn.execute("BEGIN")
        try:
            return cache.read(conn, commits, build)
        finally:
            conn.execute("COMMIT")

    try:
        first = read(0)
        assert read(0) is first and len(builds) == 1
        read(1)  # a commit of this connection
        assert len(builds) == 2
        other.execute(BUMP_REVISION, ("s-00001",))  # a commit of another connection
        read(1)
        assert len(builds) == 3
        assert read(1) is not first and len(builds) == 3
        cache.clear()
        read(1)
        assert len(builds) == 4
    finally:
        conn.close()
        other.close()


def test_a_warm_listing_of_any_size_is_served_on_the_loop_until_the_file_changes(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    fill(path)

    async def body() -> None:
        loop = asyncio.get_running_loop()
        hops: list[Any] = []
        real = loop.run_in_executor

        def counting(*args: Any) -> Any:
            hops.append(args)
            return real(*args)

        store = SqliteSessionPersistence(path)
        loop.run_in_executor = counting  # type: ignore[method-assign, assignment]
        try:
            await store.list()  # read by a worker: more rows than a tiny listing
            assert len(hops) == 1
            await store.list()
            await store.list_snapshots()
            assert len(hops) == 1  # reused on the loop: nothing changed
            raw = sqlite3.connect(path, isolation_level=None)
            try:
                raw.execute("UPDATE sessions SET cwd = '/moved' WHERE id = 's-00002'")
            finally:
                raw.close()
            listed = await store.list()
            assert len(hops) == 2 and listed[2].cwd == "/moved"  # changed: read again by a worker
        finally:
            del loop.run_in_executor
        await same(store, path)
        await store.close()

    run(body())


def test_a_commit_of_another_process_is_seen(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    fill(path)
    script = (
        "import sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute(\"UPDATE sessions SET created_at = 424242 WHERE id = 's-00005'\")\n"
        "con.close()\n"
    )

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        await store.list_snapshots()
        subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
        assert next(h for h in await store.list() if h.id == "s-00005").created_at == 424242
        await same(store, path)
        await store.close()

    run(body())
