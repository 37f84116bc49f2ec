"""The Search tab of the left pane: the query field, filters, the count, and hits grouped by session.

Results come as you type: ``search_requested`` fires ``DEBOUNCE_MS`` after the last key or filter
change (a query is a few to a few dozen milliseconds off the GUI thread; waiting for a pause in
typing keeps the list from flickering through every prefix).  The snippet's matches are painted
highlighted by ``SnippetDelegate``.  An empty result says what was searched (the query, the filters,
the fields the index holds) and how far the index is.

May import: PySide6, ``app.gui.style``, ``models.search_results`` and ``app.search``'s values.
"""

from __future__ import annotations

import datetime as _dt
from collections import OrderedDict

from PySide6.QtCore import QDate, QItemSelectionModel, QModelIndex, QPersistentModelIndex, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QKeyEvent, QPainter, QPalette, QTextCharFormat, QTextLayout
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDateEdit,
    QGridLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.gui import style, theme
from app.gui.models.search_results import COL_MATCH, KIND_LABELS, SPANS_ROLE, SearchResultsModel
from app.search import KINDS, Hit, SearchFilters, SearchResult, SessionHits

DEBOUNCE_MS = 60  # results as you type: the query runs this long after the last key (a burst of keys is one query)
MATCH_BG = "search.match.bg"  # theme role of a highlighted match in a snippet (readable on the selection too)
LAYOUT_CACHE = 512  # laid-out snippets kept (a screenful is ~50)
SNIPPET_LINE_WIDTH = 4000.0  # pixels: one line, never wrapped (a snippet is at most ~200 characters)
STATUSES = ("ok", "open-turn", "torn-tail", "corrupt", "unsupported", "unreadable")
EMPTY_HINT = (
    "Search every session of this root: user and assistant text, reasoning, tool calls and their "
    "arguments, tool results, titles, cwd and ids.<br><br>"
    "<b>order.ts</b> finds it anywhere, also inside paths · <b>npm build</b> both words · "
    '<b>"npm run build"</b> a phrase · <b>build*</b> words starting so · <b>a OR b</b>, <b>a NOT b</b>'
    "<br><br>Enter or click a hit to open the session at that event; Alt+Left goes back."
)


def utf16_offset(text: str, index: int) -> int:
    """Qt counts UTF-16 code units; Python counts code points (they differ past U+FFFF)."""
    return len(text[:index].encode("utf-16-le", "surrogatepass")) // 2


class SnippetDelegate(QStyledItemDelegate):
    """Paints the Match column with every match span on a highlight (the rest as the style would).

    Laid-out snippets are kept (``LAYOUT_CACHE`` of them): laying out a line is most of a cell's paint,
    and a scroll or a hover repaints the same rows again.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layouts: OrderedDict[tuple[str, tuple[tuple[int, int], ...], str], QTextLayout] = OrderedDict()

    def _layout(self, text: str, spans: list[tuple[int, int]], font: QFont) -> QTextLayout:
        key = (text, tuple(spans), font.key())
        layout = self._layouts.get(key)
        if layout is not None:
            self._layouts.move_to_end(key)
            return layout
        layout = QTextLayout(text, font)
        ranges = []
        for a, b in spans:
            r = QTextLayout.FormatRange()
            r.start = utf16_offset(text, a)
            r.length = utf16_offset(text, b) - r.start
            fmt = QTextCharFormat()
            fmt.setBackground(theme.color(MATCH_BG))
            fmt.setForeground(theme.color("search.match"))
            fmt.setFontWeight(QFont.Weight.Bold)
            r.format = fmt
            ranges.append(r)
        layout.setFormats(ranges)
        layout.beginLayout()
        layout.createLine().setLineWidth(SNIPPET_LINE_WIDTH)
        layout.endLayout()
        self._layouts[key] = layout
        if len(self._layouts) > LAYOUT_CACHE:
            self._layouts.popitem(last=False)
        return layout

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        spans = index.data(SPANS_ROLE)
        if not spans:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        widget = opt.widget
        qstyle = widget.style() if widget is not None else QApplication.style()
        qstyle.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = qstyle.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        layout = self._layout(text, spans, opt.font)
        line = layout.lineAt(0)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.save()
        painter.setClipRect(rect)
        painter.setPen(opt.palette.color(role))
        y = rect.y() + (rect.height() - line.height()) / 2
        layout.draw(painter, QPointF(rect.x() + 3, y), [], QRectF(rect))
        painter.restore()


class ResultsTree(QTreeView):
    """Enter on a hit (or a session row) activates it, like a click."""

    enter_pressed = Signal(QModelIndex)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.enter_pressed.emit(self.currentIndex())
            return
        super().keyPressEvent(event)


class SearchPane(QWidget):
    search_requested = Signal(str, object)  # query, SearchFilters (debounced; "" clears)
    hit_activated = Signal(object)  # Hit
    session_activated = Signal(object)  # SessionHits (a session row: open it at its first hit)

    def __init__(self, model: SearchResultsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.field = QLineEdit(self)
        self.field.setPlaceholderText('Search every session …  order.ts · "npm run build" · build*   (Ctrl+K)')
        self.field.setClearButtonEnabled(True)
        self.project = QLineEdit(self)
        self.project.setPlaceholderText("project (cwd contains) …")
        self.project.setClearButtonEnabled(True)
        self.tool = QLineEdit(self)
        self.tool.setPlaceholderText("tool name …")
        self.tool.setClearButtonEnabled(True)
        self.kind = QComboBox(self)
        self.kind.addItem("Any kind", None)
        for k in KINDS:
            self.kind.addItem(KIND_LABELS.get(k, k), k)
        self.status = QComboBox(self)
        self.status.addItem("Any status", None)
        for s in STATUSES:
            self.status.addItem(style.STATUS_LABELS.get(s, s), s)
        self.since = self._date_edit("from: any date")
        self.until = self._date_edit("to: any date")
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(4)
        grid.setVerticalSpacing(2)
        grid.addWidget(self.field, 0, 0, 1, 4)
        grid.addWidget(self.project, 1, 0, 1, 2)
        grid.addWidget(self.tool, 1, 2)
        grid.addWidget(self.kind, 1, 3)
        grid.addWidget(self.status, 2, 0)
        grid.addWidget(self.since, 2, 1)
        grid.addWidget(self.until, 2, 2)
        for col, stretch in enumerate((3, 2, 2, 2)):
            grid.setColumnStretch(col, stretch)

        self.count = QLabel(self)
        self.count.setTextFormat(Qt.TextFormat.RichText)
        # A fixed size: a new count must not re-lay out the whole left pane (and repaint every filter).
        self.count.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.count.setFixedHeight(self.count.fontMetrics().height() + 4)
        self.index_state = QLabel(self)
        theme.bind(self.index_state, lambda: self.index_state.setStyleSheet(f"color: {style.MUTED};"))
        self.index_state.setWordWrap(True)
        self.index_state.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.index_state.hide()

        self.tree = ResultsTree(self)
        t = self.tree
        t.setModel(model)
        # Only the Match column paints in Python: a delegate on every column cost ~60 us per cell (~15 ms a repaint).
        t.setItemDelegateForColumn(COL_MATCH, SnippetDelegate(t))
        t.setUniformRowHeights(True)
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        t.setAllColumnsShowFocus(True)
        t.setWordWrap(False)
        t.setTextElideMode(Qt.TextElideMode.ElideRight)
        t.setExpandsOnDoubleClick(False)
        h = t.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setSectionResizeMode(COL_MATCH, QHeaderView.ResizeMode.Stretch)
        for col, w in ((1, 130), (2, 150), (3, 120)):
            t.setColumnWidth(col, w)
        self.empty = QLabel(self)
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty.setContentsMargins(12, 12, 12, 12)
        theme.bind(self.empty, lambda: self.empty.setStyleSheet(f"color: {style.MUTED};"))
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.tree)
        self.stack.addWidget(self.empty)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(3)
        layout.addLayout(grid)
        layout.addWidget(self.count)
        layout.addWidget(self.index_state)
        layout.addWidget(self.stack, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.request_now)
        for edit in (self.field, self.project, self.tool):
            edit.textChanged.connect(self._changed)
            edit.returnPressed.connect(self._enter_in_field)
        for combo in (self.kind, self.status):
            combo.currentIndexChanged.connect(self._changed)
        for date in (self.since, self.until):
            date.dateChanged.connect(self._changed)
        t.clicked.connect(self._clicked)
        t.doubleClicked.connect(self._activate)
        t.enter_pressed.connect(self._activate)
        self.show_hint()

    def _date_edit(self, any_text: str) -> QDateEdit:
        d = QDateEdit(self)
        d.setCalendarPopup(True)
        d.setDisplayFormat("yyyy-MM-dd")
        d.setMinimumDate(QDate(2000, 1, 1))
        d.setSpecialValueText(any_text)  # shown at the minimum date: no bound
        d.setDate(d.minimumDate())
        d.setToolTip("Only hits from events of this date range (clear: set it back to the first date)")
        return d

    # ------------------------------------------------------------ asking

    def focus_field(self) -> None:
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def _changed(self, *_args: object) -> None:
        self._timer.start()

    def _enter_in_field(self) -> None:
        """Enter in the field: search now, or (results shown) go to the first hit."""
        if self._timer.isActive():
            self.request_now()
            return
        first = self.model.first_hit_index()
        if first.isValid():
            self.tree.setFocus(Qt.FocusReason.OtherFocusReason)
            self.tree.setCurrentIndex(first)
            self._activate(first)

    def request_now(self) -> None:
        self._timer.stop()
        self.search_requested.emit(self.field.text().strip(), self.filters())

    def filters(self) -> SearchFilters:
        kind = self.kind.currentData()
        status = self.status.currentData()
        return SearchFilters(
            project=self.project.text().strip() or None,
            kinds=frozenset({kind}) if kind else frozenset(),
            tool=self.tool.text().strip() or None,
            since=self._bound(self.since, 0),
            until=self._bound(self.until, 1),
            statuses=frozenset({status}) if status else frozenset(),
        )

    @staticmethod
    def _bound(edit: QDateEdit, days_after: int) -> int | None:
        """The start of the chosen local day (+ ``days_after``) in epoch ms; None when no date is set."""
        d = edit.date()
        if d == edit.minimumDate():
            return None
        day = _dt.datetime(d.year(), d.month(), d.day()) + _dt.timedelta(days=days_after)
        return int(day.timestamp() * 1000)

    # ------------------------------------------------------------ showing

    def show_hint(self) -> None:
        self.model.clear()
        self.count.setText("")
        self.empty.setText(EMPTY_HINT)
        self.stack.setCurrentWidget(self.empty)

    def show_result(self, result: SearchResult, filters: SearchFilters, index_note: str = "") -> None:
        """Show ``result``; the same query again (the index changed under it) keeps the chosen hit and the scroll."""
        previous = self.model.result
        kept: Hit | None = None
        scroll = 0
        if previous is not None and previous.query == result.query:
            kept = self.model.hit_at(self.tree.currentIndex())
            scroll = self.tree.verticalScrollBar().value()
        self.model.set_result(result)
        self._show_count(result)
        if result.hit_count == 0:
            lines = [_escape(result.empty_text(filters))]
            lines += [_escape(m) for m in result.messages]
            if index_note:
                lines.append(_escape(index_note))
            self.empty.setText("<br><br>".join(lines))
            self.stack.setCurrentWidget(self.empty)
            return
        self.stack.setCurrentWidget(self.tree)
        self.tree.expandAll()
        if previous is not None and previous.query == result.query:
            if kept is not None:
                idx = self.model.index_of_hit(kept.key, kept.seq)
                if idx.isValid():
                    self.tree.selectionModel().setCurrentIndex(
                        idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
                    )
            self.tree.verticalScrollBar().setValue(scroll)

    def show_counts(self, result: SearchResult) -> None:
        """The whole counts of the result shown (the second step of a query): the count line and each
        session's hit count change, the rows, the selection and the scroll stay."""
        if self.model.update_counts(result):
            self._show_count(result)

    def _show_count(self, result: SearchResult) -> None:
        shown = self.model.hit_count_shown()
        if not result.counted:
            self.count.setText(f"<b>{shown:,} hits</b> shown · counting all … · {result.elapsed_ms:.0f} ms")
        else:
            more = f" · showing {shown:,}" if shown < result.hit_count else ""
            self.count.setText(f"<b>{result.summary()}</b>{more} · {result.elapsed_ms:.0f} ms")
        self.count.setToolTip(f"query {result.query!r} · mode {result.mode}")

    def show_error(self, message: str) -> None:
        """A query that cannot run (a typo): say where, keep the last results out of the way."""
        self.model.clear()
        self.count.setText(f"<span style='color:{style.STATUS_COLORS['corrupt'][0]}'>{_escape(message)}</span>")
        self.empty.setText(f"Cannot search for {_escape(self.field.text())!s}: {_escape(message)}")
        self.stack.setCurrentWidget(self.empty)

    def set_index_state(self, text: str) -> None:
        self.index_state.setText(text)
        self.index_state.setVisible(bool(text))

    # ------------------------------------------------------------ activating

    def _clicked(self, index: QModelIndex) -> None:
        if self.model.hit_at(index) is not None:
            self._activate(index)

    def _activate(self, index: QModelIndex) -> None:
        hit: Hit | None = self.model.hit_at(index)
        if hit is not None:
            self.hit_activated.emit(hit)
            return
        group: SessionHits | None = self.model.group_at(index)
        if group is not None:
            self.session_activated.emit(group)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["DEBOUNCE_MS", "SearchPane", "SnippetDelegate"]
