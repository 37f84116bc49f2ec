"""``sessionscope show PATH [ID]`` (issue 24 item 10): the conversation as text on every backend — prompts,
answers, tool calls with their arguments, results folded (``--full`` unfolds), errors marked ``error:``
with their text; ANSI colours on a terminal only (not when piped, not with ``NO_COLOR``); a damaged log
(torn, crashed, corrupt, unsupported) shows its readable part, then a marked "stopped here" line."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import damagedkit as dk
import pytest
import sessionkit as sk
from livekit import open_backend

from app.cli import main
from app.cli.show_verb import FOLD_LINES
from persistence import EventType
from persistence.jsonl.frames import compress_frame

pytestmark = pytest.mark.usefixtures("fast_fsync")

SID = "four-turns"
ERROR_TEXT = "AssertionError: assert None == []"
LONG_RESULT = "\n".join(f"collected line {i}" for i in range(1, 31))
ESC = "\x1b["


def _turn(
    seq: int, turn: int, prompt: str, answer: str, command: str, result: str, *, failed: bool = False
) -> list[dict[str, Any]]:
    call = f"call-{turn}"
    args = json.dumps({"command": command})
    message = sk.assistant_message(seq + 3, turn, 1, answer)
    message["data"]["message"]["content"].append({"type": "tool-call", "id": call, "name": "bash", "arguments": args})
    tool_call = sk.ev(EventType.TOOL_CALL, seq + 4, {"turn": turn, "step": 1, "callId": call, "name": "bash", "arguments": args})
    return [
        sk.turn_start(seq, turn),
        sk.user_message(seq + 1, prompt),
        sk.step_start(seq + 2, turn, 1),
        message,
        tool_call,
        sk.tool_result(seq + 5, turn, 1, call, result, is_error=failed),
        sk.step_end(seq + 6, turn, 1),
        sk.turn_end(seq + 7, turn),
    ]


def four_turns() -> list[dict[str, Any]]:
    return [
        *_turn(0, 1, "set up the project", "Setting it up.", "npm init -y", "wrote package.json"),
        *_turn(8, 2, "run the tests", "Running them.", "pytest -q", f"F [100%]\n{ERROR_TEXT}", failed=True),
        *_turn(16, 3, "list what was collected", "Here is the list.", "pytest --collect-only", LONG_RESULT),
        *_turn(24, 4, "summarise", "All done: one failure left.", "git status", "clean"),
    ]


def _write(name: str, storage: Path, sessions: dict[str, list[dict[str, Any]]]) -> None:
    async def go() -> None:
        store = open_backend(name, storage)
        try:
            for sid, events in sessions.items():
                await store.create(sk.meta(sid, dk.CWD))
                await store.append(sid, events)
        finally:
            await store.close()

    sk.run(go())


@pytest.fixture(params=dk.BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def four(backend: str, tmp_path: Path) -> Path:
    storage = dk.storage_of(backend, tmp_path)
    _write(backend, storage, {SID: four_turns()})
    return storage


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _show(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["show", *argv]) == 0
    return capsys.readouterr().out


def test_show_tells_the_conversation_plainly_when_piped(four: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _show([str(four)], capsys)  # one session: the id is optional
    assert ESC not in out
    for text in ("set up the project", "run the tests", "summarise", "All done: one failure left.", "command: pytest -q"):
        assert text in out
    assert [line.strip() for line in out.splitlines() if line.strip().startswith("━━ Turn")] == [
        f"━━ Turn {n} ━━  completed · 1 step" for n in range(1, 5)
    ]
    assert f"error: {ERROR_TEXT}" in out
    # The 30-line result is folded to its first lines and says how many more there are.
    assert "collected line 1" in out and f"collected line {FOLD_LINES}" in out and f"collected line {FOLD_LINES + 1}" not in out
    assert f"… {30 - FOLD_LINES} more lines (--full shows all)" in out
    assert "stopped here" not in out
    assert len(out.splitlines()) < 80  # a 4-turn session fits on a couple of screens


def test_full_unfolds_every_result(four: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _show([str(four), SID, "--full"], capsys)
    assert all(f"collected line {i}" in out for i in range(1, 31)) and "more lines" not in out


def test_a_terminal_gets_colours_unless_no_color_is_set(
    four: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tty = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", tty)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["show", str(four), SID]) == 0
    coloured = tty.getvalue()
    assert ESC in coloured and "\x1b[1;31merror:\x1b[0m " + ERROR_TEXT in coloured

    tty2 = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", tty2)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["show", str(four), SID]) == 0
    plain = tty2.getvalue()
    assert ESC not in plain and f"error: {ERROR_TEXT}" in plain
    # --color always wins over NO_COLOR; --color never over a terminal.
    tty3 = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", tty3)
    assert main(["show", str(four), SID, "--color", "always"]) == 0
    assert ESC in tty3.getvalue()
    monkeypatch.delenv("NO_COLOR")
    tty4 = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", tty4)
    assert main(["show", str(four), SID, "--color", "never"]) == 0
    assert ESC not in tty4.getvalue()


def test_json_holds_the_blocks(four: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(four), SID, "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert (value["session"], value["status"], value["turns"], value["stoppedHere"]) == (SID, "ok", 4, None)
    tools = [b for b in value["blocks"] if b["kind"] == "tool"]
    assert [b["error"] for b in tools] == ["", ERROR_TEXT, "", ""]
    assert tools[1]["body"] == "command: pytest -q" and tools[2]["result"] == LONG_RESULT


# ---------------------------------------------------------------- damaged logs


def _torn(backend: str, storage: Path) -> None:
    """Turn 1 whole, then half a record: the tail a crash mid-write leaves."""
    _write(backend, storage, {"torn": dk.readable_turn(dk.CORRUPT)})
    if backend == "sqlite":
        con = sqlite3.connect(storage)
        with con:
            con.execute(
                "INSERT INTO events (session_id, seq, type, time, data) VALUES ('torn', 7, 'assistant/chunk', 8, ?)",
                ('{"type":"text-delta","ind',),
            )
        con.close()
        return
    compression = dk.compression_of(backend)
    fragment = b'{"type":"turn/end","seq":7,"ti'
    with open(sk.artifact(storage, dk.CWD, "torn", compression), "ab") as f:
        f.write(compress_frame(fragment + b'me":8}\n')[:-6] if compression == "zstd" else fragment)


@pytest.mark.parametrize("kind", ["torn", "crashed", dk.CORRUPT, dk.UNSUPPORTED])
def test_a_damaged_log_shows_its_readable_part_then_where_it_stopped(
    backend: str, tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = dk.storage_of(backend, tmp_path)
    if kind == "torn":
        _torn(backend, storage)
        status = "torn tail"
    elif kind == "crashed":
        _write(backend, storage, {"crashed": dk.readable_turn(dk.CORRUPT)})  # turn 1 never ends
        status = "open turn"
    else:
        dk.build_damaged(backend, storage)
        status = "corrupt" if kind == dk.CORRUPT else "unsupported"
    out = _show([str(storage), kind], capsys)
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[0].startswith(dk.TITLE[dk.UNSUPPORTED if kind == dk.UNSUPPORTED else dk.CORRUPT])
    word = dk.WORD[dk.UNSUPPORTED if kind == dk.UNSUPPORTED else dk.CORRUPT]
    assert f"please fix the {word} parser" in out and "line one of the output" in out
    assert lines[-1].startswith(f"■ stopped here: {status}")
    assert ESC not in out
    if kind == dk.CORRUPT:
        assert "after the damage" not in out  # what follows the damage is not part of the readable part
    if kind == dk.UNSUPPORTED:
        assert "after the damage" in out  # every byte of it reads: only the version is refused
