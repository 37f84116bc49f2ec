"""The Timeline tab: a diagnosis banner, the turn tree, and the selected item's full text.

May import: PySide6, ``app.gui.style``, ``models.timeline`` and ``app.timeline``.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.gui import style
from app.gui.models.timeline import TimelineModel
from app.timeline import TimelineNode, node_detail


class TimelineTree(QTreeView):
    """A tree that asks its model for older blocks when the user reaches the top."""

    def __init__(self, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.tl = model
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(False)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setWordWrap(False)
        self.setAllColumnsShowFocus(True)
        h = self.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for col, w in enumerate((170, 400, 220, 52, 74)):
            self.setColumnWidth(col, w)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.clicked.connect(self._maybe_fetch)

    def pinned_to_tail(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 2

    def keyPressEvent(self, event: QKeyEvent) -> None:
        idx = self.currentIndex()
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and idx.isValid():
            if self.tl.is_sentinel(idx.siblingAtColumn(0)):
                self.fetch_older()
            else:
                self.setExpanded(idx.siblingAtColumn(0), not self.isExpanded(idx.siblingAtColumn(0)))
            return
        super().keyPressEvent(event)

    def _scrolled(self, value: int) -> None:
        if value == self.verticalScrollBar().minimum() and self.tl.first_loaded_span > 0 and self.tl.rowCount() > 1:
            # Defer: never change the model from inside a scroll notification.
            QTimer.singleShot(0, self.fetch_older)

    def _maybe_fetch(self, idx: QModelIndex) -> None:
        if self.tl.is_sentinel(idx.siblingAtColumn(0)):
            self.fetch_older()

    def fetch_older(self) -> None:
        sentinel = self.tl.index(0, 0)
        if not self.tl.canFetchMore(sentinel):
            return
        top = self.indexAt(QPoint(4, 4)).siblingAtColumn(0)
        if not top.isValid() or self.tl.is_sentinel(top):
            top = self.tl.index(1, 0)
        anchor = QPersistentModelIndex(top)
        self.tl.fetchMore(sentinel)
        if anchor.isValid():
            self.scrollTo(QModelIndex(anchor), QAbstractItemView.ScrollHint.PositionAtTop)


class TimelinePane(QWidget):
    node_selected = Signal(object)  # TimelineNode
    fork_requested = Signal(int)  # turn number: "Fork here"

    def __init__(self, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.banner = QLabel(self)
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.banner.setContentsMargins(6, 4, 6, 4)
        self.tree = TimelineTree(model, self)
        self.detail = QPlainTextEdit(self)
        self.detail.setReadOnly(True)
        self.detail.setFont(style.mono_font())
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.detail.setPlaceholderText("Select a timeline row to read it in full.")
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.tree)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([520, 200])
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.banner)
        layout.addWidget(split)
        self.tree.selectionModel().currentRowChanged.connect(self._current_changed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.last_menu: QMenu | None = None
        self._pinned = True
        self._auto_key: tuple[object, ...] | None = None
        self._kept_seq: int | None = None
        model.rowsAboutToBeInserted.connect(self._remember_pin)
        model.rowsInserted.connect(self._follow_tail)
        self.set_banner("", None)

    # ------------------------------------------------------------ banner

    def set_banner(self, text: str, status: str | None) -> None:
        if not text:
            self.banner.hide()
            return
        fg, bg = style.STATUS_COLORS.get(status or "ok", ("#1b7f3b", None))
        self.banner.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg or '#eef7f0'}; border-radius: 3px; }}")
        self.banner.setText(text)
        self.banner.show()

    # ------------------------------------------------------------ tail behaviour

    def _remember_pin(self, *_args: object) -> None:
        self._pinned = self.tree.pinned_to_tail()

    def _follow_tail(self, parent: QModelIndex, first: int, _last: int) -> None:
        if not self._pinned:
            return
        if not parent.isValid() and first == 0:
            return  # older blocks were prepended: not the tail
        QTimer.singleShot(0, self.tree.scrollToBottom)

    def keep_selection(self) -> None:
        """The rows are about to be rebuilt (a tail preview gives way to the full read): remember what the
        user chose, unless it is still the row ``show_tail`` picked."""
        node = self.current_node()
        self._kept_seq = None if node is None or node.key == self._auto_key else node.first_seq

    def show_tail_or_kept(self) -> None:
        seq, self._kept_seq = self._kept_seq, None
        if seq is not None and seq >= 0:
            idx = self.model.index_for_seq(seq)
            if idx.isValid():
                self.select_index(idx)
                return
        self.show_tail()

    def show_tail(self) -> None:
        """A freshly loaded session: expand the newest turn, select its last row, scroll to the end."""
        m = self.model
        n = m.rowCount()
        if n == 0:
            self.detail.clear()
            return
        last = m.index(n - 1, 0)
        self.tree.expand(last)
        for i in range(m.rowCount(last)):
            child = m.index(i, 0, last)
            if m.rowCount(child) and m.data(child, Qt.ItemDataRole.DisplayRole).startswith("Step"):
                self.tree.expand(child)
        target = last
        while m.rowCount(target) and self.tree.isExpanded(target):
            kids = [m.index(i, 0, target) for i in range(m.rowCount(target))]
            meaningful = [k for k in kids if (kid := m.node(k)) is not None and kid.kind not in ("usage", "request")]
            target = (meaningful or kids)[-1]
        self.tree.setCurrentIndex(target)
        node = m.node(target)
        self._auto_key = None if node is None else node.key
        self.tree.scrollToBottom()
        self._pinned = True

    def select_index(self, idx: QModelIndex) -> None:
        if not idx.isValid():
            return
        p = idx.parent()
        while p.isValid():
            self.tree.expand(p)
            p = p.parent()
        self.tree.setCurrentIndex(idx)
        self.tree.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)

    def _current_changed(self, current: QModelIndex, _prev: QModelIndex) -> None:
        node: TimelineNode | None = self.model.node(current)
        if node is None or node.kind == "sentinel":
            self.detail.clear()
            return
        self.detail.setPlainText(node_detail(node, self.model.records))
        self.node_selected.emit(node)

    def selected_turn(self) -> tuple[int, bool] | None:
        """(turn, completed) of the turn holding the current row."""
        return self.model.turn_info(self.tree.currentIndex())

    def fork_action_text(self) -> tuple[str, int | None]:
        """The "Fork here" entry for the current row: its text, and the turn it forks after (None: disabled)."""
        info = self.selected_turn()
        if info is None:
            return "Fork here (select a row inside a completed turn)", None
        turn, completed = info
        if not completed:
            return f"Fork here — turn {turn} has not completed", None
        return f"Fork here, after turn {turn} …", turn

    def _context_menu(self, pos: QPoint) -> None:
        idx = self.tree.indexAt(pos)
        if idx.isValid():
            self.tree.setCurrentIndex(idx)
        text, turn = self.fork_action_text()
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        act = menu.addAction(text)
        act.setEnabled(turn is not None)
        if turn is not None:
            act.triggered.connect(lambda _c=False, t=turn: self.fork_requested.emit(t))
        self.last_menu = menu
        menu.popup(self.tree.viewport().mapToGlobal(pos))

    def current_node(self) -> TimelineNode | None:
        return self.model.node(self.tree.currentIndex())
