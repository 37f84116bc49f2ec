"""``readable_prefix`` on SQLite: a refused session's events before its first damaged row, and why they stop.

SQLite-specific: JSONL viewers decode the artifact's bytes with ``iter_raw`` (the backend says None).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from persistence import PrefixStop, open_store


def _turn(seq: int, turn: int, text: str) -> list[dict[str, Any]]:
    """A closed turn: start, user message, end (3 events)."""
    return [
        {"type": "turn/start", "seq": seq, "time": 1000 + seq, "data": {"turn": turn}},
        {
            "type": "user/message",
            "seq": seq + 1,
            "time": 1001 + seq,
            "data": {"id": f"u{turn}", "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}},
        },
        {"type": "turn/end", "seq": seq + 2, "time": 1002 + seq, "data": {"turn": turn, "reason": {"kind": "completed"}}},
    ]


def _store(tmp_path: Path, turns: int = 4) -> str:
    path = str(tmp_path / "sessions.sqlite")

    async def go() -> None:
        store = open_store(path, "sqlite")
        try:
            await store.create({"id": "s1", "createdAt": 1767600000000, "cwd": "/w/p"})
            events: list[dict[str, Any]] = []
            for t in range(1, turns + 1):
                events += _turn(len(events), t, f"prompt {t}")
            await store.append("s1", events)
        finally:
            await store.close()

    asyncio.run(go())
    return path


def _prefix(path: str, session_id: str = "s1") -> Any:
    async def go() -> Any:
        store = open_store(path, "sqlite", read_only=True, create=False)
        try:
            before = Path(path).read_bytes()
            result = await store.readable_prefix(session_id)
            assert Path(path).read_bytes() == before  # a read never writes
            return result
        finally:
            await store.close()

    return asyncio.run(go())


def _damage(path: str, sql: str, *params: Any) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def test_a_clean_session_reads_whole_with_no_stop(tmp_path: Path) -> None:
    path = _store(tmp_path)
    prefix = _prefix(path)
    assert prefix is not None and prefix.stop is None
    assert prefix.meta["id"] == "s1" and len(prefix.events) == 12
    assert [e["seq"] for e in prefix.events] == list(range(12))


def test_an_undecodable_row_stops_the_prefix_and_says_why(tmp_path: Path) -> None:
    path = _store(tmp_path)
    _damage(path, "UPDATE events SET data = '{not json' WHERE session_id = 's1' AND seq = 7")
    prefix = _prefix(path)
    assert [e["seq"] for e in prefix.events] == list(range(7))
    assert prefix.stop == PrefixStop(7, prefix.stop.why, 5)  # seq 7 and the 4 rows after it
    assert prefix.stop.why.startswith("the row at seq 7 does not decode")


def test_a_damaged_cell_stops_the_prefix(tmp_path: Path) -> None:
    path = _store(tmp_path)
    # STRICT tables refuse a wrong type, so the damage a disk or a foreign writer leaves is simulated
    # by a value of the right type the decoder refuses: an empty type name.
    _damage(path, "UPDATE events SET type = '' WHERE session_id = 's1' AND seq = 4")
    prefix = _prefix(path)
    assert len(prefix.events) == 4 and prefix.stop.seq == 4
    assert "stored type must not be empty" in prefix.stop.why


def test_a_seq_gap_stops_the_prefix(tmp_path: Path) -> None:
    path = _store(tmp_path)
    _damage(path, "DELETE FROM events WHERE session_id = 's1' AND seq = 5")
    prefix = _prefix(path)
    assert len(prefix.events) == 5
    assert prefix.stop.seq == 6 and prefix.stop.why == "seq 6 follows seq 4: the seq chain breaks there"
    assert prefix.stop.rows_after == 6


def test_the_engine_still_refuses_the_session_and_the_prefix_is_no_verdict(tmp_path: Path) -> None:
    path = _store(tmp_path)
    _damage(path, "UPDATE events SET data = '{not json' WHERE session_id = 's1' AND seq = 7")

    async def go() -> str:
        store = open_store(path, "sqlite", read_only=True, create=False)
        try:
            return (await store.diagnose("s1")).status
        finally:
            await store.close()

    assert asyncio.run(go()) == "corrupt"
    assert _prefix(path).stop is not None


def test_a_missing_session_and_a_jsonl_store_have_no_prefix(tmp_path: Path) -> None:
    assert _prefix(_store(tmp_path), "nope") is None

    async def jsonl() -> Any:
        store = open_store(str(tmp_path / "root"), "jsonl")
        try:
            await store.create({"id": "j1", "createdAt": 1767600000000, "cwd": "/w/p"})
            return await store.readable_prefix("j1")
        finally:
            await store.close()

    assert asyncio.run(jsonl()) is None


@pytest.mark.parametrize("chunks", [3, 40])
def test_packed_rows_stay_packed_in_the_prefix(tmp_path: Path, chunks: int) -> None:
    path = str(tmp_path / "sessions.sqlite")
    deltas = [
        {
            "type": "assistant/text-delta",
            "seq": 3 + i,
            "time": 2000 + i,
            "data": {"turn": 1, "step": 1, "index": 0, "delta": f"d{i} "},
        }
        for i in range(chunks)
    ]

    async def go() -> None:
        store = open_store(path, "sqlite")
        try:
            await store.create({"id": "s1", "createdAt": 1767600000000, "cwd": "/w/p"})
            head = _turn(0, 1, "go")[:2]
            step = {"type": "step/start", "seq": 2, "time": 1999, "data": {"turn": 1, "step": 1}}
            await store.append("s1", [*head, step, *deltas])
        finally:
            await store.close()

    asyncio.run(go())
    prefix = _prefix(path)
    assert prefix.stop is None and len(prefix.events) == 3 + chunks
    assert [e.get("data", {}).get("delta") for e in prefix.events.records()[3:]] == [f"d{i} " for i in range(chunks)]


def test_a_data_frame_that_decompresses_past_the_cap_stops_the_prefix_instead_of_raising(tmp_path: Path) -> None:
    """A zstd ``data`` cell of a few KB that expands past the 64 MiB cap is damage like any other."""
    import zstandard

    path = _store(tmp_path)
    bomb = zstandard.ZstdCompressor(level=19).compress(b'{"a":"' + b"0" * (70 * 1024 * 1024) + b'"}')
    assert len(bomb) < 100_000
    _damage(path, "UPDATE events SET data = ? WHERE session_id = 's1' AND seq = 4", bomb)
    prefix = _prefix(path)
    assert len(prefix.events) == 4 and prefix.stop is not None and prefix.stop.seq == 4
    assert prefix.stop.why.startswith("the row at seq 4 does not decode")
