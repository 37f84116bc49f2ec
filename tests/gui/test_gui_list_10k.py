"""The session list on a big root (issue 16, "At 10,000 sessions"), exercised on a generated root of
300 sessions: the behaviour, never the time (``benchmarks/bench_filter.py`` measures that).

- typing in the filter debounces into one filter pass (one ``layoutChanged``, no model reset), the
  typed text shows at once, and the selection stays on its session;
- the precomputed filter texts follow the rows' changes (details, a changed listing);
- an empty result says so in the list, and the right pane says the open session is hidden by the filter;
- the columns fit a 1400 px window (Title stretches, Modified visible, no horizontal scrollbar), and
  Ctrl+End / Ctrl+Home go to the last / first row, not to the last / first column.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView

from app.gui.models.session_row import Details, SessionRow
from app.gui.models.sessions import Col, SessionListModel
from persistence import JsonlSessionPersistence, SessionHeader, js_dumps
from persistence.jsonl.frames import compress_frame, scan_frames

pytestmark = pytest.mark.timeout(120)

N_SESSIONS = 300
PROJECTS = 7


def _sid(i: int) -> str:
    return f"s-{i:06d}"


def make_big_root(arun: Any, root: Path, n: int = N_SESSIONS) -> Path:
    """``n`` small JSONL-zstd sessions (one turn each) in ``PROJECTS`` projects; one is written by the
    engine, the others share its body frames under their own header (as ``bench_gui.build_many``)."""
    template = root.parent / "template"

    async def write_template() -> bytes:
        store = JsonlSessionPersistence(str(template))
        meta = {"id": "template", "createdAt": 1767600000000, "cwd": "/big/template"}
        await store.create(meta)
        await store.append("template", make_turn(0, 1, "hello"))
        await store.close()
        loc = store.locate(meta)
        assert loc is not None
        data = Path(loc.path).read_bytes()
        ranges, _ = scan_frames(data)
        return data[ranges[0][1] :]

    body = arun(write_template())
    locator = JsonlSessionPersistence(str(root))
    for i in range(n):
        meta = {"version": 0, "id": _sid(i), "createdAt": 1767600000000 + i, "cwd": f"/big/project-{i % PROJECTS}"}
        loc = locator.locate(meta)
        assert loc is not None
        os.makedirs(os.path.dirname(loc.path), mode=0o700, exist_ok=True)
        header = compress_frame(js_dumps(SessionHeader.from_json(meta).header_line()) + b"\n")
        Path(loc.path).write_bytes(header + body)
        os.chmod(loc.path, 0o600)
        os.utime(loc.path, ns=(1_767_600_000_000_000_000 + i * 1_000_000_000,) * 2)  # s-000299 is the newest
    return root


def _big_window(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> Any:
    root = make_big_root(arun, tmp_path / "big")
    w = make_window(root)
    wait_listed(qtbot, w)
    wait_opened(qtbot, w)
    return w


def _shown_ids(w: Any) -> set[str]:
    m = w.session_model
    return {m.row_at(i).session_id for i in range(m.rowCount())}


def test_typing_debounces_into_one_pass_without_a_reset(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w = _big_window(qtbot, make_window, arun, tmp_path)
    pane, model = w.list_pane, w.session_model
    pane.filter_instant_rows = 0  # behave as on a 10,000-session root: debounce every root
    target = model.find_id(_sid(203))
    assert pane.select_key(target.key)
    passes: list[str] = []
    model.layoutChanged.connect(lambda *_a: passes.append("layout"))
    model.modelReset.connect(lambda: passes.append("reset"))
    pane.filter.setFocus()
    qtbot.keyClicks(pane.filter, "s-0002")
    # The keys were handled without filtering: the text is there, the list is still whole.
    assert pane.filter.text() == "s-0002"
    assert pane.filter_pending()
    assert model.rowCount() == N_SESSIONS and passes == []
    qtbot.waitUntil(lambda: not pane.filter_pending(), timeout=WAIT_MS)
    assert passes == ["layout"]  # six keys, one filter pass, never a reset
    assert _shown_ids(w) == {_sid(i) for i in range(200, 300)}
    assert pane.current_key() == target.key  # the selection stayed on its session
    assert pane.count_label.isVisible() and pane.count_label.text() == f"100 of {N_SESSIONS}"
    # Enter applies at once; clearing the box shows everything at once, with no pass pending.
    qtbot.keyClicks(pane.filter, " project-3")
    qtbot.keyClick(pane.filter, Qt.Key.Key_Return)
    assert not pane.filter_pending()
    assert _shown_ids(w) == {_sid(i) for i in range(200, 300) if i % PROJECTS == 3}
    pane.filter.clear()
    assert not pane.filter_pending() and model.rowCount() == N_SESSIONS
    assert "reset" not in passes
    assert not pane.count_label.isVisible()


def test_small_roots_filter_on_every_key(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w = _big_window(qtbot, make_window, arun, tmp_path)
    pane = w.list_pane
    assert w.session_model.total <= pane.filter_instant_rows
    qtbot.keyClicks(pane.filter, "s-00029")
    assert not pane.filter_pending()
    assert _shown_ids(w) == {_sid(i) for i in range(290, 300)}


def test_precomputed_filter_texts_follow_row_changes(qtbot: Any) -> None:
    model = SessionListModel()
    rows = [
        SessionRow(f"k{i}", f"id-{i}", "proj", {"id": f"id-{i}", "cwd": "/w/plain"}, None, None, 10, i, f"r{i}")
        for i in range(40)  # more than one bulk batch
    ]
    model.append_rows(rows)
    model.set_filter_text("refactor parser")
    assert model.rowCount() == 0
    # A title arriving from the diagnosis pass makes the row match (its filter text was recomputed).
    model.apply_details({"k7": Details("r7", "ok", "balanced", 12, 0, "Refactor the parser")})
    assert [model.key_at(i) for i in range(model.rowCount())] == ["k7"]
    # So does a bulk batch of details (more than BULK_INSERT at once).
    model.apply_details({f"k{i}": Details(f"r{i}", "ok", "balanced", 12, 0, f"refactor parser {i}") for i in range(8, 40)})
    assert model.rowCount() == 33
    # A changed listing (another cwd) is matched by its new text, and no longer by its old one.
    moved = SessionRow("k7", "id-7", "proj", {"id": "id-7", "cwd": "/w/elsewhere"}, None, None, 10, 7, "r7b")
    model.replace_row(moved)
    model.set_filter_text("elsewhere")
    assert [model.key_at(i) for i in range(model.rowCount())] == ["k7"]
    model.set_filter_text("/w/plain refactor")
    assert "k7" not in {model.key_at(i) for i in range(model.rowCount())}
    model.remove_keys(["k8"])
    assert "k8" not in {model.key_at(i) for i in range(model.rowCount())}
    # Sorted order is kept through filter passes without re-sorting (descending by Modified here).
    model.set_filter_text("")
    shown = [model.row_at(i).modified_ns for i in range(model.rowCount())]
    assert shown == sorted(shown, reverse=True) and len(shown) == 39


def test_empty_result_says_so_and_the_right_pane_says_hidden(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w = _big_window(qtbot, make_window, arun, tmp_path)
    pane, model = w.list_pane, w.session_model
    open_key = w._open_key
    assert open_key is not None and pane.empty_result_text() == ""
    assert not w.hidden_note.isVisible()
    qtbot.keyClicks(pane.filter, "xyz")
    qtbot.waitUntil(lambda: model.rowCount() == 0, timeout=WAIT_MS)
    text = pane.table.placeholder()
    assert text.startswith(f"No sessions match 'xyz' — 0 of {N_SESSIONS}")
    # It is painted in the table's viewport (muted text where the rows would be).
    image = pane.table.viewport().grab().toImage()
    base = image.pixelColor(2, image.height() - 2)
    assert any(image.pixelColor(x, y) != base for y in range(0, 80) for x in range(0, image.width(), 2))
    # The right pane keeps the open session but says it is not in the list.
    assert w._open_key == open_key
    qtbot.waitUntil(w.hidden_note.isVisible, timeout=WAIT_MS)
    assert "hidden by the filter 'xyz'" in w.hidden_note.note
    fields = {r.name: r.value for r in w.header_model.rows()}
    assert w.session_model.get(open_key).session_id in str(fields.get("id"))
    # Esc in the filter clears it: every row is back, the open session is current again, the note goes.
    pane.filter.setFocus()
    qtbot.waitUntil(pane.filter.hasFocus, timeout=WAIT_MS)
    w._escape()
    assert model.rowCount() == N_SESSIONS
    assert pane.current_key() == open_key
    assert not w.hidden_note.isVisible() and pane.table.placeholder() == ""


def test_project_filter_alone_also_says_why_the_list_is_empty(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w = _big_window(qtbot, make_window, arun, tmp_path)
    pane = w.list_pane
    pane.refresh_projects()
    pane.project.setCurrentIndex(1)
    qtbot.keyClicks(pane.filter, "s-0002")
    pane.apply_filter()
    project = w.session_model.project_filter
    assert project is not None
    shown = _shown_ids(w)
    assert shown and all(w.session_model.find_id(s).project == project for s in shown)
    pane.filter.setText("zzz")
    pane.apply_filter()
    assert w.session_model.rowCount() == 0
    assert "No sessions match 'zzz' in /big/project-" in pane.table.placeholder()


def test_columns_fit_1400_px(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w = _big_window(qtbot, make_window, arun, tmp_path)
    w.resize(1400, 900)
    qtbot.waitUntil(lambda: w.width() == 1400, timeout=WAIT_MS)
    t = w.list_pane.table
    h = t.horizontalHeader()
    qtbot.wait(50)  # the header lays its sections out on the next turn of the loop
    assert h.sectionResizeMode(Col.TITLE) == QHeaderView.ResizeMode.Stretch
    assert not t.isColumnHidden(Col.MODIFIED)
    right_edge = t.columnViewportPosition(Col.MODIFIED) + t.columnWidth(Col.MODIFIED)
    assert 0 <= t.columnViewportPosition(Col.MODIFIED) and right_edge <= t.viewport().width()
    assert t.horizontalScrollBar().maximum() == 0  # no horizontal scrollbar by default
    visible = [c for c in Col if not t.isColumnHidden(c)]
    assert max(visible, key=t.columnWidth) == Col.TITLE  # the title gets the room
    # Every fixed column shows its widest value unelided.
    fm = t.fontMetrics()
    assert t.columnWidth(Col.MODIFIED) > fm.horizontalAdvance("2026-12-31 23:59")
    assert t.columnWidth(Col.EVENTS) > fm.horizontalAdvance("999,999")
    # The header's menu shows a hidden column again (and hides it).
    w.list_pane._header_menu(h.rect().center())
    menu = w.list_pane.last_header_menu
    assert menu is not None
    created = next(a for a in menu.actions() if a.text() == "Created")
    assert not created.isChecked()
    created.trigger()
    assert not t.isColumnHidden(Col.CREATED)
    menu.close()


def test_ctrl_end_goes_to_the_last_row_not_the_last_column(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w = _big_window(qtbot, make_window, arun, tmp_path)
    t = w.list_pane.table
    # Ctrl+End: the last row, same column, no sideways scroll; Ctrl+Home: back to the first row.
    t.setFocus()
    t.setCurrentIndex(w.session_model.index(0, Col.STATUS))
    qtbot.keyClick(t, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert (t.currentIndex().row(), t.currentIndex().column()) == (N_SESSIONS - 1, Col.STATUS)
    assert t.horizontalScrollBar().value() == 0
    assert t.rowAt(t.viewport().height() - 2) in (N_SESSIONS - 1, -1) or t.verticalScrollBar().value() > 0
    qtbot.keyClick(t, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    assert (t.currentIndex().row(), t.currentIndex().column()) == (0, Col.STATUS)
    qtbot.keyClick(t, Qt.Key.Key_End)
    assert t.currentIndex().row() == N_SESSIONS - 1
    assert t.selectionBehavior() == QAbstractItemView.SelectionBehavior.SelectRows
