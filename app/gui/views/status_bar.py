"""The window's status bar: transient messages in their own eliding label, never drawn under the counts.

Why: ``QStatusBar.showMessage`` paints the message across the whole bar, under the permanent widgets on
the right (the session counts), so a long message ("Created the search index … in /a/long/path") ran
into them.  Here the message is a label left of the permanent widgets that elides to the room there is
(the full text in its tooltip), and the labels of the bar give up width before the counts do.

May import: PySide6.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar, QStyle, QStyleOption, QWidget


class ElidedLabel(QLabel):
    """A one-line label that takes what room is left and elides its text there (``text()`` stays whole)."""

    def __init__(self, parent: QWidget | None = None, *, elide: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(parent)
        self._elide = elide
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    @property
    def full_text(self) -> str:
        return self.text()

    def shown_text(self) -> str:
        """What fits: the text, elided to the label's width."""
        return self.fontMetrics().elidedText(self.text(), self._elide, max(0, self.contentsRect().width()))

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text if self.fontMetrics().horizontalAdvance(text) > self.contentsRect().width() else "")

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def resizeEvent(self, event: object) -> None:
        self.setToolTip(self.text() if self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width() else "")

    def paintEvent(self, _event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        p.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), self.shown_text())
        p.end()


class MessageStatusBar(QStatusBar):
    """A status bar whose transient message shows in ``message_label`` (left of the permanent widgets)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message_label = ElidedLabel(self)
        # Permanent, so the bar does not hide it while the message shows; first, so it sits leftmost.
        self.addPermanentWidget(self.message_label, 1)
        self.message_label.hide()
        self.messageChanged.connect(self._show_message)

    def _show_message(self, text: str) -> None:
        self.message_label.setText(text)
        self.message_label.setVisible(bool(text))

    def paintEvent(self, _event: QPaintEvent) -> None:
        # The panel only: the message is the label's to show (QStatusBar would draw it across the bar).
        p = QPainter(self)
        opt = QStyleOption()
        opt.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, opt, p, self)
        p.end()


__all__ = ["ElidedLabel", "MessageStatusBar"]
