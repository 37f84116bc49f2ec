"""Every item model passes Qt's QAbstractItemModelTester, before and after its typical changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guikit import wait_listed, wait_opened
from PySide6.QtCore import QModelIndex, Qt

from app.gui.models.header_fields import HeaderFieldsModel, header_rows
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.session_row import Details, SessionRow
from app.gui.models.sessions import Col, SessionListModel, sort_value
from app.gui.models.timeline import TimelineModel
from app.listing.root_scan import scan_root
from app.rawview.raw_text import RawText, decode_jsonl
from app.timeline import block_spans, derive, tail_first_span

pytestmark = pytest.mark.timeout(60)


def _visible_keys(model: SessionListModel) -> list[str]:
    return [model.key_at(i) for i in range(model.rowCount())]


def test_session_list_model_sorts_filters_and_refreshes_row_by_row(qtmodeltester: Any, zoo_root: Path) -> None:
    model = SessionListModel()
    qtmodeltester.check(model)
    found = scan_root(str(zoo_root))
    rows = [SessionRow.from_artifact(a) for a in found]
    model.append_rows(rows[:3])  # one by one, into sorted places
    model.append_rows(rows[3:])
    qtmodeltester.check(model)
    assert model.rowCount() == model.total == len(rows)

    def expected(col: int, desc: bool) -> list[str]:
        return [r.key for r in sorted(rows, key=lambda r: (sort_value(r, col), r.key), reverse=desc)]

    for col in (Col.MODIFIED, Col.ID, Col.SIZE):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            model.sort(col, order)
            assert _visible_keys(model) == expected(col, order == Qt.SortOrder.DescendingOrder)
    # Details arriving while sorted by status move rows to their places.
    model.sort(Col.STATUS, Qt.SortOrder.AscendingOrder)
    model.apply_details({rows[0].key: Details(rows[0].revision, "corrupt", "bad", None, 0, None)})
    assert model.key_at(0) == rows[0].key
    for r in rows[1:]:
        model.apply_details({r.key: Details(r.revision, "ok", "balanced log", 10, 0, f"title {r.session_id}")})
    assert _visible_keys(model) == expected(Col.STATUS, False)
    # A changed row keeps its details when only the listing moved, and moves when its sort key moved.
    model.sort(Col.SIZE, Qt.SortOrder.DescendingOrder)
    changed = SessionRow.from_artifact(found[-1])
    changed.size = 10**9
    model.replace_row(changed)
    assert model.key_at(0) == changed.key and model.get(changed.key).details is not None
    model.remove_keys([rows[1].key, rows[2].key])
    assert model.total == len(rows) - 2
    model.set_filter_text("alpha")
    assert 0 < model.rowCount() < model.total
    assert all("alpha" in (model.row_at(i).cwd or "") for i in range(model.rowCount()))
    model.set_project("--home-dev-projects-beta--")
    assert all(model.row_at(i).project == "--home-dev-projects-beta--" for i in range(model.rowCount()))
    model.set_filter_text("")
    model.set_project(None)
    assert model.rowCount() == model.total
    qtmodeltester.check(model)


def test_timeline_model_tail_fetch_and_merge(qtbot: Any, qtmodeltester: Any, make_window: Any, demo_root: str) -> None:
    w = make_window(demo_root)
    wait_listed(qtbot, w, details=False)
    long_row = next(r for r in w.session_model.rows() if r.session_id.startswith("long-refactor"))
    assert w.select_session(long_row.session_id)
    wait_opened(qtbot, w, long_row.key)
    records = list(w.timeline_model.records)

    model = TimelineModel()
    qtmodeltester.check(model)
    spans = block_spans(records)
    first = tail_first_span(spans)
    assert first > 0, "the long demo session must open at its tail"
    model.load(records, len(records), spans, derive(records, spans[first][0]), first)
    qtmodeltester.check(model)
    sentinel = model.index(0, 0)
    assert model.is_sentinel(sentinel) and model.canFetchMore(sentinel)
    assert not model.canFetchMore(QModelIndex())
    before = model.rowCount()
    model.fetchMore(sentinel)
    assert model.rowCount() > before
    qtmodeltester.check(model)
    # An older event resolves to a row, loading what it needs.
    idx = model.index_for_seq(3)
    assert idx.isValid() and model.first_loaded_span == 0
    # Merging a re-derived tail keeps the model consistent.
    cut = spans[-2][0]
    part = records[:cut]
    model.load(part, len(part), block_spans(part), derive(part), 0)
    qtmodeltester.check(model)
    from_span = len(model.spans) - 1
    start = model.spans[from_span][0]
    new_spans = model.spans[:from_span] + block_spans(records, start)
    model.merge_tail(records, len(records), new_spans, from_span, derive(records, start))
    qtmodeltester.check(model)
    assert model.rowCount() == len(spans)


def test_raw_lines_model(qtmodeltester: Any, zoo_root: Path) -> None:
    model = RawLinesModel()
    qtmodeltester.check(model)
    path = next(zoo_root.glob("*/a3f1c2d4-*/session.jsonl.zstd"))
    data = path.read_bytes()
    cut = len(data) - 40
    text = decode_jsonl(data[:cut], "zstd")
    model.set_text(text)
    assert text.tail_from >= 0  # the cut frame is shown provisionally, with a marker line
    qtmodeltester.check(model)
    delta = decode_jsonl(data[text.consumed :], "zstd", offset=text.consumed)
    model.apply_growth(delta)
    assert model.text.tail_from < 0
    assert [model.text.line_text(i, None) for i in range(len(model.text))] == [
        decode_jsonl(data, "zstd").line_text(i, None) for i in range(len(model.text))
    ]
    qtmodeltester.check(model)
    model.set_text(RawText())
    qtmodeltester.check(model)


def test_header_fields_model(qtmodeltester: Any, zoo_root: Path) -> None:
    model = HeaderFieldsModel()
    qtmodeltester.check(model)
    rows = [SessionRow.from_artifact(a) for a in scan_root(str(zoo_root))]
    child = next(r for r in rows if r.parent_id)
    parent = next(r for r in rows if r.session_id == child.parent_id)
    model.set_rows(header_rows(child, parent, [], child.path))
    qtmodeltester.check(model)
    links = [model.data(model.index(i, 1), 0x0100 + 1) for i in range(model.rowCount())]
    assert parent.key in links
    names = [model.data(model.index(i, 0)) for i in range(model.rowCount())]
    for field in ("version", "id", "createdAt", "cwd", "parentSession", "seedLength", "origin", "delegationDepth", "agentPreset"):
        assert field in names


def test_delegates_read_every_role_through_multidata(qtbot: Any, make_window: Any, zoo_root: Path) -> None:
    """A delegate's style option (filled through ``multiData``) matches ``data`` cell by cell.

    Delegates reuse their role buffer from cell to cell, so a role a cell does not answer must
    come out empty, not as the previous cell's value.
    """
    from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

    from persistence.testing import break_header

    # A header that does not decode leaves its row untitled (italic); every other zoo row has a title.
    break_header(str(next(zoo_root.rglob("session.jsonl.zstd"))))
    w = make_window(zoo_root)
    wait_listed(qtbot, w)
    model = w.session_model
    delegate = QStyledItemDelegate()
    italic_seen = plain_seen = 0
    for row in range(model.rowCount()):
        for col in range(model.columnCount()):
            idx = model.index(row, col)
            opt = QStyleOptionViewItem()
            delegate.initStyleOption(opt, idx)
            assert opt.text == (model.data(idx, Qt.ItemDataRole.DisplayRole) or "")
            bg = model.data(idx, Qt.ItemDataRole.BackgroundRole)
            if bg is not None:
                assert opt.backgroundBrush.color() == bg.color()
            font = model.data(idx, Qt.ItemDataRole.FontRole)
            italic = bool(font is not None and font.italic())
            assert opt.font.italic() == italic
            italic_seen += italic
            plain_seen += not italic
    assert italic_seen and plain_seen  # both kinds of cells were checked, in alternation
