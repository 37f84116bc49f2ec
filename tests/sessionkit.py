"""Shared test data and helpers (importable as ``sessionkit``: pytest puts ``tests/`` on sys.path
when it loads ``tests/conftest.py``).

Event builders follow the upstream shared contract fixtures (persistence-contract §9.0,
jsonl-backend §15): ``meta(id, cwd)``, ``one_turn_log()`` and friends.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

import zstandard

from persistence.jsonl.frames import scan_frames
from persistence.jsonl.paths import log_path

T = TypeVar("T")

WORK = "/w"
OTHER = "/other"


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine to completion (no pytest-asyncio here)."""
    return asyncio.run(coro)


# ---------------------------------------------------------------- headers


def meta(session_id: str, cwd: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"version": 0, "id": session_id, "createdAt": 1000}
    if cwd is not None:
        out["cwd"] = cwd
    out.update(extra)
    return out


# ---------------------------------------------------------------- events


def ev(type_: str, seq: int, data: Any, *, time: int | None = None, **envelope: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_, "seq": seq, "time": seq + 1 if time is None else time, "data": data}
    out.update(envelope)
    return out


def turn_start(seq: int, turn: int, **kw: Any) -> dict[str, Any]:
    return ev("turn/start", seq, {"turn": turn}, **kw)


def turn_end(seq: int, turn: int, kind: str = "completed", **kw: Any) -> dict[str, Any]:
    return ev("turn/end", seq, {"turn": turn, "reason": {"kind": kind}}, **kw)


def step_start(seq: int, turn: int, step: int, **kw: Any) -> dict[str, Any]:
    return ev("step/start", seq, {"turn": turn, "step": step}, **kw)


def step_end(seq: int, turn: int, step: int, **kw: Any) -> dict[str, Any]:
    return ev("step/end", seq, {"turn": turn, "step": step}, **kw)


def user_message(seq: int, text: str, msg_id: str | None = None, **kw: Any) -> dict[str, Any]:
    data = {
        "id": msg_id or f"user-{seq}",
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"},
    }
    kw.setdefault("surfaceOp", "append")
    return ev("user/message", seq, data, **kw)


def tool_call_block(call_id: str, name: str = "bash", arguments: str = "{}") -> dict[str, Any]:
    return {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}


def assistant_message(
    seq: int, turn: int, step: int, text: str | None = "ok", calls: Iterable[str] = (), msg_id: str | None = None, **kw: Any
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    content.extend(tool_call_block(c) for c in calls)
    data = {
        "turn": turn,
        "step": step,
        "message": {
            "id": msg_id or f"assistant-{seq}",
            "role": "assistant",
            "content": content,
            "source": {"kind": "model", "provider": "mock", "model": "mock"},
        },
    }
    kw.setdefault("surfaceOp", "append")
    return ev("assistant/message", seq, data, **kw)


def tool_call(seq: int, turn: int, step: int, call_id: str, name: str = "bash", **kw: Any) -> dict[str, Any]:
    return ev("tool/call", seq, {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": "{}"}, **kw)


def tool_result(
    seq: int, turn: int, step: int, call_id: str, text: str = "done", *, is_error: bool = False, **kw: Any
) -> dict[str, Any]:
    data = {
        "turn": turn,
        "step": step,
        "message": {
            "id": f"tool-result-{call_id}-{seq}",
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [
                {"type": "tool-result", "toolCallId": call_id, "isError": is_error, "content": [{"type": "text", "text": text}]}
            ],
        },
    }
    kw.setdefault("surfaceOp", "append")
    return ev("tool/result", seq, data, **kw)


def text_delta(
    seq: int, turn: int, step: int, text: str, *, index: int = 0, kind: str = "text-delta", time: int | None = None
) -> dict[str, Any]:
    return ev(
        "assistant/chunk", seq, {"turn": turn, "step": step, "chunk": {"type": kind, "index": index, "text": text}}, time=time
    )


def tool_delta(
    seq: int, turn: int, step: int, call_id: str, args: str, *, name: str | None = None, index: int = 0, time: int | None = None
) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
    if name is not None:
        chunk["name"] = name
    chunk["argumentsDelta"] = args
    return ev("assistant/chunk", seq, {"turn": turn, "step": step, "chunk": chunk}, time=time)


def one_turn_log() -> list[dict[str, Any]]:
    """Six events, seqs 0-5, times 1-6 (persistence-contract §9.0)."""
    return [
        turn_start(0, 1),
        user_message(1, "hi", "one-turn-user"),
        step_start(2, 1, 1),
        assistant_message(3, 1, 1, "hello", msg_id="one-turn-assistant"),
        step_end(4, 1, 1),
        turn_end(5, 1),
    ]


# The exact lines of one_turn_log() as upstream writes them (jsonl-backend §15).
ONE_TURN_LINES = (
    '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'
    '{"type":"user/message","seq":1,"time":2,"data":{"id":"one-turn-user","role":"user","content":[{"type":"text",'
    '"text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}\n'
    '{"type":"step/start","seq":2,"time":3,"data":{"turn":1,"step":1}}\n'
    '{"type":"assistant/message","seq":3,"time":4,"data":{"turn":1,"step":1,"message":{"id":"one-turn-assistant",'
    '"role":"assistant","content":[{"type":"text","text":"hello"}],"source":{"kind":"model","provider":"mock",'
    '"model":"mock"}}},"surfaceOp":"append"}\n'
    '{"type":"step/end","seq":4,"time":5,"data":{"turn":1,"step":1}}\n'
    '{"type":"turn/end","seq":5,"time":6,"data":{"turn":1,"reason":{"kind":"completed"}}}\n'
)


def open_turn2() -> list[dict[str, Any]]:
    """An interrupted second turn after one_turn_log(): turn/start 6, step/start 7."""
    return [turn_start(6, 2), step_start(7, 2, 1)]


def completed_turn2() -> list[dict[str, Any]]:
    return [turn_start(6, 2), turn_end(7, 2)]


def pre_identity_log() -> list[dict[str, Any]]:
    """The 9-event pre-identity log of the upstream coordinator contract (R-16)."""
    return [
        turn_start(0, 1),
        ev(
            "user/message",
            1,
            {"content": [{"type": "text", "text": "old question"}], "source": {"kind": "user"}},
            surfaceOp="append",
        ),
        step_start(2, 1, 1),
        ev(
            "assistant/message",
            3,
            {
                "turn": 1,
                "step": 1,
                "content": [tool_call_block("call-1", "read")],
                "provenance": {"provider": "mock", "model": "mock"},
            },
            surfaceOp="append",
        ),
        tool_call(4, 1, 1, "call-1", "read"),
        ev(
            "tool/result",
            5,
            {"turn": 1, "step": 1, "callId": "call-1", "content": [{"type": "text", "text": "full result"}], "isError": False},
            sourceEventSeqs=[4],
            surfaceOp="append",
        ),
        ev(
            "tool/result",
            6,
            {"turn": 1, "step": 1, "callId": "call-1", "content": [{"type": "text", "text": "pruned"}], "isError": False},
            sourceEventSeqs=[5],
            surfaceOp={"op": "replace", "start": 5, "end": 5},
        ),
        step_end(7, 1, 1),
        turn_end(8, 1),
    ]


STEERING_MESSAGE_ID = "steer-original-id"

PRE_REACT_TURN_END_REASONS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    # (stored reason, normalized reason)
    ({"kind": "completed"}, {"kind": "completed"}),
    (
        {"kind": "error", "step": 1, "failure": {"message": "old provider failure", "code": "SERVER"}},
        {"kind": "error", "error": {"message": "old provider failure", "code": "SERVER"}},
    ),
    ({"kind": "aborted"}, {"kind": "aborted", "reason": {"kind": "legacy"}}),
    ({"kind": "disposed"}, {"kind": "aborted", "reason": {"kind": "disposed"}}),
    (
        {"kind": "error", "step": 0, "message": "old thrown value"},
        {"kind": "error", "error": {"message": "old thrown value", "code": "UNKNOWN"}},
    ),
    (
        {
            "kind": "error",
            "step": 2,
            "failure": {
                "message": "rate limited",
                "code": "RATE_LIMIT",
                "status": 429,
                "providerRetryAfterMs": 1000,
                "requestId": "request-1",
            },
        },
        {
            "kind": "error",
            "error": {
                "message": "rate limited",
                "code": "RATE_LIMIT",
                "status": 429,
                "providerRetryAfterMs": 1000,
                "requestId": "request-1",
            },
        },
    ),
    (
        {"kind": "error", "step": 1, "message": "old coded error", "code": "CODED"},
        {"kind": "error", "error": {"message": "old coded error", "code": "CODED"}},
    ),
]


def pre_react_loop_log() -> list[dict[str, Any]]:
    """Seven turns whose turn/start carries ``trigger`` and whose turn/end reasons are the old shapes (R-17).

    Turn 1 holds the prompt ``old prompt`` (seq 1) and a wrapped ``steering/message`` at seq 3.
    """
    trig = {"kind": "user"}
    out = [
        ev("turn/start", 0, {"turn": 1, "trigger": trig}),
        user_message(1, "old prompt", "prompt-id"),
        step_start(2, 1, 1),
        ev(
            "steering/message",
            3,
            {
                "turn": 1,
                "message": {
                    "id": STEERING_MESSAGE_ID,
                    "role": "user",
                    "content": [{"type": "text", "text": "old steering"}],
                    "source": {"kind": "user"},
                },
            },
            surfaceOp="append",
        ),
        step_end(4, 1, 1),
        ev("turn/end", 5, {"turn": 1, "reason": PRE_REACT_TURN_END_REASONS[0][0]}),
    ]
    for turn, (stored, _norm) in enumerate(PRE_REACT_TURN_END_REASONS[1:], start=2):
        seq = len(out)
        out.append(ev("turn/start", seq, {"turn": turn, "trigger": trig}))
        out.append(ev("turn/end", seq + 1, {"turn": turn, "reason": copy.deepcopy(stored)}))
    return out


# ---------------------------------------------------------------- results and files


def wire(events: Any) -> list[dict[str, Any]]:
    """Plain dicts of an EventLog / ReadFromResult.events / list of dicts."""
    if hasattr(events, "to_json"):
        return events.to_json()  # type: ignore[no-any-return]
    return [e.to_json() if hasattr(e, "to_json") else e for e in events]


def types_of(events: Any) -> list[str]:
    return [e["type"] for e in wire(events)]


def seqs_of(events: Any) -> list[int]:
    return [e["seq"] for e in wire(events)]


def artifact(root: str | os.PathLike[str], cwd: str | None, session_id: str, compression: str) -> Path:
    return Path(log_path(os.path.abspath(os.fspath(root)), cwd, session_id, compression))


def zstd_frames(data: bytes) -> list[bytes]:
    """Plaintext of every complete frame (the torn tail, if any, is ignored)."""
    ranges, _torn = scan_frames(data)
    out = []
    for start, end in ranges:
        d = zstandard.ZstdDecompressor().decompressobj()
        out.append(d.decompress(data[start:end]))
        assert d.eof
    return out


def plaintext(data: bytes, compression: str) -> bytes:
    return b"".join(zstd_frames(data)) if compression == "zstd" else data


def files_under(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every regular file under ``root``."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def header_line(session_id: str, cwd: str | None = None, **extra: Any) -> dict[str, Any]:
    """A header record as the JSONL writer builds it (``type`` first, ``delegationDepth`` always)."""
    out: dict[str, Any] = {"type": "session", "version": 0, "id": session_id, "createdAt": 1000}
    if cwd is not None:
        out["cwd"] = cwd
    out["delegationDepth"] = 0
    out.update(extra)
    return out


def encode_log(header: dict[str, Any] | bytes, batches: Iterable[Iterable[dict[str, Any]] | bytes], compression: str) -> bytes:
    """File bytes for a header and event batches (raw text, or one zstd frame per part).

    ``bytes`` parts are taken verbatim as plaintext (a hand-made line must carry its own newline).
    """
    from persistence.jsonl.frames import compress_frame
    from persistence.model.jsontext import js_dumps

    parts = [header if isinstance(header, bytes) else js_dumps(header) + b"\n"]
    for batch in batches:
        parts.append(batch if isinstance(batch, bytes) else b"".join(js_dumps(e) + b"\n" for e in batch))
    if compression == "zstd":
        return b"".join(compress_frame(p) for p in parts)
    return b"".join(parts)


def plant(root: str | os.PathLike[str], rel_dir: str, content: bytes, compression: str, name: str | None = None) -> Path:
    """Write an artifact by hand at ``root/rel_dir/session.jsonl[.zstd]`` (or ``name``)."""
    d = Path(root) / rel_dir
    d.mkdir(parents=True, exist_ok=True)
    path = d / (name or ("session.jsonl.zstd" if compression == "zstd" else "session.jsonl"))
    path.write_bytes(content)
    return path
