"""Find inside the open session: the bar under the tabs ("7 of 41", previous / next, close) and the
delegate that paints matching timeline rows and raw lines on a highlight.

The bar only asks (``find_requested`` after a pause in typing, ``next_requested``,
``previous_requested``, ``closed``); which rows match is decided elsewhere and handed to
``MatchDelegate.set_matcher`` as a predicate, so a view's own model stays untouched.

May import: PySide6 and ``app.gui.style``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTextEdit,
    QToolButton,
    QWidget,
)

from app.gui import style, theme

DEBOUNCE_MS = 150  # the find runs this long after the last key
ROW_BG = "find.row.bg"  # theme role of a matching row (the current one is the selected row)
TEXT_BG = "find.text.bg"  # theme role of an occurrence inside the detail text (its text: "find.text")
MAX_TEXT_MARKS = 500  # occurrences highlighted in one detail pane (a huge line stays quick to mark)

Index = QModelIndex | QPersistentModelIndex


class MatchDelegate(QStyledItemDelegate):
    """The default painting, on ``ROW_BG`` where the matcher says the row matches."""

    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self._view = view
        self._matcher: Callable[[Index], bool] | None = None
        self._brush = theme.brush(ROW_BG)
        theme.bind(self, self._rebrush)

    def _rebrush(self) -> None:
        self._brush = theme.brush(ROW_BG)

    def set_matcher(self, matcher: Callable[[Index], bool] | None) -> None:
        self._matcher = matcher
        self._view.viewport().update()

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:
        super().initStyleOption(option, index)
        if self._matcher is not None and self._matcher(index):
            option.backgroundBrush = self._brush


class FindField(QLineEdit):
    """Enter: next, Shift+Enter: previous, Esc: close."""

    next_pressed = Signal()
    previous_pressed = Signal()
    escape_pressed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.previous_pressed.emit()
            else:
                self.next_pressed.emit()
            return
        if key == Qt.Key.Key_Escape:
            self.escape_pressed.emit()
            return
        super().keyPressEvent(event)


class FindBar(QWidget):
    find_requested = Signal(str)  # debounced; "" clears
    next_requested = Signal()
    previous_requested = Signal()
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel("Find in session:", self)
        self.field = FindField(self)
        self.field.setPlaceholderText("text in this session's timeline and raw lines  (Enter next, Shift+Enter previous)")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel(self)
        self.count.setMinimumWidth(110)
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.previous = QToolButton(self)
        self.previous.setText("▲")
        self.previous.setToolTip("Previous match (Shift+F3)")
        self.next = QToolButton(self)
        self.next.setText("▼")
        self.next.setToolTip("Next match (F3)")
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setSpacing(4)
        for w in (self.label, self.field, self.count, self.previous, self.next, self.close_button):
            layout.addWidget(w)
        layout.setStretch(1, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.request_now)
        self.field.textChanged.connect(lambda _t: self._timer.start())
        self.field.next_pressed.connect(self._next)
        self.field.previous_pressed.connect(self._previous)
        self.field.escape_pressed.connect(self.close_bar)
        self.next.clicked.connect(self._next)
        self.previous.clicked.connect(self._previous)
        self.close_button.clicked.connect(self.close_bar)
        self.hide()

    @property
    def text(self) -> str:
        return self.field.text()

    def open_bar(self) -> None:
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def close_bar(self) -> None:
        self._timer.stop()
        self.hide()
        self.closed.emit()

    def request_now(self) -> None:
        self._timer.stop()
        self.find_requested.emit(self.field.text())

    def _next(self) -> None:
        if self._timer.isActive():  # Enter right after typing: find first, then go
            self.request_now()
        self.next_requested.emit()

    def _previous(self) -> None:
        if self._timer.isActive():
            self.request_now()
        self.previous_requested.emit()

    def set_count(self, text: str, *, none: bool = False) -> None:
        self.count.setText(text)
        color = style.STATUS_COLORS["corrupt"][0] if none else ""
        self.count.setStyleSheet(f"color: {color};" if color else "")


def mark_text(edit: QPlainTextEdit, text: str, *, scroll: bool = True) -> int:
    """Highlight every occurrence of ``text`` (case-insensitive) in ``edit``; scroll to the first one.

    Returns how many were marked (at most ``MAX_TEXT_MARKS``).  An empty ``text`` clears the marks.
    """
    selections: list[QTextEdit.ExtraSelection] = []
    doc = edit.document()
    if text:
        fmt = QTextCharFormat()
        fmt.setBackground(theme.color(TEXT_BG))
        fmt.setForeground(theme.color("find.text"))
        cursor = QTextCursor(doc)
        while len(selections) < MAX_TEXT_MARKS:
            cursor = doc.find(text, cursor, QTextDocument.FindFlag(0))
            if cursor.isNull():
                break
            sel = QTextEdit.ExtraSelection()
            sel.cursor = cursor
            sel.format = fmt
            selections.append(sel)
    edit.setExtraSelections(selections)
    if scroll and selections:
        first = QTextCursor(selections[0].cursor)
        first.clearSelection()
        edit.setTextCursor(first)
        edit.centerCursor()
    return len(selections)


__all__ = ["DEBOUNCE_MS", "FindBar", "MatchDelegate", "mark_text"]
