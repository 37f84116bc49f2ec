"""Building blocks the action dialogs share: a status heading, a note, sized read-only monospace text.

May import: PySide6 and ``app.gui.style``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSizePolicy

from app.gui import style, theme

WARN = "warn"  # theme role of a warning note (a liveness objection, records a repair would cut)


def heading(text: str, status: str) -> QLabel:
    fg, bg = style.STATUS_COLORS.get(status, (theme.hex_of("status.ok"), None))
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    bg = bg or theme.hex_of("banner.bg")
    label.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg}; padding: 6px; border-radius: 3px; }}")
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
    if color:  # a theme role (``WARN``) or a colour
        label.setStyleSheet(f"QLabel {{ color: {theme.hex_of(color) if theme.has(color) else color}; }}")
    return label


__all__ = ["WARN", "heading", "note", "plain_text"]
