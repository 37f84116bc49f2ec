"""Synthetic but realistic session logs for benchmarks (turns, steps, long chunk runs, tools)."""

from __future__ import annotations

import random
from typing import Any


def session_events(n_events: int, *, seed: int = 7, start_time: int = 1_767_225_600_000) -> list[dict[str, Any]]:
    """About ``n_events`` events of balanced turns; chunk runs dominate like real logs."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    t = start_time
    turn = 0

    def add(etype: str, data: Any, **extra: Any) -> int:
        nonlocal t
        t += rng.randint(0, 40)
        ev: dict[str, Any] = {"type": etype, "seq": len(events), "time": t, "data": data}
        ev.update(extra)
        events.append(ev)
        return ev["seq"]

    while len(events) < n_events:
        turn += 1
        add("turn/start", {"turn": turn})
        user_seq = add(
            "user/message",
            {
                "id": f"u-{turn}",
                "role": "user",
                "content": [{"type": "text", "text": f"please do task {turn} " * 5}],
                "source": {"kind": "user"},
            },
            surfaceOp="append",
        )
        for step in range(1, rng.randint(2, 4)):
            add("step/start", {"turn": turn, "step": step})
            add("request/context", {"provider": "deepseek", "model": "deepseek-chat", "contextWindow": 128000})
            first = len(events)
            for kind, n in (("reasoning-delta", rng.randint(20, 200)), ("text-delta", rng.randint(20, 300))):
                for _ in range(n):
                    add(
                        "assistant/chunk",
                        {"turn": turn, "step": step, "chunk": {"type": kind, "index": 0, "text": "tok" * rng.randint(1, 4)}},
                    )
            call_id = f"call-{turn}-{step}"
            for _ in range(rng.randint(3, 30)):
                add(
                    "assistant/chunk",
                    {
                        "turn": turn,
                        "step": step,
                        "chunk": {"type": "tool-call-delta", "index": 1, "id": call_id, "argumentsDelta": '{"pa'},
                    },
                )
            add(
                "assistant/chunk",
                {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": {"inputTokens": 1200, "outputTokens": 300}}},
            )
            msg_seq = add(
                "assistant/message",
                {
                    "turn": turn,
                    "step": step,
                    "message": {
                        "id": f"a-{turn}-{step}",
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "done " * 20},
                            {"type": "tool-call", "id": call_id, "name": "read_file", "arguments": '{"path":"x"}'},
                        ],
                        "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"},
                    },
                },
                sourceEventSeqs=[first, len(events) - 1],
                surfaceOp="append",
            )
            call_seq = add("tool/call", {"turn": turn, "step": step, "callId": call_id, "name": "read_file"})
            add(
                "tool/result",
                {
                    "turn": turn,
                    "step": step,
                    "message": {
                        "id": f"r-{turn}-{step}",
                        "role": "user",
                        "source": {"kind": "tool", "callId": call_id},
                        "content": [
                            {
                                "type": "tool-result",
                                "toolCallId": call_id,
                                "content": [{"type": "text", "text": "file contents " * rng.randint(5, 200)}],
                            }
                        ],
                    },
                },
                sourceEventSeqs=[call_seq],
                surfaceOp="append",
            )
            add("step/end", {"turn": turn, "step": step})
            del msg_seq
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        del user_seq
    return events


def batches(events: list[dict[str, Any]], *, seed: int = 11, max_batch: int = 400) -> list[list[dict[str, Any]]]:
    """Split like a write-behind flush would: uneven batches, some cutting chunk runs."""
    rng = random.Random(seed)
    out = []
    i = 0
    while i < len(events):
        n = rng.randint(50, max_batch)
        out.append(events[i : i + n])
        i += n
    return out


def closed_turn(n: int, turn: int, t: int, *, deltas: int = 0) -> list[dict[str, Any]]:
    """One closed turn continuing a log of ``n`` events (seqs ``n`` on, times from ``t``): a prompt, and
    with ``deltas`` a step streaming that many text deltas (a writer packs 3 or more into one row).
    What the follow benchmarks append to the big session."""
    step: list[dict[str, Any]] = []
    if deltas:
        step = [
            {"type": "step/start", "seq": n + 2, "time": t + 2, "data": {"turn": turn, "step": 1}},
            *(
                {
                    "type": "assistant/chunk",
                    "seq": n + 3 + i,
                    "time": t + 3,
                    "data": {"turn": turn, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"part {i} "}},
                }
                for i in range(deltas)
            ),
            {"type": "step/end", "seq": n + 3 + deltas, "time": t + 4, "data": {"turn": turn, "step": 1}},
        ]
    end = n + 2 + len(step)
    return [
        {"type": "turn/start", "seq": n, "time": t, "data": {"turn": turn}},
        {
            "type": "user/message",
            "seq": n + 1,
            "time": t + 1,
            "surfaceOp": "append",
            "data": {
                "id": f"follow-{n}",
                "role": "user",
                "content": [{"type": "text", "text": "follow"}],
                "source": {"kind": "user"},
            },
        },
        *step,
        {"type": "turn/end", "seq": end, "time": t + 5, "data": {"turn": turn, "reason": {"kind": "completed"}}},
    ]
