"""The fold shows a log whose ids are odd JSON (the engine accepts it: upstream validates neither
``callId`` nor a chunk's ``index``), instead of failing with "unhashable type" (review finding)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.timeline.spans import derive_tail
from persistence import EventTable

# One closed turn: a user message, streamed text (chunks cited by the message), a tool call and its result.
TURN: list[dict[str, Any]] = [
    {"type": "turn/start", "seq": 0, "time": 1767600000000, "data": {"turn": 1}},
    {"type": "step/start", "seq": 1, "time": 1767600000001, "data": {"turn": 1, "step": 1}},
    {
        "type": "user/message",
        "seq": 2,
        "time": 1767600000002,
        "data": {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hello"}], "source": {"kind": "user"}},
        "surfaceOp": "append",
    },
    {
        "type": "assistant/chunk",
        "seq": 3,
        "time": 1767600000003,
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "part 0 "}},
    },
    {
        "type": "assistant/chunk",
        "seq": 4,
        "time": 1767600000004,
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "part 1 "}},
    },
    {
        "type": "assistant/chunk",
        "seq": 5,
        "time": 1767600000005,
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "part 2 "}},
    },
    {
        "type": "assistant/chunk",
        "seq": 6,
        "time": 1767600000006,
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "part 3 "}},
    },
    {
        "type": "assistant/chunk",
        "seq": 7,
        "time": 1767600000007,
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "part 4 "}},
    },
    {
        "type": "assistant/chunk",
        "seq": 8,
        "time": 1767600000008,
        "data": {"turn": 1, "step": 1, "chunk": {"type": "usage", "usage": {"inputTokens": 100, "outputTokens": 20}}},
    },
    {
        "type": "assistant/message",
        "seq": 9,
        "time": 1767600000009,
        "data": {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "a1",
                "role": "assistant",
                "source": {"kind": "model", "provider": "p", "model": "m"},
                "content": [
                    {"type": "text", "text": "part 0 part 1 part 2 part 3 part 4 "},
                    {"type": "tool-call", "id": "c1", "name": "bash", "arguments": '{"command":"ls"}'},
                ],
            },
            "usage": {"inputTokens": 100, "outputTokens": 20},
        },
        "sourceEventSeqs": [3, 4, 5, 6, 7, 8],
        "surfaceOp": "append",
    },
    {
        "type": "tool/call",
        "seq": 10,
        "time": 1767600000010,
        "data": {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": '{"command":"ls"}'},
    },
    {
        "type": "tool/result",
        "seq": 11,
        "time": 1767600000011,
        "data": {
            "turn": 1,
            "step": 1,
            "message": {
                "id": "r1",
                "role": "user",
                "source": {"kind": "tool", "callId": "c1"},
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "c1",
                        "content": [{"type": "text", "text": "README.md"}],
                        "isError": False,
                    }
                ],
            },
        },
        "sourceEventSeqs": [10],
        "surfaceOp": "append",
    },
    {"type": "step/end", "seq": 12, "time": 1767600000012, "data": {"turn": 1, "step": 1}},
    {"type": "turn/end", "seq": 13, "time": 1767600000013, "data": {"turn": 1, "reason": {"kind": "completed"}}},
]

ODD = ([], [1, 2], {"a": 1}, {})


@pytest.mark.parametrize("value", ODD, ids=repr)
@pytest.mark.parametrize("where", ["tool/call callId", "tool/result callId", "chunk index"])
def test_odd_ids_fold(value: Any, where: str) -> None:
    events: list[dict[str, Any]] = json.loads(json.dumps(TURN))
    by_type = {e["type"]: e for e in events}
    if where == "tool/call callId":
        by_type["tool/call"]["data"]["callId"] = value
    elif where == "tool/result callId":
        by_type["tool/result"]["data"]["message"]["source"]["callId"] = value
    else:
        for e in events:
            if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "text-delta":
                e["data"]["chunk"]["index"] = value
        by_type["assistant/message"].pop("sourceEventSeqs")  # uncited: the fold groups them by index
    spans, first, nodes = derive_tail(EventTable(events), len(events))
    assert [n.label for n in nodes] == ["Turn 1"] and first == 0 and spans


@pytest.mark.parametrize("value", ODD, ids=repr)
@pytest.mark.parametrize("where", ["tool/call callId", "tool/result callId", "tool-call block id", "chunk index"])
def test_odd_ids_are_read_by_every_fold_of_the_app(value: Any, where: str) -> None:
    """Statistics, the search extractor and the export transcript read the same log without failing."""
    from app.export.transcript import transcript
    from app.insight.stats import fold_stats
    from app.search.extract import extract

    events: list[dict[str, Any]] = json.loads(json.dumps(TURN))
    by_type = {e["type"]: e for e in events}
    if where == "tool/call callId":
        by_type["tool/call"]["data"]["callId"] = value
    elif where == "tool/result callId":
        by_type["tool/result"]["data"]["message"]["source"]["callId"] = value
    elif where == "tool-call block id":
        by_type["assistant/message"]["data"]["message"]["content"][1]["id"] = value
    else:
        for e in events:
            if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "text-delta":
                e["data"]["chunk"]["index"] = value
        by_type["assistant/message"].pop("sourceEventSeqs")
    stats = fold_stats(events)
    assert stats.turns == 1 and stats.tool_calls >= 1  # mismatched ids may count the call twice; no failure
    assert extract(events).rows
    assert list(transcript(events))
