"""Fork and resume on upstream's own artifacts (``../shared/fixtures/upstream/<backend>/{fork,interrupted}``).

Each test works on a private copy (dirs 0700, files 0600) and re-reads every result through a fresh
backend instance, i.e. with the read rules upstream applies (header, seedLength, parentSession,
end-seed placement, turn numbering).  Where upstream wrote the very same operation (the fork child's
seed batch, the repair of the interrupted log), the bytes we write are compared with upstream's.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from livekit import BACKEND_NAMES, UPSTREAM_FIXTURES, copy_fixture, open_backend, plain
from sessionkit import zstd_frames

from persistence import CoordinatedPersistence, SessionForkError, SessionStore
from persistence.jsonl.paths import log_path
from persistence.session import END_SEED

PARENT = "e4d3c2b1-a0f9-4e8d-b7c6-5a4b3c2d1e0f"
CHILD = PARENT + ".sub-1"
CRASHED = "7d0e9b2a-1c44-4f3e-9a51-6b2d8c0f1e77"
CWD = "/home/dev/projects/alpha"
SEED_LENGTH = 232  # the child's seed: the parent through turn 1's turn/end (seq 231)
CHILD_CREATED_AT = 1767744023368  # also the time of the child's end-seed marker (one deterministic clock)

pytestmark = pytest.mark.parametrize("name", BACKEND_NAMES)


def fixture_storage(name: str, scenario: str, tmp_path: Path) -> Path:
    """A private copy of ``<name>/<scenario>/root`` and the backend's storage path inside it."""
    private = tmp_path / "copy"
    copy_fixture(UPSTREAM_FIXTURES / name / scenario / "root", private)
    return private / "sessions.sqlite" if name == "sqlite" else private


def jsonl_file(name: str, root: Path, session_id: str) -> Path:
    return Path(log_path(str(root), CWD, session_id, "none" if name == "jsonl-none" else "zstd"))


def artifact_units(name: str, path: Path) -> list[bytes]:
    """JSONL artifacts as comparable units: lines (raw) or frames' plaintexts (zstd)."""
    data = path.read_bytes()
    if name == "jsonl-none":
        return data.splitlines(keepends=True)
    return zstd_frames(data)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def read(name: str, storage: Path, session_id: str) -> tuple[Any, list[dict[str, Any]]]:
    """(meta, events) through a fresh instance's ``load`` (upstream's rules, repairs committed)."""
    p = open_backend(name, storage)
    try:
        loaded = await p.load(session_id)
        return loaded.meta, plain(loaded.events)
    finally:
        await p.close()


async def physical(name: str, storage: Path, session_id: str) -> list[dict[str, Any]]:
    p = open_backend(name, storage)
    try:
        return plain((await p.read_from(session_id, 0)).events)  # type: ignore[no-any-return]
    finally:
        await p.close()


def remove_session(name: str, storage: Path, session_id: str) -> None:
    if name == "sqlite":
        con = sqlite3.connect(storage)
        try:
            with con:
                con.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
                con.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        finally:
            con.close()
    else:
        shutil.rmtree(jsonl_file(name, storage, session_id).parent)


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def last_turn_end_before_open_turn(events: list[dict[str, Any]]) -> int:
    starts = [e["seq"] for e in events if e["type"] == "turn/start"]
    ends = [e["seq"] for e in events if e["type"] == "turn/end" and e["seq"] < starts[-1]]
    return ends[-1]


def test_fork_at_the_turn_boundary_reproduces_upstreams_child(name: str, tmp_path: Path) -> None:
    """Forking the parent through turn 1 writes what upstream's child holds before its own turn."""
    storage = fixture_storage(name, "fork", tmp_path)

    async def body() -> None:
        _, upstream_child = await read(name, storage, CHILD)
        upstream_units = artifact_units(name, jsonl_file(name, storage, CHILD)) if name != "sqlite" else []
        parent_before = await physical(name, storage, PARENT)
        remove_session(name, storage, CHILD)
        p: CoordinatedPersistence = open_backend(name, storage)
        store = SessionStore(p, clock=lambda: CHILD_CREATED_AT)
        try:
            child = await store.fork(
                PARENT,
                boundary=SEED_LENGTH - 1,
                new_id=CHILD,
                meta={"origin": "subagent", "delegationDepth": 1, "agentPreset": "explorer"},
            )
            assert child.first_live_seq == SEED_LENGTH and child.next_turn == 2
            assert not p.is_live(PARENT)  # a cold source is read, never published or written
            await store.close()
        finally:
            await p.close()
        meta, events = await read(name, storage, CHILD)
        assert (meta.parent_session, meta.seed_length, meta.cwd, meta.created_at) == (PARENT, SEED_LENGTH, CWD, CHILD_CREATED_AT)
        assert (meta.origin, meta.delegation_depth, meta.agent_preset) == ("subagent", 1, "explorer")
        assert len(events) == SEED_LENGTH + 1
        assert events == upstream_child[: SEED_LENGTH + 1]  # seed, then the marker at seq 232
        assert events[SEED_LENGTH] == {"type": END_SEED, "seq": SEED_LENGTH, "time": CHILD_CREATED_AT, "data": {}}
        assert events[:SEED_LENGTH] == parent_before[:SEED_LENGTH]
        assert await physical(name, storage, PARENT) == parent_before
        if name != "sqlite":  # header + one batch (seed and marker), byte for byte as upstream wrote them
            ours = artifact_units(name, jsonl_file(name, storage, CHILD))
            assert len(ours) >= 2 and ours == upstream_units[: len(ours)]

    run(body())


def test_resume_of_the_fork_child_continues_turn_numbering(name: str, tmp_path: Path) -> None:
    storage = fixture_storage(name, "fork", tmp_path)

    async def body() -> None:
        _, before = await read(name, storage, CHILD)
        assert types(before).count(END_SEED) == 1
        last_turn = max(e["data"]["turn"] for e in before if e["type"] == "turn/start")
        p = open_backend(name, storage)
        store = SessionStore(p, clock=lambda: CHILD_CREATED_AT + 10_000)
        try:
            s = await store.resume(CHILD)
            assert s.first_live_seq == len(before) and s.next_turn == last_turn + 1 == 3
            s.append("turn/start", {"turn": s.next_turn})
            s.append("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
            await store.close()
        finally:
            await p.close()
        meta, after = await read(name, storage, CHILD)
        assert (meta.parent_session, meta.seed_length, meta.origin, meta.delegation_depth) == (PARENT, SEED_LENGTH, "subagent", 1)
        assert after[: len(before)] == before
        assert types(after[len(before) :]) == [END_SEED, "turn/start", "turn/end"]
        assert [i for i, e in enumerate(after) if e["type"] == END_SEED] == [SEED_LENGTH, len(before)]
        assert [e["seq"] for e in after] == list(range(len(after)))

    run(body())


def test_fork_of_the_parent_then_resume_of_the_new_child(name: str, tmp_path: Path) -> None:
    storage = fixture_storage(name, "fork", tmp_path)

    async def body() -> None:
        p = open_backend(name, storage)
        store = SessionStore(p)
        try:
            parent = await store.resume(PARENT)
            assert parent.next_turn == 3
            child = await store.fork(PARENT, boundary=SEED_LENGTH - 1, new_id="py-child")
            assert child.next_turn == 2
            child.append("turn/start", {"turn": 2})
            child.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
            await store.close()
        finally:
            await p.close()
        p2 = open_backend(name, storage)
        store2 = SessionStore(p2)
        try:
            again = await store2.resume("py-child")
            assert again.next_turn == 3
            await store2.close()
        finally:
            await p2.close()
        meta, events = await read(name, storage, "py-child")
        assert (meta.parent_session, meta.seed_length) == (PARENT, SEED_LENGTH)
        _, parent_events = await read(name, storage, PARENT)
        assert events[:SEED_LENGTH] == parent_events[:SEED_LENGTH]
        assert types(events[SEED_LENGTH:]) == [END_SEED, "turn/start", "turn/end", END_SEED]
        assert types(parent_events)[-1] == END_SEED  # the resumed parent got exactly one marker

    run(body())


def test_resume_of_the_interrupted_log_commits_upstreams_repair(name: str, tmp_path: Path) -> None:
    storage = fixture_storage(name, "interrupted/before", tmp_path)
    after_storage = fixture_storage(name, "interrupted/after", tmp_path / "after")

    async def body() -> None:
        before = await physical(name, storage, CRASHED)
        _, upstream_repaired = await read(name, after_storage, CRASHED)
        upstream_units = artifact_units(name, jsonl_file(name, after_storage, CRASHED)) if name != "sqlite" else []
        p = open_backend(name, storage)
        store = SessionStore(p, clock=lambda: 1767312999999)
        try:
            s = await store.resume(CRASHED)
            n = len(upstream_repaired)
            assert plain(s.events)[:n] == upstream_repaired
            assert s.events[n].type == END_SEED and s.first_live_seq == n
            closers = upstream_repaired[len(before) :]
            assert types(closers) == ["tool/result", "tool/result", "step/end", "turn/end"]
            assert [c["data"]["error"]["code"] for c in closers[:2]] == ["TOOL_OUTCOME_UNKNOWN", "TOOL_NOT_STARTED"]
            assert s.next_turn == 3
            s.append("turn/start", {"turn": 3})
            s.append("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
            await store.close()
        finally:
            await p.close()
        _, events = await read(name, storage, CRASHED)
        assert events[: len(before)] == before  # the crashed log itself is never rewritten
        assert events[: len(upstream_repaired)] == upstream_repaired
        assert types(events[len(upstream_repaired) :]) == [END_SEED, "turn/start", "turn/end"]
        if name != "sqlite":  # the repair batch is byte-identical to upstream's
            ours = artifact_units(name, jsonl_file(name, storage, CRASHED))
            assert ours[: len(upstream_units)] == upstream_units

    run(body())


def test_cold_fork_of_the_interrupted_log_never_repairs_it(name: str, tmp_path: Path) -> None:
    storage = fixture_storage(name, "interrupted/before", tmp_path)

    async def body() -> None:
        before = await physical(name, storage, CRASHED)
        raw_before = jsonl_file(name, storage, CRASHED).read_bytes() if name != "sqlite" else b""
        boundary = last_turn_end_before_open_turn(before)
        p = open_backend(name, storage)
        store = SessionStore(p)
        try:
            with pytest.raises(SessionForkError) as info:
                await store.fork(CRASHED, boundary=len(before) - 1)
            assert info.value.code == "OPEN_TURN"
            child = await store.fork(CRASHED, boundary=boundary, new_id="turn-1-only")
            assert child.next_turn == 2 and not child.is_turn_open
            await store.close()
        finally:
            await p.close()
        assert await physical(name, storage, CRASHED) == before
        if name != "sqlite":
            assert jsonl_file(name, storage, CRASHED).read_bytes() == raw_before
        meta, events = await read(name, storage, "turn-1-only")
        assert (meta.parent_session, meta.seed_length) == (CRASHED, boundary + 1)
        assert events[: boundary + 1] == before[: boundary + 1]
        assert types(events)[boundary + 1 :] == [END_SEED]

    run(body())


def test_fixture_copies_are_private(name: str, tmp_path: Path) -> None:
    storage = fixture_storage(name, "fork", tmp_path)
    base = storage if name != "sqlite" else storage.parent
    for dirpath, dirs, files in os.walk(base):
        for d in dirs:
            assert os.stat(os.path.join(dirpath, d)).st_mode & 0o777 == 0o700
        for f in files:
            assert os.stat(os.path.join(dirpath, f)).st_mode & 0o777 == 0o600
    expected = json.loads((UPSTREAM_FIXTURES / name / "fork" / "expected.json").read_text())
    assert {s["id"] for s in expected["sessions"]} == {PARENT, CHILD}
