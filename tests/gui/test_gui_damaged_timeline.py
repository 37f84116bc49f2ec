"""A corrupt log's timeline is its decodable part up to the damage, ending in a row saying what stopped it,
and the Raw tab goes to the damage ("Go to damage", F8) (issue 16, "Damaged logs a support engineer must read").

``SESSIONSCOPE_SHOTS=/some/folder`` saves screenshots of the partial timeline and of Raw after "Go to damage".
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import Qt

from app.gui import style
from app.gui.window.menus import TAB_RAW, TAB_TIMELINE
from app.timeline.damaged import damaged_timeline, decodable_prefix
from persistence.jsonl.frames import compress_frame

pytestmark = pytest.mark.timeout(90)

CWD = "/w/proj"
SHOTS = os.environ.get("SESSIONSCOPE_SHOTS")
BAD_FRAME_WHAT = "failed validation (checksum mismatch or damaged data)"


def _turns(n: int) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    seq = 0
    for t in range(1, n + 1):
        out.append(make_turn(seq, t, f"prompt {t}"))
        seq += len(out[-1])
    return out


def _bad_frame() -> bytes:
    bad = bytearray(compress_frame(b'{"type":"garbage line"}\n'))
    bad[-1] ^= 0xFF  # the frame's checksum fails; decoding goes on after it
    return bytes(bad)


def _zstd_with_bad_frame(before: list[list[dict[str, Any]]], after: list[dict[str, Any]]) -> tuple[bytes, int]:
    """(artifact bytes, file offset of the bad frame): header, one frame per batch of ``before``, a bad frame, ``after``."""
    good = sk.encode_log(sk.header_line("s1", CWD), before, "zstd")
    rest = sk.encode_log(b"", [after], "zstd")[len(compress_frame(b"")) :]
    return good + _bad_frame() + rest, len(good)


def _plant(root: Path, content: bytes, compression: str, sid: str = "s1") -> None:
    rel = os.path.relpath(sk.artifact(root, CWD, sid, compression).parent, root)
    sk.plant(root, rel, content, compression)


def _open(qtbot: Any, make_window: Any, root: Path, sid: str = "s1") -> Any:
    w = make_window(root, session=sid)
    wait_listed(qtbot, w)
    row = w.session_model.find_id(sid)
    wait_opened(qtbot, w, row.key)
    qtbot.waitUntil(lambda: w.raw_model.rowCount() > 0, timeout=WAIT_MS)
    return w


def _shot(w: Any, qtbot: Any, name: str) -> None:
    if SHOTS:
        w.resize(1500, 820)
        qtbot.wait(300)
        w.grab().save(str(Path(SHOTS) / name))


# ---------------------------------------------------------------- in the window


def test_a_corrupt_zstd_log_shows_its_turns_up_to_the_bad_frame_then_a_red_stop_row(
    qtbot: Any, make_window: Any, tmp_path: Path
) -> None:
    turns = _turns(4)
    content, bad_at = _zstd_with_bad_frame(turns[:2], turns[2] + turns[3])
    root = tmp_path / "root"
    _plant(root, content, "zstd")
    w = _open(qtbot, make_window, root)
    assert w.session_model.find_id("s1").status == "corrupt"
    tl = w.timeline_model
    qtbot.waitUntil(lambda: tl.stop_node is not None, timeout=WAIT_MS)
    # Header is frame 1, the two turns frames 2 and 3: the bad frame is frame 4.
    assert tl.stop is not None and tl.stop.what == f"frame 4 at byte {bad_at:,} {BAD_FRAME_WHAT}"
    assert tl.stop.lines_after == len(turns[2]) + len(turns[3])
    assert [tl.data(tl.index(r, 0)) for r in range(tl.rowCount() - 1)] == ["Turn 1", "Turn 2"]
    assert len(tl.records) == len(turns[0]) + len(turns[1])
    last = tl.index(tl.rowCount() - 1, 0)
    assert tl.is_stop(last)
    assert tl.data(last).startswith(f"■ Stopped here: frame 4 at byte {bad_at:,} failed validation")
    assert tl.data(last, Qt.ItemDataRole.BackgroundRole).color().name() == "#b00020"
    assert w.timeline_pane.tree.isFirstColumnSpanned(last.row(), last.parent())
    # The view opens in the last turn before the damage, with the stop row below it in view.
    current = w.timeline_pane.tree.currentIndex()
    assert not tl.is_stop(current) and tl.turn_info(current) == (2, True)
    assert w.timeline_pane.tree.visualRect(last).isValid()
    _shot(w, qtbot, "corrupt_timeline.png")

    # Go to damage (F8): the Raw tab, its first marker line selected.
    assert w.tabs.currentIndex() == TAB_TIMELINE
    w.menus.go_to_damage.trigger()
    assert w.tabs.currentIndex() == TAB_RAW
    marker = w.raw_model.first_marker()
    assert marker >= 0 and w.raw_pane.current_line() == marker
    assert "failed to decode" in w.raw_model.text.line_text(marker)
    assert w.raw_pane.damage_button.isVisible()
    qtbot.waitUntil(lambda: w.raw_pane.view.visualRect(w.raw_model.index(marker, 1)).isValid(), timeout=WAIT_MS)
    _shot(w, qtbot, "go_to_damage.png")


def test_activating_the_stop_row_goes_to_the_damage_in_raw(qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    turns = _turns(2)
    content, _bad_at = _zstd_with_bad_frame(turns[:1], turns[1])
    root = tmp_path / "root"
    _plant(root, content, "zstd")
    w = _open(qtbot, make_window, root)
    tl, tree = w.timeline_model, w.timeline_pane.tree
    qtbot.waitUntil(lambda: tl.stop_node is not None, timeout=WAIT_MS)
    stop = tl.index(tl.rowCount() - 1, 0)
    tree.setCurrentIndex(stop)
    assert "Stopped here: frame 3" in w.timeline_pane.detail.toPlainText()
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_Return)
    assert w.tabs.currentIndex() == TAB_RAW
    assert w.raw_pane.current_line() == w.raw_model.first_marker()


def test_a_plain_log_with_a_line_of_invalid_json_stops_there_and_raw_marks_that_line(
    qtbot: Any, make_window: Any, tmp_path: Path
) -> None:
    turns = _turns(3)
    header = sk.header_line("s1", CWD)
    head = sk.encode_log(header, [turns[0]], "none")
    content = sk.encode_log(header, [turns[0], b"{this is not json\n", turns[1], turns[2]], "none")
    root = tmp_path / "root"
    _plant(root, content, "none")
    w = _open(qtbot, make_window, root)
    tl = w.timeline_model
    qtbot.waitUntil(lambda: tl.stop_node is not None, timeout=WAIT_MS)
    bad_line = 1 + len(turns[0]) + 1  # the header, turn 1, then the bad line (1-based)
    assert tl.stop is not None and tl.stop.what == f"line {bad_line} (byte {len(head):,}) is not valid JSON"
    assert [tl.data(tl.index(r, 0)) for r in range(tl.rowCount() - 1)] == ["Turn 1"]
    # No byte fails to decode, so the Raw tab has no marker line: the damage is the bad line itself.
    assert w.raw_model.first_marker() == -1
    qtbot.waitUntil(lambda: w.raw_model.damage_line() == bad_line - 1, timeout=WAIT_MS)
    assert w.raw_model.text.line_text(bad_line - 1) == "{this is not json"
    red = w.raw_model.data(w.raw_model.index(bad_line - 1, 1), Qt.ItemDataRole.BackgroundRole)
    assert red.color().name() == style.STATUS_COLORS["corrupt"][1]
    w.raw_pane.damage_button.click()
    assert w.raw_pane.current_line() == bad_line - 1


def test_a_damaged_header_shows_only_the_stop_row(qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    turns = _turns(1)
    content = b'{"type":"session","version":0,"id":\n' + sk.encode_log(b"", [turns[0]], "none")
    root = tmp_path / "root"
    _plant(root, content, "none")
    w = make_window(root)
    wait_listed(qtbot, w)
    assert w.session_model.total == 1
    qtbot.waitUntil(lambda: w.timeline_model.stop_node is not None, timeout=WAIT_MS)
    tl = w.timeline_model
    assert tl.rowCount() == 1 and tl.is_stop(tl.index(0, 0))
    assert tl.stop is not None and tl.stop.what == "the session header (line 1) is not valid JSON"
    assert tl.stop.lines_after == len(turns[0])


def test_a_healthy_log_has_no_stop_row_and_go_to_damage_says_so(qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    _plant(root, sk.encode_log(sk.header_line("s1", CWD), _turns(2), "zstd"), "zstd")
    w = _open(qtbot, make_window, root)
    assert w.timeline_model.stop_node is None and w.raw_model.damage_line() == -1
    assert not w.raw_pane.damage_button.isVisibleTo(w.raw_pane)
    w.menus.go_to_damage.trigger()
    assert w.tabs.currentIndex() == TAB_TIMELINE
    assert "No damage" in w.statusBar().currentMessage()


# ---------------------------------------------------------------- the prefix itself (no window)


def test_a_turn_cut_by_the_damage_says_so_instead_of_running_or_crashed() -> None:
    turns = _turns(2)
    content, bad_at = _zstd_with_bad_frame([turns[0], turns[1][:5]], turns[1][5:])
    part = damaged_timeline(content, "zstd", "corrupt Zstandard session log: frame failed validation")
    assert [n.label for n in part.nodes] == ["Turn 1", "Turn 2"]
    assert "cut off by the damage below" in part.nodes[-1].info
    assert "running or crashed" not in part.nodes[-1].info
    assert part.stop.what == f"frame 4 at byte {bad_at:,} {BAD_FRAME_WHAT}"
    assert part.stop.file_offset == bad_at


def test_a_seq_gap_stops_the_prefix_at_the_line_that_breaks_the_order() -> None:
    turns = _turns(3)
    skipped = [dict(e, seq=e["seq"] + 5) for e in turns[1]]  # turn 2 starts 5 seqs too late
    content = sk.encode_log(sk.header_line("s1", CWD), [turns[0], skipped], "none")
    items, stop = decodable_prefix(content, "none", "seq gap")
    assert len(items) == len(turns[0])
    line = 1 + len(turns[0]) + 1
    assert stop.what.startswith(f"line {line} (byte ")
    assert stop.what.endswith(f"seq gap, expected {len(turns[0])}, got {len(turns[0]) + 5}")
    assert stop.raw_line == line - 1 and stop.lines_after == len(skipped) - 1


def test_a_log_refused_for_what_its_bytes_do_not_show_quotes_the_engine() -> None:
    turns = _turns(2)
    content = sk.encode_log(sk.header_line("s1", CWD), turns, "zstd")
    reason = 'stored session "s1" failed validation: bad event shape'
    items, stop = decodable_prefix(content, "zstd", reason)
    assert len(items) == len(turns[0]) + len(turns[1])
    assert stop.what == f"the engine refused the log: {reason}"
    assert stop.raw_line == -1 and stop.lines_after == 0


def test_a_corrupt_sqlite_session_shows_its_rows_up_to_the_damaged_one(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    """SQLite has no byte artifact: the engine's lenient row read (``readable_prefix``) gives the turns
    before the first damaged row; the stop row and the Raw tab's last line say which row and why."""
    import sqlite3

    from persistence import open_store

    turns = _turns(4)
    path = tmp_path / "store" / "sessions.sqlite"
    path.parent.mkdir()

    async def write() -> None:
        store = open_store(str(path), "sqlite")
        try:
            await store.create({"id": "s1", "createdAt": 1767600000000, "cwd": CWD})
            await store.append("s1", [e for t in turns for e in t])
        finally:
            await store.close()

    arun(write())
    bad_seq = len(turns[0]) + len(turns[1]) + 1  # the user message of turn 3
    conn = sqlite3.connect(path)
    conn.execute("UPDATE events SET data = '{not json' WHERE session_id = 's1' AND seq = ?", (bad_seq,))
    conn.commit()
    conn.close()
    w = _open(qtbot, make_window, path)
    assert w.session_model.find_id("s1").status == "corrupt"
    tl = w.timeline_model
    qtbot.waitUntil(lambda: tl.stop_node is not None, timeout=WAIT_MS)
    assert tl.stop is not None and tl.stop.what.startswith(f"the row at seq {bad_seq} does not decode")
    labels = [tl.data(tl.index(r, 0)) for r in range(tl.rowCount() - 1)]
    assert labels == ["Turn 1", "Turn 2", "Turn 3"]  # turn 3 only started: cut off by the damage
    assert "cut off by the damage below" in tl.data(tl.index(2, 2))
    assert len(tl.records) == bad_seq
    assert "stored row(s) from there on are not shown" in tl.data(tl.index(tl.rowCount() - 1, 0))
    # Raw: the rows before the damage, then a marker line saying what stopped them.
    assert w.raw_model.rowCount() == bad_seq + 1
    marker = w.raw_model.first_marker()
    assert marker == bad_seq and f"seq {bad_seq} does not decode" in w.raw_model.text.line_text(marker)
    assert "timeline shows the part before the damage" in w.timeline_pane.banner.text()
