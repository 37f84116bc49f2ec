"""Following a live session (issue 16): a pin that keeps new events in view, on by default at the bottom;
scrolled up, a "N new events" marker that jumps to them and pins again.

``SESSIONSCOPE_SHOTS=/some/folder`` saves a screenshot of the timeline's marker after a live append.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtWidgets import QAbstractSlider, QTableView

from app.gui.models.raw_lines import RawLinesModel
from app.gui.views.follow_tail import FollowTail
from app.gui.window.menus import TAB_RAW
from app.rawview.raw_text import decode_jsonl
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(90)

SHOTS = os.environ.get("SESSIONSCOPE_SHOTS")


def _turns(first_turn: int, count: int, seq: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(first_turn, first_turn + count):
        out += make_turn(seq + len(out), t, f"prompt {t}")
    return out


async def _write(root: Path, sid: str, events: list[dict[str, Any]], *, create: bool) -> None:
    store = JsonlSessionPersistence(root)
    try:
        if create:
            await store.create({"id": sid, "createdAt": 1767600000000, "cwd": "/proj/p"})
        await store.append(sid, events)
    finally:
        await store.close()


def _at_bottom(view: Any) -> bool:
    bar = view.verticalScrollBar()
    return bar.value() == bar.maximum()


# ---------------------------------------------------------------- in the window, with a real writer


def test_live_appends_follow_the_pinned_timeline_and_mark_the_scrolled_up_views(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    first = _turns(1, 30, 0)
    arun(_write(root, "live", first, create=True))
    w = make_window(root, session="live")
    w.resize(1400, 700)  # the tail of 30 turns does not fit: the views scroll
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id("live").key)
    qtbot.waitUntil(lambda: w.controller.watcher.active, timeout=WAIT_MS)
    tl, tree, tl_follow = w.timeline_model, w.timeline_pane.tree, w.timeline_pane.follow
    raw_view, raw_follow = w.raw_pane.view, w.raw_pane.follow
    qtbot.waitUntil(lambda: _at_bottom(tree), timeout=WAIT_MS)
    assert tl_follow.pinned and tl_follow.pin.isChecked()  # opened at its tail: following
    assert raw_view.verticalScrollBar().value() == 0 and not raw_follow.pinned  # a long raw text opens at its top

    # 1. Pinned: the new turn scrolls into view, opened; nothing to jump to.
    second = _turns(31, 1, len(first))
    arun(_write(root, "live", second, create=False))
    qtbot.waitUntil(lambda: tl.data(tl.index(tl.rowCount() - 1, 0)) == "Turn 31", timeout=WAIT_MS)
    new_turn = tl.index(tl.rowCount() - 1, 0)
    assert _at_bottom(tree) and tree.isExpanded(new_turn)
    assert tree.visualRect(tl.index(tl.rowCount(new_turn) - 1, 0, new_turn)).isValid()
    assert not tl_follow.marker.isVisible()
    # The Raw tab was not at its tail: it stays where it was and counts what arrived.
    qtbot.waitUntil(lambda: raw_follow.unseen == len(second), timeout=WAIT_MS)
    assert raw_view.verticalScrollBar().value() == 0
    w.show_tab(TAB_RAW)
    assert raw_follow.marker.isVisible() and raw_follow.marker.text() == f"↓ {len(second)} new events"
    raw_follow.marker.click()
    assert _at_bottom(raw_view) and raw_follow.pinned and not raw_follow.marker.isVisible()
    assert raw_view.rowAt(raw_view.viewport().height() - 2) == w.raw_model.rowCount() - 1

    # 2. Scrolled up in the timeline: the next append does not move it; the marker says how many arrived.
    w.show_tab(1)
    tree.expandAll()
    bar = tree.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 10, timeout=WAIT_MS)
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMaximum)  # the reader at the end, then a little up
    assert tl_follow.pinned
    for _ in range(3):
        bar.triggerAction(QAbstractSlider.SliderAction.SliderSingleStepSub)  # what a mouse wheel does
    held = bar.value()
    assert 0 < held < bar.maximum() and not tl_follow.pinned and not tl_follow.pin.isChecked()
    third = _turns(32, 1, len(first) + len(second))
    arun(_write(root, "live", third, create=False))
    qtbot.waitUntil(lambda: tl_follow.unseen == len(third), timeout=WAIT_MS)
    assert bar.value() == held
    assert tl_follow.marker.isVisible() and tl_follow.marker.text() == f"↓ {len(third)} new events"
    if SHOTS:
        qtbot.wait(300)
        w.grab().save(str(Path(SHOTS) / "follow_marker.png"))
    tl_follow.marker.click()
    assert _at_bottom(tree) and tl_follow.pinned and tl_follow.pin.isChecked() and not tl_follow.marker.isVisible()
    assert tl.data(tl.index(tl.rowCount() - 1, 0)) == "Turn 32"


# ---------------------------------------------------------------- the pin itself, on the raw lines model


def _lines(first: int, count: int) -> bytes:
    return b"".join(b'{"type":"x","seq":%d,"time":1,"data":{}}\n' % s for s in range(first, first + count))


@pytest.fixture
def raw_view(qtbot: Any) -> tuple[QTableView, RawLinesModel, FollowTail]:
    model = RawLinesModel()
    view = QTableView()
    view.setModel(model)
    view.resize(400, 300)
    follow = FollowTail(view, model.grown)
    qtbot.addWidget(view)
    view.show()
    model.set_text(decode_jsonl(_lines(0, 200), "none"))
    return view, model, follow


def _grow(model: RawLinesModel, count: int) -> None:
    t = model.text
    start = t.seqs_of_line(len(t) - 1)
    assert start is not None
    model.apply_growth(decode_jsonl(_lines(start[1] + 1, count), "none", offset=t.consumed))


def test_the_pin_is_on_at_the_bottom_and_off_when_scrolled_up(qtbot: Any, raw_view: Any) -> None:
    view, model, follow = raw_view
    bar = view.verticalScrollBar()
    assert bar.value() == 0 and not follow.pinned  # reset: undecided, and not at the bottom
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMaximum)
    assert follow.pinned and follow.pin.isChecked()
    _grow(model, 5)
    assert _at_bottom(view) and follow.unseen == 0
    bar.triggerAction(QAbstractSlider.SliderAction.SliderSingleStepSub)
    assert not follow.pinned
    _grow(model, 3)
    _grow(model, 4)
    assert follow.unseen == 7 and follow.marker.text() == "↓ 7 new events"
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMaximum)  # the user reaches the end: following again
    assert follow.pinned and follow.unseen == 0 and not follow.marker.isVisible()


def test_the_toggle_unpins_at_the_bottom_and_pinning_jumps_to_the_tail(qtbot: Any, raw_view: Any) -> None:
    view, model, follow = raw_view
    bar = view.verticalScrollBar()
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMaximum)
    follow.pin.click()  # off, while at the bottom
    assert not follow.pinned
    held = bar.value()
    _grow(model, 40)
    assert bar.value() == held and follow.unseen == 40 and follow.marker.isVisible()
    follow.pin.click()  # on again: to the tail
    assert follow.pinned and _at_bottom(view) and not follow.marker.isVisible()
    assert view.rowAt(view.viewport().height() - 2) == model.rowCount() - 1


def test_a_short_text_that_fits_follows_and_a_reset_forgets_the_choice(qtbot: Any, raw_view: Any) -> None:
    view, model, follow = raw_view
    follow.set_pinned(False)
    model.set_text(decode_jsonl(_lines(0, 3), "none"))
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() == 0, timeout=WAIT_MS)  # laid out
    assert follow.pinned and follow.unseen == 0  # undecided again, and a text that fits is at its bottom
    _grow(model, 300)
    assert _at_bottom(view)


def test_a_torn_tail_replaced_by_the_append_counts_only_the_new_events(qtbot: Any, raw_view: Any) -> None:
    view, model, follow = raw_view
    data = _lines(0, 200) + b'{"type":"x","seq":200,"ti'  # a torn last line: a provisional line and a marker
    model.set_text(decode_jsonl(data, "none"))
    assert model.text.tail_from >= 0
    bar = view.verticalScrollBar()
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMinimum)
    more = data + b'me":1,"data":{}}\n' + _lines(201, 9)
    model.apply_growth(decode_jsonl(more[model.text.consumed :], "none", offset=model.text.consumed))
    assert model.text.tail_from < 0 and follow.unseen == 10  # seq 200 (now whole) to 209
    assert bar.value() == 0
