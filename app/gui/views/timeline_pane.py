"""The Timeline tab: a diagnosis banner, the turn tree, and the selected item's full text.

The tree opens at the tail; its first row, "N older turns", loads a screenful of older blocks at a
time (click, Enter, or scrolling to the top) or all of them ("Load all", Shift+Enter).  A live
session's new events scroll into view while the pin ("Follow") is on; when the user has scrolled up,
a "N new events" marker jumps to them (``follow_tail``).  A damaged log's partial timeline ends in a
red "Stopped here" row; activating it asks the window to show the damage in the Raw tab.

May import: PySide6, ``app.gui.style``, ``models.timeline``, ``views.follow_tail`` and ``app.timeline``.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QStyle,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.gui import style, theme
from app.gui.models.timeline import COLUMNS, SENTINEL_SEP, TimelineModel
from app.gui.views.follow_tail import FollowTail
from app.timeline import OLDER_EVENT_BUDGET, TimelineNode, node_detail

SEQ_DIGITS = 6  # the Seq column fits seq 999,999 unelided (issue 16; the 200k-event benchmark log has 6 digits)
COLUMN_WIDTHS = {"Item": 170, "Summary": 400, "Info": 220, "Time": 74}  # px; Seq is measured from the font
SUMMARY_MIN_PX = 180  # a narrow window shrinks Info (down to INFO_MIN_PX) before Summary gets less than this
INFO_MIN_PX = 90
COL_INFO = 2
LOAD_ALL_TICK_MS = 0  # "Load all" derives one budgeted step per event-loop turn, so the window stays live


class TimelineTree(QTreeView):
    """A tree that asks its model for older blocks, a screenful at a time, when the user reaches the top."""

    damage_activated = Signal()  # Enter or double-click on a damaged log's "Stopped here" row

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
        for col, name in enumerate(COLUMNS):
            self.setColumnWidth(col, COLUMN_WIDTHS.get(name, 0) or self.seq_column_width())
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self._info_set_by_user = False
        self._sizing_info = False
        h.sectionResized.connect(self._section_resized)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.clicked.connect(self._maybe_fetch)
        self.doubleClicked.connect(self._maybe_damage)
        self._press_x: int | None = None  # where the last click on the "older turns" row landed (viewport x)
        self._load_all_timer = QTimer(self)
        self._load_all_timer.setInterval(LOAD_ALL_TICK_MS)
        self._load_all_timer.timeout.connect(self._load_all_step)
        model.modelReset.connect(self._model_reset)

    def seq_column_width(self) -> int:
        """Wide enough for a 6-digit seq in the font the cells use, plus the cell's padding."""
        return (
            self.fontMetrics().horizontalAdvance("0" * SEQ_DIGITS)
            + 2 * self.style().pixelMetric(self.style().PixelMetric.PM_FocusFrameHMargin)
            + 16
        )

    def page_rows(self) -> int:
        """Top-level rows in one screenful of this view (one "load older" page)."""
        first = self.tl.index(0, 0)
        row_h = self.rowHeight(first) if first.isValid() else 0
        row_h = row_h or self.fontMetrics().height() + 6
        return max(1, self.viewport().height() // row_h)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        idx = self.currentIndex()
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and idx.isValid():
            if self.tl.is_sentinel(idx.siblingAtColumn(0)):
                if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    self.load_all()
                else:
                    self.fetch_older()
            elif self.tl.is_stop(idx.siblingAtColumn(0)):
                self.damage_activated.emit()
            else:
                self.setExpanded(idx.siblingAtColumn(0), not self.isExpanded(idx.siblingAtColumn(0)))
            return
        super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._sentinel_state()
        self._fit_info()

    def _fit_info(self) -> None:
        """Give Summary (the stretching column) at least ``SUMMARY_MIN_PX`` by narrowing Info, unless the
        user sized Info by hand: at 1100 px the fixed widths left Summary 35 px ("Sumr")."""
        if self._info_set_by_user:
            return
        others = sum(self.columnWidth(c) for c in range(len(COLUMNS)) if c not in (1, COL_INFO))
        room = self.viewport().width() - others - SUMMARY_MIN_PX
        want = max(INFO_MIN_PX, min(COLUMN_WIDTHS["Info"], room))
        if want != self.columnWidth(COL_INFO):
            self._sizing_info = True
            try:
                self.setColumnWidth(COL_INFO, want)
            finally:
                self._sizing_info = False

    def _section_resized(self, index: int, _old: int, _new: int) -> None:
        if index == COL_INFO and not self._sizing_info:
            self._info_set_by_user = True

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._press_x = int(event.position().x())  # read by ``_maybe_fetch`` (the clicked signal follows)
        super().mouseReleaseEvent(event)

    def _scrolled(self, value: int) -> None:
        if value == self.verticalScrollBar().minimum() and self.tl.first_loaded_span > 0 and self.tl.rowCount() > 1:
            # Defer: never change the model from inside a scroll notification.
            QTimer.singleShot(0, self.fetch_older)

    def _maybe_fetch(self, idx: QModelIndex) -> None:
        if self.tl.is_sentinel(idx.siblingAtColumn(0)):
            x, self._press_x = self._press_x, None
            if idx.column() == 1 and x is not None and self.sentinel_link_at(x) == "all":
                self.load_all()
            else:
                self.fetch_older()  # the "Load N more" link, or anywhere else on the row

    def sentinel_link_rect(self, link: str) -> QRect:
        """Where the "older turns" row's ``"more"`` or ``"all"`` link is painted (viewport coordinates)."""
        cell = self.visualRect(self.tl.index(0, 1))
        if not cell.isValid() or not self.tl.is_sentinel(self.tl.index(0, 0)):
            return QRect()
        fm = self.fontMetrics()
        more, _sep, rest = self.tl.sentinel_links().partition(SENTINEL_SEP)
        left = cell.left() + self.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1
        if link == "more":
            return QRect(left, cell.top(), fm.horizontalAdvance(more), cell.height())
        start = left + fm.horizontalAdvance(more + SENTINEL_SEP)
        return QRect(start, cell.top(), fm.horizontalAdvance(rest), cell.height())

    def sentinel_link_at(self, x: int) -> str:
        """Which link a click at viewport ``x`` on the row means: past the middle of the separator, "all"."""
        all_rect = self.sentinel_link_rect("all")
        more_rect = self.sentinel_link_rect("more")
        if all_rect.isValid() and x >= (more_rect.right() + all_rect.left()) // 2 and x <= all_rect.right():
            return "all"
        return "more"

    def _sentinel_state(self) -> None:
        self.tl.set_sentinel_state(self.page_rows(), self.loading_all)

    def _maybe_damage(self, idx: QModelIndex) -> None:
        if self.tl.is_stop(idx.siblingAtColumn(0)):
            self.damage_activated.emit()

    def fetch_older(self, rows: int | None = None) -> int:
        """Load a page of older blocks (``rows``; default a screenful), keeping the rows in view where they are."""
        sentinel = self.tl.index(0, 0)
        if not self.tl.canFetchMore(sentinel):
            return 0
        top = self.indexAt(QPoint(4, 4)).siblingAtColumn(0)
        if not top.isValid() or self.tl.is_sentinel(top):
            top = self.tl.index(1, 0)
        anchor = QPersistentModelIndex(top)
        added = self.tl.load_older(rows=self.page_rows() if rows is None else rows)
        if anchor.isValid():
            self.scrollTo(QModelIndex(anchor), QAbstractItemView.ScrollHint.PositionAtTop)
        return added

    def load_all(self) -> None:
        """Load every older block: at once when they are derived already (or few), else a budgeted
        step per event-loop turn (a 200k-event log folds for over a second in one go)."""
        if self.tl.first_loaded_span == 0:
            return
        if self.tl.underived_events() <= OLDER_EVENT_BUDGET:
            self._fetch_until(0)
            return
        self._load_all_timer.start()
        self._sentinel_state()

    @property
    def loading_all(self) -> bool:
        return self._load_all_timer.isActive()

    def _load_all_step(self) -> None:
        if self.tl.first_loaded_span > 0:
            self.fetch_older(rows=self.tl.first_loaded_span)  # the event budget cuts it to one step
        if self.tl.first_loaded_span == 0:
            self._load_all_timer.stop()
            self._sentinel_state()

    def _fetch_until(self, span: int) -> None:
        top = self.indexAt(QPoint(4, 4)).siblingAtColumn(0)
        if not top.isValid() or self.tl.is_sentinel(top):
            top = self.tl.index(1, 0)
        anchor = QPersistentModelIndex(top)
        self.tl.load_older(until_span=span)
        if anchor.isValid():
            self.scrollTo(QModelIndex(anchor), QAbstractItemView.ScrollHint.PositionAtTop)

    # ------------------------------------------------------------ the "N older turns" row's links

    def _model_reset(self) -> None:
        self._load_all_timer.stop()
        self._sentinel_state()
        stop = self.tl.rowCount() - 1
        if self.tl.stop_node is not None:
            # The "Stopped here" sentence is the row's whole point: give it the tree's whole width.
            self.setFirstColumnSpanned(stop, QModelIndex(), True)


class TimelinePane(QWidget):
    node_selected = Signal(object)  # TimelineNode
    fork_requested = Signal(int)  # turn number: "Fork here"
    damage_requested = Signal()  # the "Stopped here" row was activated: show the damage in the Raw tab

    def __init__(self, model: TimelineModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.banner = QLabel(self)
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.banner.setContentsMargins(6, 4, 6, 4)
        self._banner_status: str | None = None
        theme.bind(self.banner, self._banner_colours)  # the status colours of the theme in use
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
        self.follow = FollowTail(self.tree, model.grown, follow=self._follow_tail, parent=self)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(4)
        top.addWidget(self.banner, 1)
        # Right-aligned: with no banner (no session open) it would otherwise sit in the middle of the row.
        top.addWidget(self.follow.pin, 0, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignRight)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(split)
        self.tree.damage_activated.connect(self.damage_requested)
        self.tree.selectionModel().currentRowChanged.connect(self._current_changed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.last_menu: QMenu | None = None
        self._auto_key: tuple[object, ...] | None = None
        self._kept_seq: int | None = None
        self.set_banner("", None)

    # ------------------------------------------------------------ banner

    def _banner_colours(self) -> None:
        fg, bg = style.STATUS_COLORS.get(self._banner_status or "ok", style.STATUS_COLORS["ok"])
        self.banner.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg or theme.hex_of('banner.bg')}; border-radius: 3px; }}")

    def set_banner(self, text: str, status: str | None) -> None:
        if not text:
            self.banner.hide()
            return
        self._banner_status = status
        self._banner_colours()
        self.banner.setText(text)
        self.banner.show()

    # ------------------------------------------------------------ tail behaviour

    def _follow_tail(self) -> None:
        """Pinned and new events arrived: open the newest turn and its newest step, then go to the end."""
        m = self.model
        n = m.rowCount() - (1 if m.stop_node is not None else 0)
        last = m.index(n - 1, 0) if n > 0 else QModelIndex()
        if last.isValid() and (node := m.node(last)) is not None and node.kind == "turn":
            self.tree.expand(last)
            kids = m.rowCount(last)
            step = m.index(kids - 1, 0, last) if kids else QModelIndex()
            if step.isValid() and m.rowCount(step) and (s := m.node(step)) is not None and s.kind == "step":
                self.tree.expand(step)
        self.tree.scrollToBottom()

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
        if m.stop_node is not None and n > 1:
            n -= 1  # a damaged log: the last event row, with the red "Stopped here" row in view below it
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
        self.follow.set_pinned(True)

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
        if self.model.is_stop(current.siblingAtColumn(0)):
            self.detail.setPlainText(
                f"Stopped here: {node.summary}.\n\nThe rows above are the part of this log that decodes up to the "
                f"damage; nothing after it is folded into turns.\n{node.info}.\n\n"
                "Enter or double-click this row (or F8 anywhere) shows the damage marker in the Raw tab."
            )
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
