"""The timeline's columns in a narrow window: Info gives way before Summary is squeezed, unless the user sized it."""

from __future__ import annotations

from typing import Any

from app.gui.models.timeline import TimelineModel
from app.gui.views.timeline_pane import COL_INFO, COLUMN_WIDTHS, INFO_MIN_PX, SUMMARY_MIN_PX, TimelineTree


def test_a_narrow_timeline_narrows_info_before_summary(qtbot: Any) -> None:
    tree = TimelineTree(TimelineModel())
    qtbot.addWidget(tree)
    tree.resize(1400, 400)
    tree.show()
    qtbot.waitUntil(lambda: tree.viewport().width() > 1000)
    assert tree.columnWidth(COL_INFO) == COLUMN_WIDTHS["Info"]  # room enough: the default width
    tree.resize(680, 400)  # Item, Seq and Time take ~320 px: Info and Summary share the rest
    qtbot.waitUntil(lambda: tree.viewport().width() < 700)
    qtbot.waitUntil(lambda: tree.columnWidth(COL_INFO) < COLUMN_WIDTHS["Info"])
    assert tree.columnWidth(COL_INFO) >= INFO_MIN_PX
    assert tree.columnWidth(1) >= SUMMARY_MIN_PX - 2  # the stretching Summary keeps readable room
    tree.resize(400, 400)  # narrower still: Info stops at its floor
    qtbot.waitUntil(lambda: tree.columnWidth(COL_INFO) == INFO_MIN_PX)
    tree.resize(1400, 400)
    qtbot.waitUntil(lambda: tree.columnWidth(COL_INFO) == COLUMN_WIDTHS["Info"])


def test_an_info_width_set_by_hand_is_kept(qtbot: Any) -> None:
    tree = TimelineTree(TimelineModel())
    qtbot.addWidget(tree)
    tree.resize(1400, 400)
    tree.show()
    tree.header().resizeSection(COL_INFO, 300)  # as a drag of the header's handle does
    tree.resize(560, 400)
    qtbot.waitUntil(lambda: tree.viewport().width() < 600)
    assert tree.columnWidth(COL_INFO) == 300
