"""The demo's sessions as data: its projects and prompts, and the turns and steps a demo session is made of
(tool calls with their output, streamed answers and reasoning, token usage), drawn from a seeded
random source so every build writes the same root.  ``app.demo`` writes them through the engine and
damages a few on purpose.

Qt-free; may import the engine's public package only.
"""

from __future__ import annotations

import json
import random
from typing import Any

from persistence import EventType

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


class DemoLog:
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
    log: DemoLog, turn: int, step: int, prompt: str | None, *, title: str | None = None, header: str | None = None
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


def add_tool_step(
    log: DemoLog,
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


def add_answer_step(
    log: DemoLog,
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


def add_turn(
    log: DemoLog,
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
        add_tool_step(
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
    add_answer_step(
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


def new_session_id(rnd: random.Random) -> str:
    return _message_id(rnd)
