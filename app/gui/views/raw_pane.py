"""The Raw tab: the decoded artifact as numbered lines (virtualised), and the selected line in full.

Above the lines: what is shown, "Go to damage" (F8 in the window; selects the first marker line,
where decoding first stopped) when the artifact has damage, and the follow-tail pin: a live
session's new lines scroll into view while it is on, and a "N new events" marker jumps to them when
the user has scrolled up (``follow_tail``).

May import: PySide6, ``app.gui.style``, ``models.raw_lines`` and ``views.follow_tail``.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.gui import style
from app.gui.models.raw_lines import FULL_TEXT_ROLE, RawLinesModel
from app.gui.views.follow_tail import FollowTail

PRETTY_LIMIT = 400_000
LINE_DIGITS = 7  # the Line column fits line 9,999,999 unelided
GO_TO_DAMAGE_KEY = "F8"  # as "next problem" in common editors; the window's View menu holds the action


class RawPane(QWidget):
    line_selected = Signal(int)

    def __init__(self, model: RawLinesModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.info = QLabel(self)
        self.info.setContentsMargins(6, 4, 6, 4)
        self.info.setStyleSheet(f"color: {style.MUTED};")
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.view = QTableView(self)
        v = self.view
        v.setModel(model)
        v.setFont(style.mono_font())
        v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        v.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        v.setWordWrap(False)
        v.setShowGrid(False)
        v.setTextElideMode(Qt.TextElideMode.ElideRight)
        v.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        v.verticalHeader().setVisible(False)
        v.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        v.verticalHeader().setDefaultSectionSize(v.fontMetrics().height() + 4)
        h = v.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        v.setColumnWidth(0, v.fontMetrics().horizontalAdvance("0" * LINE_DIGITS) + 12)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.detail = QPlainTextEdit(self)
        self.detail.setReadOnly(True)
        self.detail.setFont(style.mono_font())
        self.detail.setPlaceholderText("Select a line to read it in full (pretty-printed).")
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(v)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([540, 180])
        self.splitter = split
        self.follow = FollowTail(v, model.grown, parent=self)
        self.damage_button = QPushButton(f"Go to damage ({GO_TO_DAMAGE_KEY})", self)
        self.damage_button.setToolTip("Select the first marker line: where decoding of the artifact first stopped")
        self.damage_button.setStyleSheet(f"QPushButton {{ color: {style.STATUS_COLORS['corrupt'][0]}; }}")
        self.damage_button.clicked.connect(self.go_to_damage)
        self.damage_button.hide()
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(4)
        top.addWidget(self.info, 1)
        top.addWidget(self.damage_button)
        top.addWidget(self.follow.pin)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(split)
        v.selectionModel().currentRowChanged.connect(self._current_changed)
        self._pending_line = -1
        model.modelReset.connect(lambda: setattr(self, "_pending_line", -1))
        model.damage_changed.connect(self._damage_changed)

    def set_info(self, text: str) -> None:
        self.info.setText(text)

    def _damage_changed(self) -> None:
        self.damage_button.setVisible(self.model.damage_line() >= 0)

    def go_to_damage(self) -> bool:
        """Select the first damage marker line (where decoding first stopped); False when there is none."""
        line = self.model.damage_line()
        if line < 0:
            return False
        self.follow.set_pinned(False)  # the user is reading the damage: new lines must not scroll it away
        self.select_line(line)
        if not self.isVisible():
            self.show_line(line)  # scrolled again once the tab is shown and laid out
        self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return True

    def select_line(self, line: int, *, center: bool = True) -> None:
        if not 0 <= line < self.model.rowCount():
            return
        idx = self.model.index(line, 1)
        self.view.selectionModel().setCurrentIndex(
            idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.view.scrollTo(
            idx, QAbstractItemView.ScrollHint.PositionAtCenter if center else QAbstractItemView.ScrollHint.EnsureVisible
        )

    def show_line(self, line: int) -> None:
        """Scroll ``line`` into view without selecting it (now, or when the tab is next shown)."""
        self._pending_line = line
        if self.isVisible():
            self._apply_pending()

    def _apply_pending(self) -> None:
        line, self._pending_line = self._pending_line, -1
        if 0 <= line < self.model.rowCount():
            self.view.scrollTo(self.model.index(line, 1), QAbstractItemView.ScrollHint.EnsureVisible)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._pending_line >= 0:
            QTimer.singleShot(0, self._apply_pending)  # after the layout has given the view its size

    def current_line(self) -> int:
        idx = self.view.currentIndex()
        return idx.row() if idx.isValid() else -1

    def _current_changed(self, current: QModelIndex, _prev: QModelIndex) -> None:
        if not current.isValid():
            self.detail.clear()
            return
        text = self.model.data(current.siblingAtColumn(1), FULL_TEXT_ROLE) or ""
        self.detail.setPlainText(pretty_line(text))
        self.line_selected.emit(current.row())


def pretty_line(text: str) -> str:
    if len(text) > PRETTY_LIMIT:
        return text[:PRETTY_LIMIT] + f"\n… ({len(text) - PRETTY_LIMIT:,} more characters)"
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text
