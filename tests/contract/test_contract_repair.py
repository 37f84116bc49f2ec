"""Crash repair: synthetic closers, torn tails and revisions (persistence-contract §5, §9.3 R-12..R-14,
§9.4 R-15, jsonl-backend §15.7 cases 86-89).

``inspect`` shows the closers in memory, ``load`` commits them once, ``read_from`` never adds them.
Every test runs once per backend parameter of the ``backend`` fixture (tests/contract/conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_backends import BackendKit
from contract_logs import TURN1, revision_of, stored_one_turn
from sessionkit import (
    WORK,
    assistant_message,
    completed_turn2,
    meta,
    one_turn_log,
    open_turn2,
    run,
    seqs_of,
    step_start,
    tool_call,
    turn_end,
    turn_start,
    types_of,
    wire,
)

from persistence.model.repair import TOOL_NOT_STARTED_TEXT, TOOL_OUTCOME_UNKNOWN_TEXT

pytestmark = pytest.mark.usefixtures("fast_fsync")


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
        assert types_of(events) == [
            *TURN1,
            "turn/start",
            "step/start",
            "assistant/message",
            "tool/result",
            "step/end",
            "turn/end",
        ]
        assert events[9:] == [
            {
                "type": "tool/result",
                "seq": 9,
                "time": 9,
                "data": {
                    "turn": 2,
                    "step": 1,
                    "message": {
                        "id": "interrupted-tool-result-call-x-9",
                        "role": "user",
                        "source": {"kind": "tool", "callId": "call-x"},
                        "content": [
                            {
                                "type": "tool-result",
                                "toolCallId": "call-x",
                                "isError": True,
                                "content": [{"type": "text", "text": TOOL_NOT_STARTED_TEXT}],
                            }
                        ],
                    },
                    "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
                },
                "surfaceOp": "append",
            },
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
        log = [
            turn_start(0, 1),
            step_start(1, 1, 1),
            assistant_message(2, 1, 1, text=None, calls=["call-risk"]),
            tool_call(3, 1, 1, "call-risk", "write"),
        ]
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
        assert types_of(events) == [*TURN1, "turn/start", "step/start", "step/end", "turn/end"]
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


def test_R_15_inspect_keeps_revision_load_commits(backend: BackendKit) -> None:
    """R-15 / jsonl §15 case 87 / contract invariant 6 (repair committed at most once)."""

    async def body() -> None:
        store = await stored_one_turn(backend, "open", WORK)
        await store.append("open", open_turn2())
        r0 = await revision_of(store, "open")
        expected_types = [*TURN1, "turn/start", "step/start", "step/end", "turn/end"]
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


def test_cut_facts_name_the_records_a_repair_loses(backend: BackendKit) -> None:
    """Issue 24 item 8: the preview says which events a cut destroys; a torn record keeps its seq and type."""

    async def body() -> None:
        first = backend.make()
        await first.create(meta("lost", WORK))
        await first.append("lost", one_turn_log())
        await first.append("lost", open_turn2())
        await first.close()
        backend.corrupt_tail("lost", WORK, 8)
        diag = await backend.make().diagnose("lost")
        assert diag.status == "torn-tail" and diag.cut is not None
        lost = diag.cut.lost
        assert [(r.seq, r.type, r.complete) for r in lost] == [(8, "assistant/chunk", False)], lost
        assert lost[0].record is None

    run(body())
