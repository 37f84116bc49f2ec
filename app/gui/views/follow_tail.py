"""Following a live session's tail in an item view: a pin, and a "N new events" jump when unpinned.

Why (issue 16): while another process appends to the open session, a reader at the bottom wants the
new events to scroll into view, and a reader who scrolled up to read something must not be yanked
away from it; they get a floating "N new events" button instead, which jumps to the tail and pins
the view again.

The pin is on by default when the view is at the bottom: every scroll the user makes re-decides it
(at the bottom: pinned; anywhere else: not), and the toolbar toggle sets it explicitly.  Scrolls this
class makes itself, and the clamping a shrinking model causes, decide nothing.  Until the user first
scrolls after a model reset the pin is "at the bottom or not", so a short log that fits the view
follows and a long one opened at its top does not.

The model says when events arrived (a ``grown(int)`` signal, emitted after its rows are in), so rows
prepended by "load older" are never counted as new.  Whether the view was following is taken just
before the first of those rows changes, while the scroll bar still measures the old content.

May import: PySide6 only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, SignalInstance
from PySide6.QtWidgets import QAbstractItemView, QPushButton, QToolButton, QWidget

from app.gui import theme

AT_BOTTOM_SLACK_PX = 2  # a view scrolling per pixel within this of its maximum is at the bottom (per item: 0 rows)
MARKER_MARGIN = 12  # px between the floating marker and the bottom edge of the viewport
PIN_TEXT = "⤓ Follow"
PIN_TIP = (
    "Follow the tail: new events of a live session scroll into view.\n"
    "On by itself when you scroll to the bottom, off when you scroll up."
)


def _marker_style() -> str:
    """The "new events" marker in the theme's colours (roles "marker", "marker.bg", "marker.hover.bg")."""
    fg, bg, hover = (theme.hex_of(r) for r in ("marker", "marker.bg", "marker.hover.bg"))
    return (
        f"QPushButton {{ background: {bg}; color: {fg}; border: none; border-radius: 12px; padding: 4px 14px;"
        f" font-weight: 600; }} QPushButton:hover {{ background: {hover}; }}"
    )


class FollowTail(QObject):
    """The pin and the "N new events" marker of one view (the owner places ``pin`` in its toolbar)."""

    def __init__(
        self,
        view: QAbstractItemView,
        grown: SignalInstance,
        *,
        follow: Callable[[], None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent or view)
        self.view = view
        self._follow = follow or view.scrollToBottom
        self._pinned: bool | None = None  # None: not decided since the last reset, "at the bottom" decides
        self._auto = False  # a scroll this class is making: it decides nothing
        self._was_pinned: bool | None = None  # taken before a change's first rows move (see the docstring)
        self._generation = 0  # bumped by a reset: a deferred stick to the tail of older content is void
        self.unseen = 0
        bar = view.verticalScrollBar()
        self._last_value = bar.value()
        self._last_max = bar.maximum()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
        grown.connect(self.events_arrived)
        model = view.model()
        if model is not None:
            model.modelReset.connect(self.reset)
            model.rowsAboutToBeInserted.connect(self._rows_about_to_change)
            model.rowsAboutToBeRemoved.connect(self._rows_about_to_change)

        self.pin = QToolButton(parent)
        self.pin.setText(PIN_TEXT)
        self.pin.setToolTip(PIN_TIP)
        self.pin.setCheckable(True)
        self.pin.setAutoRaise(True)
        self.pin.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.pin.toggled.connect(self._pin_toggled)

        self.marker = QPushButton(view)
        self.marker.setObjectName("newEventsMarker")
        theme.bind(self.marker, lambda: self.marker.setStyleSheet(_marker_style()))
        self.marker.setCursor(Qt.CursorShape.PointingHandCursor)
        self.marker.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a click must not take focus from the view
        self.marker.setToolTip("Jump to the new events and follow the tail again (scrolling to the end does too)")
        self.marker.clicked.connect(self.jump)
        self.marker.hide()
        view.installEventFilter(self)
        view.viewport().installEventFilter(self)  # its geometry is final when it gets its own resize event
        self._sync_pin()

    # ------------------------------------------------------------ state

    def at_bottom(self) -> bool:
        bar = self.view.verticalScrollBar()
        per_pixel = self.view.verticalScrollMode() == QAbstractItemView.ScrollMode.ScrollPerPixel
        return bar.value() >= bar.maximum() - (AT_BOTTOM_SLACK_PX if per_pixel else 0)

    @property
    def pinned(self) -> bool:
        return self.at_bottom() if self._pinned is None else self._pinned

    def reset(self) -> None:
        """A new model content: undecided again, nothing unseen."""
        self._pinned = None
        self._was_pinned = None
        self._generation += 1
        self._clear_unseen()
        self._sync_pin()

    def set_pinned(self, on: bool) -> None:
        """Pin (and go to the tail) or unpin, as the toggle does."""
        self._pinned = on
        self._was_pinned = None
        if on:
            self._go_to_tail()
            self._clear_unseen()
        self._sync_pin()

    def jump(self) -> None:
        """The marker: go to the new events, follow the tail again."""
        self.set_pinned(True)

    # ------------------------------------------------------------ events

    def events_arrived(self, count: int) -> None:
        """The model merged ``count`` new events: follow them, or count them for the marker."""
        was, self._was_pinned = self._was_pinned, None
        if count <= 0:
            return
        if self.pinned if was is None else was:
            self._go_to_tail()
            return
        self.unseen += count
        self.marker.setText(f"↓ {self.unseen:,} new event" + ("" if self.unseen == 1 else "s"))
        self.marker.adjustSize()
        self._place_marker()
        self.marker.show()
        self.marker.raise_()

    def _go_to_tail(self) -> None:
        self._auto = True
        try:
            self._follow()
        finally:
            self._auto = False
        bar = self.view.verticalScrollBar()
        self._last_value, self._last_max = bar.value(), bar.maximum()

    def _rows_about_to_change(self, *_args: object) -> None:
        if self._was_pinned is None:
            self._was_pinned = self.pinned

    def _range_changed(self, _lo: int, hi: int) -> None:
        self._last_max = hi
        if self._pinned is None:
            self._sync_pin()

    def _scrolled(self, value: int) -> None:
        bar = self.view.verticalScrollBar()
        # A value above the new maximum was clamped by a shrinking model, not moved by the user.
        clamped = self._last_value > bar.maximum() and value == bar.maximum()
        self._last_value = value
        if self._auto or clamped:
            return
        self._was_pinned = None
        self._pinned = self.at_bottom()
        if self._pinned:
            self._clear_unseen()
        self._sync_pin()

    def _pin_toggled(self, on: bool) -> None:
        if on != self.pinned:
            self.set_pinned(on)

    def _clear_unseen(self) -> None:
        self.unseen = 0
        self.marker.hide()

    def _sync_pin(self) -> None:
        if self.pin.isChecked() != self.pinned:
            self.pin.blockSignals(True)
            self.pin.setChecked(self.pinned)
            self.pin.blockSignals(False)

    def _place_marker(self) -> None:
        vp = self.view.viewport().geometry()  # in the view's coordinates (below the header)
        size = self.marker.sizeHint()
        self.marker.resize(size)
        self.marker.move(vp.x() + (vp.width() - size.width()) // 2, vp.bottom() - size.height() - MARKER_MARGIN)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Resize:
            return False
        if watched is self.view.viewport() and self.marker.isVisible():
            self._place_marker()
        if watched is self.view and self.pinned:
            # A following view stays at its tail when it is resized (the window, a splitter): Qt keeps
            # the top row instead.  After the view's own resize handling has measured the new range.
            gen = self._generation
            QTimer.singleShot(0, lambda: self._stick(gen))
        return False

    def _stick(self, generation: int) -> None:
        if self._pinned is False or generation != self._generation:  # unpinned, or other content since
            return
        self._auto = True
        try:
            self.view.scrollToBottom()  # not ``follow``: a resize must not open rows the user closed
        finally:
            self._auto = False


__all__ = ["AT_BOTTOM_SLACK_PX", "FollowTail"]
