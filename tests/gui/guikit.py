"""Helpers shared by the window tests (imported as ``guikit``; ``tests/gui`` is on sys.path under pytest)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"
UPSTREAM = SHARED / "fixtures" / "upstream"
WAIT_MS = 20_000


def copy_private(src: Path, dst: Path) -> Path:
    """Copy a read-only fixture root (files 600, dirs 700, as the engine expects of a private store)."""
    shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
    for dirpath, _dirs, files in os.walk(dst):
        os.chmod(dirpath, 0o700)
        for f in files:
            os.chmod(os.path.join(dirpath, f), stat.S_IRUSR | stat.S_IWUSR)
    return dst


def need_upstream() -> None:
    if not UPSTREAM.is_dir():
        pytest.skip(f"upstream fixtures not found at {UPSTREAM}")


def wait_listed(qtbot: Any, w: Any, *, details: bool = True) -> None:
    qtbot.waitUntil(w.controller.listed.is_set, timeout=WAIT_MS)
    if details:
        qtbot.waitUntil(
            lambda: w.diagnosis_pass.is_idle() and all(r.status != "pending" for r in w.session_model.rows()), timeout=WAIT_MS
        )


def wait_opened(qtbot: Any, w: Any, key: str | None = None) -> None:
    qtbot.waitUntil(lambda: bool(w.opened_keys) and (key is None or w.opened_keys[-1] == key), timeout=WAIT_MS)


def make_turn(
    seq: int, turn: int, prompt: str, time: int = 1767600000000, *, chunks: int = 5, close: bool = True
) -> list[dict[str, Any]]:
    """One small, valid turn (prompt, streamed answer with usage, tool call and result) from ``seq`` on."""
    evs: list[dict[str, Any]] = []

    def add(type_: str, data: Any, **env: Any) -> int:
        ev: dict[str, Any] = {"type": type_, "seq": seq + len(evs), "time": time + len(evs), "data": data}
        ev.update(env)
        evs.append(ev)
        return int(ev["seq"])

    add("turn/start", {"turn": turn})
    add("step/start", {"turn": turn, "step": 1})
    add(
        "user/message",
        {"id": f"u{turn}", "role": "user", "content": [{"type": "text", "text": prompt}], "source": {"kind": "user"}},
        surfaceOp="append",
    )
    cited = [
        add("assistant/chunk", {"turn": turn, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"part {i} "}})
        for i in range(chunks)
    ]
    cited.append(
        add(
            "assistant/chunk",
            {"turn": turn, "step": 1, "chunk": {"type": "usage", "usage": {"inputTokens": 100, "outputTokens": 20}}},
        )
    )
    text = "".join(f"part {i} " for i in range(chunks))
    add(
        "assistant/message",
        {
            "turn": turn,
            "step": 1,
            "message": {
                "id": f"a{turn}",
                "role": "assistant",
                "source": {"kind": "model", "provider": "p", "model": "m"},
                "content": [
                    {"type": "text", "text": text},
                    {"type": "tool-call", "id": f"c{turn}", "name": "bash", "arguments": '{"command":"ls"}'},
                ],
            },
            "usage": {"inputTokens": 100, "outputTokens": 20},
        },
        sourceEventSeqs=cited,
        surfaceOp="append",
    )
    call = add("tool/call", {"turn": turn, "step": 1, "callId": f"c{turn}", "name": "bash", "arguments": '{"command":"ls"}'})
    add(
        "tool/result",
        {
            "turn": turn,
            "step": 1,
            "message": {
                "id": f"r{turn}",
                "role": "user",
                "source": {"kind": "tool", "callId": f"c{turn}"},
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": f"c{turn}",
                        "content": [{"type": "text", "text": "README.md"}],
                        "isError": turn % 2 == 0,
                    }
                ],
            },
        },
        sourceEventSeqs=[call],
        surfaceOp="append",
    )
    if close:
        add("step/end", {"turn": turn, "step": 1})
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return evs
