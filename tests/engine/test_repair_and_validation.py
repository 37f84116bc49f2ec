"""Crash closers and restore validation (session-model §8 rules 2-9, 13-18 and 35-42)."""

from __future__ import annotations

from typing import Any

import pytest
from sessionkit import (
    assistant_message,
    ev,
    one_turn_log,
    step_end,
    step_start,
    tool_call,
    tool_result,
    turn_end,
    turn_start,
    user_message,
)

from persistence.errors import SessionValidationError
from persistence.model.repair import (
    TOOL_NOT_STARTED_TEXT,
    TOOL_OUTCOME_UNKNOWN_TEXT,
    has_open_turn,
    interrupted_turn_closers,
)
from persistence.model.validate import validate_header, validate_seed_events

# ---------------------------------------------------------------- closers (rules 35-42)


def test_rule_35_no_closers_for_empty_or_balanced_logs() -> None:
    assert interrupted_turn_closers([]) == []
    assert interrupted_turn_closers(one_turn_log()) == []
    assert not has_open_turn(one_turn_log())


def test_rule_36_open_turn_only() -> None:
    events = [turn_start(0, 1, time=42)]
    assert interrupted_turn_closers(events) == [
        {"type": "turn/end", "seq": 1, "time": 42, "data": {"turn": 1, "reason": {"kind": "interrupted"}}}
    ]


def test_rule_37_open_step() -> None:
    closers = interrupted_turn_closers([turn_start(0, 1), step_start(1, 1, 1)])
    assert [(c["type"], c["seq"], c["time"]) for c in closers] == [("step/end", 2, 2), ("turn/end", 3, 2)]
    assert closers[0]["data"] == {"turn": 1, "step": 1}


def _turn2_with_call(recorded: bool) -> list[dict[str, Any]]:
    events = [turn_start(0, 2), step_start(1, 2, 1), assistant_message(2, 2, 1, text=None, calls=["call-1"])]
    if recorded:
        events.append(tool_call(3, 2, 1, "call-1"))
    return events


def test_rule_38_tool_not_started() -> None:
    closers = interrupted_turn_closers(_turn2_with_call(recorded=False))
    assert [(c["type"], c["seq"]) for c in closers] == [("tool/result", 3), ("step/end", 4), ("turn/end", 5)]
    result = closers[0]
    assert result == {
        "type": "tool/result",
        "seq": 3,
        "time": 3,
        "data": {
            "turn": 2,
            "step": 1,
            "message": {
                "id": "interrupted-tool-result-call-1-3",
                "role": "user",
                "source": {"kind": "tool", "callId": "call-1"},
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "call-1",
                        "isError": True,
                        "content": [{"type": "text", "text": TOOL_NOT_STARTED_TEXT}],
                    }
                ],
            },
            "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
        },
        "surfaceOp": "append",
    }
    assert list(result) == ["type", "seq", "time", "data", "surfaceOp"]
    assert list(result["data"]["message"]) == ["id", "role", "source", "content"]


def test_rule_39_tool_outcome_unknown() -> None:
    closers = interrupted_turn_closers(_turn2_with_call(recorded=True))
    result = closers[0]
    assert result["seq"] == 4
    assert result["data"]["error"] == {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert result["sourceEventSeqs"] == [3]
    assert list(result) == ["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"]
    assert result["data"]["message"]["id"] == "interrupted-tool-result-call-1-4"
    assert result["data"]["message"]["content"][0]["content"][0]["text"] == TOOL_OUTCOME_UNKNOWN_TEXT


def test_closer_texts_are_byte_exact() -> None:
    """jsonl-backend §12.4: the two texts are on-disk data."""
    assert TOOL_NOT_STARTED_TEXT == (
        "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."
    )
    assert TOOL_OUTCOME_UNKNOWN_TEXT == (
        "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is "
        "unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or "
        "idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly."
    )


def test_rule_40_answered_ended_or_earlier_calls_get_no_result() -> None:
    answered = [*_turn2_with_call(True), tool_result(4, 2, 1, "call-1")]
    assert [c["type"] for c in interrupted_turn_closers(answered)] == ["step/end", "turn/end"]
    step_closed = [*_turn2_with_call(False), step_end(3, 2, 1), step_start(4, 2, 2)]
    assert [c["type"] for c in interrupted_turn_closers(step_closed)] == ["step/end", "turn/end"]
    earlier_turn = [
        turn_start(0, 1),
        step_start(1, 1, 1),
        assistant_message(2, 1, 1, text=None, calls=["old"]),
        turn_end(3, 1),
        turn_start(4, 2),
    ]
    assert [c["type"] for c in interrupted_turn_closers(earlier_turn)] == ["turn/end"]
    orphan_call = [turn_start(0, 1), step_start(1, 1, 1), tool_call(2, 1, 1, "nobody")]
    assert [c["type"] for c in interrupted_turn_closers(orphan_call)] == ["step/end", "turn/end"]


def test_rule_41_pending_calls_in_block_order() -> None:
    base = [turn_start(0, 1), step_start(1, 1, 1), assistant_message(2, 1, 1, text=None, calls=["a", "b"])]
    one_answered = [*base, tool_result(3, 1, 1, "a")]
    closers = interrupted_turn_closers(one_answered)
    assert [c["data"]["message"]["source"]["callId"] for c in closers if c["type"] == "tool/result"] == ["b"]
    closers = interrupted_turn_closers(base)
    results = [c for c in closers if c["type"] == "tool/result"]
    assert [r["data"]["message"]["source"]["callId"] for r in results] == ["a", "b"]
    assert [r["data"]["message"]["id"] for r in results] == ["interrupted-tool-result-a-3", "interrupted-tool-result-b-4"]


def test_reregistered_call_keeps_position_and_forgets_its_call_seq() -> None:
    """jsonl-backend §12.4 table: re-setting an existing id keeps its position, drops its ``call_seq``."""
    events = [
        turn_start(0, 1),
        step_start(1, 1, 1),
        assistant_message(2, 1, 1, text=None, calls=["a", "b"]),
        tool_call(3, 1, 1, "a"),
        assistant_message(4, 1, 1, text=None, calls=["a"]),
    ]
    results = [c for c in interrupted_turn_closers(events) if c["type"] == "tool/result"]
    assert [r["data"]["message"]["source"]["callId"] for r in results] == ["a", "b"]
    assert "sourceEventSeqs" not in results[0]


def test_step_start_without_turn_has_no_closers() -> None:
    assert interrupted_turn_closers([step_start(0, 1, 1)]) == []


def _restorable_logs() -> list[list[dict[str, Any]]]:
    return [
        [turn_start(0, 1)],
        [turn_start(0, 1), step_start(1, 1, 1)],
        _turn2_with_call(False),
        _turn2_with_call(True),
        [
            turn_start(0, 1),
            user_message(1, "hi"),
            step_start(2, 1, 1),
            assistant_message(3, 1, 1, text="x", calls=["a", "b"]),
            tool_call(4, 1, 1, "a"),
            tool_result(5, 1, 1, "a"),
        ],
    ]


@pytest.mark.parametrize("index", range(5))
def test_rule_42_closed_log_validates_and_needs_no_more_closers(index: int) -> None:
    events = _restorable_logs()[index]
    closers = interrupted_turn_closers(events)
    validate_seed_events(events + closers)
    assert interrupted_turn_closers(events + closers) == []
    assert [c["seq"] for c in closers] == list(range(len(events), len(events) + len(closers)))


# ---------------------------------------------------------------- header validation (rules 2-8)


def _header(**fields: Any) -> dict[str, Any]:
    return {"version": 0, "id": "h", "createdAt": 1000, **fields}


@pytest.mark.parametrize(
    ("fields", "phrase"),
    [
        ({"cwd": "relative/path"}, "cwd must be an absolute path"),
        ({"createdAt": -1}, "createdAt must be a non-negative safe integer"),
        ({"createdAt": 1.5}, "createdAt must be a non-negative safe integer"),
        ({"createdAt": "123"}, "createdAt must be a non-negative safe integer"),
        ({"createdAt": 2**53}, "createdAt must be a non-negative safe integer"),
        ({"seedLength": -1}, "seedLength must be a non-negative safe integer"),
        ({"seedLength": 0.5}, "seedLength must be a non-negative safe integer"),
        ({"seedLength": "1"}, "seedLength must be a non-negative safe integer"),
        ({"origin": "fork"}, 'origin must be "subagent"'),
        ({"delegationDepth": -1}, "delegationDepth"),
        ({"delegationDepth": 0.5}, "delegationDepth"),
        ({"delegationDepth": "1"}, "delegationDepth"),
        ({"agentPreset": 1}, "must be a string"),
        ({"parentSession": 1}, "must be a string"),
        ({"version": 1}, "header version must be 0"),
        ({"id": "other"}, "does not match session id"),
    ],
)
def test_rules_02_to_08_header_validation(fields: dict[str, Any], phrase: str) -> None:
    with pytest.raises(SessionValidationError, match=phrase):
        validate_header(_header(**fields), "h")


def test_rules_04_to_06_accepted_headers() -> None:
    validate_header(
        _header(seedLength=10, origin="subagent", delegationDepth=2, cwd="/abs", agentPreset="x", parentSession="p"), "h"
    )


# ---------------------------------------------------------------- envelope validation (rules 13-18)


@pytest.mark.parametrize(
    "change",
    [
        {"extra": 1},
        {"seq": "0"},
        {"seq": 0.5},
        {"seq": -1},
        {"time": "1"},
        {"time": 0.5},
        {"data": "<missing>"},
        {"ignorable": False},
        {"ignorable": "yes"},
        {"type": 5},
    ],
    ids=[
        "extra-key",
        "seq-str",
        "seq-frac",
        "seq-neg",
        "time-str",
        "time-frac",
        "no-data",
        "ignorable-false",
        "ignorable-yes",
        "type-int",
    ],
)
def test_rule_13_invalid_envelopes(change: dict[str, Any]) -> None:
    event = turn_start(0, 1)
    for key, value in change.items():
        if value == "<missing>":
            del event[key]
        else:
            event[key] = value
    with pytest.raises(SessionValidationError, match="invalid event envelope"):
        validate_seed_events([event])


def test_rule_13_ignorable_true_is_kept() -> None:
    validate_seed_events([ev("plugin/event", 0, None, ignorable=True)])


def test_rule_14_contiguity() -> None:
    with pytest.raises(SessionValidationError, match="seed must be contiguous from 0"):
        validate_seed_events([turn_start(0, 1), turn_end(5, 1)])


def test_rule_15_surface_markers() -> None:
    bare = user_message(0, "hi")
    del bare["surfaceOp"]
    with pytest.raises(SessionValidationError, match="requires a surfaceOp marker"):
        validate_seed_events([bare])
    with pytest.raises(SessionValidationError, match="not surface-eligible"):
        validate_seed_events([turn_start(0, 1, surfaceOp="append")])


def _request_header(config: dict[str, Any], **header: Any) -> dict[str, Any]:
    return ev("request/header", 0, {"header": {"config": config, **header}})


@pytest.mark.parametrize(
    ("event", "phrase"),
    [
        (_request_header({"model": "m"}), "lacks provider/model"),
        (_request_header({"provider": "p", "model": "m", "reasoningEffort": ""}), "invalid reasoningEffort"),
        (_request_header({"provider": "p", "model": "m"}, adapterDefaults={"reasoningEffort": True}), "invalid adapterDefaults"),
    ],
)
def test_rule_16_request_header(event: dict[str, Any], phrase: str) -> None:
    with pytest.raises(SessionValidationError, match=phrase):
        validate_seed_events([event])


def test_rule_17_tool_result_shapes() -> None:
    base = [turn_start(0, 1), step_start(1, 1, 1)]
    mismatched = tool_result(2, 1, 1, "c1")
    mismatched["data"]["message"]["content"][0]["toolCallId"] = "other"
    with pytest.raises(SessionValidationError, match="mismatched tool call ids"):
        validate_seed_events([*base, mismatched])
    text_block = tool_result(2, 1, 1, "c1")
    text_block["data"]["message"]["content"] = [{"type": "text", "text": "x"}]
    with pytest.raises(SessionValidationError, match="must contain one tool-result block"):
        validate_seed_events([*base, text_block])


@pytest.mark.parametrize(
    "event",
    [
        ev("request/header-delta", 0, {}),
        ev("request/header", 0, {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "fallback"}),
    ],
    ids=["header-delta", "fallback"],
)
def test_rule_18_legacy_request_headers(event: dict[str, Any]) -> None:
    with pytest.raises(SessionValidationError, match="legacy"):
        validate_seed_events([event])
