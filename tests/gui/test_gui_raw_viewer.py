"""The Raw tab as a log viewer (issue 24 item 3): byte offsets and frames, go to line / seq / byte, the record's
tree with copy value / copy path, wrap, line breaks in strings, and a 200 KB record shown lazily."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from guikit import make_turn
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPlainTextEdit

from app import glossary
from app.gui import theme
from app.gui.models.raw_lines import BYTE_COL, FRAME_COL, TEXT_COL, RawLinesModel
from app.gui.views.raw_pane import FOLD_WIDTH, FOLDED_TIP, GO_TO_KEY, RawPane
from app.gui.window.raw_wiring import RawFeature
from app.rawview.goto import BYTE, LINE, SEQ
from app.rawview.raw_text import RawText, decode_jsonl, decode_records
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(90)


def _events(turns: int = 6) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for t in range(1, turns + 1):
        events += make_turn(len(events), t, f"prompt {t}", chunks=4)
    return events


def _log(arun: Any, tmp_path: Path, compression: str, events: list[dict[str, Any]]) -> bytes:
    async def write() -> Path:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        try:
            await store.create({"id": "s", "createdAt": 1, "cwd": "/w"})
            for i in range(0, len(events), 9):  # several appends: several zstd frames
                await store.append("s", events[i : i + 9])
        finally:
            await store.close()
        return next(tmp_path.rglob("session.jsonl*"))

    return arun(write()).read_bytes()


def _pane(qtbot: Any, text: RawText) -> RawPane:
    model = RawLinesModel()
    pane = RawPane(model)
    qtbot.addWidget(pane)
    pane.resize(1200, 800)
    pane.show()
    model.set_text(text)
    return pane


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_the_byte_column_is_where_each_line_sits_in_the_file(qtbot: Any, arun: Any, tmp_path: Path, compression: str) -> None:
    data = _log(arun, tmp_path, compression, _events())
    text = decode_jsonl(data, compression)
    pane = _pane(qtbot, text)
    model = pane.model
    zstd = compression == "zstd"
    assert model.columnCount() == (4 if zstd else 3)
    assert model.headerData(BYTE_COL, Qt.Orientation.Horizontal) == "Byte"
    header = pane.view.horizontalHeader()
    assert header.visualIndex(TEXT_COL) == model.columnCount() - 1  # Line, Byte(, Frame), then the text
    frame_starts: list[int] = []
    for row in range(model.rowCount()):
        shown = model.data(model.index(row, BYTE_COL))
        offset = int(shown.replace(",", ""))
        assert shown == glossary.number(offset)
        line = model.text.line_bytes(row)
        if zstd:
            frame = int(model.data(model.index(row, FRAME_COL)))
            assert data[offset : offset + 4] == b"\x28\xb5\x2f\xfd"  # the line's frame starts there
            if frame > len(frame_starts):
                frame_starts.append(offset)
            assert frame_starts[frame - 1] == offset
        else:
            assert data[offset : offset + len(line)] == line and (offset == 0 or data[offset - 1] == 0x0A)
    if zstd:
        assert len(frame_starts) >= 4
    # A SQLite session's rows have no bytes: no Byte column.
    model.set_text(decode_records(_events(1)))
    assert model.columnCount() == 2


def test_go_to_a_line_a_seq_and_a_byte(qtbot: Any, arun: Any, tmp_path: Path) -> None:
    events = _events()
    data = _log(arun, tmp_path, "zstd", events)
    pane = _pane(qtbot, decode_jsonl(data, "zstd"))
    text = pane.model.text
    pane.open_go_to()
    assert pane.go_bar.isVisible()

    pane.go_edit.setText("12")  # the kind box says line
    pane.go_to_typed()
    assert pane.current_line() == 11

    pane.go_edit.setText("seq 30")
    pane.go_to_typed()
    lo, hi = text.seqs_of_line(pane.current_line()) or (-1, -1)
    assert lo <= 30 <= hi
    assert pane.go_kind.currentData() == SEQ  # the typed kind becomes the box's

    third_frame = text.frame_starts[2]
    pane.go_edit.setText(f"byte {third_frame + 7:,}")
    result = pane.go_to_typed()
    assert result is not None and text.frame_of(pane.current_line()) == 3
    assert text.frame_of(pane.current_line() - 1) == 2  # the frame's first line
    assert "frame 3" in pane.go_note.text()

    before = pane.current_line()
    assert pane.go_to(SEQ, 10_000).line == -1 and pane.current_line() == before
    assert "no line holds event seq 10,000" in pane.go_note.text()
    assert pane.go_to(LINE, 1).line == 0 and pane.current_line() == 0
    last = pane.go_to(BYTE, len(data) - 1).line  # the last frame's first line
    assert text.frame_of(last) == len(text.frame_starts) and text.frame_of(last - 1) == len(text.frame_starts) - 1
    pane.go_edit.setText("not a number")
    assert pane.go_to_typed() is None and "Type a number" in pane.go_note.text()


def test_the_tree_copies_a_members_value_and_its_json_path(qtbot: Any) -> None:
    record = {"type": "tool/result", "seq": 0, "data": {"content": [{"type": "text", "text": "hello\nworld"}], "ok": True}}
    text = RawText()
    text.add_text(orjson.dumps(record) + b"\n")
    pane = _pane(qtbot, text)
    pane.select_line(0)
    tm, tree = pane.tree_model, pane.tree
    data = next(tm.index(r, 0) for r in range(tm.rowCount()) if tm.data(tm.index(r, 0)) == "data")
    tree.expand(data)
    content = next(tm.index(r, 0, data) for r in range(tm.rowCount(data)) if tm.data(tm.index(r, 0, data)) == "content")
    tree.expand(content)
    first = tm.index(0, 0, content)
    tree.expand(first)
    leaf = next(tm.index(r, 0, first) for r in range(tm.rowCount(first)) if tm.data(tm.index(r, 0, first)) == "text")
    tree.setCurrentIndex(leaf)
    assert pane.copy_path() == "$.data.content[0].text" == QGuiApplication.clipboard().text()
    assert pane.path_label.text() == "$.data.content[0].text"
    assert pane.copy_value() == "hello\nworld" == QGuiApplication.clipboard().text()
    tree.setCurrentIndex(first)
    assert orjson.loads(pane.copy_value() or "") == {"type": "text", "text": "hello\nworld"}
    assert pane.copy_path() == "$.data.content[0]"


def test_wrap_and_line_breaks(qtbot: Any) -> None:
    long_text = " ".join(f"word{i}" for i in range(400))
    text = RawText()
    text.add_text(orjson.dumps({"type": "user/message", "seq": 0, "data": {"text": long_text + "\nsecond line"}}) + b"\n")
    text.add_text(b'{"type":"user/message","seq":1,"data":{"text":"short"}}\n')
    pane = _pane(qtbot, text)
    pane.select_line(0)
    default = pane.view.rowHeight(0)
    assert pane.detail.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap and not pane.view.wordWrap()

    pane.wrap_button.click()
    assert pane.wraps() and pane.view.wordWrap()
    assert pane.detail.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    assert pane.view.rowHeight(0) > 2 * default  # the selected long line shows several lines
    pane.select_line(1)
    assert pane.view.rowHeight(0) == default and pane.view.rowHeight(1) == default  # a short line needs one
    pane.select_line(0)
    pane.set_wrap(False)
    assert not pane.wrap_button.isChecked() and pane.view.rowHeight(0) == default
    assert pane.detail.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap

    assert "\\nsecond line" in pane.detail.toPlainText()
    pane.newlines_button.click()
    assert pane.shows_newlines()
    shown = pane.detail.toPlainText()
    assert "\nsecond line" in shown and "\\nsecond line" not in shown
    pane.set_show_newlines(False)
    assert "\\nsecond line" in pane.detail.toPlainText()


def test_the_detail_colours_json_by_token(qtbot: Any) -> None:
    text = RawText()
    text.add_text(b'{"type":"user/message","seq":7,"data":{"ok":true}}\n')
    pane = _pane(qtbot, text)
    pane.select_line(0)
    doc = pane.detail.document()
    seq_line = next(doc.findBlockByNumber(i) for i in range(doc.blockCount()) if '"seq"' in doc.findBlockByNumber(i).text())
    formats = {f.start: f.format.foreground().color().name() for f in seq_line.layout().formats()}
    col = seq_line.text().index('"seq"')
    assert formats[col] == theme.hex_of("json.key")
    assert formats[seq_line.text().index("7")] == theme.hex_of("json.number")


def test_a_200_kb_record_shows_without_walking_it(qtbot: Any) -> None:
    big = "x" * 200_000
    record = {"type": "tool/result", "seq": 0, "data": {"content": [{"text": big}], "items": list(range(5000))}}
    text = RawText()
    text.add_text(orjson.dumps(record) + b"\n")
    assert text.line_size(0) > 200_000
    pane = _pane(qtbot, text)
    t0 = time.perf_counter()
    pane.select_line(0)
    elapsed = time.perf_counter() - t0
    print(f"200 KB record: selected and shown in {elapsed * 1000:.1f} ms")  # a figure, not a test: the machine is shared
    tree = pane.tree_model.tree
    assert tree is not None
    qtbot.wait(20)  # the view has asked for what it paints
    # The tree holds the root and the members the view shows, nothing below them.
    assert tree.nodes_built == 1 + len(record)
    data = tree.root.child(2)
    assert not data.children_built
    tm = pane.tree_model
    pane.tree.expand(tm.index_of(data))
    qtbot.wait(20)
    assert data.children_built and tree.nodes_built == 1 + len(record) + 2
    items = data.child(1)
    assert not items.children_built and tm.data(tm.index_of(items).siblingAtColumn(1)) == "[5,000 items]"
    # Only what is on screen is coloured: the first screenful now, the rest as it scrolls into view.
    doc = pane.detail.document()
    shown_rows = pane.detail.viewport().height() // pane.detail.fontMetrics().lineSpacing() + 2
    qtbot.waitUntil(lambda: pane.highlighter.blocks_coloured > 0)
    assert doc.blockCount() > 5000 and pane.highlighter.blocks_coloured <= 3 * shown_rows  # a screenful or so
    bar = pane.detail.verticalScrollBar()
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: pane.highlighter.window[0] > 5000)
    last_number = doc.findBlockByNumber(doc.blockCount() - 4)  # "      4999" (then "]", "}", "}")
    assert last_number.text().strip() == "4999"
    assert [f.format.foreground().color().name() for f in last_number.layout().formats()] == [theme.hex_of("json.number")]
    assert pane.highlighter.blocks_coloured <= 6 * shown_rows
    # The long string is shown in pieces (a view lays a line out whole); none is lost.
    shown = pane.detail.toPlainText()
    assert big in shown.replace("\n", "") and max(map(len, shown.split("\n"))) <= FOLD_WIDTH
    assert pane.detail.toolTip() == FOLDED_TIP
    t0 = time.perf_counter()
    pane.set_wrap(True)
    print(f"200 KB record: wrapped in {(time.perf_counter() - t0) * 1000:.1f} ms")


def test_ctrl_j_opens_go_to_in_the_raw_tab(qtbot: Any, make_window: Any) -> None:
    w = make_window()
    feature = w.features.get("raw", RawFeature)
    assert feature.go_to_action.shortcut().toString() == GO_TO_KEY
    assert feature.go_to_action in w.actions()
    w.content_tabs.show("timeline")
    feature.go_to_action.trigger()
    assert w.content_tabs.current() == "raw" and w.raw_pane.go_bar.isVisible()
    qtbot.keyClick(w.raw_pane.go_edit, Qt.Key.Key_Escape)  # Esc in the field closes the bar
    assert not w.raw_pane.go_bar.isVisible()
    feature.wrap_action.trigger()
    assert w.raw_pane.wraps()
    w.raw_pane.wrap_button.click()
    assert not feature.wrap_action.isChecked()


def test_a_selection_synced_into_a_tab_never_shown_does_not_scroll_it_but_one_shown_before_does(qtbot: Any) -> None:
    text = RawText()
    text.add_text(b"".join(b'{"type":"user/message","seq":%d,"data":{"text":"t"}}\n' % i for i in range(400)))
    model = RawLinesModel()
    pane = RawPane(model)
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    model.set_text(text)
    pane.select_line(390)  # never shown: a zero-height view would put the line at its bottom
    assert pane.current_line() == 390 and pane.view.verticalScrollBar().value() == 0
    pane.show()
    qtbot.waitExposed(pane)
    pane.select_line(10)
    pane.hide()
    pane.select_line(300)  # hidden after being shown: it keeps its height and scrolls as before
    assert pane.view.verticalScrollBar().value() > 200


@pytest.mark.parametrize("name", ["light", "dark"])
def test_json_colours_hold_4_5_to_1_on_the_base_in_both_themes(name: str) -> None:
    from PySide6.QtGui import QColor, QPalette

    from app.gui import style
    from app.rawview.json_tokens import ROLES

    base = theme.dark_palette().color(QPalette.ColorRole.Base) if name == "dark" else QColor("#ffffff")
    for role in ROLES:
        ratio = style.contrast_ratio(theme.color(f"json.{role}", name), base)
        assert ratio >= 4.5, (role, name, ratio)


def test_the_summary_keeps_its_whole_text_and_gives_way_to_the_buttons(qtbot: Any) -> None:
    pane = _pane(qtbot, RawText())
    long = "session.jsonl.zstd · zstd frames, decoded · 2,330 lines · 567.0 KB decoded · " + "more words " * 20
    pane.set_info(long)
    pane.damage_button.show()
    pane.resize(600, 400)
    qtbot.waitUntil(lambda: pane.info.geometry().right() < pane.go_to_button.geometry().left())
    assert pane.info.text() == long == pane.info.toolTip()  # what tests and copies read is all of it
    assert pane.go_to_button.isVisible() and pane.damage_button.geometry().right() <= pane.width()
