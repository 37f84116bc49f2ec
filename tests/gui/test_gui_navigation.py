"""Selection sync between timeline and raw view, lineage links, keyboard, cancellation, settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import QSettings, Qt

from app.gui.settings import AppSettings
from app.gui.window.main_window import TAB_HEADER, TAB_RAW, TAB_TIMELINE
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(60)


def _open(qtbot: Any, make_window: Any, root: Any, predicate: Any) -> Any:
    w = make_window(root)
    wait_listed(qtbot, w, details=False)
    row = next(r for r in w.session_model.rows() if predicate(r))
    assert w.select_session(row.session_id)
    wait_opened(qtbot, w, row.key)
    return w, row


def test_timeline_and_raw_selections_follow_each_other(qtbot: Any, make_window: Any, zoo_root: Path) -> None:
    w, _row = _open(qtbot, make_window, zoo_root, lambda r: r.session_id.startswith("a3f1c2d4"))
    tl, raw = w.timeline_model, w.raw_model
    # Timeline -> raw: a tool row selects the raw line holding its tool/call event.
    turn = tl.index(tl.rowCount() - 1, 0)
    w.timeline_pane.tree.expand(turn)
    step = tl.index(0, 0, turn) if tl.node(tl.index(0, 0, turn)).kind == "step" else tl.index(1, 0, turn)
    tool = next(tl.index(i, 0, step) for i in range(tl.rowCount(step)) if tl.node(tl.index(i, 0, step)).kind == "tool")
    w.timeline_pane.select_index(tool)
    node = tl.node(tool)
    line = w.raw_pane.current_line()
    assert line >= 0
    lo, hi = raw.text.seqs_of_line(line)
    assert lo <= node.first_seq <= hi
    assert '"tool/call"' in raw.text.line_text(line)
    # Raw -> timeline: a packed chunk row selects the message block its chunks streamed into.
    packed = next(i for i in range(len(raw.text)) if '"reasoning-chunks"' in raw.text.line_text(i, 200))
    w.raw_pane.select_line(packed)
    current = tl.node(w.timeline_pane.tree.currentIndex())
    lo, hi = raw.text.seqs_of_line(packed)
    assert current is not None and current.kind == "reasoning"
    assert any(lo <= s <= hi for s in current.seqs)
    # The detail panes show the full text.
    assert "reasoning" in w.timeline_pane.detail.toPlainText()
    assert '"reasoning-chunks"' in w.raw_pane.detail.toPlainText()


def test_raw_line_in_an_older_turn_loads_it(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w, _row = _open(qtbot, make_window, demo_root, lambda r: r.session_id.startswith("long-refactor"))
    tl = w.timeline_model
    assert tl.first_loaded_span > 0
    w.raw_pane.select_line(5)
    assert tl.first_loaded_span == 0
    node = tl.node(w.timeline_pane.tree.currentIndex())
    lo, hi = w.raw_model.text.seqs_of_line(5)
    assert node is not None and (node.seq in range(lo, hi + 1) or any(lo <= s <= hi for s in node.seqs))


def test_scrolling_to_the_top_loads_older_turns(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w, _row = _open(qtbot, make_window, demo_root, lambda r: r.session_id.startswith("long-refactor"))
    tl = w.timeline_model
    tree = w.timeline_pane.tree
    first = tl.first_loaded_span
    tree.setFocus()
    tree.setCurrentIndex(tl.index(0, 0))
    qtbot.keyClick(tree, Qt.Key.Key_Return)
    assert tl.first_loaded_span < first


def test_lineage_link_opens_the_parent(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w, row = _open(qtbot, make_window, demo_root, lambda r: r.lineage == "fork")
    links = [(i, w.header_model.data(w.header_model.index(i, 1), 0x0100 + 1)) for i in range(w.header_model.rowCount())]
    parent_link = next(link for _i, link in links if link)
    w.header_pane.link_activated.emit(parent_link)
    parent = w.session_model.get(parent_link)
    assert parent is not None and parent.session_id == row.parent_id
    wait_opened(qtbot, w, parent_link)
    names = [w.header_model.data(w.header_model.index(i, 0)) for i in range(w.header_model.rowCount())]
    assert any(n.startswith("child · fork") for n in names)


def test_keyboard_shortcuts(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w, _row = _open(qtbot, make_window, demo_root, lambda r: r.session_id.startswith("crashed"))
    for key, tab in (("1", TAB_HEADER), ("3", TAB_RAW), ("2", TAB_TIMELINE)):
        qtbot.keyClick(w, key, Qt.KeyboardModifier.ControlModifier)
        assert w.tabs.currentIndex() == tab
    qtbot.keyClick(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(w.list_pane.filter.hasFocus, timeout=WAIT_MS)
    qtbot.keyClicks(w.list_pane.filter, "corrupt")
    assert 0 < w.session_model.rowCount() < w.session_model.total
    table = w.list_pane.table
    table.setFocus()
    table.setCurrentIndex(w.session_model.index(0, 0))
    qtbot.keyClick(table, Qt.Key.Key_Return)
    assert w.timeline_pane.tree.hasFocus() or w.tabs.currentIndex() == TAB_TIMELINE


def test_switching_sessions_cancels_the_running_load(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"

    async def build() -> None:
        store = JsonlSessionPersistence(root)
        events: list[dict[str, Any]] = []
        for t in range(1, 300):
            events += make_turn(len(events), t, f"turn {t}", chunks=20)
        await store.create({"id": "big", "createdAt": 1, "cwd": "/w"})
        await store.append("big", events)
        await store.create({"id": "small", "createdAt": 2, "cwd": "/w"})
        await store.append("small", make_turn(0, 1, "hi"))
        await store.close()

    arun(build(), timeout_ms=60_000)
    w = make_window(root)
    wait_listed(qtbot, w, details=False)
    big = w.session_model.find_id("big")
    small = w.session_model.find_id("small")
    assert w.list_pane.select_key(big.key)
    qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.key == big.key, timeout=WAIT_MS)
    first_task = w.jobs._keyed["session"]
    w.list_pane.select_key(small.key)
    assert first_task.cancelling() or first_task.cancelled() or first_task.done()
    wait_opened(qtbot, w, small.key)
    qtbot.waitUntil(first_task.done, timeout=WAIT_MS)
    assert first_task.cancelled()
    assert big.key not in w.opened_keys
    assert w.loader.current is not None and w.loader.current.key == small.key


def test_recent_roots_are_remembered(tmp_path: Path) -> None:
    s = AppSettings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    for r in ("/a", "/b", "/a", "/c"):
        s.remember_root(r)
    again = AppSettings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    assert again.recent_roots() == ["/c", "/a", "/b"]
    assert again.last_root == "/c"
