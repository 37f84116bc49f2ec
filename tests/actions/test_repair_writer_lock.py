"""A repair and a writer never race past each other's lock (issue 21 item 1).

A SessionScope writer locks the transcript between its checks and its write; a repair (or restore)
swaps a new file in by rename.  Before the fix the repair took no lock, so a writer that had opened
the old file wrote its acknowledged, fsynced append into the inode the rename had just orphaned: the
event was gone and ``verify`` said ok.  Now the repair takes the same lock before its compare-and-swap
and holds it through the rename, and a writer that gets the lock re-checks that its descriptor is
still the file at the path, failing with a conflict (nothing written) when it is not.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import privatize, run

from persistence import JsonlSessionPersistence, SessionConflictError
from persistence.jsonl import repair_commit
from persistence.jsonl.storage import NEVER, JsonlStorage

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(sys.platform == "win32", reason="advisory flock is POSIX-only"),
]

COMPRESSIONS = ["zstd", "none"]


def open_turn_root(tmp: Path, compression: str) -> Path:
    root = tmp / "root"

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            await store.create(sk.meta("s", sk.WORK))
            await store.append("s", sk.one_turn_log() + sk.open_turn2())
        finally:
            await store.close()

    run(go())
    privatize(root)
    return root


def late_events() -> list[dict[str, Any]]:
    """What the writer appends after the open turn (seqs 8-9, the same seqs the repair's closers take)."""
    return [sk.step_end(8, 2, 1, time=100), sk.turn_end(9, 2, time=101)]


async def _repair(root: Path, compression: str) -> str:
    store = JsonlSessionPersistence(root, compression=compression)
    try:
        revision = await store.read_stored_revision("s")
        assert revision is not None
        return await store.repair("s", expected_revision=revision)
    finally:
        await store.close()


def _writer(root: Path, compression: str) -> tuple[JsonlStorage, dict[str, Any]]:
    """A second SessionScope writer that read the whole (open-turn) log: it expects exactly those bytes."""
    storage = JsonlStorage(root, compression=compression)
    stored = storage.load_stored("s", NEVER)
    assert stored is not None and stored.torn is None
    return storage, stored.meta


def _append_in_thread(storage: JsonlStorage, meta: dict[str, Any]) -> tuple[threading.Thread, list[BaseException | None]]:
    outcome: list[BaseException | None] = []

    def go() -> None:
        try:
            storage.append_batch(meta, late_events(), True, NEVER, expected_next_seq=8)
            outcome.append(None)
        except BaseException as err:  # reported to the test thread
            outcome.append(err)

    t = threading.Thread(target=go)
    t.start()
    return t, outcome


def _assert_never_orphaned(path: Path, outcome: BaseException | None, compression: str, repaired: bytes) -> None:
    """The writer's append landed in the file at the path, or failed with a conflict: never acknowledged elsewhere."""
    now = path.read_bytes()
    if outcome is None:
        plain = sk.plaintext(now, compression)
        assert b'"seq":8,"time":100' in plain, "an acknowledged append is not in the file at the path (written to an orphan)"
    else:
        assert isinstance(outcome, SessionConflictError), outcome
        assert "nothing was written" in str(outcome)
        assert now == repaired  # the repaired log, untouched by the refused append


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_writer_that_opened_the_old_file_never_writes_into_the_orphan(
    compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer has the transcript open when the repair swaps it; it gets its lock only afterwards."""
    root = open_turn_root(tmp_path, compression)
    path = sk.artifact(root, sk.WORK, "s", compression)
    storage, meta = _writer(root, compression)
    opened, go = threading.Event(), threading.Event()
    original = JsonlStorage._lock_exclusive

    def paused(*args: Any) -> Any:
        opened.set()
        assert go.wait(20)
        return original(*args)

    monkeypatch.setattr(JsonlStorage, "_lock_exclusive", staticmethod(paused))
    t, outcome = _append_in_thread(storage, meta)
    try:
        assert opened.wait(20)
        run(_repair(root, compression))
        repaired = path.read_bytes()
    finally:
        go.set()
        t.join(30)
    assert len(outcome) == 1
    _assert_never_orphaned(path, outcome[0], compression, repaired)
    assert isinstance(outcome[0], SessionConflictError)  # the file was replaced: this writer's cursor is stale


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_writer_blocked_on_the_lock_while_repair_swaps_fails_with_a_conflict(
    compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repair is inside its swap (lock held) when the writer arrives: the writer waits, then refuses."""
    root = open_turn_root(tmp_path, compression)
    path = sk.artifact(root, sk.WORK, "s", compression)
    storage, meta = _writer(root, compression)
    holder: dict[str, Any] = {}
    original = repair_commit._swap_in

    def slow_swap(*args: Any) -> None:
        t, outcome = _append_in_thread(storage, meta)
        holder["thread"], holder["outcome"] = t, outcome
        time.sleep(0.3)
        assert outcome == []  # the writer waits for the repair's lock: nothing written meanwhile
        original(*args)

    monkeypatch.setattr(repair_commit, "_swap_in", slow_swap)
    run(_repair(root, compression))
    repaired = path.read_bytes()
    holder["thread"].join(30)
    [outcome] = holder["outcome"]
    _assert_never_orphaned(path, outcome, compression, repaired)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_repair_waits_for_a_held_lock_and_fails_typed(compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A held ``LOCK_EX`` on the transcript (another writer mid-append) stops the repair: it waits, then fails
    with a conflict and changes nothing; released in time, the repair goes on."""
    from persistence.jsonl import locks

    monkeypatch.setattr(locks, "REPAIR_LOCK_WAIT_S", 0.5)
    root = open_turn_root(tmp_path, compression)
    path = sk.artifact(root, sk.WORK, "s", compression)
    before = path.read_bytes()
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        start = time.monotonic()
        with pytest.raises(SessionConflictError, match="holds the log"):
            run(_repair(root, compression))
        assert time.monotonic() - start >= 0.4  # it waited for the lock before giving up
        assert path.read_bytes() == before
        assert [p.name for p in path.parent.iterdir() if ".repair-" in p.name] == []
        # Released while the repair waits: the repair then commits.
        threading.Timer(0.2, lambda: fcntl.flock(fd, fcntl.LOCK_UN)).start()
        run(_repair(root, compression))
    finally:
        os.close(fd)
    assert path.read_bytes() != before

    async def status() -> str:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            return (await store.diagnose("s")).status
        finally:
            await store.close()

    assert asyncio.run(status()) == "ok"


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_restore_takes_the_lock_too(compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from persistence.jsonl import locks

    monkeypatch.setattr(locks, "REPAIR_LOCK_WAIT_S", 0.3)
    root = open_turn_root(tmp_path, compression)
    path = sk.artifact(root, sk.WORK, "s", compression)
    backup = path.parent / (path.name + ".bak-20260101T000000Z")
    backup.write_bytes(path.read_bytes())
    before = path.read_bytes()

    async def restore() -> str:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            revision = await store.read_stored_revision("s")
            assert revision is not None
            return await store.restore_backup("s", str(backup), expected_revision=revision)
        finally:
            await store.close()

    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(SessionConflictError, match="holds the log"):
            run(restore())
        assert path.read_bytes() == before and os.stat(path).st_ino == os.fstat(fd).st_ino
    finally:
        os.close(fd)
    run(restore())
    assert path.read_bytes() == before and path.stat().st_ino != backup.stat().st_ino


def _append_later(
    storage: JsonlStorage, meta: dict[str, Any], start: threading.Event, delay: float, outcome: list[BaseException | None]
) -> None:
    start.wait(10)
    time.sleep(delay)
    try:
        storage.append_batch(meta, late_events(), True, NEVER, expected_next_seq=8)
        outcome.append(None)
    except BaseException as err:  # reported to the test thread
        outcome.append(err)


def _race_trials(tmp_path: Path, compression: str, trials: int) -> None:
    """Natural races (no hooks): a writer that read the open-turn log appends seqs 8-9 while a repair commits
    its closers for the same seqs.  Exactly one wins, and an acknowledged append is always in the file at the path."""
    import random

    rng = random.Random(21)
    outcomes = {"writer": 0, "repair": 0}
    for n in range(trials):
        root = open_turn_root(tmp_path / f"t{n}", compression)
        path = sk.artifact(root, sk.WORK, "s", compression)
        storage, meta = _writer(root, compression)
        delay = rng.random() * 0.004
        start = threading.Event()
        outcome: list[BaseException | None] = []
        t = threading.Thread(target=_append_later, args=(storage, meta, start, delay, outcome))
        t.start()
        start.set()
        try:
            run(_repair(root, compression))
            repaired: bytes | None = path.read_bytes()
        except SessionConflictError:
            repaired = None  # the writer got in first: the repair changed nothing
        t.join(30)
        [got] = outcome
        plain = sk.plaintext(path.read_bytes(), compression)
        if got is None:
            outcomes["writer"] += 1
            assert b'"seq":8,"time":100' in plain, f"trial {n}: an acknowledged append is not in the file at the path"
            assert b'"interrupted"' not in plain  # and the repair did not also commit its closers
        else:
            outcomes["repair"] += 1
            assert isinstance(got, SessionConflictError), got
            assert repaired is not None and path.read_bytes() == repaired
    assert sum(outcomes.values()) == trials


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_natural_races_between_a_writer_and_a_repair_short(compression: str, tmp_path: Path) -> None:
    _race_trials(tmp_path, compression, 4)


@pytest.mark.slow
@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_natural_races_between_a_writer_and_a_repair(compression: str, tmp_path: Path) -> None:
    _race_trials(tmp_path, compression, 150)
