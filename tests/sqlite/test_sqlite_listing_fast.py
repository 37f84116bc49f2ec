"""The fast SQLite listing (issue 12): same headers, revisions and errors as the row-by-row reader,
and tiny listings run on the event loop without ever waiting on it.

``read_listing`` is compared against ``session_from_row`` (the validator upstream's rules are written
in) on random rows of a table without column types, so any storage class can sit in any cell, as in
a crafted or damaged file.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from sessionkit import meta, one_turn_log, run
from sqlite_helpers import typeless_sessions

from persistence.backend import NEVER_CANCELLED as T
from persistence.errors import SessionStorageCorruptError
from persistence.model.header import SessionHeader, frozen_from_columns, plain_headers
from persistence.model.jsontext import MAX_SAFE_INTEGER as M
from persistence.service import AbortSignal
from persistence.sqlite.backend import SqliteSessionPersistence
from persistence.sqlite.constants import UUID_RE
from persistence.sqlite.errors import JsRangeError
from persistence.sqlite.sessions import (
    BUMP_REVISION,
    SELECT_ALL_SESSIONS,
    TINY_LISTING_ROWS,
    UPSERT_SESSION,
    Listing,
    _refuse_first_bad_column,
    _surely_valid,
    _uuid_column,
    check_session_row,
    exact_listing,
    read_listing,
    session_from_row,
    upsert_params,
)
from persistence.sqlite.storage import SqliteStorage
from persistence.values import SessionPersistenceSnapshot

UUID = "3f1d1c6e-8a4b-4c2d-9e0f-1a2b3c4d5e6f"


# ---------------------------------------------------------------- the reference: row by row


def reference(rows: list[tuple[Any, ...]]) -> Listing | tuple[type[BaseException], str]:
    """What list()/listSnapshots() gave before issue 12: session_from_row per row, headers via from_listing."""
    try:
        checked = [session_from_row(r) for r in rows]
    except Exception as err:  # the error itself is what is compared
        return type(err), str(err)
    headers = [SessionHeader.from_listing(s.meta) for s in checked]
    assert all(h is not None for h in headers)  # a validated row is always representable
    return Listing(headers, [s.incarnation for s in checked], [s.revision for s in checked])  # type: ignore[arg-type]


def fast(rows: list[tuple[Any, ...]], *, exact: bool = False) -> Listing | tuple[type[BaseException], str]:
    """``read_listing`` (or, with ``exact``, the few-rows reader) over ``rows``."""
    with typeless_sessions(rows) as con:
        try:
            if exact:
                return exact_listing(con.execute(SELECT_ALL_SESSIONS).fetchall())
            return read_listing(lambda sql: con.execute(sql).fetchall())
        except Exception as err:
            return type(err), str(err)


def same(a: Listing | tuple[type[BaseException], str], b: Listing | tuple[type[BaseException], str]) -> bool:
    if isinstance(a, Listing) and isinstance(b, Listing):
        return (
            a.headers == b.headers
            and all(type(h) is SessionHeader for h in a.headers + b.headers)
            and [h.to_json() for h in a.headers] == [h.to_json() for h in b.headers]
            and list(a.incarnations) == list(b.incarnations)
            and list(a.revisions) == list(b.revisions)
        )
    return a == b


# Cells: mostly what a healthy store holds, sometimes anything a damaged one could.
ANY_CELL = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([M, M + 1, -M, -M - 1, 0, -1, 2**53, 1.0, 0.0, -0.5, float("inf")]),
    st.text(max_size=40),
    st.binary(max_size=40),
    st.sampled_from(["", "/abs", "rel/path", "subagent", "Subagent", "\x00", "/x\x00y"]),
)
BAD_UUIDS = [
    UUID.upper(),  # valid: any case
    UUID[:14] + "0" + UUID[15:],  # version digit 0
    UUID[:14] + "9" + UUID[15:],  # version digit 9
    UUID[:19] + "c" + UUID[20:],  # variant c
    UUID[:8] + "x" + UUID[9:],  # dash missing
    UUID[:35],
    UUID + "0",
    UUID + "\n",
    UUID[:10] + "é" + UUID[11:],
    UUID[:10] + "０" + UUID[11:],  # a fullwidth digit
    UUID[:10] + "\x00" + UUID[11:],
    UUID[:10] + "-" + UUID[11:],  # a fifth dash
    "",
]


def sometimes(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any] = ANY_CELL) -> st.SearchStrategy[Any]:
    """``good`` 19 times in 20, else ``bad``."""
    return st.integers(0, 19).flatmap(lambda k: bad if k == 0 else good)


def good_uuid() -> st.SearchStrategy[str]:
    return st.builds(lambda u, upper: str(u).upper() if upper else str(u), st.uuids(version=4), st.booleans())


ROW = st.tuples(
    sometimes(st.text(min_size=1, max_size=12)),  # id
    sometimes(st.sampled_from([0, 0, 0, 1, -3, M, -M])),  # version
    sometimes(st.integers(0, M)),  # created_at
    sometimes(st.sampled_from([None, "/p", "/bench/p1", "/a b/ü"])),  # cwd
    sometimes(st.none()),  # parent_session
    sometimes(st.none()),  # seed_length
    sometimes(st.none()),  # origin
    sometimes(st.none()),  # delegation_depth
    sometimes(st.none()),  # agent_preset
    sometimes(good_uuid(), st.one_of(st.sampled_from(BAD_UUIDS), ANY_CELL)),  # incarnation
    sometimes(st.integers(0, M)),  # revision
)
RICH_ROW = st.tuples(
    st.text(min_size=1, max_size=12),
    st.just(0),
    st.integers(0, M),
    st.sampled_from([None, "/p"]),
    sometimes(st.sampled_from([None, "parent"])),
    sometimes(st.sampled_from([None, 0, 7, M])),
    sometimes(st.sampled_from([None, "subagent"])),
    sometimes(st.sampled_from([None, 0, 1, M])),
    sometimes(st.sampled_from([None, "reviewer"])),
    good_uuid(),
    st.integers(0, 1000),
)


@settings(max_examples=examples(300))
@given(st.lists(st.one_of(ROW, ROW, ROW, RICH_ROW), max_size=30))
def test_read_listing_equals_the_row_by_row_reader(rows: list[tuple[Any, ...]]) -> None:
    expected = reference(rows)
    assert same(fast(rows), expected)
    assert same(fast(rows, exact=True), expected)


def column_outcome(check: Any, row: tuple[Any, ...]) -> tuple[type[BaseException], str] | None:
    try:
        check(row)
    except Exception as err:  # the error itself is what is compared
        return type(err), str(err)
    return None


ODD_ROW = st.tuples(*[ANY_CELL] * 11)  # any storage class in any column


@settings(max_examples=examples(500))
@given(st.one_of(ROW, RICH_ROW, ODD_ROW))
def test_the_one_expression_row_check_never_admits_a_row_the_column_checks_refuse(row: tuple[Any, ...]) -> None:
    # check_session_row asks _surely_valid first: it must never say yes where a column check says no,
    # and the error raised is always the first bad column's.
    detailed = column_outcome(_refuse_first_bad_column, row)
    if _surely_valid(row):
        assert detailed is None
    assert column_outcome(check_session_row, row) == detailed


@settings(max_examples=examples(100))
@given(st.lists(ROW, min_size=1, max_size=12), st.integers(0, 10), st.integers(0, 10), st.sampled_from(BAD_UUIDS))
def test_every_uuid_rule_is_kept(rows: list[tuple[Any, ...]], where: int, what: int, bad: str) -> None:
    # One bad incarnation among otherwise valid rows: the column check must refuse exactly what the regex refuses.
    good = [(f"s{i}", 0, i, "/p", None, None, None, None, None, str(uuid.uuid4()), 0) for i in range(len(rows))]
    i = where % len(good)
    good[i] = (*good[i][:9], bad, 0)
    assert same(fast(good), reference(good))


def regex_accepts(values: list[Any]) -> bool:
    return all(type(v) is str and UUID_RE.fullmatch(v) is not None for v in values)


A, B = str(uuid.uuid4()), str(uuid.uuid4())


@pytest.mark.parametrize(
    "values",
    [
        [A, B],
        [A.upper(), B],
        [A[:35], B + "0"],  # lengths that add up: 35 + 37
        [A + "\n" + B[:35], ""],  # a newline inside a value, lengths adding up with an empty one
        [A[:18] + "\n" + A[19:], B],  # a newline where a hex digit belongs
        [A, B, A[: 36 - 1] + "\n"],
        [A, 5],
        [A, None],
        [A, A.encode()],
        [A[:8] + "-" + A[9:]],
        [A[:8] + "\n" + A[9:]],
        ["\n" * 36],
        ["-" * 36],
    ],
)
def test_the_uuid_column_check_refuses_what_the_regex_refuses(values: list[Any]) -> None:
    assert _uuid_column(tuple(values), len(values)) == regex_accepts(values)


@settings(max_examples=examples(300))
@given(
    st.lists(
        st.one_of(good_uuid(), st.sampled_from(BAD_UUIDS), st.text(alphabet="0123456789abcdef-\n8", max_size=40)), max_size=6
    )
)
def test_the_uuid_column_check_equals_the_regex(values: list[str]) -> None:
    assert _uuid_column(tuple(values), len(values)) == regex_accepts(values)


# Per column, values at the edge of what session_from_row accepts (some accepted, most refused).
EDGE_CELLS: dict[int, list[Any]] = {
    0: ["", b"id", 0, None, 1.5, "x"],  # id
    1: [0, 1, -1, M, -M, M + 1, -M - 1, 1.0, "0", None, b"0"],  # version
    2: [0, M, -1, M + 1, 1.0, "1", None, b"1"],  # created_at
    3: [None, "/abs", "relative", "", b"/abs", 1, 1.0],  # cwd
    4: [None, "", "parent", b"parent", 1, 0.5],  # parent_session
    5: [None, 0, M, -1, M + 1, 0.0, 1.0, "1", b"1"],  # seed_length
    6: [None, "subagent", "Subagent", "subagent ", "", b"subagent", 0, 1.0],  # origin
    7: [None, 0, M, -1, M + 1, 0.0, 1.0, "1", b"1"],  # delegation_depth
    8: [None, "", "coder", b"coder", 1, 0.5],  # agent_preset
    9: [UUID, UUID.upper(), *BAD_UUIDS, UUID.encode(), None, 1],  # incarnation
    10: [0, M, -1, M + 1, 1.0, "1", None, b"1"],  # revision
}


@pytest.mark.parametrize("rows_before", [0, 3, TINY_LISTING_ROWS - 1])
@pytest.mark.parametrize(("index", "value"), [(i, v) for i, values in EDGE_CELLS.items() for v in values])
def test_one_edge_cell_among_valid_rows_reads_as_the_row_by_row_reader(index: int, value: Any, rows_before: int) -> None:
    # Every column's whole-column check against the row-by-row reader, one cell at a time: random rows
    # seldom hold exactly one bad cell, and only that shows a column check admitting what a row check refuses.
    # Every third row a subagent's, with seed length and depth 0 or 1: an edge value equal to another
    # row's (0.0 beside 0) must still be seen.
    rows: list[tuple[Any, ...]] = [
        (f"s{i}", 0, i, "/p" if i % 2 else None, None, None, None, None, "coder" if i % 3 else None, str(uuid.uuid4()), i)
        if i % 3
        else (f"s{i}", 0, i, "/p", "s0", i % 2, "subagent", i % 2, "reviewer", str(uuid.uuid4()), i)
        for i in range(rows_before + 2)
    ]
    edited = list(rows[rows_before])
    edited[index] = value
    rows[rows_before] = tuple(edited)
    expected = reference(rows)
    assert same(fast(rows, exact=True), expected)
    assert same(fast(rows), expected)


@pytest.mark.parametrize(
    ("index", "value", "error"),
    [
        (0, "", "id must be a non-empty string"),
        (0, b"id", "id must be a non-empty string"),
        (1, 1.0, "version must be a safe integer"),
        (1, M + 1, "Value is too large"),
        (2, -1, "created_at must be a non-negative safe integer"),
        (3, "relative", "cwd must be absolute"),
        (3, b"/abs", "cwd must be a string or null"),
        (9, UUID[:14] + "9" + UUID[15:], "incarnation must be a UUID"),
        (10, -1, "revision must be a non-negative safe integer"),
        (10, 1.5, "revision must be a non-negative safe integer"),
    ],
)
def test_one_bad_plain_row_fails_the_listing_as_before(index: int, value: Any, error: str) -> None:
    rows: list[tuple[Any, ...]] = [(f"s{i}", 0, i, "/p", None, None, None, None, None, str(uuid.uuid4()), i) for i in range(20)]
    bad = list(rows[7])
    bad[index] = value
    rows[7] = tuple(bad)
    rows[3] = ("rich", 0, 3, "/p", "parent", None, "subagent", 1, None, str(uuid.uuid4()), 0)
    got = fast(rows)
    assert got == reference(rows)
    assert isinstance(got, tuple) and error in got[1]


def test_the_first_bad_row_wins_across_plain_and_rich_rows() -> None:
    rows: list[tuple[Any, ...]] = [(f"s{i}", 0, i, "/p", None, None, None, None, None, UUID, 0) for i in range(6)]
    rows[2] = ("r", 0, 2, "/p", "parent", None, "external", None, None, UUID, 0)  # bad origin, a rich row
    rows[4] = ("s4", 0, 4, "rel", None, None, None, None, None, UUID, 0)  # bad cwd, a plain row, later
    got = fast(rows)
    assert got == reference(rows) and isinstance(got, tuple) and "origin must be subagent or null" in got[1]


# ---------------------------------------------------------------- the trusted constructors


def test_column_built_headers_equal_dataclass_headers() -> None:
    full = ("v", "id", 5, "/p", "parent", 3, "subagent", 0, "preset")
    names = ("version", "id", "created_at", "cwd", "parent_session", "seed_length", "origin", "delegation_depth", "agent_preset")
    (a,) = frozen_from_columns(SessionHeader, {name: [value] for name, value in zip(names, full, strict=True)})
    b = SessionHeader(*full)
    assert a == b and type(a) is SessionHeader and hash(a) == hash(b) and repr(a) == repr(b)
    with pytest.raises(AttributeError):
        a.id = "other"  # type: ignore[misc]
    assert plain_headers([0, 1], ["a", "b"], [5, 6], [None, "/p"]) == [SessionHeader(0, "a", 5), SessionHeader(1, "b", 6, "/p")]


def test_frozen_from_columns_needs_every_field_once() -> None:
    h = SessionHeader(0, "a", 1)
    snaps = frozen_from_columns(SessionPersistenceSnapshot, {"header": [h, h], "revision": ["r1", "r2"]})
    assert snaps == [SessionPersistenceSnapshot(h, "r1"), SessionPersistenceSnapshot(h, "r2")]
    with pytest.raises(ValueError, match="exactly once"):
        frozen_from_columns(SessionPersistenceSnapshot, {"header": [h]})
    with pytest.raises(ValueError, match="exactly once"):
        frozen_from_columns(SessionPersistenceSnapshot, {"header": [h], "revision": ["r"]}, constants={"revision": "x"})
    with pytest.raises(ValueError, match="has 1 values, expected 2"):
        frozen_from_columns(SessionPersistenceSnapshot, {"header": [h, h], "revision": ["r"]})
    assert frozen_from_columns(SessionPersistenceSnapshot, {"header": [h]}, constants={"revision": "x"}) == [
        SessionPersistenceSnapshot(h, "x")
    ]


# ---------------------------------------------------------------- a real store, through the service


def private_db(tmp_path: Path) -> Path:
    d = tmp_path / "store"
    d.mkdir(mode=0o700)
    return d / "sessions.sqlite"


def fill(path: Path, count: int, *, rich_every: int = 0) -> None:
    """``count`` session rows (no events: a listing reads only ``sessions``), written in one transaction."""
    st = SqliteStorage(path)
    st.list_headers(T)
    with st.db.write("fill") as con:
        for i in range(count):
            m: dict[str, Any] = {"version": 0, "id": f"s-{i:05d}", "createdAt": i, "cwd": f"/p/{i % 3}"}
            if rich_every and i % rich_every == 0:
                m.update(parentSession="s-00000", origin="subagent", delegationDepth=i % 2, seedLength=i, agentPreset="x")
            con.execute(UPSERT_SESSION, upsert_params(m, str(uuid.uuid4())))
            for _ in range(i % 3):
                con.execute(BUMP_REVISION, (m["id"],))
    st.close()


def old_listing(path: Path) -> tuple[list[SessionHeader], list[SessionPersistenceSnapshot]]:
    st = SqliteStorage(path)
    try:
        headers = [SessionHeader.from_listing(m) for m in st.list_headers(T)]
        snaps = [SessionPersistenceSnapshot(SessionHeader.from_json(m), r) for m, r in st.list_snapshots(T)]
    finally:
        st.close()
    return headers, snaps  # type: ignore[return-value]


@contextmanager
def executor_calls(loop: asyncio.AbstractEventLoop) -> Iterator[list[Any]]:
    calls: list[Any] = []
    real = loop.run_in_executor

    def counting(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    loop.run_in_executor = counting  # type: ignore[method-assign, assignment]
    try:
        yield calls
    finally:
        del loop.run_in_executor


@pytest.mark.parametrize(("count", "rich_every"), [(0, 0), (1, 0), (40, 0), (40, 3), (TINY_LISTING_ROWS + 1, 5)])
def test_service_listing_equals_the_old_listing(tmp_path: Path, count: int, rich_every: int) -> None:
    path = private_db(tmp_path)
    fill(path, count, rich_every=rich_every)
    headers, snaps = old_listing(path)

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        assert await store.list() == headers
        assert await store.list_snapshots() == snaps
        await store.close()
        store = SqliteSessionPersistence(path, read_only=True)
        assert await store.list_snapshots() == snaps
        await store.close()

    run(body())
    assert len(headers) == count


def test_a_tiny_listing_runs_on_the_loop_and_a_big_one_on_a_worker(tmp_path: Path) -> None:
    small, big = private_db(tmp_path), tmp_path / "store" / "big.sqlite"
    fill(small, TINY_LISTING_ROWS)
    fill(big, TINY_LISTING_ROWS + 1)

    async def body() -> None:
        loop = asyncio.get_running_loop()
        for path, hops in ((small, 0), (big, 1)):
            for call in ("list", "list_snapshots"):
                store = SqliteSessionPersistence(path)
                with executor_calls(loop) as calls:
                    listed = await getattr(store, call)()
                assert len(calls) == hops and len(listed) == (TINY_LISTING_ROWS + hops)
                await store.close()

    run(body())


def test_a_store_that_would_be_created_or_replayed_is_opened_by_a_worker(tmp_path: Path) -> None:
    fresh = private_db(tmp_path)
    logged = tmp_path / "store" / "logged.sqlite"
    fill(logged, 1)
    writer = sqlite3.connect(logged, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint = 0")  # the -wal keeps growing: a big log beside the file
    writer.execute("BEGIN")
    for i in range(400):
        writer.execute("UPDATE sessions SET cwd = ? WHERE rowid = 1", ("/" + "x" * (i % 50),))
        writer.execute("INSERT INTO events VALUES ('s-00000', ?, 't', 1, ?, NULL, NULL, NULL)", (i, "y" * 4000))
    writer.execute("COMMIT")
    assert os.path.getsize(str(logged) + "-wal") > (1 << 20)

    async def body() -> None:
        loop = asyncio.get_running_loop()
        for path, listed in ((fresh, 0), (logged, 1)):
            store = SqliteSessionPersistence(path)
            with executor_calls(loop) as calls:
                assert len(await store.list()) == listed
            assert len(calls) == 1  # the durable initialization, the log replay: never on the loop
            with executor_calls(loop) as calls:
                assert len(await store.list()) == listed
            assert not calls  # open now: inline
            await store.close()

    try:
        run(body())
    finally:
        writer.close()


def test_a_store_busy_in_another_thread_is_listed_by_a_worker(tmp_path: Path) -> None:
    path = private_db(tmp_path)
    fill(path, 2)

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        await store.list()  # opened
        release = threading.Event()
        held = threading.Event()

        def hold() -> None:
            with store.storage.db.lock:
                held.set()
                release.wait(5)

        worker = threading.Thread(target=hold)
        worker.start()
        held.wait(5)
        loop = asyncio.get_running_loop()
        with executor_calls(loop) as calls:
            task = asyncio.ensure_future(store.list())
            await asyncio.sleep(0.05)
            assert not task.done()  # the loop is free while the worker waits for the connection
            release.set()
            assert [h.id for h in await task] == ["s-00000", "s-00001"]
        assert len(calls) == 1
        worker.join()
        await store.close()

    run(body())


@pytest.mark.parametrize("journal_mode", ["wal", "delete"])
def test_a_locked_file_is_never_waited_for_on_the_loop(tmp_path: Path, journal_mode: str) -> None:
    path = private_db(tmp_path)
    st = SqliteStorage(path, journal_mode=journal_mode)
    st.append_batch(meta("s", "/p"), one_turn_log(), False, T, expected_next_seq=0)
    st.close()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE" if journal_mode == "delete" else "BEGIN IMMEDIATE")
    timer = threading.Timer(0.2, lambda: other.execute("COMMIT"))

    async def body() -> None:
        store = SqliteSessionPersistence(path, journal_mode=journal_mode, busy_timeout_ms=3000)
        loop = asyncio.get_running_loop()
        with executor_calls(loop) as calls:
            timer.start()
            task = asyncio.ensure_future(store.list())
            await asyncio.sleep(0.05)
            assert not task.done()
            assert [h.id for h in await task] == ["s"]  # the busy open was not memoized as a failure
        assert len(calls) == 1
        with store.storage.db.lock:
            assert store.storage.db.connection().execute("PRAGMA busy_timeout").fetchone()[0] == 3000
        await store.list()  # now open and free: inline, and the busy timeout is restored after it
        with store.storage.db.lock:
            assert store.storage.db.connection().execute("PRAGMA busy_timeout").fetchone()[0] == 3000
        await store.close()

    try:
        run(body())
    finally:
        timer.join()
        other.close()


def test_a_pre_aborted_signal_raises_its_reason_and_touches_nothing(tmp_path: Path) -> None:
    path = private_db(tmp_path)

    async def body() -> None:
        store = SqliteSessionPersistence(path)
        reason = RuntimeError("stop")
        for call in (store.list, store.list_snapshots):
            with pytest.raises(RuntimeError) as info:
                await call(AbortSignal.aborted_with(reason))
            assert info.value is reason
        assert not path.exists()  # never opened, never created
        assert await store.list(AbortSignal()) == []
        await store.close()

    run(body())


def test_bad_rows_fail_list_as_before(tmp_path: Path) -> None:
    path = private_db(tmp_path)
    fill(path, 5, rich_every=2)
    con = sqlite3.connect(path, isolation_level=None)
    cases: list[tuple[str, tuple[Any, ...], type[BaseException], str]] = [
        ("UPDATE sessions SET cwd = 'rel' WHERE id = 's-00003'", (), SessionStorageCorruptError, "cwd must be absolute"),
        ("UPDATE sessions SET incarnation = 'x' WHERE id = 's-00001'", (), SessionStorageCorruptError, "incarnation"),
        ("UPDATE sessions SET created_at = ? WHERE id = 's-00004'", (2**53,), JsRangeError, "too large"),
        ("UPDATE sessions SET origin = 'x' WHERE id = 's-00002'", (), SessionStorageCorruptError, "origin"),
    ]
    try:
        for sql, params, error, text in cases:
            before = con.execute("SELECT * FROM sessions ORDER BY rowid").fetchall()
            con.execute(sql, params)

            async def body(error: type[BaseException] = error, text: str = text) -> None:
                for call in ("list", "list_snapshots"):
                    store = SqliteSessionPersistence(path)
                    with pytest.raises(error, match=text):
                        await getattr(store, call)()
                    await store.close()

            run(body())
            con.execute("DELETE FROM sessions")
            con.executemany(f"INSERT INTO sessions VALUES ({', '.join('?' * 11)})", before)
    finally:
        con.close()


def test_memory_store_lists_inline() -> None:
    async def body() -> None:
        store = SqliteSessionPersistence(":memory:")
        await store.create(meta("m", os.sep + "p"))
        await store.append("m", one_turn_log())
        loop = asyncio.get_running_loop()
        with executor_calls(loop) as calls:
            snaps = await store.list_snapshots()
        assert [s.header.id for s in snaps] == ["m"] and snaps[0].revision.startswith("memory:store:") and not calls
        await store.close()

    run(body())
