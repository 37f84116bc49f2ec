"""Building blocks the action dialogs share: a status heading, a note, sized read-only monospace text.

May import: PySide6 and ``app.gui.style``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSizePolicy

from app.gui import style

WARN = "#9a5b00"  # the colour of a warning note (a liveness objection, records a repair would cut)


def heading(text: str, status: str) -> QLabel:
    fg, bg = style.STATUS_COLORS.get(status, ("#000", None))
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg or '#eef7f0'}; padding: 6px; border-radius: 3px; }}")
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    return label


def plain_text(text: str, max_rows: int = 12) -> QPlainTextEdit:
    """Read-only monospace text sized to its content (up to ``max_rows`` lines, then it scrolls)."""
    box = QPlainTextEdit()
    box.setReadOnly(True)
    box.setFont(style.mono_font())
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    box.setPlainText(text)
    rows = min(max_rows, text.count("\n") + 1)
    scrollbar = box.horizontalScrollBar().sizeHint().height()
    box.setFixedHeight(box.fontMetrics().lineSpacing() * rows + 2 * box.frameWidth() + 12 + scrollbar)
    return box


def note(text: str, color: str | None = None) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    if color:
        label.setStyleSheet(f"QLabel {{ color: {color}; }}")
    return label


__all__ = ["WARN", "heading", "note", "plain_text"]
