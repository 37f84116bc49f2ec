"""Builders and references of the insight and export tests.

``rich_session`` makes a valid, varied log (turns of one to three steps, delta runs the engine packs,
usage chunks and message usage, failed attempts and retries, several models and tools, tool errors,
crash-repaired results, compactions, prunes, titles, every turn end reason).  ``direct_count`` is the
reference the stats fold is checked against: the same definitions, counted the plain way over eagerly
expanded records.  Importable as ``insightkit`` (pytest puts this folder on ``sys.path``).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import shutil
import stat
from pathlib import Path
from typing import Any

import sessionkit as sk

from persistence import CoordinatedPersistence, open_store

BACKENDS = ("jsonl-zstd", "jsonl-none", "sqlite")
DAY_MS = 86_400_000
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z

TOOLS = ("read_file", "bash", "edit", "grep")
MODELS = (("deepseek", "deepseek-chat"), ("deepseek", "deepseek-reasoner"), ("openai", "gpt-4o"))


def store_path(tmp: Path, backend: str, name: str = "root") -> str:
    if backend == "sqlite":
        folder = tmp / f"{name}-store"
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder / "sessions.sqlite")
    return str(tmp / name)


async def write_sessions(path: str, backend: str, sessions: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]]) -> None:
    """Create each session (header extras in the tuple's dict; ``cwd`` defaults to /w/proj) with its events."""
    store = open_store(path, backend)
    try:
        for sid, (events, extra) in sessions.items():
            extra = dict(extra)
            cwd = extra.pop("cwd", "/w/proj")
            await store.create(sk.meta(sid, cwd, **extra))
            if events:
                await store.append(sid, events)
    finally:
        await store.close()


def reader(path: str, backend: str) -> CoordinatedPersistence:
    return open_store(path, backend, read_only=True, create=False)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def rich_session(
    seed: int, turns: int = 6, *, start_time: int = T0, title: str | None = "A rich session"
) -> list[dict[str, Any]]:
    """A valid log exercising everything the stats fold counts (see the module docstring)."""
    rng = random.Random(seed)
    ev: list[dict[str, Any]] = []
    t = start_time

    def add(etype: str, data: Any, **env: Any) -> int:
        nonlocal t
        t += rng.randint(1, 2000)
        rec: dict[str, Any] = {"type": etype, "seq": len(ev), "time": t, "data": data}
        rec.update(env)
        ev.append(rec)
        return rec["seq"]

    def usage() -> dict[str, int]:
        u = {"inputTokens": rng.randint(100, 5000), "outputTokens": rng.randint(10, 900)}
        if rng.random() < 0.6:
            u["cacheReadTokens"] = rng.randint(0, 20000)
        if rng.random() < 0.3:
            u["cacheWriteTokens"] = rng.randint(0, 3000)
        if rng.random() < 0.3:
            u["reasoningTokens"] = rng.randint(0, 500)
        return u

    def deltas(turn: int, step: int, kind: str, n: int, index: int = 0) -> list[int]:
        return [
            add("assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": kind, "index": index, "text": f"w{k} "}})
            for k in range(n)
        ]

    for turn in range(1, turns + 1):
        add("turn/start", {"turn": turn})
        add(
            "user/message",
            {
                "id": f"u{turn}",
                "role": "user",
                "content": [{"type": "text", "text": f"do task {turn}"}],
                "source": {"kind": "user"},
            },
            surfaceOp="append",
        )
        if turn == 1 and title:
            add("session/title", {"title": title, "messageSeqs": [1], "source": {"kind": "fallback"}})
        provider, model = MODELS[rng.randrange(len(MODELS))]
        for step in range(1, rng.randint(1, 3) + 1):
            add("step/start", {"turn": turn, "step": step})
            if rng.random() < 0.5:
                add("request/context", {"provider": provider, "model": model, "contextWindow": 128000})
            if rng.random() < 0.3:  # a failed attempt: deltas and a usage sample, then a retry
                deltas(turn, step, "text-delta", rng.randint(2, 30))
                add("assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage()}})
                add(
                    "llm/retry",
                    {
                        "retryId": f"r{turn}-{step}",
                        "turn": turn,
                        "step": step,
                        "provider": provider,
                        "mode": "normal",
                        "policyKey": "p",
                        "retry": 1,
                        "maxRetries": 3,
                        "delayMs": 10,
                        "failure": {"message": "overloaded", "code": "RATE_LIMIT"},
                    },
                )
            cited = deltas(turn, step, "reasoning-delta", rng.randint(1, 40))
            cited += deltas(turn, step, "text-delta", rng.randint(1, 60), index=1)
            calls = [f"c{turn}-{step}-{k}" for k in range(rng.randint(0, 3))]
            names = [TOOLS[rng.randrange(len(TOOLS))] for _ in calls]
            for k, (cid, name) in enumerate(zip(calls, names, strict=True)):
                for _ in range(rng.randint(1, 5)):
                    cited.append(
                        add(
                            "assistant/chunk",
                            {
                                "turn": turn,
                                "step": step,
                                "chunk": {
                                    "type": "tool-call-delta",
                                    "index": 2 + k,
                                    "id": cid,
                                    "name": name,
                                    "argumentsDelta": "{}",
                                },
                            },
                        )
                    )
            if rng.random() < 0.8:
                add("assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage()}})
            data: dict[str, Any] = {
                "turn": turn,
                "step": step,
                "message": {
                    "id": f"a{turn}-{step}",
                    "role": "assistant",
                    "content": [
                        {"type": "reasoning", "text": "thinking"},
                        {"type": "text", "text": f"answer {turn}.{step}"},
                        *(
                            {"type": "tool-call", "id": c, "name": n, "arguments": '{"path":"x"}'}
                            for c, n in zip(calls, names, strict=True)
                        ),
                    ],
                    "source": {"kind": "model", "provider": provider, "model": model},
                },
            }
            if rng.random() < 0.5:
                data["usage"] = usage()
            add("assistant/message", data, surfaceOp="append", sourceEventSeqs=cited)
            for k, (cid, name) in enumerate(zip(calls, names, strict=True)):
                crash = rng.random() < 0.1
                call_seq = None
                if not crash:
                    call_seq = add("tool/call", {"turn": turn, "step": step, "callId": cid, "name": name, "arguments": "{}"})
                is_error = rng.random() < 0.25
                result: dict[str, Any] = {
                    "turn": turn,
                    "step": step,
                    "message": {
                        "id": f"r-{cid}",
                        "role": "user",
                        "source": {"kind": "tool", "callId": cid},
                        "content": [
                            {
                                "type": "tool-result",
                                "toolCallId": cid,
                                "content": [{"type": "text", "text": f"out {k}"}],
                                **({"isError": True} if is_error or crash else {}),
                            }
                        ],
                    },
                }
                if crash:
                    result["error"] = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
                    add("tool/result", result, surfaceOp="append")
                else:
                    add("tool/result", result, surfaceOp="append", sourceEventSeqs=[call_seq])
            add("step/end", {"turn": turn, "step": step})
        if rng.random() < 0.2:
            cid = f"cmp{turn}"
            add("compaction/start", {"compactionId": cid, "turn": turn})
            add(
                "compaction/summary",
                {
                    "compactionId": cid,
                    "summary": [{"type": "text", "text": "summary"}],
                    "shadowedRange": {"start": 0, "end": 1},
                    "shadowedSeqs": [0, 1],
                    "shadowedTokenCount": 100,
                    "provider": provider,
                    "model": model,
                    "usage": usage(),
                },
            )
            add("compaction/end", {"compactionId": cid, "turn": turn, **({"error": "failed"} if rng.random() < 0.3 else {})})
        if rng.random() < 0.15:
            add("compaction/prune", {"shadowedRange": {"start": 0, "end": 1}, "shadowedSeqs": [0, 1], "shadowedTokenCount": 5})
        reason = rng.choice(
            [
                {"kind": "completed"},
                {"kind": "completed"},
                {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}},
                {"kind": "aborted", "reason": {"kind": "user"}},
            ]
        )
        add("turn/end", {"turn": turn, "reason": reason})
    return ev


def direct_count(records: list[dict[str, Any]], seed_length: int | None = None) -> dict[str, Any]:
    """The reference numbers: the fold's definitions, counted the plain way over eager records."""
    out: dict[str, Any] = {
        "events": len(records),
        "turns": 0,
        "steps": 0,
        "model_calls": 0,
        "retries": 0,
        "compactions": 0,
        "compactions_failed": 0,
        "prunes": 0,
    }
    names: dict[Any, str] = {}
    started: set[Any] = set()
    calls: dict[str, int] = {}
    errors: dict[str, int] = {}
    samples: dict[tuple[int, Any], tuple[int, int, int, int]] = {}
    turn_slot = -1
    in_turn = False
    step: Any = None
    in_step = False
    fork_turn = None
    for i, r in enumerate(records):
        typ, d = r["type"], r.get("data") or {}
        if typ == "turn/start":
            out["turns"] += 1
            turn_slot += 1
            in_turn, in_step = True, False
        elif typ == "turn/end":
            in_turn, in_step = False, False
            if seed_length is not None and i < seed_length:
                fork_turn = d.get("turn")
        elif typ == "step/start":
            out["steps"] += 1
            step, in_step = d.get("step"), True
        elif typ == "step/end":
            in_step = False
        elif typ == "llm/retry":
            out["retries"] += 1
        elif typ == "compaction/summary":
            out["compactions"] += 1
        elif typ == "compaction/end" and d.get("error") is not None:
            out["compactions_failed"] += 1
        elif typ == "compaction/prune":
            out["prunes"] += 1
        elif typ == "tool/call":
            names[d["callId"]] = d["name"]
            started.add(d["callId"])
            calls[d["name"]] = calls.get(d["name"], 0) + 1
        elif typ == "tool/result" and not isinstance(r.get("surfaceOp"), dict):
            cid = d["message"]["source"]["callId"]
            name = names.get(cid, "(unknown tool)")
            if cid not in started:
                started.add(cid)
                calls[name] = calls.get(name, 0) + 1
            block = d["message"]["content"][0]
            if block.get("isError") is True or d.get("error") is not None:
                errors[name] = errors.get(name, 0) + 1
        usage = None
        if typ == "assistant/message":
            out["model_calls"] += 1
            for b in d["message"]["content"]:
                if b.get("type") == "tool-call":
                    names.setdefault(b["id"], b["name"])
            usage = d.get("usage")
        elif typ == "assistant/chunk" and d["chunk"].get("type") == "usage":
            usage = d["chunk"]["usage"]
        if usage is not None:
            key = (turn_slot if in_turn else -1, step if in_step else d.get("step"))
            samples[key] = (
                usage.get("inputTokens", 0),
                usage.get("outputTokens", 0),
                usage.get("cacheReadTokens", 0),
                usage.get("cacheWriteTokens", 0),
            )
    out["tokens"] = tuple(sum(s[k] for s in samples.values()) for k in range(4))
    out["tools"] = {n: (calls.get(n, 0), errors.get(n, 0)) for n in set(calls) | set(errors)}
    out["tool_calls"] = sum(calls.values())
    out["tool_errors"] = sum(errors.values())
    out["fork_turn"] = fork_turn
    return out


def stats_numbers(stats: Any) -> dict[str, Any]:
    """The same keys as ``direct_count``, read from a ``SessionStats``."""
    t = stats.tokens
    return {
        "events": stats.events,
        "turns": stats.turns,
        "steps": stats.steps,
        "model_calls": stats.model_calls,
        "retries": stats.retries,
        "compactions": stats.compactions,
        "compactions_failed": stats.compactions_failed,
        "prunes": stats.prunes,
        "tokens": (t.input, t.output, t.cache_read, t.cache_write),
        "tools": {s.name: (s.calls, s.errors) for s in stats.tools},
        "tool_calls": stats.tool_calls,
        "tool_errors": stats.tool_errors,
        "fork_turn": stats.fork_turn,
    }


def tree_digest(root: str | Path) -> dict[str, tuple[str, int]]:
    """Relative path -> (sha256, mtime_ns) of every file below ``root`` (a read must leave both alone)."""
    out = {}
    base = Path(root)
    if base.is_file():
        base = base.parent
    for dirpath, _dirs, names in os.walk(base):
        for name in names:
            p = Path(dirpath) / name
            out[str(p.relative_to(base))] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return out


def copy_private(src: Path, dst: Path) -> Path:
    """A private copy of an upstream fixture folder (dirs 0700, files 0600: the engine trusts only those)."""
    shutil.copytree(src, dst, symlinks=True)
    for dirpath, _dirs, files in os.walk(dst):
        os.chmod(dirpath, 0o700)
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                os.chmod(p, stat.S_IRUSR | stat.S_IWUSR)
    return dst
