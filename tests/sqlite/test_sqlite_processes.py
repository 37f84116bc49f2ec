"""Several processes on one file: stale writers fail typed, readers see every commit (spec §10; E42, E43)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sessionkit import meta, one_turn_log, run, seqs_of, step_end, step_start, turn_end, turn_start, wire
from sqlite_helpers import db_path, service

from persistence.errors import SessionConflictError

CHILD = str(Path(__file__).with_name("sqlite_child.py"))


def child(*args: str, stdin: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, CHILD, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.PIPE if stdin else None,
    )


def line(proc: subprocess.Popen[str]) -> Any:
    assert proc.stdout is not None
    text = proc.stdout.readline()
    if not text:
        proc.wait(10)
        pytest.fail(f"child exited early: {proc.stderr.read() if proc.stderr else ''}")
    return json.loads(text)


def test_stale_next_seq_from_another_process_fails_typed_and_loses_nothing(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        mine = service(path)
        await mine.create(meta("s", "/p"))
        await mine.append("s", one_turn_log())
        other = child("append", str(path), "s", json.dumps([turn_start(6, 2), turn_end(7, 2)]))
        assert line(other) == {"ok": True}
        assert other.wait(10) == 0
        with pytest.raises(SessionConflictError, match="append starts at seq 6, stored next seq is 8"):
            await mine.append("s", [turn_start(6, 9), turn_end(7, 9)])
        fresh = service(path)
        events = wire((await fresh.load("s")).events)
        assert seqs_of(events) == list(range(8)) and events[6]["data"] == {"turn": 2}
        await fresh.close()
        await mine.close()

    run(body())


def test_read_only_reader_sees_every_commit_of_a_live_writer(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    writer = child("writer", str(path), "live", stdin=True)
    assert writer.stdin is not None
    try:
        assert line(writer) == {"ready": True}
        batches = [
            [turn_start(0, 1), step_start(1, 1, 1)],
            [
                {
                    "type": "assistant/chunk",
                    "seq": 2 + i,
                    "time": 3 + i,
                    "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "t"}},
                }
                for i in range(50)
            ],
            [step_end(52, 1, 1), turn_end(53, 1)],
        ]

        async def body() -> None:
            reader = service(path, read_only=True)
            assert await reader.list() == []  # nothing committed yet: create() alone writes no row
            total = 0
            for batch in batches:
                writer.stdin.write(json.dumps(batch) + "\n")  # type: ignore[union-attr]
                writer.stdin.flush()  # type: ignore[union-attr]
                reply = line(writer)
                total += len(batch)
                assert reply["committed"] == total
                # The writer still holds its connection: these commits live only in the -wal.
                assert Path(str(path) + "-wal").stat().st_size > 0
                assert seqs_of((await reader.read_from("live", 0)).events) == list(range(total))
                assert seqs_of((await reader.inspect("live")).events)[:total] == list(range(total))
                assert (await reader.list_snapshots())[0].revision == reply["revision"]
            await reader.close()

        run(body())
    finally:
        writer.stdin.close()
        writer.wait(10)
    assert writer.returncode == 0, writer.stderr.read() if writer.stderr else ""


def test_e42_append_waits_for_another_process_lock(tmp_path: Path) -> None:
    path = db_path(tmp_path)

    async def body() -> None:
        store = service(path, busy_timeout_ms=1000)
        await store.create(meta("s", "/p"))
        await store.append("s", [turn_start(0, 1)])
        holder = child("hold", str(path), "150")
        assert line(holder) == {"locked": True}
        await store.append("s", [turn_end(1, 1)])
        assert holder.wait(10) == 0
        assert seqs_of((await store.read_from("s", 0)).events) == [0, 1]
        await store.close()

    run(body())
