"""Small windows and messages (issue 24 item 7): at 1024x700 nothing overlaps, the list's Title column
keeps a useful width, and a long transient message in the status bar never covers the counts."""

from __future__ import annotations

from typing import Any

import pytest
from guikit import WAIT_MS, wait_listed, wait_opened
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QHeaderView, QWidget

from app.gui.models.sessions import Col

pytestmark = pytest.mark.timeout(120)

TITLE_MIN_PX = 160  # a title reads as words at this width ("Refactor the checkout …"), not as "Ref…"
SMALL = (1024, 700)


def rect_in_window(widget: QWidget) -> QRect:
    return QRect(widget.mapTo(widget.window(), QPoint(0, 0)), widget.size())


def overlaps(named: dict[str, QWidget]) -> list[str]:
    shown = {name: rect_in_window(w) for name, w in named.items() if w.isVisible() and w.width() > 0}
    names = sorted(shown)
    return [
        f"{a} {shown[a]} overlaps {b} {shown[b]}"
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if shown[a].intersects(shown[b])
    ]


def small_window(qtbot: Any, make_window: Any, demo_root: str) -> Any:
    w = make_window(demo_root)
    w.resize(*SMALL)
    wait_listed(qtbot, w)
    qtbot.waitUntil(lambda: w.width() == SMALL[0], timeout=WAIT_MS)
    return w


def test_at_1024_the_title_column_keeps_a_useful_width(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = small_window(qtbot, make_window, demo_root)
    table = w.list_pane.table
    qtbot.waitUntil(lambda: table.columnWidth(Col.TITLE) >= TITLE_MIN_PX, timeout=WAIT_MS)
    assert not table.isColumnHidden(Col.TITLE)
    assert rect_in_window(table).right() <= w.width()
    # Widening the window gives the room back to the columns: the Title still stretches.
    w.resize(1400, 900)
    header = table.horizontalHeader()
    qtbot.waitUntil(lambda: header.sectionResizeMode(Col.TITLE) == QHeaderView.ResizeMode.Stretch, timeout=WAIT_MS)
    shown = sum(table.columnWidth(c) for c in Col if not table.isColumnHidden(c))
    assert table.columnWidth(Col.TITLE) >= TITLE_MIN_PX and shown <= table.viewport().width()  # no sideways scrolling


def test_at_1024_the_hidden_by_filter_note_overlaps_neither_the_tabs_nor_the_legend(
    qtbot: Any, make_window: Any, demo_root: str
) -> None:
    w = small_window(qtbot, make_window, demo_root)
    row = next(r for r in w.session_model.rows() if r.title)
    assert w.select_session(row.session_id)
    wait_opened(qtbot, w)
    w.list_pane.filter.setText("zzzz-matches-nothing")  # hides the open session
    qtbot.waitUntil(lambda: bool(w.hidden_note.note), timeout=WAIT_MS)
    legend = w.keyboard.legend_button
    found = overlaps({"note": w.hidden_note, "tab bar": w.tabs.tabBar(), "legend": legend})
    assert not found, found
    # The note is still said somewhere readable: beside the tabs when there is room, else in the status bar.
    shown_note = w.hidden_note.isVisible() and w.hidden_note.width() >= w.hidden_note.fontMetrics().horizontalAdvance("⚠ Not in")
    assert shown_note or "hidden by" in w.statusBar().currentMessage()


def test_a_long_transient_message_leaves_the_counts_visible_and_unclipped(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = small_window(qtbot, make_window, demo_root)
    counts = w.counts_label
    qtbot.waitUntil(lambda: bool(counts.text()), timeout=WAIT_MS)
    long = "Created the search index for 30 sessions in /home/ana/.cache/SessionScope/search/" + "very-long-folder/" * 12
    w.show_status(long)
    qtbot.waitUntil(lambda: w.statusBar().currentMessage() == long, timeout=WAIT_MS)
    w.statusBar().repaint()
    assert counts.isVisible()
    assert counts.width() >= counts.sizeHint().width()  # unclipped
    assert rect_in_window(counts).right() <= w.width()
    # The message shows in its own label, elided before the counts, never drawn under them.
    message = w.message_label
    assert message.isVisible() and message.text() == long and message.shown_text() != long
    assert not rect_in_window(message).intersects(rect_in_window(counts))
    assert message.toolTip() == long
    w.statusBar().clearMessage()
    qtbot.waitUntil(lambda: not message.isVisible(), timeout=WAIT_MS)
    assert w.root_label.isVisible()
