"""The demo root: about thirty sessions written by the engine itself, plus the damage a viewer must show.

Sessions go through ``create``/``append`` (one flush per turn), so chunk runs
are packed, frames are per batch and headers are what the engine writes.  A few are then damaged on
purpose the way the upstream fixtures were (a crash mid-turn, a torn last frame, a bad frame in the
middle, an unreadable header, a newer format version).  Built once, into a temporary directory that is
renamed into place, so a half-built demo is never shown.

Qt-free (the window, the tests and the benchmarks all build it).  May import the engine and
``app.paths``; never ``app.gui``.  It damages frames on purpose with the engine's public frame helpers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import tempfile
from typing import Any

from app.paths import DEMO_DIR_NAME, demo_root_path
from persistence import EventType, JsonlSessionPersistence, testing

BASE_TIME = 1767600000000  # 2026-01-05, local midnight-ish; every demo time is derived from it

PROJECTS: dict[str, dict[str, Any]] = {
    "/home/ana/projects/webshop": {
        "prompts": [
            "The checkout page throws a 500 when the cart is empty. Can you find out why?",
            "Add a unit test for the discount calculation with stacked coupons.",
            "Why is `npm run build` so slow now? It used to take 20 seconds.",
            "Rename `OrderItem.qty` to `quantity` everywhere, including the migrations.",
            "The product images are blurry on retina screens; fix the srcset.",
            "Make the search box debounce its requests (300 ms).",
        ],
        "files": ["src/checkout/cart.ts", "src/pricing/discount.ts", "webpack.config.js", "src/models/order.ts"],
        "commands": ["npm test -- cart", "npm run build -- --profile", "git grep -n qty", "npx tsc --noEmit"],
    },
    "/home/ana/projects/parser-lib": {
        "prompts": [
            "test_parse_empty fails on main. Find out why and fix it.",
            "Add support for quoted fields with embedded commas.",
            "Profile the tokenizer on the 40 MB sample and make it faster.",
            "Write docs for the `Dialect` options.",
        ],
        "files": ["src/parser.py", "src/tokenizer.py", "tests/test_parser.py", "docs/dialects.md"],
        "commands": ["pytest -q tests/test_parser.py", "python -m cProfile -s cumtime bench.py", "ruff check src"],
    },
    "/srv/infra/terraform": {
        "prompts": [
            "Plan the staging changes and tell me what would be destroyed.",
            "Move the S3 bucket policies into their own module.",
            "Why does `terraform validate` complain about the provider alias?",
        ],
        "files": ["modules/storage/main.tf", "envs/staging/main.tf", "providers.tf"],
        "commands": ["terraform plan -no-color", "terraform validate", "tflint"],
    },
    "/home/ana/notes/研究 (drafts)": {
        "prompts": ["Summarise yesterday's meeting notes into three bullet points.", "把这段笔记翻译成英文。"],
        "files": ["2026-01-04.md", "ideas.md"],
        "commands": ["wc -w 2026-01-04.md"],
    },
}

REASONING = [
    "The user wants {topic}. I should look at the code first before changing anything.",
    "Let me read {file} to see how it is structured; then run the relevant tests.",
    "The failure points at {file}. A quick test run will confirm the hypothesis.",
    "I have enough context now; I'll make the smallest change that fixes it and re-run the tests.",
]
ANSWERS = [
    "Found it: {file} returned `None` for the empty case. I changed it to return an empty list and added a test.",
    "Done. The change is limited to {file}; all tests pass locally (`{command}`).",
    "Here is what I found: the slowdown comes from a plugin that runs on every file. I disabled it for dev builds.",
    "I could not reproduce the problem with the current code. Could you share the exact input that fails?",
]
OUTPUTS = [
    "....................                                       [100%]\n20 passed in 0.41s\n",
    "F                                                            [100%]\n=== FAILURES ===\n"
    "E  AssertionError: assert None == []\n1 failed in 0.05s\n",
    "Plan: 2 to add, 1 to change, 0 to destroy.\n",
    "src/models/order.ts:12:  qty: number;\nsrc/checkout/cart.ts:40:  item.qty * price\n",
]


class _Log:
    """Events of one session as the upstream loop would write them (one flush per step)."""

    def __init__(self, t0: int, rnd: random.Random) -> None:
        self.events: list[dict[str, Any]] = []
        self.t = t0
        self.rnd = rnd
        self.turn = 0

    def add(self, type_: str, data: Any, *, dt: int = 3, surface: bool = False, sources: list[int] | None = None) -> int:
        self.t += dt
        ev: dict[str, Any] = {"type": type_, "seq": len(self.events), "time": self.t, "data": data}
        if sources is not None:
            ev["sourceEventSeqs"] = sources
        if surface:
            ev["surfaceOp"] = "append"
        self.events.append(ev)
        return ev["seq"]

    def stream(self, turn: int, step: int, index: int, kind: str, text: str, *, call: tuple[str, str] | None = None) -> list[int]:
        """block-start, ≥3 deltas (a packed chunk run on disk), block-end; returns the chunk seqs."""
        seqs = [
            self.add(
                EventType.ASSISTANT_CHUNK,
                {"turn": turn, "step": step, "chunk": {"type": "block-start", "index": index, "blockType": kind}},
                dt=20,
            )
        ]
        pieces = _split(text, self.rnd)
        for i, piece in enumerate(pieces):
            if kind == "tool-call":
                assert call is not None
                chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call[0]}
                if i == 0:
                    chunk["name"] = call[1]
                chunk["argumentsDelta"] = piece
            else:
                chunk = {"type": f"{kind}-delta", "index": index, "text": piece}
            seqs.append(
                self.add(EventType.ASSISTANT_CHUNK, {"turn": turn, "step": step, "chunk": chunk}, dt=self.rnd.randint(4, 25))
            )
        if kind == "tool-call":
            assert call is not None
            block: dict[str, Any] = {"type": "tool-call", "id": call[0], "name": call[1], "arguments": text}
        else:
            block = {"type": kind, "text": text}
        seqs.append(
            self.add(
                EventType.ASSISTANT_CHUNK,
                {"turn": turn, "step": step, "chunk": {"type": "block-end", "index": index, "block": block}},
                dt=5,
            )
        )
        return seqs


def _split(text: str, rnd: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rnd.randint(2, 7)
        out.append(text[i : i + n])
        i += n
    while len(out) < 3:
        out.append("")
    return out


def _usage(rnd: random.Random) -> dict[str, int]:
    return {
        "inputTokens": rnd.randint(900, 4000),
        "outputTokens": rnd.randint(60, 600),
        "cacheReadTokens": rnd.choice([0, 1664, 3328, 6656]),
    }


def _message_id(rnd: random.Random) -> str:
    a, b, c, d, e = (rnd.getrandbits(n) for n in (32, 16, 12, 12, 48))
    return f"{a:08x}-{b:04x}-4{c:03x}-a{d:03x}-{e:012x}"


def _model_source() -> dict[str, str]:
    return {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}


def _step_start(
    log: _Log, turn: int, step: int, prompt: str | None, *, title: str | None = None, header: str | None = None
) -> None:
    """step/start, then (first step of a turn) the prompt that entered it and the request snapshot."""
    rnd = log.rnd
    log.add(EventType.STEP_START, {"turn": turn, "step": step}, dt=2)
    if prompt is None:
        return
    msg = {"content": [{"type": "text", "text": prompt}], "source": {"kind": "user"}, "role": "user", "id": _message_id(rnd)}
    seq = log.add(EventType.USER_MESSAGE, msg, surface=True, dt=1)
    if title:
        log.add(EventType.SESSION_TITLE, {"title": title, "messageSeqs": [seq], "source": {"kind": "fallback"}})
    if header:
        log.add(
            EventType.REQUEST_HEADER,
            {
                "header": {
                    "config": {
                        "provider": "deepseek-official",
                        "model": "deepseek-v4-flash",
                        "maxTokens": 393216,
                        "reasoningEffort": "high",
                    },
                    "system": "You are DeepSeek Harness, a coding agent.",
                },
                "reason": header,
            },
        )
        log.add(
            EventType.REQUEST_CONTEXT, {"provider": "deepseek-official", "model": "deepseek-v4-flash", "contextWindow": 1000000}
        )


def _tool_step(
    log: _Log,
    turn: int,
    step: int,
    cfg: dict[str, Any],
    *,
    prompt: str | None = None,
    title: str | None = None,
    header: str | None = None,
    error: bool = False,
    retry: bool = False,
    calls: int = 1,
    recorded: int | None = None,
    results: bool = True,
) -> None:
    """A step whose model call asks for ``calls`` tools; ``recorded``/``results`` leave it crashed."""
    rnd = log.rnd
    _step_start(log, turn, step, prompt, title=title, header=header)
    if retry:  # a failed attempt streams a little, then llm/retry; its chunks are not cited by the message
        log.stream(turn, step, 0, "reasoning", "Let me look at the")
        log.add(
            EventType.LLM_RETRY,
            {
                "retryId": f"retry-{turn}-{step}",
                "turn": turn,
                "step": step,
                "attempt": 1,
                "delayMs": 1200,
                "failure": {"message": "provider overloaded (HTTP 529)", "code": "OVERLOADED", "status": 529},
            },
            dt=30,
        )
        log.add(EventType.LLM_RETRY_STARTED, {"retryId": f"retry-{turn}-{step}", "turn": turn, "step": step}, dt=1200)
    file = rnd.choice(cfg["files"])
    reasoning = rnd.choice(REASONING).format(topic="a fix", file=file)
    seqs = log.stream(turn, step, 0, "reasoning", reasoning)
    blocks: list[dict[str, Any]] = [{"type": "reasoning", "text": reasoning}]
    planned: list[tuple[str, str, str, str]] = []
    for i in range(calls):
        use_read = rnd.random() < 0.4
        target = rnd.choice(cfg["files"])
        name = "read_file" if use_read else "bash"
        args = json.dumps(
            {"path": target} if use_read else {"command": rnd.choice(cfg["commands"]), "description": "Run the checks"}
        )
        call_id = f"call_{turn:02d}_{step}{i}_{rnd.getrandbits(40):010x}"
        seqs += log.stream(turn, step, i + 1, "tool-call", args, call=(call_id, name))
        blocks.append({"type": "tool-call", "id": call_id, "name": name, "arguments": args})
        planned.append((call_id, name, args, target))
    usage = _usage(rnd)
    seqs.append(
        log.add(EventType.ASSISTANT_CHUNK, {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}, dt=8)
    )
    seqs.append(
        log.add(
            EventType.ASSISTANT_CHUNK,
            {"turn": turn, "step": step, "chunk": {"type": "finish", "reason": {"kind": "tool-calls"}}},
            dt=3,
        )
    )
    log.add(
        EventType.ASSISTANT_MESSAGE,
        {
            "turn": turn,
            "step": step,
            "message": {"role": "assistant", "content": blocks, "source": _model_source(), "id": _message_id(rnd)},
            "usage": usage,
        },
        surface=True,
        sources=seqs,
        dt=1,
    )
    n_recorded = calls if recorded is None else recorded
    for i, (call_id, name, args, target) in enumerate(planned[:n_recorded]):
        call_seq = log.add(
            EventType.TOOL_CALL, {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": args}, dt=2
        )
        if not results:
            continue
        failed = error and i == 0
        if name == "read_file":
            text = f"# {target}\n\n" + "\n".join(f"{n:>4}  …" for n in range(1, 24))
        else:
            text = OUTPUTS[1] if failed else rnd.choice([OUTPUTS[0], OUTPUTS[2], OUTPUTS[3]])
        data: dict[str, Any] = {
            "turn": turn,
            "step": step,
            "message": {
                "source": {"kind": "tool", "callId": call_id},
                "content": [
                    {"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}], "isError": failed}
                ],
                "role": "user",
                "id": _message_id(rnd),
            },
        }
        if failed:
            data["error"] = {"name": "ToolExecutionError", "code": "EXIT_NONZERO"}
        if name == "bash":
            data["meta"] = {"exitCode": 1 if failed else 0, "durationMs": rnd.randint(40, 4000)}
        log.add(EventType.TOOL_RESULT, data, surface=True, sources=[call_seq], dt=rnd.randint(50, 3000))
    if results and recorded is None:
        log.add(EventType.STEP_END, {"turn": turn, "step": step}, dt=1)


def _answer_step(
    log: _Log,
    turn: int,
    step: int,
    cfg: dict[str, Any],
    *,
    prompt: str | None = None,
    title: str | None = None,
    header: str | None = None,
    cancelled: bool = False,
) -> None:
    rnd = log.rnd
    _step_start(log, turn, step, prompt, title=title, header=header)
    text = rnd.choice(ANSWERS).format(file=rnd.choice(cfg["files"]), command=rnd.choice(cfg["commands"]))
    if cancelled:
        text = text[: len(text) // 2]
    seqs = log.stream(turn, step, 0, "text", text)
    usage = _usage(rnd)
    data: dict[str, Any] = {
        "turn": turn,
        "step": step,
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "source": _model_source(),
            "id": _message_id(rnd),
        },
    }
    if cancelled:
        data["interrupted"] = True
    else:
        seqs.append(
            log.add(EventType.ASSISTANT_CHUNK, {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}, dt=8)
        )
        seqs.append(
            log.add(
                EventType.ASSISTANT_CHUNK,
                {"turn": turn, "step": step, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
                dt=3,
            )
        )
        data["usage"] = usage
    log.add(EventType.ASSISTANT_MESSAGE, data, surface=True, sources=seqs, dt=1)
    log.add(EventType.STEP_END, {"turn": turn, "step": step}, dt=1)


def _turn(
    log: _Log,
    cfg: dict[str, Any],
    prompt: str,
    *,
    title: str | None = None,
    header: str | None = None,
    tools: int = 1,
    error: bool = False,
    retry: bool = False,
    cancelled: bool = False,
) -> None:
    log.turn += 1
    turn = log.turn
    log.add(EventType.TURN_START, {"turn": turn}, dt=log.rnd.randint(30_000, 900_000))
    for s in range(tools):
        first = s == 0
        _tool_step(
            log,
            turn,
            s + 1,
            cfg,
            prompt=prompt if first else None,
            title=title if first else None,
            header=header if first else None,
            error=error and s == tools - 1,
            retry=retry and first,
        )
    _answer_step(
        log,
        turn,
        tools + 1,
        cfg,
        prompt=prompt if tools == 0 else None,
        title=title if tools == 0 else None,
        header=header if tools == 0 else None,
        cancelled=cancelled,
    )
    if log.rnd.random() < 0.3:
        log.add(
            EventType.TODO_WRITE,
            {
                "todos": [
                    {"content": "Reproduce the problem", "status": "completed"},
                    {"content": "Fix it and add a test", "status": "completed"},
                    {"content": "Update the changelog", "status": "pending"},
                ]
            },
        )
    reason: dict[str, Any] = {"kind": "aborted", "reason": {"kind": "user"}} if cancelled else {"kind": "completed"}
    log.add(EventType.TURN_END, {"turn": turn, "reason": reason}, dt=2)


# ---------------------------------------------------------------- building


async def _write(store: JsonlSessionPersistence, meta: dict[str, Any], log: _Log, *, per_turn: bool = True) -> None:
    await store.create(meta)
    # One flush per turn keeps frames realistic without thousands of tiny batches.
    start = 0
    for i, ev in enumerate(log.events):
        if (per_turn and ev["type"] == EventType.TURN_END) or i == len(log.events) - 1:
            await store.append(meta["id"], log.events[start : i + 1])
            start = i + 1


def _session_id(rnd: random.Random) -> str:
    return _message_id(rnd)


async def build_demo(root: str) -> dict[str, str]:
    """Write the demo sessions under ``root``; returns {role: session id} for the special ones."""
    rnd = random.Random(20260105)
    store = JsonlSessionPersistence(root, compression="zstd")
    special: dict[str, str] = {}
    paths: dict[str, tuple[dict[str, Any], _Log]] = {}
    t = BASE_TIME - 40 * 86_400_000
    try:
        for cwd, cfg in PROJECTS.items():
            count = {"/home/ana/projects/webshop": 9, "/home/ana/projects/parser-lib": 7, "/srv/infra/terraform": 4}.get(cwd, 2)
            for k in range(count):
                t += rnd.randint(2, 30) * 3_600_000
                sid = _session_id(rnd)
                log = _Log(t, rnd)
                prompts = list(cfg["prompts"])
                rnd.shuffle(prompts)
                n_turns = rnd.randint(1, 4)
                for n in range(n_turns):
                    _turn(
                        log,
                        cfg,
                        prompts[n % len(prompts)],
                        title=_title(prompts[0]) if n == 0 else None,
                        header="initial" if n == 0 else None,
                        tools=rnd.randint(0, 3),
                        error=rnd.random() < 0.25,
                        retry=rnd.random() < 0.1,
                        cancelled=(k == 3 and n == n_turns - 1),
                    )
                meta = {"id": sid, "createdAt": t, "cwd": cwd, "agentPreset": "coder"}
                if cwd.startswith("/home/ana/notes") and k == 1:
                    del meta["cwd"]  # a session started outside any project: stored under _no-cwd
                await _write(store, meta, log)
                paths[sid] = (meta, log)
                if cwd.endswith("webshop") and "fork-parent" not in special and n_turns >= 2:
                    special["fork-parent"] = sid
                if cwd.endswith("parser-lib") and "subagent-parent" not in special:
                    special["subagent-parent"] = sid

        webshop = PROJECTS["/home/ana/projects/webshop"]
        parser = PROJECTS["/home/ana/projects/parser-lib"]

        # A long session: 60 turns, so the timeline loads older turns on demand.
        t += 3_600_000
        long_id = "long-refactor-" + _session_id(rnd)[:8]
        log = _Log(t, rnd)
        for n in range(60):
            _turn(
                log,
                webshop,
                f"Refactor step {n + 1}: {rnd.choice(webshop['prompts'])}",
                title="Long refactor of the checkout module" if n == 0 else None,
                header="initial" if n == 0 else None,
                tools=rnd.randint(1, 3),
                error=rnd.random() < 0.15,
            )
        await _write(store, {"id": long_id, "createdAt": t, "cwd": "/home/ana/projects/webshop"}, log)
        special["long"] = long_id

        # A fork: seed = the parent's events through turn 1's turn/end, then session/end-seed (session-model §5.2).
        pmeta, plog = paths[special["fork-parent"]]
        cut = next(i for i, e in enumerate(plog.events) if e["type"] == EventType.TURN_END) + 1
        fork_id = _session_id(rnd)
        flog = _Log(plog.events[cut - 1]["time"] + 3_600_000, rnd)
        flog.events = json.loads(json.dumps(plog.events[:cut]))
        flog.turn = 1
        flog.add(EventType.SESSION_END_SEED, {})
        _turn(
            flog,
            webshop,
            "Try a different approach: keep `qty` and add a `quantity` getter instead.",
            title="Alternative: quantity getter",
            header="resume",
            tools=1,
        )
        await _write(
            store,
            {"id": fork_id, "createdAt": flog.t, "cwd": pmeta["cwd"], "parentSession": pmeta["id"], "seedLength": cut},
            flog,
            per_turn=False,
        )
        special["fork"] = fork_id

        # A subagent child: seed through the parent's last turn/end, origin subagent, depth 1 (§5.3).
        pmeta, plog = paths[special["subagent-parent"]]
        cut = max(i for i, e in enumerate(plog.events) if e["type"] == EventType.TURN_END) + 1
        sub_id = f"{pmeta['id']}.sub-1"
        slog = _Log(plog.events[cut - 1]["time"] + 60_000, rnd)
        slog.events = json.loads(json.dumps(plog.events[:cut]))
        slog.turn = sum(1 for e in slog.events if e["type"] == EventType.TURN_START)
        slog.add(EventType.SESSION_END_SEED, {})
        slog.turn += 1
        turn = slog.turn
        slog.add(EventType.TURN_START, {"turn": turn})
        slog.add(
            EventType.SUBAGENT_DESCRIPTOR,
            {"version": 1, "mode": "one-shot", "parentSessionId": pmeta["id"], "preset": "explorer"},
        )
        _tool_step(
            slog,
            turn,
            1,
            parser,
            prompt="Subtask: list every caller of parse() and report which ones rely on the None return.",
            header="resume",
            calls=2,
        )
        _answer_step(slog, turn, 2, parser)
        slog.add(EventType.TURN_END, {"turn": turn, "reason": {"kind": "completed"}})
        await _write(
            store,
            {
                "id": sub_id,
                "createdAt": slog.t,
                "cwd": pmeta["cwd"],
                "parentSession": pmeta["id"],
                "seedLength": cut,
                "origin": "subagent",
                "delegationDepth": 1,
                "agentPreset": "explorer",
            },
            slog,
            per_turn=False,
        )
        special["subagent"] = sub_id

        # A crashed session: turn 2 asked for two tools, recorded one call, then the process died.
        t += 7_200_000
        crash_id = "crashed-" + _session_id(rnd)[:8]
        clog = _Log(t, rnd)
        _turn(
            clog,
            parser,
            "Run the benchmark suite and summarise the results.",
            title="Benchmark summary",
            header="initial",
            tools=1,
        )
        clog.turn += 1
        clog.add(EventType.TURN_START, {"turn": clog.turn}, dt=60_000)
        _tool_step(
            clog, clog.turn, 1, parser, prompt="Now run the migration against staging.", calls=2, recorded=1, results=False
        )
        await _write(store, {"id": crash_id, "createdAt": t, "cwd": "/home/ana/projects/parser-lib"}, clog)
        special["crashed"] = crash_id

        # Torn tail / corrupt / unreadable header / newer version: written whole, then damaged on disk.
        for role, cwd, title in (
            ("torn", "/srv/infra/terraform", "Plan staging (torn)"),
            ("corrupt", "/srv/infra/terraform", "Bucket policies (corrupt frame)"),
            ("bad-header", "/home/ana/projects/webshop", "Header damaged"),
            ("newer", "/home/ana/projects/parser-lib", "Written by a newer harness"),
        ):
            t += 3_600_000
            sid = f"{role}-{_session_id(rnd)[:8]}"
            dlog = _Log(t, rnd)
            cfg = PROJECTS[cwd]
            for n in range(3):
                _turn(
                    dlog,
                    cfg,
                    cfg["prompts"][n % len(cfg["prompts"])],
                    title=title if n == 0 else None,
                    header="initial" if n == 0 else None,
                    tools=2,
                )
            await _write(store, {"id": sid, "createdAt": t, "cwd": cwd}, dlog)
            special[role] = sid
    finally:
        await store.close()

    _damage(root, special)
    _touch_like_activity(root)
    return special


def _title(prompt: str) -> str:
    words = prompt.rstrip(".?!").split()
    return " ".join(words[:7]) + ("…" if len(words) > 7 else "")


def _artifact(root: str, sid: str) -> str:
    for project in os.listdir(root):
        p = os.path.join(root, project, sid, "session.jsonl.zstd")
        if os.path.exists(p):
            return p
    raise FileNotFoundError(sid)


def _damage(root: str, special: dict[str, str]) -> None:
    """The damage the demo shows, made by the engine's ``persistence.testing`` (never frames by hand)."""
    testing.tear_tail(_artifact(root, special["torn"]))  # a crash mid-write: the last flush cut in half
    testing.corrupt_middle(_artifact(root, special["corrupt"]))  # a flipped byte: a middle frame's checksum fails
    # An unreadable header: the engine's list() skips such a log silently; the app must still show it.
    testing.break_header(_artifact(root, special["bad-header"]))
    # A newer format version, like the upstream future-version fixture.
    testing.rewrite_header(_artifact(root, special["newer"]), version=1)


def _touch_like_activity(root: str) -> None:
    """Give each artifact the mtime of its last event, so "Modified" sorts like real activity."""
    for project in os.listdir(root):
        pdir = os.path.join(root, project)
        for sdir in os.listdir(pdir):
            path = os.path.join(pdir, sdir, "session.jsonl.zstd")
            try:
                last = testing.last_record(path) or {}
                ms = last.get("time") or last.get("time0")
            except Exception:
                continue
            if isinstance(ms, int):
                os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def build_demo_root(final: str) -> str:
    """Build into a temporary sibling and rename it into place (so a half-built demo never shows)."""
    if os.path.isdir(final):
        return final
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".demo-build-", dir=parent)
    root = os.path.join(tmp, "root")
    try:
        asyncio.run(build_demo(root))
        try:
            os.rename(root, final)
        except OSError:
            if not os.path.isdir(final):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def reset_demo_root(final: str) -> str:
    """Build a fresh demo root and swap it in place of ``final`` (Reset demo root).

    The new root is built completely first (as ``build_demo_root`` does), then the old one is renamed
    aside and the new one renamed in, so the path never holds a half-built demo; the old one is
    deleted last.  Refuses any folder not named ``DEMO_DIR_NAME``: this deletes a whole tree, and
    must never be pointed at a user's real session root.
    """
    if os.path.basename(os.path.normpath(final)) != DEMO_DIR_NAME:
        raise ValueError(f"not a demo root (its folder is not named {DEMO_DIR_NAME!r}): {final}")
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".demo-build-", dir=parent)
    root = os.path.join(tmp, "root")
    old = os.path.join(tmp, "old")
    try:
        asyncio.run(build_demo(root))
        if os.path.isdir(final):
            os.rename(final, old)
        try:
            os.rename(root, final)
        except OSError:
            if os.path.isdir(old) and not os.path.exists(final):
                os.rename(old, final)  # the old demo back, rather than none
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


async def rebuild_demo_root(path: str) -> str:
    """``reset_demo_root`` on the default executor (its own event loop); waits for it even when cancelled."""
    fut = asyncio.get_running_loop().run_in_executor(None, reset_demo_root, path)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await fut
        raise


async def ensure_demo_root(path: str) -> str:
    """The demo root, built (once, on the default executor, in its own event loop) when missing.

    Cancelling the awaiting task waits for the build to end (it cannot stop half-way), so its
    temporary folder is gone before the caller's loop winds down.
    """
    fut = asyncio.get_running_loop().run_in_executor(None, build_demo_root, path)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await fut
        raise


__all__ = [
    "DEMO_DIR_NAME",
    "build_demo",
    "build_demo_root",
    "demo_root_path",
    "ensure_demo_root",
    "rebuild_demo_root",
    "reset_demo_root",
]


if __name__ == "__main__":  # pragma: no cover - manual helper: python -m app.demo DIR
    import sys

    print(build_demo_root(os.path.abspath(sys.argv[1])))
