"""A visible focus indicator: the window's focused pane (a list, a tree, the raw lines, a text or a
field) gets a highlighted border, so the keyboard user always sees where a key press goes.

Why four thin strips and not a style sheet on ``:focus``: a style sheet on an item view switches its
painting to ``QStyleSheetStyle`` (every cell of the 10,000-row list and the timeline is then painted
through the style-sheet rules), and a ``:focus`` border of another width than the native frame moves
the viewport by a pixel on every focus change.  The strips are plain opaque child widgets laid over
the focused widget's own frame: nothing else is repainted, no Python paints anything (the colour is
the strips' background), and only the focused widget's resize moves them.

The colour is ``style.focus_color`` of the focused widget's palette (its highlight, or a fallback
with at least 3:1 contrast against its base), so it follows a light or dark theme.

May import: PySide6 and ``app.gui.style``.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from app.gui import style

RINGED = (QAbstractItemView, QPlainTextEdit, QTextEdit, QLineEdit)  # what a "pane" is: where keys go


class FocusRing(QObject):
    """Follows the application's focus inside ``window``; ``target`` is the ringed widget (or None)."""

    def __init__(self, window: QWidget, width_px: int = style.FOCUS_RING_WIDTH_PX) -> None:
        super().__init__(window)
        self.window = window
        self.width_px = width_px
        self.target: QWidget | None = None
        self.strips: list[QWidget] = []
        self._make_strips()
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_changed)  # Qt disconnects it when this object goes

    def _make_strips(self) -> None:
        self.strips = []
        for _ in range(4):  # top, bottom, left, right
            strip = QWidget(self.window)
            strip.setObjectName("focusRing")
            strip.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
            strip.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            strip.setAutoFillBackground(True)
            strip.hide()
            self.strips.append(strip)

    def wants(self, widget: QWidget | None) -> bool:
        """Whether ``widget`` is a pane of the window that gets the ring."""
        return isinstance(widget, RINGED) and widget.window() is self.window and widget.isVisible()

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if not shiboken6.isValid(self.window):
            return  # the window is being torn down: its widgets lose focus one by one
        self.follow(new if self.wants(new) else None)

    def follow(self, widget: QWidget | None) -> None:
        """Put the ring on ``widget`` (None: hide it)."""
        if widget is self.target:
            self._place()
            return
        if self.target is not None and shiboken6.isValid(self.target):
            self.target.removeEventFilter(self)
        self.target = widget
        if not all(shiboken6.isValid(s) for s in self.strips):
            self._make_strips()  # the last target was deleted, and its children (the strips) with it
        if widget is None:
            for s in self.strips:
                s.hide()
                s.setParent(self.window)  # not deleted with a widget that goes away later
            return
        widget.installEventFilter(self)
        color = style.focus_color(widget.palette())
        for s in self.strips:
            s.setParent(widget)
            pal = s.palette()
            pal.setColor(QPalette.ColorRole.Window, color)
            s.setPalette(pal)
        self._place()

    def _place(self) -> None:
        w = self.target
        if w is None:
            return
        r, t = w.rect(), self.width_px
        rects = (
            QRect(0, 0, r.width(), t),
            QRect(0, r.height() - t, r.width(), t),
            QRect(0, 0, t, r.height()),
            QRect(r.width() - t, 0, t, r.height()),
        )
        if all(s.geometry() == g and s.isVisible() for s, g in zip(self.strips, rects, strict=True)):
            return  # in place already: a raise would restack and repaint (every layout pass of the target)
        for s, g in zip(self.strips, rects, strict=True):
            s.setGeometry(g)
            s.show()
            s.raise_()  # above the viewport and the scroll bars

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.target:
            kind = event.type()
            if kind in (QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.LayoutRequest):
                self._place()
            elif kind == QEvent.Type.Hide:
                self.follow(None)
            elif kind == QEvent.Type.PaletteChange:
                target, self.target = self.target, None
                self.follow(target)  # the theme changed: take the new colour
        return False

    @property
    def visible(self) -> bool:
        return self.target is not None and all(s.isVisible() for s in self.strips)


__all__ = ["RINGED", "FocusRing"]
