"""The session table of the left pane: Enter opens, Ctrl+C copies ids, Home/End go by rows, an empty-result text.

Why its own widget: QTableView's defaults fit a spreadsheet, not a list of whole-row selections
(Enter does nothing, Ctrl+C copies the current cell's text, End goes to the last column), and the
viewport has to say why a filtered list is empty.  ``benchmarks/bench_filter.py`` times its paints.

May import: PySide6, ``app.gui.style`` and ``models.sessions``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QKeySequence, QPainter, QPaintEvent
from PySide6.QtWidgets import QAbstractItemView, QTableView, QWidget

from app.gui import style
from app.gui.models.sessions import KEY_ROLE


class SessionTable(QTableView):
    activated_key = Signal(str)
    copy_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.placeholder: Callable[[], str] = lambda: ""  # what the viewport says when no row is shown

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            idx = self.currentIndex()
            if idx.isValid():
                self.activated_key.emit(idx.data(KEY_ROLE))
                return
        if event.matches(QKeySequence.StandardKey.Copy):
            # Qt's default copies the current cell's text (the Status column: "ok"): copy the ids instead.
            self.copy_requested.emit()
            event.accept()
            return
        super().keyPressEvent(event)

    def moveCursor(self, cursorAction: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier) -> QModelIndex:
        """Home / End (with or without Ctrl) go to the first / last row in the current column.

        QTableView sends End to the last column (Ctrl+End: the last row's last column), which scrolls the
        table sideways to "Created"; in a list of whole-row selections that is never what is meant.
        """
        home = QAbstractItemView.CursorAction.MoveHome
        end = QAbstractItemView.CursorAction.MoveEnd
        model = self.model()
        if cursorAction in (home, end) and model is not None:
            rows = model.rowCount()
            if rows == 0:
                return QModelIndex()
            cur = self.currentIndex()
            col = cur.column() if cur.isValid() else self.horizontalHeader().logicalIndex(0)
            return model.index(0 if cursorAction == home else rows - 1, col)
        return super().moveCursor(cursorAction, modifiers)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        text = self.placeholder()
        if not text:
            return
        p = QPainter(self.viewport())
        p.setPen(QColor(style.MUTED))
        area = self.viewport().rect().adjusted(16, 28, -16, -16)
        p.drawText(area, int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap), text)
        p.end()
