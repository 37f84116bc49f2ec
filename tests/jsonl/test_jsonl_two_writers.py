"""Two SessionScope writers on one JSONL session (issue 10 item 8).

Each backend instance remembers the transcript size it expects (after its own whole read, after each
of its appends) and refuses to append when the file has another size: the second writer's
append/flush fails with ``SessionConflictError`` and nothing is written, as SQLite already does.
A store that re-reads the session before appending is of course allowed to append.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk

from persistence import JsonlSessionPersistence, SessionConflictError, SessionPersistenceError, SessionStore

pytestmark = pytest.mark.timeout(60)

COMPRESSIONS = ["zstd", "none"]
REPO = Path(__file__).resolve().parents[2]


def stored(root: Path, compression: str, sid: str = "s") -> Path:
    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            await store.create(sk.meta(sid, sk.WORK))
            await store.append(sid, sk.one_turn_log())
        finally:
            await store.close()

    sk.run(go())
    return sk.artifact(root, sk.WORK, sid, compression)


async def loaded_seqs(root: Path, compression: str, sid: str = "s") -> list[int]:
    fresh = JsonlSessionPersistence(root, compression=compression)
    try:
        return sk.seqs_of((await fresh.load(sid)).events)
    finally:
        await fresh.close()


def turn(seq: int, number: int) -> list[dict[str, Any]]:
    return [sk.turn_start(seq, number), sk.turn_end(seq + 1, number)]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_second_writer_append_is_refused_and_nothing_written(compression: str, tmp_path: Path) -> None:
    path = stored(tmp_path, compression)

    async def body() -> None:
        a = JsonlSessionPersistence(tmp_path, compression=compression)
        b = JsonlSessionPersistence(tmp_path, compression=compression)
        try:
            await a.load("s")
            await b.load("s")
            await b.append("s", sk.completed_turn2())  # seqs 6-7: the first writer wins
            size = path.stat().st_size
            with pytest.raises(SessionConflictError) as info:
                await a.append("s", sk.completed_turn2())  # the same seqs 6-7 from a stale cursor
            msg = str(info.value)
            assert msg.startswith(f'another writer appended to "{path}" (expected ')
            assert msg.endswith(f" bytes, found {size}); nothing was written")
            assert path.stat().st_size == size
            # The refusal is sticky while the cursor is stale; a re-read re-bases it.
            with pytest.raises(SessionConflictError):
                await a.append("s", sk.completed_turn2())
            await a.load("s")
            await a.append("s", turn(8, 3))
            await b.load("s")
            await b.append("s", turn(10, 4))
        finally:
            await a.close()
            await b.close()
        assert await loaded_seqs(tmp_path, compression) == list(range(12))

    sk.run(body())


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_own_appends_and_sequential_stores_are_not_conflicts(compression: str, tmp_path: Path) -> None:
    stored(tmp_path, compression)

    async def body() -> None:
        a = JsonlSessionPersistence(tmp_path, compression=compression)
        try:
            await a.load("s")
            await a.append("s", turn(6, 2))
            await a.append("s", turn(8, 3))
        finally:
            await a.close()
        b = JsonlSessionPersistence(tmp_path, compression=compression)
        try:
            await b.append("s", turn(10, 4))  # adopts (reads the whole log) before appending
        finally:
            await b.close()
        assert await loaded_seqs(tmp_path, compression) == list(range(12))

    sk.run(body())


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_own_repair_then_append_is_not_a_conflict(compression: str, tmp_path: Path) -> None:
    """``load`` of an interrupted log commits its closers (a new file) and re-reads it before appending."""

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        try:
            await store.create(sk.meta("s", sk.WORK))
            await store.append("s", sk.one_turn_log())
            await store.append("s", sk.open_turn2())
        finally:
            await store.close()
        a = JsonlSessionPersistence(tmp_path, compression=compression)
        try:
            await a.load("s")  # appends step/end 8 and turn/end 9
            await a.append("s", turn(10, 3))
        finally:
            await a.close()
        live = SessionStore(JsonlSessionPersistence(tmp_path, compression=compression))
        try:
            session = await live.resume("s")
            session.append("turn/start", {"turn": 4})
            await live.flush("s")
        finally:
            await live.close()
            await live.persistence.close()
        # 0-11, resume's session/end-seed 12, turn/start 13, and load's closer for that open turn.
        assert await loaded_seqs(tmp_path, compression) == list(range(15))

    sk.run(body())


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_second_live_session_flush_fails_with_a_conflict(compression: str, tmp_path: Path) -> None:
    """Two SessionStores resume one session; the write-behind flush of the stale one fails."""
    path = stored(tmp_path, compression)

    async def body() -> None:
        pa = JsonlSessionPersistence(tmp_path, compression=compression)
        pb = JsonlSessionPersistence(tmp_path, compression=compression)
        sa = SessionStore(pa, write_batch_max_delay_ms=10_000)
        sb = SessionStore(pb, write_batch_max_delay_ms=10_000)
        live_a = await sa.resume("s")
        live_b = await sb.resume("s")
        for live in (live_b, live_a):
            live.append("turn/start", {"turn": 2})
            live.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
        await sb.flush("s")
        size = path.stat().st_size
        with pytest.raises(SessionConflictError, match="another writer appended to"):
            await sa.flush("s")
        assert path.stat().st_size == size
        await sb.close()
        await pb.close()
        with pytest.raises(SessionPersistenceError, match="another writer appended to"):
            await sa.close()  # disposing retries the buffered batch: still refused
        with pytest.raises(SessionPersistenceError, match="another writer appended to"):
            await pa.close()
        seqs = await loaded_seqs(tmp_path, compression)
        assert seqs == list(range(len(seqs))) and len(seqs) >= 8  # loadable, no duplicate seq

    sk.run(body())


CHILD = r"""
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from persistence import JsonlSessionPersistence, SessionPersistenceError

async def main() -> None:
    store = JsonlSessionPersistence(sys.argv[2], compression=sys.argv[3])
    try:
        await store.load("s")
        print("R", flush=True)
        sys.stdin.readline()
        batch = [{"type": "turn/start", "seq": 6, "time": 7, "data": {"turn": 2}},
                 {"type": "turn/end", "seq": 7, "time": 8, "data": {"turn": 2, "reason": {"kind": "completed"}}}]
        try:
            await store.append("s", batch)
            print("OK", flush=True)
        except SessionPersistenceError as err:
            print(type(err).__name__, err, flush=True)
    finally:
        await store.close()

asyncio.run(main())
"""


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_two_processes_second_append_is_refused(compression: str, tmp_path: Path) -> None:
    path = stored(tmp_path, compression)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(REPO), str(tmp_path), compression],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for p in procs:
            assert p.stdout is not None
            assert p.stdout.readline().strip() == "R"  # both loaded the same 6 events
        outs = []
        for p in procs:  # one after the other: the first wins, the second finds the file grown
            out, err = p.communicate("go\n", timeout=30)
            assert p.returncode == 0, err
            outs.append(out.strip())
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert outs[0] == "OK"
    assert outs[1].startswith(f'SessionConflictError another writer appended to "{path}"'), outs[1]
    assert sk.run(loaded_seqs(tmp_path, compression)) == list(range(8))


@pytest.mark.skipif(sys.platform == "win32", reason="advisory flock is POSIX-only")
def test_append_waits_for_the_advisory_lock(tmp_path: Path) -> None:
    """The check and the write run under ``flock(LOCK_EX)``: another holder delays the append."""
    path = stored(tmp_path, "none")
    done = threading.Event()
    errors: list[BaseException] = []

    def append() -> None:
        async def go() -> None:
            store = JsonlSessionPersistence(tmp_path, compression="none")
            try:
                await store.append("s", sk.completed_turn2())
            finally:
                await store.close()

        try:
            asyncio.run(go())
        except BaseException as err:  # reported to the test thread
            errors.append(err)
        finally:
            done.set()

    holder = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        size = path.stat().st_size
        t = threading.Thread(target=append)
        t.start()
        time.sleep(0.5)
        assert not done.is_set() and path.stat().st_size == size  # blocked on the lock, nothing written
        fcntl.flock(holder, fcntl.LOCK_UN)
        assert done.wait(20)
        t.join()
    finally:
        os.close(holder)
    assert errors == []
    assert sk.run(loaded_seqs(tmp_path, "none")) == list(range(8))
