"""Transactions, revisions and service semantics over SQLite (spec §8-§9; cases E39-E61)."""

from __future__ import annotations

import itertools
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from sessionkit import (
    meta,
    one_turn_log,
    open_turn2,
    run,
    seqs_of,
    step_start,
    text_delta,
    turn_end,
    turn_start,
    types_of,
    wire,
)
from sqlite_helpers import T, append, append_batches, chunk_log, db_path, event_rows, packed_count, raw, service, storage

from persistence.backend import TornMarker
from persistence.errors import (
    SessionArgumentError,
    SessionConflictError,
    SessionFormatUnsupportedError,
    SessionNotFoundError,
    SessionPersistenceError,
    SessionStorageCorruptError,
)
from persistence.service import AbortSignal

M = meta("s", "/p")


def _read_from(st: Any, seq: int) -> list[int]:
    stored = st.load_suffix("s", seq, T)
    return [e["seq"] for e in stored.events]


async def write_open_turn(path: Path) -> None:
    """Session "s" holding turn 1 and an open turn 2 (seq 0-7), written by a service that is closed again."""
    writer = service(path)
    await writer.create(M)
    await writer.append("s", one_turn_log() + open_turn2())
    await writer.close()


def test_e39_appends_never_touch_earlier_rows(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = storage(path)
    log = chunk_log(100)
    append(st, M, log[:3], materialized=False)
    append(st, M, log[3:4])
    before = event_rows(path)
    append(st, M, log[4:])
    rows = event_rows(path)
    assert len(rows) == 7 and packed_count(rows) == 1
    assert rows[: len(before)] == before  # same rowids, same bytes
    for k in (0, 2, 25, 101, 104, 105):
        assert _read_from(st, k) == list(range(k, 104))
    assert st.load_stored("s", T).events == log  # type: ignore[union-attr]
    st.close()


def test_e40_batched_chunk_log_and_idle_store_never_writes(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = storage(path)
    log = chunk_log(1000)
    snapshots = []
    for i in range(0, len(log), 40):
        append(st, M, log[i : i + 40], materialized=i > 0)
        snapshots.append(event_rows(path))
    for earlier, later in itertools.pairwise(snapshots):
        assert later[: len(earlier)] == earlier
    rows = snapshots[-1]
    assert len(rows) == 31
    assert max(len(r[5]) for r in rows) <= 1_048_576
    wal = Path(str(path) + "-wal")
    size = wal.stat().st_size
    st.list_snapshots(T)
    time.sleep(0.25)
    assert wal.stat().st_size == size
    st.close()


def test_e41_read_from_inside_overlapping_or_malformed_packed_rows(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = storage(path)
    append(st, M, [text_delta(i, 1, 1, "x") for i in range(3)], materialized=False)
    with raw(path) as con:
        con.execute("INSERT INTO events VALUES ('s', 1, 'x/y', 1, '{}', NULL, NULL, NULL)")
    assert _read_from(st, 2) == [2]
    with raw(path) as con:
        con.execute("DELETE FROM events WHERE seq = 1")
        con.execute("UPDATE events SET data = '{broken' WHERE seq = 0")
    assert _read_from(st, 2) == []
    st.close()


def test_read_from_validates_only_the_suffix(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = storage(path)
    append(st, M, one_turn_log() + open_turn2(), materialized=False)
    with raw(path) as con:
        con.execute("UPDATE events SET data = '{broken' WHERE seq = 1")
    assert _read_from(st, 2) == [2, 3, 4, 5, 6, 7]  # upstream readFrom seeks past the bad row
    with pytest.raises(SessionStorageCorruptError, match="invalid committed physical row at seq 1"):
        st.load_stored("s", T)
    with pytest.raises(SessionStorageCorruptError, match="invalid committed physical row at seq 1"):
        st.load_suffix("s", 0, T)
    st.close()


def test_e43_stale_second_store_is_rejected(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    a, b = storage(path), storage(path)
    append(a, M, [turn_start(0, 1)], materialized=False)
    append(b, M, [step_start(1, 1, 1)])
    with pytest.raises(SessionConflictError, match="append starts at seq 1, stored next seq is 2"):
        append(a, M, [step_start(1, 1, 1)])
    assert seqs_of(a.load_stored("s", T).events) == [0, 1]  # type: ignore[union-attr]
    a.close()
    b.close()


def _torn_at_1(path: Path) -> Any:
    st = storage(path)
    append(st, M, [turn_start(0, 1), step_start(1, 1, 1)], materialized=False)
    with raw(path) as con:
        con.execute("UPDATE events SET data = '{not json' WHERE seq = 1")
    return st


def test_e44_concurrent_repairs_are_stale(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    a = _torn_at_1(path)
    b = storage(path)
    seen = a.load_stored("s", T)
    assert seen is not None and seen.torn == TornMarker(1, [])
    rev = b.read_stored_revision("s", T)
    b.commit_repair(M, TornMarker(1, []), [], T, expected_revision=rev)  # type: ignore[arg-type]
    append(b, M, [step_start(1, 1, 1), step_start(2, 1, 2)])
    with pytest.raises(SessionConflictError, match="repair is stale: physical tail no longer starts at seq 1"):
        a.commit_repair(M, seen.torn, [], T, expected_revision=seen.revision)
    assert seqs_of(a.load_stored("s", T).events) == [0, 1, 2]  # type: ignore[union-attr]
    a.close()
    b.close()


def test_e45_inert_calls_on_an_empty_store(tmp_path: Path) -> None:
    st = storage(db_path(tmp_path))
    st.append_batch(M, [], False, T, expected_next_seq=0)
    st.commit_repair(M, None, [], T, expected_revision="")
    assert st.read_stored_revision("s", T) is None
    with pytest.raises(SessionConflictError, match="metadata row is missing"):
        st.commit_repair(M, TornMarker(0, []), [], T, expected_revision="")
    st.close()


def test_e46_repair_preconditions(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = _torn_at_1(path)
    rev = st.read_stored_revision("s", T)
    with pytest.raises(SessionConflictError, match="repair omitted current torn tail at seq 1"):
        st.commit_repair(M, None, [text_delta(1, 1, 1, "c")], T, expected_revision=rev)  # type: ignore[arg-type]
    st.commit_repair(M, TornMarker(1, []), [], T, expected_revision=rev)  # type: ignore[arg-type]
    rev = st.read_stored_revision("s", T)
    with pytest.raises(SessionConflictError, match="repair is stale: closer starts at seq 2, stored next seq is 1"):
        st.commit_repair(M, None, [text_delta(2, 1, 1, "c")], T, expected_revision=rev)  # type: ignore[arg-type]
    with raw(path) as con:
        con.execute("DELETE FROM events")
    st.commit_repair(M, None, [text_delta(0, 1, 1, "c")], T, expected_revision=rev)  # type: ignore[arg-type]
    assert seqs_of(st.load_stored("s", T).events) == [0]  # type: ignore[union-attr]
    st.close()


def test_e47_append_refuses_an_invalid_physical_tail(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = _torn_at_1(path)
    before = event_rows(path)
    with pytest.raises(SessionStorageCorruptError, match="session s has an invalid physical tail at seq 1"):
        append(st, M, [step_start(2, 1, 1)])
    assert event_rows(path) == before
    st.close()


def test_e48_external_invalid_header_values_reject_reads(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    st = storage(path)
    append(st, M, one_turn_log(), materialized=False)
    for column, value in (("origin", "'external'"), ("delegation_depth", "-1"), ("seed_length", "-1")):
        with raw(path) as con:
            con.execute(f"UPDATE sessions SET {column} = {value}")
        with pytest.raises(SessionStorageCorruptError):
            st.list_headers(T)
        with pytest.raises(SessionStorageCorruptError):
            st.load_stored("s", T)
        with raw(path) as con:
            con.execute(f"UPDATE sessions SET {column} = NULL")
    st.close()


def test_e50_revision_lifecycle(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        store = service(path)
        await store.create(M)
        await store.append("s", one_turn_log() + open_turn2())
        r1 = (await store.list_snapshots())[0].revision
        assert (await store.list_snapshots())[0].revision == r1
        await store.inspect("s")
        await store.read_from("s", 3)
        assert (await store.list_snapshots())[0].revision == r1
        await service(path).load("s")  # commits closers
        r2 = (await store.list_snapshots())[0].revision
        assert r2 != r1 and r2.endswith(":revision:2")
        await store.close()

    run(body())


def test_revisions_differ_across_stores_and_copies(tmp_path: Path) -> None:
    first, second = db_path(tmp_path), tmp_path / "other" / "sessions.sqlite"

    async def fill(path: Path) -> str:
        store = service(path)
        await store.create(M)
        await store.append("s", one_turn_log())
        rev = (await store.list_snapshots())[0].revision
        await store.close()
        return rev

    async def rev_of(path: Path) -> str:
        store = service(path)
        rev = (await store.list_snapshots())[0].revision
        await store.close()
        return rev

    r1, r2 = run(fill(first)), run(fill(second))
    assert r1 != r2 and r1.startswith("file:") and ":store:" in r1
    copy = tmp_path / "copy" / "sessions.sqlite"
    copy.parent.mkdir(mode=0o700)
    shutil.copy2(first, copy)
    assert run(rev_of(copy)) != r1  # same store_id, different file identity
    assert run(rev_of(first)) == r1  # stable for an unchanged log


def test_e51_interrupted_turn(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        await write_open_turn(path)
        store = service(path)
        before = (await store.list_snapshots())[0].revision
        inspected = wire((await store.inspect("s")).events)
        assert types_of(inspected)[8:] == ["step/end", "turn/end"]
        assert inspected[9]["data"]["reason"] == {"kind": "interrupted"}
        assert (await store.list_snapshots())[0].revision == before
        loaded = wire((await store.load("s")).events)
        assert loaded == inspected
        assert (await store.list_snapshots())[0].revision != before
        await store.append("s", [turn_start(10, 3), turn_end(11, 3)])
        assert seqs_of((await service(path).load("s")).events) == list(range(12))
        await store.close()

    run(body())


def test_e52_torn_tail_through_the_service(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        await write_open_turn(path)
        with raw(path) as con:
            con.execute("INSERT INTO events VALUES ('s', 8, 'assistant/chunk', 9, '{not json', NULL, NULL, NULL)")
        loaded = wire((await service(path).load("s")).events)
        assert seqs_of(loaded) == list(range(10))
        assert types_of(loaded)[8:] == ["step/end", "turn/end"]
        assert [r[1] for r in event_rows(path)][-2:] == [8, 9]

    run(body())


def test_e53_create_semantics(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        store = service(path)
        await store.create(M)
        await store.append("s", [])
        assert await store.list() == []
        with pytest.raises(SessionConflictError, match="already exists in this backend"):
            await store.create(M)
        await store.append("s", one_turn_log())
        with pytest.raises(SessionConflictError, match="already has a persisted log on disk"):
            await service(path).create(M)
        await store.close()

    run(body())


def test_e54_read_from_arguments(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        store = service(path)
        await store.create(M)
        await store.append("s", one_turn_log() + open_turn2())
        assert wire((await store.read_from("s", 100)).events) == []
        assert seqs_of((await store.read_from("s", 6)).events) == [6, 7]  # open turn: no closers
        for bad in (-1, 1.5):
            with pytest.raises(SessionArgumentError, match="non-negative safe integer"):
                await store.read_from("s", bad)  # type: ignore[arg-type]
        with pytest.raises(SessionNotFoundError, match="not found"):
            await store.read_from("nope", 0)
        await store.close()

    run(body())


@pytest.mark.parametrize(("version", "phrase"), [(99, "upgrade the harness"), (-1, "no upgrade path")])
def test_e55_header_versions(tmp_path: Path, version: int, phrase: str) -> None:
    path = db_path(tmp_path)
    st = storage(path)
    append(st, meta("s", "/p", version=version), one_turn_log(), materialized=False)
    st.close()

    async def body() -> None:
        store = service(path)
        assert (await store.list())[0].version == version
        with pytest.raises(SessionFormatUnsupportedError, match=phrase):
            await store.load("s")
        await store.close()

    run(body())


def test_e56_unknown_event_types(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        store = service(path)
        await store.create(M)
        await store.append("s", [*one_turn_log(), {"type": "widget/pinned", "seq": 6, "time": 7, "data": {}}])
        with pytest.raises(SessionFormatUnsupportedError, match="not marked ignorable"):
            await store.load("s")
        await store.create(meta("t", "/p"))
        await store.append("t", [*one_turn_log(), {"type": "widget/pinned", "seq": 6, "time": 7, "data": {}, "ignorable": True}])
        assert types_of((await store.load("t")).events)[-1] == "widget/pinned"
        await store.close()

    run(body())


def test_e57_e59_header_roundtrip_and_reopen(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    header = {"version": 0, "id": "c", "createdAt": 5, "cwd": "/project", "delegationDepth": 0, "parentSession": "p"}

    async def body() -> None:
        store = service(path)
        await store.create(header)
        await store.append("c", one_turn_log())
        first = (await store.inspect("c")).to_json()
        await store.close()
        again = service(path)
        assert (await again.inspect("c")).to_json() == first
        listed = [h.to_json() for h in await again.list()]
        assert listed == [
            {"version": 0, "id": "c", "createdAt": 5, "cwd": "/project", "parentSession": "p", "delegationDepth": 0}
        ]
        await again.close()

    run(body())


def test_e58_no_location_no_raw_artifacts(tmp_path: Path) -> None:
    async def body() -> None:
        store = service(db_path(tmp_path))
        assert store.locate(M) is None and store.supports_raw_artifacts is False
        with pytest.raises(SessionPersistenceError, match="does not expose raw artifacts"):
            await store.read_raw("s")
        await store.close()

    run(body())


def test_e61_aborted_signal(tmp_path: Path) -> None:
    async def body() -> None:
        store = service(db_path(tmp_path))
        signal = AbortSignal()
        reason = RuntimeError("stop now")
        signal.abort(reason)
        for call in (
            store.list(signal),
            store.list_snapshots(signal),
            store.inspect("s", signal),
            store.read_from("s", 0, signal),
        ):
            with pytest.raises(BaseException) as info:
                await call
            assert info.value is reason or getattr(info.value, "reason", None) is reason
        await store.close()

    run(body())


def test_list_order_is_insertion_order(tmp_path: Path) -> None:
    st = storage(db_path(tmp_path))
    for sid in ("zeta", "alpha", "mid"):
        append(st, meta(sid, "/p"), one_turn_log(), materialized=False)
    assert [h["id"] for h in st.list_headers(T)] == ["zeta", "alpha", "mid"]
    st.close()


def test_batch_boundaries_do_not_change_the_log(tmp_path: Path) -> None:
    st = storage(db_path(tmp_path))
    log = chunk_log(300)
    append_batches(st, M, log, [7, 1, 64, 2])
    assert st.load_stored("s", T).events == log  # type: ignore[union-attr]
    for k in (0, 1, 9, 150, 301, 303):
        assert _read_from(st, k) == list(range(k, 304))
    st.close()


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("data", "1", "stored data must be a string or blob"),
        ("source_event_seqs", "1", "stored source_event_seqs must be a blob or null"),
        ("data", "1.5", "stored data must be a string or blob"),
    ],
)
def test_wrong_column_types_reject_the_read_and_are_never_a_torn_tail(
    tmp_path: Path, column: str, value: str, message: str
) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        await write_open_turn(path)
        with raw(path) as con:
            con.execute(f"UPDATE events SET {column} = {value} WHERE seq = 7")  # the very last row
        store = service(path)
        for call in (store.inspect("s"), store.load("s"), store.read_from("s", 7)):
            with pytest.raises(SessionStorageCorruptError, match=message):
                await call
        assert [h.id for h in await store.list()] == ["s"]  # list reads no event rows
        await store.close()

    run(body())
    assert len(event_rows(path)) == 8  # nothing was cut


def test_corrupt_row_before_the_last_turn_end_is_not_repaired(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        await write_open_turn(path)
        with raw(path) as con:
            con.execute("UPDATE events SET data = X'00' WHERE seq = 3")  # before turn/end@5
        store = service(path)
        for call in (store.inspect("s"), store.load("s")):
            with pytest.raises(SessionStorageCorruptError, match="corrupt session log: invalid committed physical row at seq 3"):
                await call
        with pytest.raises(SessionStorageCorruptError, match="invalid committed physical row at seq 3"):
            await store.append("s", [turn_end(8, 2)])
        assert seqs_of((await store.read_from("s", 4)).events) == [4, 5, 6, 7]
        await store.close()

    run(body())
    assert len(event_rows(path)) == 8
