"""The backend-neutral persistence contract (persistence-contract §9, R-01..R-25, plus the
coordinator-level cases of jsonl-backend §15.7 that hold for every backend).

Every test runs once per backend parameter of the ``backend`` fixture (tests/contract/conftest.py).
Live-session, fork/resume, write-behind and HMR requirements (R-26..R-52) need the live
SessionStore, which is not built yet; they are listed as uncovered in the suite's report.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from contract_backends import BackendKit
from sessionkit import (
    PRE_REACT_TURN_END_REASONS,
    STEERING_MESSAGE_ID,
    WORK,
    assistant_message,
    completed_turn2,
    ev,
    meta,
    one_turn_log,
    open_turn2,
    pre_identity_log,
    pre_react_loop_log,
    run,
    seqs_of,
    step_start,
    tool_call,
    turn_end,
    turn_start,
    types_of,
    user_message,
    wire,
)

from persistence import (
    AbortSignal,
    SessionArgumentError,
    SessionEvent,
    SessionFormatUnsupportedError,
    SessionHeader,
    SessionNotFoundError,
    SessionPersistenceCorruptionError,
    SessionPersistenceError,
)
from persistence.errors import upstream_class_of
from persistence.model.repair import TOOL_NOT_STARTED_TEXT, TOOL_OUTCOME_UNKNOWN_TEXT

pytestmark = pytest.mark.usefixtures("fast_fsync")

TURN1_TYPES = ["turn/start", "user/message", "step/start", "assistant/message", "step/end", "turn/end"]


async def stored_one_turn(kit: BackendKit, session_id: str = "s1", cwd: str | None = "/proj", **extra: Any) -> Any:
    store = kit.make()
    await store.create(meta(session_id, cwd, **extra))
    await store.append(session_id, one_turn_log())
    return store


async def revision_of(store: Any, session_id: str) -> str:
    snaps = {s.header.id: s.revision for s in await store.list_snapshots()}
    return snaps[session_id]


# ---------------------------------------------------------------- 9.1 create


def test_R_01_create_rejects_fractional_created_at_and_reserves_nothing(backend: BackendKit) -> None:
    """R-01 (+ jsonl §15 case 81)."""

    async def body() -> None:
        store = backend.make()
        with pytest.raises(TypeError, match="createdAt must be a non-negative safe integer") as info:
            await store.create(meta("s1", "/proj", createdAt=1.5))
        assert isinstance(info.value, SessionArgumentError)
        assert upstream_class_of(info.value) == "TypeError"
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())
        loaded = await store.load("s1")
        assert loaded.meta.created_at == 1000

    run(body())


@pytest.mark.parametrize("created_at", [-1, float(2**53), "123", None, True])
def test_R_01_create_rejects_other_bad_created_at(backend: BackendKit, created_at: Any) -> None:
    """R-01: every non-(non-negative safe integer) createdAt is an argument error."""

    async def body() -> None:
        store = backend.make()
        with pytest.raises(TypeError, match="createdAt must be a non-negative safe integer"):
            await store.create(meta("s1", "/proj", createdAt=created_at))
        assert await store.list() == []

    run(body())


def test_R_02_create_twice_and_create_over_persisted_log(backend: BackendKit) -> None:
    """R-02: duplicate create on one instance; a fresh instance refuses an id with a stored log."""

    async def body() -> None:
        first = backend.make()
        await first.create(meta("dup", WORK))
        with pytest.raises(SessionPersistenceError, match='session "dup" already exists in this backend'):
            await first.create(meta("dup", WORK))
        await first.append("dup", one_turn_log())
        second = backend.make()
        with pytest.raises(SessionPersistenceError,
                           match='session "dup" already has a persisted log on disk; load/resume it instead of creating'):
            await second.create(meta("dup", WORK))

    run(body())


def test_R_02_create_over_persisted_log_under_another_cwd(backend: BackendKit) -> None:
    """R-02 / jsonl §15 case 85: the collision probe searches every storage scope, not just the new cwd."""

    async def body() -> None:
        await stored_one_turn(backend, "moved", "/projA")
        fresh = backend.make()
        with pytest.raises(SessionPersistenceError, match="already has a persisted log on disk"):
            await fresh.create(meta("moved", "/projB"))

    run(body())


def test_create_does_not_materialize(backend: BackendKit) -> None:
    """R-23 / jsonl §15 case 80: create alone writes nothing; the first append materializes."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("lazy", "/proj"))
        assert await store.list() == []
        assert await store.list_snapshots() == []
        assert await store.read_stored_revision("lazy") is None
        await store.append("lazy", one_turn_log())
        assert [h.id for h in await store.list()] == ["lazy"]

    run(body())


def test_create_snapshots_meta(backend: BackendKit) -> None:
    """jsonl §15 case 84: mutating the caller's meta after create does not move the log."""

    async def body() -> None:
        store = backend.make()
        m = meta("snap", "/original")
        await store.create(m)
        m["cwd"] = "/mutated"
        m["createdAt"] = 5
        await store.append("snap", one_turn_log())
        loaded = await backend.make().load("snap")
        assert loaded.meta.cwd == "/original"
        assert loaded.meta.created_at == 1000

    run(body())


def test_create_rejects_non_lossless_meta(backend: BackendKit) -> None:
    """S-50: a header field that is not lossless JSON is an argument error; nothing is reserved."""

    async def body() -> None:
        store = backend.make()
        with pytest.raises(TypeError, match="session metadata must be losslessly JSON-serializable"):
            await store.create(meta("bad-meta", "/proj", agentPreset=float("nan")))
        await store.create(meta("bad-meta", "/proj"))

    run(body())


def test_create_accepts_session_header_value(backend: BackendKit) -> None:
    """R-09 variant: ``create`` takes a SessionHeader as well as a dict."""

    async def body() -> None:
        store = backend.make()
        await store.create(SessionHeader(version=0, id="typed", created_at=1000, cwd="/proj", agent_preset="coder"))
        await store.append("typed", one_turn_log())
        loaded = await store.load("typed")
        assert (loaded.meta.id, loaded.meta.cwd, loaded.meta.agent_preset) == ("typed", "/proj", "coder")

    run(body())


# ---------------------------------------------------------------- 9.2 append


def test_R_03_reappending_stored_seqs_is_rejected(backend: BackendKit) -> None:
    """R-03 / jsonl §15 case 82."""

    async def body() -> None:
        store = await stored_one_turn(backend)
        with pytest.raises(SessionPersistenceError, match=r'append seq mismatch for "s1": expected 6 at index 0, got 0'):
            await store.append("s1", one_turn_log())
        assert len((await store.load("s1")).events) == 6

    run(body())


def test_R_04_gap_inside_a_batch_is_rejected(backend: BackendKit) -> None:
    """R-04 / jsonl §15 case 82."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("gap", "/proj"))
        with pytest.raises(SessionPersistenceError, match="expected 1 at index 1, got 2"):
            await store.append("gap", [turn_start(0, 1), step_start(2, 1, 1)])
        assert await store.list() == []
        await store.append("gap", one_turn_log())
        assert seqs_of((await store.load("gap")).events) == list(range(6))

    run(body())


def test_append_rejects_bool_seq(backend: BackendKit) -> None:
    """jsonl §6.4: ``True`` is never the seq 1 (bool is not a number)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("b", "/proj"))
        await store.append("b", [turn_start(0, 1)])
        with pytest.raises(SessionPersistenceError, match="seq mismatch"):
            await store.append("b", [{**turn_end(1, 1), "seq": True}])

    run(body())


class _Opaque:
    pass


def _cyclic() -> dict[str, Any]:
    d: dict[str, Any] = {"a": 1}
    d["self"] = d
    return d


NON_LOSSLESS: dict[str, Any] = {
    "unsafe-int": 2**53,
    "undefined-sentinel": _Opaque(),
    "infinity": float("inf"),
    "nan": float("nan"),
    "negative-zero": -0.0,
    "callable": lambda: None,
    "set": {1, 2},
    "bytes": b"x",
    "tuple": (1, 2),
    "non-str-key": {1: "x"},
    "cyclic": _cyclic(),
}


@pytest.mark.parametrize("case", sorted(NON_LOSSLESS))
def test_R_05_non_lossless_event_data_is_rejected(backend: BackendKit, case: str) -> None:
    """R-05 / jsonl §15 case 83 / session-model §8 rule 10: nothing is materialized."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("nl", "/proj"))
        bad = user_message(0, "hi")
        bad["data"]["extra"] = NON_LOSSLESS[case]
        with pytest.raises(TypeError, match="losslessly JSON-serializable") as info:
            await store.append("nl", [bad])
        assert "non-JSON-serializable" in str(info.value)
        assert upstream_class_of(info.value) == "TypeError"
        assert await store.list() == []
        # The session stays usable.
        await store.append("nl", [user_message(0, "hi")])
        assert len((await store.inspect("nl")).events) == 1

    run(body())


def test_R_05_null_and_nested_json_are_accepted(backend: BackendKit) -> None:
    """jsonl §15 case 83: ``None`` and nested null/bool/list/dict values are valid JSON."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("ok", "/proj"))
        event = user_message(0, "hi")
        event["data"]["extra"] = {"n": None, "b": [True, False, None, {"x": [1, 2.5, "s"]}], "empty": {}}
        await store.append("ok", [event])
        assert wire((await store.inspect("ok")).events) == [event]

    run(body())


def test_R_06_append_snapshot_survives_mutation_while_in_flight(backend: BackendKit) -> None:
    """R-06: the batch is snapshotted before the append's first suspension point.

    Port decision (README): the service methods stay ``async def`` as the issue fixes them, so
    "call time" is when the coroutine starts running; mutation from then on has no effect.
    """

    async def body() -> None:
        store = backend.make()
        await store.create(meta("mut2", "/proj"))
        log = one_turn_log()
        task = asyncio.ensure_future(store.append("mut2", log))
        await asyncio.sleep(0)
        log.append(turn_start(6, 2))
        log[1]["data"]["content"][0]["text"] = "MUTATED"
        await task
        stored = wire((await backend.make().load("mut2")).events)
        assert stored == one_turn_log()

    run(body())


def test_R_07_fresh_instance_appends_to_stored_session(backend: BackendKit) -> None:
    """R-07: append adoption by an instance that never created or loaded the id."""

    async def body() -> None:
        await stored_one_turn(backend, "adopt", WORK)
        second = backend.make()
        await second.append("adopt", completed_turn2())
        loaded = await second.load("adopt")
        assert seqs_of(loaded.events) == list(range(8))
        assert wire(loaded.events) == one_turn_log() + completed_turn2()

    run(body())


def test_R_08_empty_batch_stays_lazy(backend: BackendKit) -> None:
    """R-08 (+ contract §2.4 b: an empty batch is a no-op even for an unknown id)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("empty", "/proj"))
        await store.append("empty", [])
        assert await store.list() == []
        await store.append("never-created", [])
        assert await store.list() == []

    run(body())


def test_append_to_unknown_id_is_not_found(backend: BackendKit) -> None:
    """Contract §2.4 d: adoption of an id with no stored log fails with "not found"."""

    async def body() -> None:
        store = backend.make()
        with pytest.raises(SessionNotFoundError, match='session "ghost" not found'):
            await store.append("ghost", [turn_start(0, 1)])

    run(body())


def test_append_accepts_session_event_values(backend: BackendKit) -> None:
    """R-09 variant: ``append`` takes SessionEvent values as well as dicts."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("typed-events", "/proj"))
        await store.append("typed-events", [SessionEvent.from_json(e) for e in one_turn_log()])
        assert wire((await store.load("typed-events")).events) == one_turn_log()

    run(body())


@pytest.mark.parametrize(
    ("event", "phrase"),
    [
        (ev("request/header-delta", 0, {}), 'session "legacy" contains unsupported legacy request/header-delta event at seq 0'),
        (ev("mode/set", 0, {"mode": "x"}), 'session "legacy" contains unsupported legacy mode/set event at seq 0'),
        (ev("request/header", 0, {"reason": "fallback"}),
         'session "legacy" contains unsupported legacy request/header reason "fallback" at seq 0'),
    ],
    ids=["header-delta", "mode-set", "fallback"],
)
def test_append_refuses_legacy_vocabulary(backend: BackendKit, event: dict[str, Any], phrase: str) -> None:
    """Contract §2.4 a / jsonl §15 case 92 (append side): retired vocabulary never reaches storage."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("legacy", "/proj"))
        with pytest.raises(SessionPersistenceError) as info:
            await store.append("legacy", [event])
        assert str(info.value) == phrase
        assert await store.list() == []

    run(body())


# ---------------------------------------------------------------- 9.3 load (cold)


def test_R_09_load_returns_meta_and_events(backend: BackendKit) -> None:
    """R-09."""

    async def body() -> None:
        await stored_one_turn(backend, "s1", "/proj")
        loaded = await backend.make().load("s1")
        assert (loaded.meta.version, loaded.meta.id, loaded.meta.cwd) == (0, "s1", "/proj")
        assert wire(loaded.events) == one_turn_log()
        assert types_of(loaded.events) == TURN1_TYPES
        assert loaded.to_json()["meta"]["id"] == "s1"

    run(body())


def test_R_10_unknown_id_is_not_found(backend: BackendKit) -> None:
    """R-10 (+ read_from, read_stored_revision)."""

    async def body() -> None:
        store = backend.make()
        await stored_one_turn(backend, "present")
        for call in (store.load("nope"), store.inspect("nope"), store.read_from("nope", 0)):
            with pytest.raises(SessionNotFoundError) as info:
                await call
            assert str(info.value) == 'session "nope" not found'
            assert upstream_class_of(info.value) == "Error"
        assert await store.read_stored_revision("nope") is None

    run(body())


def test_R_11_optional_header_fields_round_trip(backend: BackendKit) -> None:
    """R-11 (parentSession) and session-model §1.3: every optional header field survives."""

    async def body() -> None:
        await stored_one_turn(backend, "child", "/proj", parentSession="the-parent", seedLength=0, origin="subagent",
                              delegationDepth=2, agentPreset="explorer")
        loaded = await backend.make().load("child")
        m = loaded.meta
        assert (m.parent_session, m.seed_length, m.origin, m.delegation_depth, m.agent_preset) == (
            "the-parent", 0, "subagent", 2, "explorer")
        listed = {h.id: h for h in await backend.make().list()}
        assert listed["child"].parent_session == "the-parent"

    run(body())


def _crashed_turn2_with_tool_call(call_id: str = "call-x") -> list[dict[str, Any]]:
    return [*one_turn_log(), turn_start(6, 2), step_start(7, 2, 1), assistant_message(8, 2, 1, text=None, calls=[call_id])]


def test_R_12_load_closes_interrupted_turn_with_tool_not_started(backend: BackendKit) -> None:
    """R-12 / jsonl §15 case 88 (exact closers of the worked example)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("crash", "/proj"))
        await store.append("crash", _crashed_turn2_with_tool_call())
        loaded = await backend.make().load("crash")
        events = wire(loaded.events)
        assert types_of(events) == [*TURN1_TYPES, "turn/start", "step/start", "assistant/message", "tool/result",
                                    "step/end", "turn/end"]
        assert events[9:] == [
            {"type": "tool/result", "seq": 9, "time": 9, "data": {"turn": 2, "step": 1, "message": {
                "id": "interrupted-tool-result-call-x-9", "role": "user", "source": {"kind": "tool", "callId": "call-x"},
                "content": [{"type": "tool-result", "toolCallId": "call-x", "isError": True,
                             "content": [{"type": "text", "text": TOOL_NOT_STARTED_TEXT}]}]},
                "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}}, "surfaceOp": "append"},
            {"type": "step/end", "seq": 10, "time": 9, "data": {"turn": 2, "step": 1}},
            {"type": "turn/end", "seq": 11, "time": 9, "data": {"turn": 2, "reason": {"kind": "interrupted"}}},
        ]
        assert "sourceEventSeqs" not in events[9]
        assert events[8]["data"]["message"]["content"][0]["id"] == "call-x"

    run(body())


def test_R_13_recorded_tool_call_gets_outcome_unknown(backend: BackendKit) -> None:
    """R-13 / jsonl §15 case 89 (the "Session derives a message" half needs the live Session: not built)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("risk", "/proj"))
        log = [turn_start(0, 1), step_start(1, 1, 1), assistant_message(2, 1, 1, text=None, calls=["call-risk"]),
               tool_call(3, 1, 1, "call-risk", "write")]
        await store.append("risk", log)
        loaded = await store.load("risk")
        events = wire(loaded.events)
        assert types_of(events)[4:] == ["tool/result", "step/end", "turn/end"]
        result = events[4]
        assert result["data"]["error"] == {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
        assert result["sourceEventSeqs"] == [3]
        assert result["surfaceOp"] == "append"
        text = result["data"]["message"]["content"][0]["content"][0]["text"]
        assert text == TOOL_OUTCOME_UNKNOWN_TEXT
        assert "retry only if the operation is read-only or idempotent" in text
        assert "if it may have side effects, first verify external state or ask the user" in text
        assert text.endswith("Do not retry blindly.")
        block = result["data"]["message"]["content"][0]
        assert (block["toolCallId"], block["isError"]) == ("call-risk", True)

    run(body())


def test_R_14_torn_tail_is_truncated_and_closed_on_load(backend: BackendKit) -> None:
    """R-14: a torn fragment after an open turn 2; a fresh instance commits truncation + closers."""

    async def body() -> None:
        first = backend.make()
        await first.create(meta("torn", WORK))
        await first.append("torn", one_turn_log())
        await first.append("torn", open_turn2())
        await first.close()
        backend.corrupt_tail("torn", WORK, 8)
        second = backend.make()
        loaded = await second.load("torn")
        events = wire(loaded.events)
        assert seqs_of(events) == list(range(10))
        assert types_of(events) == [*TURN1_TYPES, "turn/start", "step/start", "step/end", "turn/end"]
        assert events[:8] == one_turn_log() + open_turn2()
        assert events[9]["data"]["reason"] == {"kind": "interrupted"}
        await second.append("torn", [turn_start(10, 3), turn_end(11, 3)])
        assert seqs_of((await second.load("torn")).events) == list(range(12))
        assert seqs_of((await backend.make().load("torn")).events) == list(range(12))

    run(body())


def test_torn_tail_is_adopted_by_append(backend: BackendKit) -> None:
    """jsonl §15 case 86: a fresh instance's append repairs a torn tail first, then appends."""

    async def body() -> None:
        first = await stored_one_turn(backend, "adopt-torn", WORK)
        await first.close()
        backend.corrupt_tail("adopt-torn", WORK, 6)
        second = backend.make()
        await second.append("adopt-torn", completed_turn2())
        assert wire((await backend.make().load("adopt-torn")).events) == one_turn_log() + completed_turn2()

    run(body())


# ---------------------------------------------------------------- 9.4 crash recovery and revisions


def test_R_15_inspect_keeps_revision_load_commits(backend: BackendKit) -> None:
    """R-15 / jsonl §15 case 87 / contract invariant 6 (repair committed at most once)."""

    async def body() -> None:
        store = await stored_one_turn(backend, "open", WORK)
        await store.append("open", open_turn2())
        r0 = await revision_of(store, "open")
        expected_types = [*TURN1_TYPES, "turn/start", "step/start", "step/end", "turn/end"]
        inspected = await store.inspect("open")
        assert types_of(inspected.events) == expected_types
        assert await revision_of(store, "open") == r0
        # read_from never adds closers.
        assert len((await store.read_from("open", 0)).events) == 8
        loaded = await store.load("open")
        r1 = await revision_of(store, "open")
        assert r1 != r0
        assert seqs_of(loaded.events) == list(range(10))
        assert types_of(loaded.events) == expected_types
        assert wire(loaded.events)[-1]["data"]["reason"] == {"kind": "interrupted"}
        # A second load finds nothing to repair.
        again = await backend.make().load("open")
        assert wire(again.events) == wire(loaded.events)
        assert await revision_of(store, "open") == r1
        await store.append("open", [turn_start(10, 3), turn_end(11, 3)])
        assert seqs_of((await backend.make().load("open")).events) == list(range(12))

    run(body())


def test_inspect_closers_match_load_closers(backend: BackendKit) -> None:
    """Contract §2.7: inspect shows exactly what load commits."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("same", "/proj"))
        await store.append("same", _crashed_turn2_with_tool_call())
        inspected = wire((await store.inspect("same")).events)
        loaded = wire((await store.load("same")).events)
        assert inspected == loaded
        assert wire((await store.read_from("same", 0)).events) == loaded

    run(body())


# ---------------------------------------------------------------- 9.5 read normalization and validation


def test_R_16_pre_identity_messages_get_legacy_ids(backend: BackendKit) -> None:
    """R-16 (the derive-messages half needs the live Session: not built)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("pre-id", "/proj"))
        await store.append("pre-id", pre_identity_log())
        prefix = "legacy-message:pre-id:"
        for result in (await store.inspect("pre-id"), await backend.make().load("pre-id")):
            ids = []
            for event in result.events:
                if event.type == "user/message":
                    ids.append(event.data["id"])
                    message = event.data
                elif event.type in ("assistant/message", "tool/result"):
                    ids.append(event.data["message"]["id"])
                    message = event.data["message"]
                else:
                    continue
                with pytest.raises(TypeError):
                    message["id"] = "changed"  # type: ignore[index]
                with pytest.raises(TypeError):
                    message["content"][0]["text"] = "changed"  # type: ignore[index]
            assert ids == [prefix + "1", prefix + "3", prefix + "5", prefix + "5"]
            events = wire(result.events)
            assert events[3]["data"]["message"]["role"] == "assistant"
            assert events[3]["data"]["message"]["source"] == {"provider": "mock", "model": "mock", "kind": "model"}
            assert events[6]["data"]["message"]["content"][0]["content"] == [{"type": "text", "text": "pruned"}]
        tail = await store.read_from("pre-id", 6)
        first = wire(tail.events)[0]
        assert (first["type"], first["seq"], first["data"]["message"]["id"]) == ("tool/result", 6, prefix + "5")

    run(body())


def test_R_17_pre_react_loop_shapes_are_upgraded(backend: BackendKit) -> None:
    """R-17 (the derive-messages half needs the live Session: checked on the user/message events instead)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("react", "/proj"))
        await store.append("react", pre_react_loop_log())
        expected_reasons = [norm for _stored, norm in PRE_REACT_TURN_END_REASONS]
        results = [await store.inspect("react"), await store.read_from("react", 0), await backend.make().load("react")]
        for result in results:
            events = wire(result.events)
            assert "steering/message" not in types_of(events)
            starts = [e["data"] for e in events if e["type"] == "turn/start"]
            assert starts == [{"turn": n} for n in range(1, 8)]
            ends = [e["data"] for e in events if e["type"] == "turn/end"]
            assert [d["reason"] for d in ends] == expected_reasons
            assert all(set(d) == {"turn", "reason"} for d in ends)
            texts = [e["data"]["content"][0]["text"] for e in events if e["type"] == "user/message"]
            assert texts == ["old prompt", "old steering"]
        suffix = wire((await store.read_from("react", 3)).events)
        assert (suffix[0]["type"], suffix[0]["seq"], suffix[0]["data"]["id"]) == ("user/message", 3, STEERING_MESSAGE_ID)
        assert all("step" not in e["data"] for e in suffix if e["type"] == "turn/end")

        await store.create(meta("flat", "/proj"))
        await store.append("flat", [ev("steering/message", 0, {"turn": 1, "content": [{"type": "text",
                                                                                          "text": "flat steering"}],
                                                                  "source": {"kind": "user"}}, surfaceOp="append")])
        flat = wire((await store.inspect("flat")).events)[0]
        assert flat["type"] == "user/message"
        assert (flat["data"]["id"], flat["data"]["role"]) == ("legacy-message:flat:0", "user")

        await store.create(meta("ext", "/proj"))
        await store.append("ext", [turn_start(0, 1), turn_end(1, 1, "extension-reason")])
        assert wire((await store.inspect("ext")).events)[1]["data"] == {"turn": 1, "reason": {"kind": "extension-reason"}}

    run(body())


def test_R_18a_wrong_role_is_corruption(backend: BackendKit) -> None:
    """R-18 (a)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("role", "/proj"))
        bad = user_message(0, "hi")
        bad["data"]["role"] = "assistant"
        await store.append("role", [bad])
        for call in (store.inspect("role"), store.load("role")):
            with pytest.raises(SessionPersistenceCorruptionError) as info:
                await call
            assert 'message must have role "user"' in str(info.value)
            assert str(info.value).startswith('stored session "role" failed validation: ')
            assert upstream_class_of(info.value) == "SessionPersistenceCorruptionError"

    run(body())


_MSG = {"id": "m", "role": "user", "content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}}

MALFORMED_SINGLE_EVENTS: dict[str, tuple[dict[str, Any], str]] = {
    "turn-start-null-trigger": (ev("turn/start", 0, {"turn": 1, "trigger": None}), "malformed pre-react-loop turn/start"),
    "steering-extra-key": (ev("steering/message", 0, {"turn": 1, "message": _MSG, "extra": 1}, surfaceOp="append"),
                           "malformed pre-react-loop steering/message"),
    "steering-null-data": (ev("steering/message", 0, None, surfaceOp="append"), "malformed pre-react-loop steering/message"),
    "completed-extra-key": (ev("turn/end", 0, {"turn": 1, "reason": {"kind": "completed", "extra": 1}}),
                            "malformed pre-react-loop turn/end"),
    "null-reason": (ev("turn/end", 0, {"turn": 1, "reason": None}), "malformed pre-react-loop turn/end"),
    "top-level-step": (ev("turn/end", 0, {"turn": 1, "step": 1, "reason": {"kind": "completed"}}),
                       "malformed pre-react-loop turn/end"),
    "aborted-extra-key": (ev("turn/end", 0, {"turn": 1, "reason": {"kind": "aborted", "extra": 1}}),
                          "malformed pre-react-loop turn/end"),
    "disposed-extra-key": (ev("turn/end", 0, {"turn": 1, "reason": {"kind": "disposed", "extra": 1}}),
                           "malformed pre-react-loop turn/end"),
    "error-negative-step": (ev("turn/end", 0, {"turn": 1, "reason": {"kind": "error", "step": -1, "failure": {
        "message": "m", "code": "C"}}}), "malformed pre-react-loop turn/end"),
    "error-numeric-code": (ev("turn/end", 0, {"turn": 1, "reason": {"kind": "error", "step": 1, "message": "m",
                                                                      "code": 5}}),
                           "malformed pre-react-loop turn/end"),
}


@pytest.mark.parametrize("case", list(MALFORMED_SINGLE_EVENTS))
def test_R_18b_malformed_legacy_shapes_are_refused(backend: BackendKit, case: str) -> None:
    """R-18 (b): refused by inspect (wrapped as corruption) and read_from (unwrapped); append accepts them."""
    event, phrase = MALFORMED_SINGLE_EVENTS[case]

    async def body() -> None:
        store = backend.make()
        await store.create(meta("mal", "/proj"))
        await store.append("mal", [copy.deepcopy(event)])
        with pytest.raises(SessionPersistenceCorruptionError, match=phrase):
            await store.inspect("mal")
        with pytest.raises(SessionPersistenceError, match=phrase) as info:
            await store.read_from("mal", 0)
        assert not isinstance(info.value, SessionPersistenceCorruptionError)
        assert f"{phrase} at seq 0" in str(info.value)

    run(body())


def test_R_18c_tool_result_without_message(backend: BackendKit) -> None:
    """R-18 (c)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("nomsg", "/proj"))
        await store.append("nomsg", [ev("tool/result", 0, {"message": None}, surfaceOp="append")])
        with pytest.raises(SessionPersistenceCorruptionError, match="lacks an identified message"):
            await store.inspect("nomsg")

    run(body())


def test_R_18d_ignorable_unknown_event_passes(backend: BackendKit) -> None:
    """R-18 (d) / session-model §8 rule 19."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("plug", "/proj"))
        event = ev("plugin/test", 0, None, ignorable=True)
        await store.append("plug", [event])
        assert wire((await store.inspect("plug")).events) == [event]
        assert wire((await store.read_from("plug", 0)).events) == [event]
        assert (await store.inspect("plug")).events[0].ignorable is True

    run(body())


@pytest.mark.parametrize("etype", ["user/message", "assistant/message"])
def test_R_18e_empty_message_data_is_refused_by_read_from(backend: BackendKit, etype: str) -> None:
    """R-18 (e)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("emptydata", "/proj"))
        await store.append("emptydata", [ev(etype, 0, {}, surfaceOp="append")])
        with pytest.raises(SessionPersistenceError, match="lacks an identified message"):
            await store.read_from("emptydata", 0)

    run(body())


def test_R_19_newer_version_is_refused(backend: BackendKit) -> None:
    """R-19 / jsonl §15 case 13 / session-model §8 rule 46."""

    async def body() -> None:
        await stored_one_turn(backend, "v99", "/proj", version=99)
        store = backend.make()
        for call in (store.load("v99"), store.inspect("v99"), store.read_from("v99", 0)):
            with pytest.raises(SessionFormatUnsupportedError,
                               match=r"uses log format v99, .*written by a newer harness.*upgrade the harness") as info:
                await call
            assert upstream_class_of(info.value) == "SessionFormatUnsupportedError"
        # list() does not refuse foreign versions (jsonl §16 point 7).
        assert [h.version for h in await store.list()] == [99]

    run(body())


def test_R_20_older_version_is_refused(backend: BackendKit) -> None:
    """R-20."""

    async def body() -> None:
        await stored_one_turn(backend, "vneg", "/proj", version=-1)
        with pytest.raises(SessionFormatUnsupportedError, match=r"older than the supported v0.*no upgrade path"):
            await backend.make().load("vneg")

    run(body())


def test_R_21_unknown_event_type(backend: BackendKit) -> None:
    """R-21 / jsonl §15 case 91 / session-model §8 rule 19."""

    async def body() -> None:
        store = await stored_one_turn(backend, "future")
        await store.append("future", [ev("future/event", 6, {"x": 1})])
        for call in (store.load("future"), store.inspect("future"), store.read_from("future", 0)):
            with pytest.raises(SessionFormatUnsupportedError,
                               match=r'event type "future/event" \(seq 6\).*not marked ignorable'):
                await call
        kept = await stored_one_turn(backend, "future-ok")
        ignorable = ev("future/event", 6, {"x": 1}, ignorable=True)
        await kept.append("future-ok", [ignorable])
        loaded = await backend.make().load("future-ok")
        assert wire(loaded.events)[6] == ignorable

    run(body())


# ---------------------------------------------------------------- 9.6 read_from


def test_R_22_read_from(backend: BackendKit) -> None:
    """R-22 / jsonl §15 case 90."""

    async def body() -> None:
        store = await stored_one_turn(backend, "rf", "/proj")
        whole = await store.read_from("rf", 0)
        assert (whole.meta.id, whole.meta.cwd) == ("rf", "/proj")
        assert wire(whole.events) == one_turn_log()
        suffix = wire((await store.read_from("rf", 3)).events)
        assert suffix == one_turn_log()[3:]
        assert suffix[0]["seq"] == 3
        assert wire((await store.read_from("rf", 6)).events) == []
        assert wire((await store.read_from("rf", 106)).events) == []
        r0 = await revision_of(store, "rf")
        await store.append("rf", [turn_start(6, 2)])
        r1 = await revision_of(store, "rf")
        assert wire((await store.read_from("rf", 6)).events) == [turn_start(6, 2)]
        assert r1 != r0
        assert await revision_of(store, "rf") == r1  # nothing repaired
        with pytest.raises(SessionNotFoundError, match="not found"):
            await store.read_from("missing", 0)
        for bad, shown in ((-1, "-1"), (1.5, "1.5"), (2**53, "9007199254740992"), ("1", "1"), (True, "true")):
            with pytest.raises(TypeError, match=f"readFrom fromSeq must be a non-negative safe integer, got {shown}$"):
                await store.read_from("rf", bad)  # type: ignore[arg-type]

    run(body())


# ---------------------------------------------------------------- 9.7 list / list_snapshots


def test_R_23_lazy_session_absent_from_listings(backend: BackendKit) -> None:
    """R-23."""

    async def body() -> None:
        store = await stored_one_turn(backend, "real")
        await store.create(meta("lazy", "/proj"))
        assert [h.id for h in await store.list()] == ["real"]
        assert [s.header.id for s in await store.list_snapshots()] == ["real"]

    run(body())


def test_R_24_list_and_revisions(backend: BackendKit) -> None:
    """R-24 / jsonl §15 case 93 (same-storage half) / case 94."""

    async def body() -> None:
        store = await stored_one_turn(backend, "s1", "/proj")
        headers = await store.list()
        assert [(h.id, h.cwd, h.created_at, h.version) for h in headers] == [("s1", "/proj", 1000, 0)]
        a = await revision_of(store, "s1")
        b = await revision_of(store, "s1")
        assert a == b
        assert isinstance(a, str)
        assert await backend.make().read_stored_revision("s1") == a
        assert await revision_of(backend.make(), "s1") == a
        await store.append("s1", [turn_start(6, 2)])
        c = await revision_of(store, "s1")
        assert c != a
        assert await store.read_stored_revision("s1") == c

    run(body())


def test_list_headers_from_several_sessions(backend: BackendKit) -> None:
    """Contract §2.9: one header per materialized session (jsonl §15 case 79 in neutral form)."""

    async def body() -> None:
        store = backend.make()
        for sid, cwd in (("p1", "/projA"), ("p2", "/projB"), ("p3", None)):
            await store.create(meta(sid, cwd))
            await store.append(sid, one_turn_log())
        headers = {h.id: h.cwd for h in await backend.make().list()}
        assert headers == {"p1": "/projA", "p2": "/projB", "p3": None}

    run(body())


# ---------------------------------------------------------------- 9.8 cancellation


def test_R_25_aborted_signal_rejects_with_the_reason(backend: BackendKit) -> None:
    """R-25."""

    async def body() -> None:
        store = backend.make()
        signal = AbortSignal()
        assert await store.list_snapshots(signal) == []
        reason = RuntimeError("stop now")
        signal.abort(reason)
        calls = [store.list(signal), store.list_snapshots(signal), store.inspect("unknown", signal),
                 store.read_from("unknown", 0, signal)]
        for call in calls:
            with pytest.raises(RuntimeError) as info:
                await call
            assert info.value is reason

    run(body())


def test_R_25_read_from_validates_argument_before_abort(backend: BackendKit) -> None:
    """Contract §2.11: read_from checks ``from_seq`` first, then the pre-aborted signal."""

    async def body() -> None:
        store = backend.make()
        signal = AbortSignal.aborted_with(ValueError("gone"))
        with pytest.raises(TypeError, match="non-negative safe integer"):
            await store.read_from("x", -1, signal)

    run(body())
