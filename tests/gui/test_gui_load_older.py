"""The timeline's first row, "N older turns", loads a screenful at a time or all (issue 16, small things),
and the Seq column fits six digits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import Qt

from app.gui.models.timeline import SENTINEL_SEP, TimelineModel
from app.gui.views.timeline_pane import SEQ_DIGITS, TimelineTree
from app.timeline import OLDER_EVENT_BUDGET, block_spans, derive, tail_first_span
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(90)


def _records(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(1, turns + 1):
        out += make_turn(len(out), t, f"prompt {t}")
    return out


async def _write(root: Path, records: list[dict[str, Any]]) -> None:
    store = JsonlSessionPersistence(root)
    try:
        await store.create({"id": "long", "createdAt": 1767600000000, "cwd": "/proj/p"})
        await store.append("long", records)
    finally:
        await store.close()


def _top_labels(tl: TimelineModel) -> list[str]:
    return [tl.data(tl.index(r, 0)) for r in range(tl.rowCount())]


def test_older_turns_load_a_screenful_at_a_time_or_all(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    records = _records(300)
    arun(_write(root, records))
    w = make_window(root, session="long")
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id("long").key)
    tl, tree = w.timeline_model, w.timeline_pane.tree
    first = tl.first_loaded_span
    assert first > 0
    sentinel = tl.index(0, 0)
    assert tl.is_sentinel(sentinel)
    assert tl.data(sentinel) == f"▲ {first} older turns"  # every block of this log is a turn
    assert tl.data(tl.index(0, 2)) == f"{tl.spans[first][0]:,} events above"
    assert "block" not in " ".join(str(tl.data(tl.index(0, c))) for c in range(3))

    # The row's links: a screenful more (the view's height in rows), or all.
    page = tree.page_rows()
    assert 5 < page < first - page  # this window shows a few dozen rows; two pages stay above
    assert tl.data(tl.index(0, 1)) == f"Load {page} more{SENTINEL_SEP}Load all"
    before = tl.rowCount()
    more = tree.sentinel_link_rect("more")
    assert more.isValid() and tree.sentinel_link_at(more.center().x()) == "more"
    assert tree.sentinel_link_at(tree.sentinel_link_rect("all").center().x()) == "all"
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=more.center())
    assert tl.rowCount() == before + page and tl.first_loaded_span == first - page
    assert tl.data(tl.index(0, 0)) == f"▲ {first - page} older turns"
    # Enter on the row: the next page.
    tree.setCurrentIndex(tl.index(0, 0))
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_Return)
    assert tl.first_loaded_span == first - 2 * page
    # Shift+Enter: all of them (derived already, or few: at once).
    tree.setCurrentIndex(tl.index(0, 0))
    qtbot.keyClick(tree, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: tl.first_loaded_span == 0, timeout=WAIT_MS)
    assert not tl.is_sentinel(tl.index(0, 0))
    assert _top_labels(tl) == [f"Turn {t}" for t in range(1, 301)]


def test_the_load_all_link_loads_every_older_turn(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    arun(_write(root, _records(300)))
    w = make_window(root, session="long")
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id("long").key)
    tl, tree = w.timeline_model, w.timeline_pane.tree
    assert tl.first_loaded_span > 0
    link = tree.sentinel_link_rect("all")
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=link.center())
    qtbot.waitUntil(lambda: tl.first_loaded_span == 0, timeout=WAIT_MS)
    assert _top_labels(tl) == [f"Turn {t}" for t in range(1, 301)]


def test_load_all_of_a_long_log_not_indexed_yet_goes_in_steps(qtbot: Any) -> None:
    records = _records(700)  # 9,800 events above the tail: more than one step may fold on the GUI thread
    spans = block_spans(records)
    first = tail_first_span(spans)
    model = TimelineModel()
    tree = TimelineTree(model)
    qtbot.addWidget(tree)
    tree.resize(900, 500)
    tree.show()
    model.load(records, len(records), spans, derive(records, spans[first][0]), first)
    assert model.underived_events() > OLDER_EVENT_BUDGET
    steps: list[int] = []
    model.rowsInserted.connect(lambda parent, a, b: steps.append(b - a + 1) if not parent.isValid() else None)
    tree.load_all()
    assert tree.loading_all and not steps  # nothing folded in this call: one step per event-loop turn
    qtbot.waitUntil(lambda: model.first_loaded_span == 0, timeout=WAIT_MS)
    assert not tree.loading_all
    assert len(steps) >= 3 and all(n * len(make_turn(0, 1, "x")) <= OLDER_EVENT_BUDGET for n in steps)
    assert _top_labels(model) == [f"Turn {t}" for t in range(1, 701)]


def test_the_seq_column_fits_six_digits(qtbot: Any) -> None:
    model = TimelineModel()
    tree = TimelineTree(model)
    qtbot.addWidget(tree)
    six = tree.fontMetrics().horizontalAdvance("9" * SEQ_DIGITS)
    assert SEQ_DIGITS == 6
    assert tree.columnWidth(3) >= six + 8  # the digits plus the cell margins: seq 199999 is never elided
    assert tree.columnWidth(3) >= tree.header().fontMetrics().horizontalAdvance("Seq") + 8
