"""The Conversation tab: a session's turns to read — prompts, answers as Markdown, tool calls, errors.

Why a list of painted rows: a 202k-event session has thousands of blocks; ``views.conversation_delegate``
paints only the visible ones and answers every other row's height from an estimate, corrected once
painted.  So the tab opens at its newest turns at once and scrolls smoothly; this module keeps the
user's place while those corrections move rows (``ConversationList.keep``) and across a rebuild
(``ConversationPane.restore_place``).  What a block says is ``views.conversation_html``.

The "older turns" row loads more.  A selection names an event (``seq_selected``): the window keeps
the Timeline and Raw tabs on the same event.

May import: PySide6, ``app.gui.theme``, ``models.conversation``, ``views.conversation_delegate`` and
``app.conversation``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QMouseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.conversation import Block
from app.gui import theme
from app.gui.models.conversation import ConversationModel
from app.gui.views.conversation_delegate import BlockDelegate


class ConversationList(QListView):
    """The list of blocks: per-pixel scrolling, rows of their own heights, links handled by the delegate."""

    def __init__(self, model: ConversationModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        # One pass: "go to this block" must know where every row above it is (sizeHint is an estimate, cheap).
        self.setLayoutMode(QListView.LayoutMode.SinglePass)
        self.setUniformItemSizes(False)
        self.setWordWrap(True)
        self.setMouseTracking(True)
        self.verticalScrollBar().setSingleStep(24)
        # The row to keep in view while painted rows correct their estimated heights (None: the user scrolled).
        self.kept: QPersistentModelIndex | None = None
        self._bottom = False
        self._again = QTimer(self)
        self._again.setSingleShot(True)
        self._again.setInterval(0)
        self._again.timeout.connect(self._scroll_again)
        self.verticalScrollBar().sliderPressed.connect(self.forget_place)

    def keep(self, idx: QModelIndex, *, bottom: bool = False) -> None:
        """Show ``idx`` (or the end) and keep showing it while rows above it learn their real heights."""
        self.kept = QPersistentModelIndex(idx) if idx.isValid() else None
        self._bottom = bottom
        self._scroll_again()

    def at_bottom_kept(self) -> bool:
        return self._bottom

    def forget_place(self) -> None:
        self.kept = None
        self._bottom = False

    def heights_changed(self) -> None:
        if self.kept is not None or self._bottom:
            self._again.start()

    def _scroll_again(self) -> None:
        if self._bottom:
            self.scrollToBottom()
        elif self.kept is not None and self.kept.isValid():
            self.scrollTo(self.model().index(self.kept.row(), 0), QAbstractItemView.ScrollHint.PositionAtCenter)

    def wheelEvent(self, event: Any) -> None:
        self.forget_place()
        super().wheelEvent(event)

    def keyPressEvent(self, event: Any) -> None:
        self.forget_place()
        super().keyPressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        idx = self.indexAt(event.position().toPoint())
        delegate = self.itemDelegate()
        anchor = ""
        if idx.isValid() and isinstance(delegate, BlockDelegate):
            opt = QStyleOptionViewItem()
            self.initViewItemOption(opt)
            anchor = delegate.anchor_at(idx, self.visualRect(idx), opt, event.position())
        self.viewport().setCursor(Qt.CursorShape.PointingHandCursor if anchor else Qt.CursorShape.ArrowCursor)
        super().mouseMoveEvent(event)


class ConversationPane(QWidget):
    seq_selected = Signal(int)  # the event the selected block stands for
    older_requested = Signal(bool)  # the "older turns" row was activated (True: load all)
    status = Signal(str)  # a message for the status bar (a code block copied)

    def __init__(self, model: ConversationModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.errors_only = QCheckBox("Errors only", self)
        self.errors_only.setToolTip("Show only failed tool calls, failed attempts and error turn ends (and their turns)")
        self.hint = QLabel("Links in a block copy code, unfold long results and open reasoning", self)
        self.hint.setForegroundRole(self.hint.foregroundRole())
        self.list = ConversationList(model, self)
        self.delegate = BlockDelegate(model, self.list)
        self.list.setItemDelegate(self.delegate)
        self.delegate.copied.connect(self.status)
        self.delegate.sizeHintChanged.connect(lambda _i: self.list.heights_changed())
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 0)
        top.addWidget(self.errors_only)
        top.addStretch(1)
        top.addWidget(self.hint)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        self._anchor: tuple[tuple[Any, ...], int] | None = None  # (block key, its top in the viewport) across a rebuild
        model.modelAboutToBeReset.connect(self._before_reset)
        self.list.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.errors_only.toggled.connect(self._errors_only)
        self.list.selectionModel().currentRowChanged.connect(self._current_changed)
        self.list.activated.connect(self._activated)
        self.list.clicked.connect(self._clicked)
        model.modelReset.connect(self._reset)
        theme.bind(self, self._theme_changed)

    def _theme_changed(self) -> None:
        self.delegate.clear()
        self.list.viewport().update()

    def _errors_only(self, on: bool) -> None:
        seq = self.current_seq()
        self.model.set_errors_only(on)
        if seq is not None:
            self.select_seq(seq)

    def _before_reset(self) -> None:
        """Where the user is, when they scrolled there themselves: the top visible block and its offset."""
        self._anchor = None
        if self.list.kept is not None or self.list.at_bottom_kept():
            return
        top = self.list.indexAt(self.list.viewport().rect().topLeft())
        if top.isValid() and self.model.is_older(top.row()):
            top = self.model.index(top.row() + 1)  # the "older turns" row is replaced: anchor on what is under it
        block = self.model.block(top.row()) if top.isValid() else None
        if block is not None:
            self._anchor = (block.key, self.list.visualRect(top).top())

    def _reset(self) -> None:
        # Sizes and documents are keyed by the block's value: an unchanged block keeps them across a
        # rebuild (a live append re-derives only the last turn); the tables are emptied only when large.
        self.delegate.trim()

    def restore_place(self, seq: int | None) -> None:
        """After a rebuild: select ``seq`` again (no signal), and show the same blocks as before."""
        anchor, self._anchor = self._anchor, None
        if seq is not None:
            row = self.model.row_for_seq(seq)
            if row >= 0:
                blocker = QSignalBlocker(self.list.selectionModel())
                self.list.setCurrentIndex(self.model.index(row))
                del blocker
        if anchor is not None:
            row = next((i for i in range(self.model.rowCount()) if self.model.block(i).key == anchor[0]), -1)  # type: ignore[union-attr]  # i < rowCount
            if row >= 0:
                self.list.scrollTo(self.model.index(row), QAbstractItemView.ScrollHint.PositionAtTop)
                bar = self.list.verticalScrollBar()
                bar.setValue(bar.value() - anchor[1])
                return
        current = self.list.currentIndex()
        if current.isValid():
            self.list.keep(current, bottom=current.row() == self.model.rowCount() - 1)

    def _scrolled(self, value: int) -> None:
        """Scrolled to the top by the user: the "older turns" row loads a page, as the timeline does."""
        if value == 0 and self.model.is_older(0) and self.list.kept is None and not self.list.at_bottom_kept():
            QTimer.singleShot(0, lambda: self.older_requested.emit(False))

    def _current_changed(self, current: QModelIndex, _prev: QModelIndex) -> None:
        block = self.model.block(current.row())
        if block is not None and block.seq >= 0:
            self.seq_selected.emit(block.seq)

    def _clicked(self, idx: QModelIndex) -> None:
        if self.model.is_older(idx.row()):
            self.older_requested.emit(False)

    def _activated(self, idx: QModelIndex) -> None:
        if self.model.is_older(idx.row()):
            shift = bool(QGuiApplication.keyboardModifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.older_requested.emit(shift)

    def current_seq(self) -> int | None:
        block = self.model.block(self.list.currentIndex().row())
        return None if block is None or block.seq < 0 else block.seq

    def current_block(self) -> Block | None:
        return self.model.block(self.list.currentIndex().row())

    def select_seq(self, seq: int) -> bool:
        """Select (and scroll to) the block standing for event ``seq``; False when no row stands for it."""
        row = self.model.row_for_seq(seq)
        if row < 0:
            return False
        idx = self.model.index(row)
        if self.list.currentIndex() != idx:
            self.list.setCurrentIndex(idx)
        self.list.keep(idx, bottom=row == self.model.rowCount() - 1)
        return True

    def show_tail(self) -> None:
        if self.model.rowCount():
            self.list.keep(QModelIndex(), bottom=True)


__all__ = ["ConversationList", "ConversationPane"]
