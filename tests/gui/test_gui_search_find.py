"""Find inside the open session: Ctrl+G, highlighted matches, F3 / Shift+F3, "7 of 41", and the raw-text
matcher underneath (JSONL lines and SQLite rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import Qt

from app.gui.window.main_window import TAB_RAW
from app.paths import CACHE_DIR_ENV
from app.rawview.find_matches import MAX_MATCHES, find_in_raw
from app.rawview.raw_text import RawText, decode_records

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))


def _open(qtbot: Any, make_window: Any, root: Any, prefix: str) -> Any:
    w = make_window(root)
    wait_listed(qtbot, w, details=False)
    row = next(r for r in w.session_model.rows() if r.session_id.startswith(prefix))
    assert w.select_session(row.session_id)
    wait_opened(qtbot, w, row.key)
    return w


def _find(qtbot: Any, w: Any, text: str) -> Any:
    qtbot.keyClick(w, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(w.search.find_bar.field.hasFocus, timeout=WAIT_MS)
    qtbot.keyClicks(w.search.find_bar.field, text)
    qtbot.waitUntil(lambda: w.search.finder.matches is not None and w.search.finder.matches.query == text, timeout=WAIT_MS)
    return w.search.finder.matches


def test_find_in_session_with_f3_and_shift_f3(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _open(qtbot, make_window, demo_root, "long-refactor")
    matches = _find(qtbot, w, "order.ts")
    n = len(matches)
    assert n > 3
    assert w.search.find_bar.count.text() == f"{n} matches"
    raw = w.raw_model.text
    assert all("order.ts" in raw.line_text(line, limit=None).lower() for line in matches.lines)
    start = w.raw_pane.current_line()
    expected = matches.next_after(start)
    qtbot.keyClick(w, Qt.Key.Key_F3)
    line1 = w.raw_pane.current_line()
    assert line1 == matches.lines[expected]
    assert w.search.find_bar.count.text() == f"{expected + 1} of {n}"
    # The timeline follows the raw line (selection sync), and both rows are painted as matches.
    node = w.timeline_pane.current_node()
    lo, hi = raw.seqs_of_line(line1)
    assert node is not None and any(lo <= s <= hi for s in [node.seq, *node.seqs])
    assert w.raw_pane.view.itemDelegate() is w.search.raw_marks
    assert w.timeline_pane.tree.itemDelegate() is w.search.timeline_marks
    assert w.search.raw_marks._matcher(w.raw_model.index(line1, 1))
    assert w.search.timeline_marks._matcher(w.timeline_pane.tree.currentIndex())
    plain = next(i for i in range(len(raw)) if not matches.has_line(i))
    assert not w.search.raw_marks._matcher(w.raw_model.index(plain, 1))
    # The detail text marks the occurrences.
    assert w.timeline_pane.detail.extraSelections() or w.raw_pane.detail.extraSelections()
    qtbot.keyClick(w, Qt.Key.Key_F3)
    line2 = w.raw_pane.current_line()
    assert line2 == matches.lines[(expected + 1) % n]
    assert w.search.find_bar.count.text() == f"{(expected + 1) % n + 1} of {n}"
    qtbot.keyClick(w, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert w.raw_pane.current_line() == line1
    assert w.search.find_bar.count.text() == f"{expected + 1} of {n}"
    # Enter in the field is next too; Shift+Enter previous.
    w.search.find_bar.field.setFocus()
    qtbot.keyClick(w.search.find_bar.field, Qt.Key.Key_Return)
    assert w.raw_pane.current_line() == line2
    qtbot.keyClick(w.search.find_bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert w.raw_pane.current_line() == line1
    # Find jumps are visits: Alt+Left goes back to the match before.
    qtbot.keyClick(w, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: w.raw_pane.current_line() == line2, timeout=WAIT_MS)


def test_find_wraps_and_reports_no_matches(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _open(qtbot, make_window, demo_root, "long-refactor")
    matches = _find(qtbot, w, "order.ts")
    last = matches.lines[-1]
    w.raw_pane.select_line(last)
    w.search.find_step("next")
    assert w.raw_pane.current_line() == matches.lines[0]  # wrapped
    w.search.find_step("previous")
    assert w.raw_pane.current_line() == last
    w.search.find_bar.field.clear()
    qtbot.keyClicks(w.search.find_bar.field, "no such text anywhere")
    qtbot.waitUntil(
        lambda: w.search.finder.matches is not None and w.search.finder.matches.query == "no such text anywhere", timeout=WAIT_MS
    )
    assert w.search.find_bar.count.text() == "No matches"
    assert w.search.raw_marks._matcher is None
    # Without matches the views paint with their own delegates again (no Python call per cell).
    assert w.raw_pane.view.itemDelegate() is not w.search.raw_marks
    assert w.timeline_pane.tree.itemDelegate() is not w.search.timeline_marks


def test_f3_opens_the_find_bar_and_the_raw_tab_keeps_its_place(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _open(qtbot, make_window, demo_root, "long-refactor")
    assert not w.search.find_bar.isVisible()
    qtbot.keyClick(w, Qt.Key.Key_F3)
    assert w.search.find_bar.isVisible() and w.search.find_bar.field.hasFocus()
    w.show_tab(TAB_RAW)
    matches = _find(qtbot, w, "npm run build")
    w.search.find_step("next")
    assert w.tabs.currentIndex() == TAB_RAW
    assert matches.has_line(w.raw_pane.current_line())


def test_find_follows_the_open_session(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _open(qtbot, make_window, demo_root, "long-refactor")
    first = _find(qtbot, w, "order.ts")
    other = next(r for r in w.session_model.rows() if r.session_id.startswith("crashed"))
    w.select_session(other.session_id)
    wait_opened(qtbot, w, other.key)
    qtbot.waitUntil(lambda: w.search.finder.matches is not first and not w.search.finder.running, timeout=WAIT_MS)
    again = w.search.finder.matches
    assert again is not None and again.query == "order.ts"
    assert all("order.ts" in w.raw_model.text.line_text(line, limit=None).lower() for line in again.lines)


# ---------------------------------------------------------------- the matcher (no window)


def _jsonl_text(events: list[dict[str, Any]]) -> RawText:
    import json

    t = RawText()
    t.add_text(b'{"type":"session","id":"x","cwd":"/w"}\n')
    t.add_text("".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in events).encode())
    return t


def test_matcher_is_case_insensitive_and_finds_json_escaped_text() -> None:
    events = make_turn(0, 1, 'Fix "Order.TS" in C:\\src and 東京の設定')
    t = _jsonl_text(events)
    user_line = 1 + next(i for i, e in enumerate(events) if e["type"] == "user/message")
    for query in ("order.ts", "ORDER.ts", '"Order.TS"', "C:\\src", "東京"):
        m = find_in_raw(t, query)
        assert list(m.lines) == [user_line], query
        assert m.seq_ranges == ((user_line - 1, user_line - 1),)
        assert m.count_text(None) == "1 match" and m.count_text(0) == "1 of 1"
    assert len(find_in_raw(t, "part 3")) >= 1
    assert not len(find_in_raw(t, "absent"))
    assert not len(find_in_raw(t, ""))


def test_matcher_on_sqlite_rows_and_marker_lines() -> None:
    events = make_turn(0, 1, "rows hold needle text")
    rows = decode_records(events)
    m = find_in_raw(rows, "NEEDLE")
    seq = next(e["seq"] for e in events if e["type"] == "user/message")
    assert list(m.lines) == [seq] and m.seq_matches(seq, seq)
    t = _jsonl_text(events)
    t.add_marker("needle in a marker line is not the artifact", provisional=False)
    t.add_text(b'{"type":"user/message","seq":99,"data":{"text":"needle"}}\n')
    m = find_in_raw(t, "needle")
    assert [t.seqs_of_line(line)[0] for line in m.lines] == [seq, 99]


def test_matcher_counts_one_match_per_line_and_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    t = RawText()
    t.add_text(b"".join(b'{"type":"user/message","seq":%d,"data":{"t":"aaa aaa aaa"}}\n' % i for i in range(50)))
    m = find_in_raw(t, "aaa")
    assert list(m.lines) == list(range(50)) and m.seq_ranges == ((0, 49),)
    monkeypatch.setattr("app.rawview.find_matches.MAX_MATCHES", 10)
    capped = find_in_raw(t, "aaa")
    assert len(capped) == 10 and capped.capped and capped.count_text(None) == "10+ matches"
    assert MAX_MATCHES > 10


def test_matcher_scans_in_chunks_without_missing_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("app.rawview.find_matches.CHUNK_BYTES", 64)
    t = RawText()
    t.add_text(
        b"".join(
            b'{"type":"x","seq":%d,"data":"%s"}\n' % (i, b"filler " * (i % 7) + (b"hit" if i % 3 == 0 else b""))
            for i in range(60)
        )
    )
    m = find_in_raw(t, "hit")
    assert list(m.lines) == [i for i in range(60) if i % 3 == 0]
