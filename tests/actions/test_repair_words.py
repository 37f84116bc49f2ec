"""Repair in the user's words (issue 24 item 8): the preview says which events of which turn a repair loses and
which turn it closes, before any byte count, on every backend; the CLI prints it and ``--json`` lists the lost
events."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import main_json, main_text, privatize, run

from app.actions import repair
from app.gui.dialogs.repair_dialog import preview_text
from persistence import JsonlSessionPersistence, open_store
from persistence.jsonl.frames import compress_frame
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.timeout(60)

SID = "s"


def _kept() -> list[dict[str, Any]]:
    """Turn 1 complete, then turn 2 up to a bash call whose result was being written when the harness died."""
    first = sk.one_turn_log()
    n = len(first)
    return [
        *first,
        sk.turn_start(n, 2),
        sk.step_start(n + 1, 2, 1),
        sk.assistant_message(n + 2, 2, 1, "running the tests", calls=["c1"]),
        sk.tool_call(n + 3, 2, 1, "c1"),
    ]


def _tail(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The tool result and the step's end that follow the kept events (seqs n and n + 1)."""
    return sk.tool_result(n, 2, 1, "c1", "AssertionError: assert None == []", is_error=True), sk.step_end(n + 1, 2, 1)


def _plant(tmp: Path, compression: str, tail: bytes) -> Path:
    root = tmp / "root"
    header = js_dumps(sk.header_line(SID, sk.WORK)) + b"\n"
    body = b"".join(js_dumps(e) + b"\n" for e in _kept())
    if compression == "zstd":
        data = compress_frame(header) + compress_frame(body) + tail
    else:
        data = header + body + tail
    rel = sk.artifact(root, sk.WORK, SID, compression).parent.relative_to(root)
    sk.plant(root, str(rel), data, compression)
    privatize(root)
    return root


async def _preview(root: Path) -> repair.RepairPreview:
    store = open_store(root)
    try:
        return await repair.preview_repair(store, SID)
    finally:
        await store.close()


def test_a_torn_plain_tail_names_the_lost_tool_result_and_the_turn_it_closes(tmp_path: Path) -> None:
    n = len(_kept())
    result, _end = _tail(n)
    line = js_dumps(result)
    torn = line[: len(line) // 2]  # the write stopped inside the tool result: no newline
    p = run(_preview(_plant(tmp_path, "none", torn)))
    assert p.status == "torn-tail"
    assert p.story == (
        f"Cuts the last {len(torn)} bytes: event {n} of turn 2 (a tool result) is lost; turn 2 is closed as interrupted "
        "(3 synthetic events appended: a tool result, the step's end and the turn's end)."
    )
    assert [(e.seq, e.type, e.turn, e.complete) for e in p.lost] == [(n, "tool/result", 2, False)]
    text = preview_text(p)
    # The conversation first, then the lost events, and only then the bytes.
    assert text.index("is lost") < text.index(f"seq {n} · a tool result · cut off mid-write") < text.index("In bytes:")


def test_damage_followed_by_data_lists_every_lost_event_with_its_summary(tmp_path: Path) -> None:
    n = len(_kept())
    result, end = _tail(n)
    line = js_dumps(result)
    damaged = line[: len(line) - 10] + b"\n" + js_dumps(end) + b"\n"  # a broken tool result, then an intact step end
    p = run(_preview(_plant(tmp_path, "none", damaged)))
    assert p.status == "torn-tail" and p.intact_after_damage == 1
    assert p.story.startswith(
        f"Cuts the last {len(damaged)} bytes: events {n}–{n + 1} of turn 2 (a tool result and the step's end) are lost; "
        "turn 2 is closed as interrupted"
    ), p.story
    assert p.lost_lines == [f"seq {n} · a tool result · cut off mid-write", f"seq {n + 1} · the step's end"]


def test_a_torn_zstd_tail_keeps_its_complete_lines_and_loses_the_torn_one(tmp_path: Path) -> None:
    n = len(_kept())
    result, end = _tail(n)
    plain = js_dumps(result) + b"\n" + js_dumps(end)[:30]  # the frame's last line is cut off
    torn = compress_frame(plain)[:-2]
    p = run(_preview(_plant(tmp_path, "zstd", torn)))
    assert p.status == "torn-tail" and p.recovered_count == 1
    assert p.story == (
        f"Cuts the last {len(torn)} bytes: event {n + 1} of turn 2 (the step's end) is lost; 1 complete event read from "
        "the damaged tail is kept; turn 2 is closed as interrupted (2 synthetic events appended: the step's end and the "
        "turn's end)."
    )


def test_a_crashed_turn_cuts_nothing_and_says_which_turn_is_closed(tmp_path: Path) -> None:
    root = tmp_path / "root"

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression="zstd")
        try:
            await store.create(sk.meta(SID, sk.WORK))
            await store.append(SID, sk.one_turn_log() + sk.open_turn2())
        finally:
            await store.close()

    run(go())
    privatize(root)
    p = run(_preview(root))
    assert p.status == "open-turn" and p.lost == ()
    assert p.story == (
        "Nothing is cut: turn 2 is closed as interrupted (2 synthetic events appended: the step's end and the turn's end)."
    )
    assert "In bytes" not in preview_text(p) and "lost:" not in preview_text(p)


def _sqlite_with_damaged_row(tmp: Path) -> Path:
    from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]

    db = tmp / "store.sqlite"

    async def go() -> None:
        store = SqliteSessionPersistence(str(db))
        try:
            await store.create(sk.meta(SID, sk.WORK))
            await store.append(SID, _kept())
        finally:
            await store.close()

    run(go())
    n = len(_kept())
    con = sqlite3.connect(db)
    with con:  # the tool result's row, its data cut short
        con.execute(
            "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, 'tool/result', ?, ?)",
            (SID, n, n, '{"turn":2,"step":1,"mess'),
        )
    con.close()
    privatize(tmp)
    return db


def test_sqlite_says_rows_and_names_the_damaged_event(tmp_path: Path) -> None:
    n = len(_kept())
    p = run(_preview(_sqlite_with_damaged_row(tmp_path)))
    assert p.status == "torn-tail"
    assert p.story.startswith(f"Deletes the last row: event {n} of turn 2 (a tool result) is lost; turn 2 is closed"), p.story
    assert p.lost_lines == [f"seq {n} · a tool result · damaged"]
    assert "In rows: delete 1 event row" in preview_text(p)


def test_cli_dry_run_prints_the_story_first_and_json_lists_lost_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = len(_kept())
    result, _end = _tail(n)
    torn = js_dumps(result)[:40]
    root = _plant(tmp_path, "none", torn)
    code, out, err = main_text(capsys, "repair", str(root), SID, "--dry-run")
    assert code == 0, err
    assert f"Cuts the last {len(torn)} bytes: event {n} of turn 2 (a tool result) is lost" in out
    assert f"lost: seq {n} · a tool result · cut off mid-write" in out
    assert out.index("is lost") < out.index("byte(s) from offset")  # words before the byte count
    code, data, err = main_json(capsys, "repair", str(root), SID, "--dry-run")
    assert code == 0, err
    assert data["lostEvents"] == [{"seq": n, "type": "tool/result", "turn": 2, "summary": "", "complete": False}]
    assert data["story"].startswith(f"Cuts the last {len(torn)} bytes")
