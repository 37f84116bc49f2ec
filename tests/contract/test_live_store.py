"""``SessionStore`` create / fork / resume for every backend (session-model §1.4, §5.1-§5.4, §8 rules 1-2 and 47-52).

Every durable outcome is re-read through a fresh backend instance (``stored_events`` reads the
physical log without repair; ``load`` of a fresh instance applies upstream's read rules).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from contract_backends import BackendKit
from contract_logs import TURN1, stored
from livekit import append_log, instrument, live, plain, run_virtual, stored_events, without_time
from sessionkit import (
    WORK,
    assistant_message,
    completed_turn2,
    ev,
    one_turn_log,
    open_turn2,
    step_start,
    tool_call,
    turn_start,
    types_of,
    user_message,
)

from persistence import (
    SessionArgumentError,
    SessionForkError,
    SessionNotFoundError,
    SessionPersistenceError,
)
from persistence.session import END_SEED

CLOSERS2 = ["step/end", "turn/end"]


# ---------------------------------------------------------------- create (rules 1-2, §1.4, §5.1)


def test_rule_1_create_without_meta_mints_an_id_and_a_minimal_header(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            await store.create("session-1")
            s = await store.create()  # skips the live "session-1"
            assert s.id == "session-2" == s.header.id
            header = s.header.to_json()
            assert set(header) == {"version", "id", "createdAt"}
            assert header["version"] == 0 and type(header["createdAt"]) is int and header["createdAt"] >= 0
            assert store.ids() == ["session-1", "session-2"]
            s.append("turn/start", {"turn": 1})
            s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await store.flush("session-2")
            loaded = await store.persistence.load("session-2")
            assert loaded.meta.created_at == header["createdAt"] and loaded.meta.cwd is None

    run_virtual(body())


@pytest.mark.parametrize(
    ("extra", "phrase"),
    [
        ({"cwd": "relative/path"}, "cwd must be an absolute path"),
        ({"cwd": None}, "cwd must be a string"),
        ({"createdAt": 1.5}, "createdAt must be a non-negative safe integer"),
        ({"origin": "fork"}, 'origin must be "subagent"'),
    ],
)
def test_rule_2_invalid_meta_registers_nothing(backend: BackendKit, extra: dict[str, Any], phrase: str) -> None:
    async def body() -> None:
        async with live(backend) as store:
            with pytest.raises(SessionPersistenceError, match=phrase):
                await store.create("bad-meta", meta=extra)
            assert store.get("bad-meta") is None and not store.persistence.is_live("bad-meta")
            s = await store.create("bad-meta", meta={"cwd": WORK})  # nothing was reserved
            assert s.header.cwd == WORK

    run_virtual(body())


@pytest.mark.parametrize("bad_id", ["", 5, b"id"])
def test_create_refuses_empty_and_non_string_ids(backend: BackendKit, bad_id: Any) -> None:
    async def body() -> None:
        async with live(backend) as store:
            with pytest.raises(SessionPersistenceError, match="session id must"):
                await store.create(bad_id)
            assert store.ids() == []

    run_virtual(body())


def test_create_refuses_a_duplicate_live_id(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            first = await store.create("dup", meta={"cwd": WORK})
            with pytest.raises(SessionPersistenceError, match='session "dup" already exists'):
                await store.create("dup", meta={"cwd": WORK})
            assert store.get("dup") is first

    run_virtual(body())


def test_create_meta_fields_round_trip(backend: BackendKit) -> None:
    async def body() -> None:
        extra = {
            "cwd": WORK,
            "createdAt": 1234,
            "parentSession": "p",
            "seedLength": 0,
            "origin": "subagent",
            "delegationDepth": 3,
            "agentPreset": "explorer",
        }
        async with live(backend) as store:
            s = await store.create("metas", meta=extra)
            s.append("turn/start", {"turn": 1})
        loaded = await backend.make().load("metas")
        m = loaded.meta
        assert (m.cwd, m.created_at, m.parent_session, m.seed_length, m.origin, m.delegation_depth, m.agent_preset) == (
            WORK,
            1234,
            "p",
            0,
            "subagent",
            3,
            "explorer",
        )

    run_virtual(body())


# ---------------------------------------------------------------- fork (rules 47-51, §5.2)


def test_rule_47_fork_of_an_empty_source(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            await store.create("empty-src", meta={"cwd": WORK})
            child = await store.fork("empty-src", new_id="empty-child")
            assert plain(child.events)[0]["type"] == END_SEED and child.seq == 1 and child.first_live_seq == 0
            assert (child.header.parent_session, child.header.seed_length, child.header.cwd) == ("empty-src", 0, WORK)
        loaded = await backend.make().load("empty-child")
        assert types_of(loaded.events) == [END_SEED]
        assert (loaded.meta.parent_session, loaded.meta.seed_length) == ("empty-src", 0)
        assert await backend.make().list() != [] and "empty-src" not in [h.id for h in await backend.make().list()]

    run_virtual(body())


def test_rule_48_fork_copies_the_prefix_and_only_lineage_meta(backend: BackendKit) -> None:
    async def body() -> None:
        three = [turn_start(0, 1), user_message(1, "hi"), ev("turn/end", 2, {"turn": 1, "reason": {"kind": "completed"}})]
        async with live(backend) as store:
            src = await store.create(
                "src48",
                meta={"cwd": WORK, "origin": "subagent", "delegationDepth": 2, "agentPreset": "coder", "parentSession": "grand"},
            )
            append_log(src, three)
            child = await store.fork("src48", new_id="child48")
            assert plain(child.events)[:3] == plain(src.events)
            assert (child.events[3].type, child.events[3].seq) == (END_SEED, 3)
            assert child.first_live_seq == 3 and child.next_turn == 2
            header = child.header.to_json()
            assert header["parentSession"] == "src48" and header["seedLength"] == 3 and header["cwd"] == WORK
            assert "origin" not in header and "delegationDepth" not in header and "agentPreset" not in header
            assert store.get("child48") is child
        child_log = await stored_events(backend, "child48")
        source_log = await stored_events(backend, "src48")
        assert child_log[:3] == source_log
        assert types_of(child_log) == [*types_of(three), END_SEED]

    run_virtual(body())


@pytest.mark.parametrize("boundary", [0, 1, 2, 3, 4])
def test_rule_49_a_boundary_inside_an_open_turn_is_OPEN_TURN(backend: BackendKit, boundary: int) -> None:
    async def body() -> None:
        open_turn = [
            turn_start(0, 1),
            step_start(1, 1, 1),
            user_message(2, "q"),
            assistant_message(3, 1, 1, calls=["c1"]),
            tool_call(4, 1, 1, "c1"),
        ]
        async with live(backend) as store:
            src = await store.create("src49", meta={"cwd": WORK})
            append_log(src, open_turn)
            upstream = f'fork boundary {boundary} in session "src49" ends inside open turn 1'
            with pytest.raises(SessionForkError, match=upstream) as info:
                await store.fork("src49", boundary=boundary, new_id="child49")
            assert info.value.code == "OPEN_TURN"
            with pytest.raises(SessionForkError) as whole:
                await store.fork("src49", new_id="child49")  # the default boundary is the last event
            assert whole.value.code == "OPEN_TURN"
            assert store.get("child49") is None

    run_virtual(body())


@pytest.mark.parametrize("boundary", [-1, 0.5, 2**53, True, "3"])
def test_rule_49_invalid_boundaries(backend: BackendKit, boundary: Any) -> None:
    async def body() -> None:
        async with live(backend) as store:
            src = await store.create("src49b", meta={"cwd": WORK})
            append_log(src, one_turn_log())
            upstream = 'fork boundary for session "src49b" must be a non-negative safe integer'
            with pytest.raises(SessionForkError, match=upstream) as info:
                await store.fork("src49b", boundary=boundary)
            assert info.value.code == "INVALID_BOUNDARY"
            assert store.ids() == ["src49b"]

    run_virtual(body())


def test_rule_49_boundary_past_the_end(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            src = await store.create("src49c", meta={"cwd": WORK})
            await store.create("empty49", meta={"cwd": WORK})
            append_log(src, one_turn_log())
            with pytest.raises(
                SessionForkError, match=r'fork boundary 6 does not exist in session "src49c" \(last seq: 5\)'
            ) as info:
                await store.fork("src49c", boundary=6)
            assert info.value.code == "INVALID_BOUNDARY"
            with pytest.raises(SessionForkError, match=r"\(last seq: none\)"):
                await store.fork("empty49", boundary=0)

    run_virtual(body())


def test_rule_50_an_existing_child_id_wins_over_every_other_check(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            src = await store.create("src50", meta={"cwd": WORK})
            append_log(src, [turn_start(0, 1)])
            await store.create("taken", meta={"cwd": WORK})
            with pytest.raises(SessionForkError, match='session "taken" already exists') as info:
                await store.fork("src50", boundary=99, new_id="taken")
            assert info.value.code == "SESSION_ALREADY_EXISTS"

    run_virtual(body())


def test_fork_of_an_unknown_source_is_SESSION_NOT_FOUND(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            with pytest.raises(SessionForkError, match='session "nowhere" not found') as info:
                await store.fork("nowhere")
            assert info.value.code == "SESSION_NOT_FOUND"
            assert isinstance(info.value, SessionPersistenceError)

    run_virtual(body())


def test_rule_51_fork_at_an_earlier_turn_end_while_a_newer_turn_is_open(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            src = await store.create("src51", meta={"cwd": WORK})
            append_log(src, [*one_turn_log(), *open_turn2()])
            child = await store.fork("src51", boundary=5)
            uuid.UUID(child.id)  # a minted child id is a UUID
            assert types_of(child.events) == [*TURN1, END_SEED]
            assert child.next_turn == 2 and not child.is_turn_open
            append_log(child, [turn_start(7, 2), ev("turn/end", 8, {"turn": 2, "reason": {"kind": "completed"}})])
            await store.flush(child.id)
            assert src.is_turn_open  # the source is untouched
        loaded = await backend.make().load(child.id)
        assert types_of(loaded.events) == [*TURN1, END_SEED, "turn/start", "turn/end"]
        assert loaded.meta.seed_length == 6

    run_virtual(body())


def test_fork_meta_overrides_and_explicit_child_id(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            src = await store.create("src-m", meta={"cwd": WORK})
            append_log(src, one_turn_log())
            child = await store.fork("src-m", new_id="sub", meta={"origin": "subagent", "delegationDepth": 1})
            assert (child.header.origin, child.header.delegation_depth, child.header.seed_length) == ("subagent", 1, 6)
        loaded = await backend.make().load("sub")
        assert (loaded.meta.origin, loaded.meta.delegation_depth, loaded.meta.parent_session) == ("subagent", 1, "src-m")

    run_virtual(body())


def test_fork_of_a_cold_source_reads_it_and_never_writes_it(backend: BackendKit) -> None:
    """The port extension: a cold (stored, not live) source is read via ``inspect`` only."""

    async def body() -> None:
        await stored(backend, "cold-src", [*one_turn_log(), *open_turn2()])
        async with live(backend) as store:
            p = store.persistence
            probe = instrument(p)
            revision = await p.read_stored_revision("cold-src")
            child = await store.fork("cold-src", boundary=5, new_id="cold-child")
            assert types_of(child.events) == [*TURN1, END_SEED]
            with pytest.raises(SessionForkError) as info:
                await store.fork("cold-src", boundary=7, new_id="cold-child-2")
            assert info.value.code == "OPEN_TURN"
            assert probe.calls["commit_repair"] == 0
            assert await p.read_stored_revision("cold-src") == revision
            assert not p.is_live("cold-src") and store.get("cold-src") is None
        assert types_of(await stored_events(backend, "cold-src")) == [*TURN1, "turn/start", "step/start"]
        assert types_of(await stored_events(backend, "cold-child")) == [*TURN1, END_SEED]

    run_virtual(body())


def test_fork_seed_is_a_deep_copy(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            src = await store.create("copy-src", meta={"cwd": WORK})
            append_log(src, one_turn_log())
            child = await store.fork("copy-src", new_id="copy-child")
            assert child.events[1].data == src.events[1].data
            assert child.events[1].wire is not src.events[1].wire
            assert child.events[1].wire["data"] is not src.events[1].wire["data"]

    run_virtual(body())


# ---------------------------------------------------------------- resume (rule 52, §5.4, S-17, S-18)


def test_rule_52_resume_after_a_crash_closes_marks_and_continues_numbering(backend: BackendKit) -> None:
    async def body() -> None:
        original = [*one_turn_log(), *open_turn2()]
        await stored(backend, "crashed", original)
        async with live(backend) as store:
            s = await store.resume("crashed")
            assert types_of(s.events) == [*TURN1, "turn/start", "step/start", *CLOSERS2, END_SEED]
            assert s.events[9].data["reason"] == {"kind": "interrupted"}
            assert s.first_live_seq == 10 and s.next_turn == 3 and not s.is_turn_open
            s.append("turn/start", {"turn": s.next_turn})
            s.append("turn/end", {"turn": 3, "reason": {"kind": "completed"}})
        log = await stored_events(backend, "crashed")
        assert log[:8] == original  # the original events unchanged
        assert types_of(log) == [*TURN1, "turn/start", "step/start", *CLOSERS2, END_SEED, "turn/start", "turn/end"]
        assert log[11]["data"] == {"turn": 3}
        assert types_of(log).count(END_SEED) == 1
        reloaded = await backend.make().load("crashed")
        assert plain(reloaded.events) == log

    run_virtual(body())


def test_a_resume_without_work_leaves_exactly_one_marker(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "idle", one_turn_log())
        for _ in range(3):
            async with live(backend) as store:
                await store.resume("idle")
        assert types_of(await stored_events(backend, "idle")) == [*TURN1, END_SEED]

    run_virtual(body())


def test_S_18_resume_of_a_log_ending_in_a_marker_adds_none(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s18", [*one_turn_log(), ev(END_SEED, 6, {})])
        async with live(backend) as store:
            s = await store.resume("s18")
            assert s.seq == 7 and s.first_live_seq == 7
            append_log(s, [turn_start(7, 2), ev("turn/end", 8, {"turn": 2, "reason": {"kind": "completed"}})])
        log = await stored_events(backend, "s18")
        assert [e["seq"] for e in log] == list(range(9))
        assert types_of(log).count(END_SEED) == 1

    run_virtual(body())


def test_resume_keeps_the_durable_header(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "hdr", one_turn_log(), parentSession="root", seedLength=4, agentPreset="coder")
        async with live(backend) as store:
            s = await store.resume("hdr")
            m = s.header
            assert (m.created_at, m.cwd, m.parent_session, m.seed_length, m.agent_preset) == (1000, WORK, "root", 4, "coder")
            loaded = await store.persistence.load("hdr")  # the live path answers with the durable header
            assert loaded.meta.created_at == 1000

    run_virtual(body())


def test_resume_refuses_live_and_unknown_ids(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "twice", one_turn_log())
        async with live(backend) as store:
            with pytest.raises(SessionNotFoundError, match='session "ghost" not found'):
                await store.resume("ghost")
            await store.resume("twice")
            with pytest.raises(SessionPersistenceError, match='session "twice" is already live'):
                await store.resume("twice")
            assert store.persistence._reserved == {}

    run_virtual(body())


def test_S_17_a_failed_publication_write_is_raised_and_resume_can_be_retried(backend: BackendKit) -> None:
    """The pre-publication suffix (the end-seed marker) fails to persist: resume raises that exact error,
    the id is not live, and no stale owner blocks the next attempt."""

    async def body() -> None:
        await stored(backend, "s17", one_turn_log())
        async with live(backend) as store:
            p = store.persistence
            probe = instrument(p)
            boom = OSError("marker write failed")
            probe.fail("append_batch", boom)
            with pytest.raises(OSError) as info:
                await store.resume("s17")
            assert info.value is boom
            assert store.get("s17") is None and not p.is_live("s17") and p._reserved == {}
            s = await store.resume("s17")
            assert types_of(s.events) == [*TURN1, END_SEED]
            s.append("turn/start", {"turn": 2})
            s.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
        log = await stored_events(backend, "s17")
        assert types_of(log) == [*TURN1, END_SEED, "turn/start", "turn/end"]

    run_virtual(body())


def test_resume_fork_resume_round_trip(backend: BackendKit) -> None:
    """Resume a parent, fork it at a turn boundary, resume the child cold: lineage and numbering hold."""

    async def body() -> None:
        await stored(backend, "parent", [*one_turn_log(), *completed_turn2()])
        async with live(backend) as store:
            parent = await store.resume("parent")
            child = await store.fork("parent", boundary=5, new_id="child")
            assert child.next_turn == 2
            append_log(child, [turn_start(7, 2), ev("turn/end", 8, {"turn": 2, "reason": {"kind": "completed"}})])
            assert types_of(parent.events)[-1] == END_SEED
        async with live(backend) as store:
            again = await store.resume("child")
            assert again.next_turn == 3
            assert types_of(again.events) == [*TURN1, END_SEED, "turn/start", "turn/end", END_SEED]
        loaded = await backend.make().load("child")
        assert (loaded.meta.parent_session, loaded.meta.seed_length) == ("parent", 6)
        assert without_time(loaded.events)[:6] == without_time(one_turn_log())

    run_virtual(body())


def test_store_flush_and_dispose_of_unknown_ids(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            assert await store.flush("nobody") is False
            await store.dispose("nobody")  # a no-op
            with pytest.raises(SessionArgumentError):
                await store.create(3)  # type: ignore[arg-type]

    run_virtual(body())
