"""Builders of the compare tests: a turn with a prompt, an answer, tool calls and token usage.

Importable as ``comparekit`` (beside ``sessionkit``: tests/compare and tests/cli use it).
"""

from __future__ import annotations

from typing import Any

import sessionkit as sk


def turn(seq: int, n: int, prompt: str, answer: str, tools: tuple[str, ...] = (), tokens: int = 100) -> list[dict[str, Any]]:
    """Turn ``n`` from event ``seq``: a prompt, one step whose message calls ``tools``, their results."""
    calls = [f"c{n}-{k}" for k in range(len(tools))]
    msg = sk.assistant_message(seq + 3, n, 1, answer, calls=calls)
    for block, name in zip(msg["data"]["message"]["content"][1:], tools, strict=True):
        block["name"] = name
    msg["data"]["usage"] = {"inputTokens": tokens, "outputTokens": tokens // 10}
    out = [sk.turn_start(seq, n), sk.user_message(seq + 1, prompt), sk.step_start(seq + 2, n, 1), msg]
    s = seq + 4
    for call, name in zip(calls, tools, strict=True):
        out.append(sk.tool_call(s, n, 1, call, name))
        out.append(sk.tool_result(s + 1, n, 1, call, "ok", sourceEventSeqs=[s]))
        s += 2
    out += [sk.step_end(s, n, 1), sk.turn_end(s + 1, n)]
    return out


def log(*turns: tuple[str, str, tuple[str, ...], int]) -> list[dict[str, Any]]:
    """Turns one after another: each (prompt, answer, tools, input tokens)."""
    out: list[dict[str, Any]] = []
    for n, (prompt, answer, tools, tokens) in enumerate(turns, start=1):
        out += turn(len(out), n, prompt, answer, tools, tokens)
    return out
