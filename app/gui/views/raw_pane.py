"""The Raw tab, a log viewer: the decoded artifact as numbered lines with their file byte offset (and zstd
frame), and the selected line in full, as coloured JSON and as a tree.

Above the lines: what is shown, Go to (a line, an event seq or a file byte: ``app.rawview.goto``), Wrap,
"\\n" (show line breaks inside strings), "Go to damage" (F8 in the window; selects the first marker
line, where decoding first stopped) when the artifact has damage, and the follow-tail pin: a live
session's new lines scroll into view while it is on, and a "N new events" marker jumps to them when
the user has scrolled up (``follow_tail``).

Below them, in a splitter the user sizes: the record pretty-printed (orjson, coloured per line by
``app.rawview.json_tokens`` through a syntax highlighter) beside its tree (``models.json_tree_model``,
built as it is expanded) with Copy value / Copy path (JSONPath).  Nothing here walks a record
character by character in Python: a 200 KB tool result is printed by orjson, coloured by one regex
scan per line, and is one node of the tree.

May import: PySide6, ``app.gui.style``, ``app.gui.theme``, ``app.glossary``, ``models.raw_lines``,
``models.json_tree_model``, ``views.follow_tail`` and ``app.rawview``.
"""

from __future__ import annotations

import json

import orjson
from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QShowEvent,
    QTextCharFormat,
    QTextLayout,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app import glossary
from app.gui import style, theme
from app.gui.models.json_tree_model import JsonTreeModel
from app.gui.models.raw_lines import BYTE_COL, FRAME_COL, FULL_TEXT_ROLE, LINE_COL, TEXT_COL, RawLinesModel
from app.gui.views.follow_tail import FollowTail
from app.rawview.goto import BYTE, KINDS, LINE, SEQ, GoResult, GoTarget, parse_target, resolve
from app.rawview.json_tokens import ROLES, ends_in_string, fold_long_lines, render_newlines, tokenize_line
from app.rawview.json_tree import JsonTree

PRETTY_LIMIT = 400_000
GO_TO_DAMAGE_KEY = "F8"  # as "next problem" in common editors; the window's View menu holds the action
GO_TO_KEY = "Ctrl+J"  # "jump": Ctrl+G is Find in this session, Ctrl+L the session list
# Longer lines are shown in pieces: a text view lays a line out whole, and wrapping one 200 KB line took seconds.
FOLD_WIDTH = 2000
FOLDED_TIP = f"Lines longer than {FOLD_WIDTH:,} characters are shown in pieces; the tree's Copy value copies a value whole"
WRAP_MAX_LINES = 12  # a wrapped row grows to at most this many text lines (the detail pane shows the rest)


class JsonColourer(QObject):
    """Colours the detail pane's JSON from the theme's ``json.*`` roles, only the lines on screen.

    Not a QSyntaxHighlighter: that one is handed every line of a new text at once, and even a line it
    is told to skip costs a few Python calls (~25 µs; 130 ms for a record of 5,000 lines).  Here a new
    text costs nothing; when lines come into view (``updateRequest``: shown, scrolled, resized) each one
    not yet coloured is tokenized and its formats set on its layout, as the highlighter would.  Whether
    a line starts inside a string (only with line breaks shown or long lines folded) is followed from
    the top in plain Python (``ends_in_string``), as far as the lowest line shown.
    """

    def __init__(self, edit: QPlainTextEdit) -> None:
        super().__init__(edit)
        self._edit = edit
        self._lines: list[str] = []
        self._starts_in_string: list[bool] = [False]
        self._coloured: set[int] = set()
        self._formats: dict[str, QTextCharFormat] = {}
        self.window = (0, 0)  # the lines coloured last: first, last
        self.blocks_coloured = 0
        self._busy = False
        theme.bind(self, self._restyle)
        edit.updateRequest.connect(lambda _rect, _dy: self.colour_visible())

    def _restyle(self) -> None:
        for role in ROLES:
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(theme.hex_of(f"json.{role}")))
            self._formats[role] = fmt
        self._coloured.clear()
        self.colour_visible()

    def set_text(self, text: str) -> None:
        """Show ``text`` (uncoloured until its lines are on screen)."""
        self._lines = text.split("\n")
        self._starts_in_string = [False]
        self._coloured.clear()
        self._edit.setPlainText(text)
        self.colour_visible()

    def _in_string_at(self, line: int) -> bool:
        states, lines = self._starts_in_string, self._lines
        while len(states) <= line:
            i = len(states) - 1
            states.append(ends_in_string(lines[i], states[i]))
        return states[line]

    def colour_visible(self) -> None:
        """Colour the lines on screen that are not coloured yet."""
        if self._busy or not self._lines:
            return
        edit = self._edit
        block = edit.firstVisibleBlock()
        if not block.isValid():
            return
        first = block.blockNumber()
        rows = edit.viewport().height() // max(1, edit.fontMetrics().lineSpacing()) + 2
        self.window = (first, first + rows)
        doc = edit.document()
        self._busy = True  # marking a block dirty asks for an update, which calls back here
        try:
            for _ in range(rows):
                if not block.isValid():
                    break
                n = block.blockNumber()
                if n not in self._coloured and n < len(self._lines):
                    self._coloured.add(n)
                    self.blocks_coloured += 1
                    spans, _open = tokenize_line(self._lines[n], self._in_string_at(n))
                    ranges = []
                    for span in spans:
                        r = QTextLayout.FormatRange()
                        r.start, r.length, r.format = span.start, span.length, self._formats[span.role]
                        ranges.append(r)
                    block.layout().setFormats(ranges)
                    doc.markContentsDirty(block.position(), block.length())
                block = block.next()
        finally:
            self._busy = False


class ElidedLabel(QLabel):
    """A one-line label that paints its text elided to its width; ``text()`` stays the whole text (also the tooltip).

    Why: the Raw tab's summary sat beside the buttons with an ignored width, so they painted over its last
    words; a fixed width would push the buttons out of a 1024 px window instead.
    """

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:
        return QSize(40, super().minimumSizeHint().height())

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        self.style().drawItemText(painter, rect, int(align), self.palette(), self.isEnabled(), shown, self.foregroundRole())


class GoField(QLineEdit):
    """The go-to field: Esc closes the bar (before the window's Esc shortcut sees it)."""

    escape_pressed = Signal()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape:
            event.accept()  # the key comes here as a key press, not to the window's Esc
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.escape_pressed.emit()
            return
        super().keyPressEvent(event)


class RawPane(QWidget):
    line_selected = Signal(int)

    def __init__(self, model: RawLinesModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.info = ElidedLabel(self)
        self.info.setContentsMargins(6, 4, 6, 4)
        theme.bind(self.info, lambda: self.info.setStyleSheet(f"color: {theme.hex_of('text.muted')};"))
        # The label gives way to the buttons and paints itself elided (the full text is its tooltip).
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
        self._row_height = v.fontMetrics().height() + 4
        v.verticalHeader().setDefaultSectionSize(self._row_height)
        self._wrapped_row = -1
        self._columns_pending = True
        model.modelReset.connect(self._lay_out_columns)

        # The selected record: pretty JSON (coloured) beside its tree.
        self.detail = QPlainTextEdit(self)
        self.detail.setReadOnly(True)
        self.detail.setFont(style.mono_font())
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.detail.setPlaceholderText("Select a line to read it in full (pretty-printed).")
        self.highlighter = JsonColourer(self.detail)
        self.tree_model = JsonTreeModel(self)
        self.tree = QTreeView(self)
        self.tree.setModel(self.tree_model)
        self.tree.setUniformRowHeights(True)  # no per-row size asks: a 5,000-member array scrolls as fast as 5
        self.tree.header().setStretchLastSection(True)
        self.tree.setColumnWidth(0, 130)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._tree_menu)
        self.copy_value_button = QPushButton("Copy value", self)
        self.copy_value_button.setToolTip("Copy the selected member's value (a string's text as it is, else JSON)")
        self.copy_value_button.clicked.connect(self.copy_value)
        self.copy_path_button = QPushButton("Copy path", self)
        self.copy_path_button.setToolTip("Copy the selected member's JSONPath, like $.data.content[0].text")
        self.copy_path_button.clicked.connect(self.copy_path)
        self.path_label = QLabel(self)
        self.path_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tree.selectionModel().currentChanged.connect(self._tree_current_changed)
        tree_box = QWidget(self)
        tree_buttons = QHBoxLayout()
        tree_buttons.setContentsMargins(0, 0, 0, 0)
        tree_buttons.addWidget(self.path_label, 1)
        tree_buttons.addWidget(self.copy_path_button)
        tree_buttons.addWidget(self.copy_value_button)
        tree_layout = QVBoxLayout(tree_box)
        tree_layout.setContentsMargins(0, 0, 0, 0)
        tree_layout.setSpacing(2)
        tree_layout.addWidget(self.tree, 1)
        tree_layout.addLayout(tree_buttons)
        self.detail_split = QSplitter(Qt.Orientation.Horizontal, self)
        self.detail_split.addWidget(self.detail)
        self.detail_split.addWidget(tree_box)
        self.detail_split.setStretchFactor(0, 3)
        self.detail_split.setStretchFactor(1, 2)
        self.detail_split.setChildrenCollapsible(True)

        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(v)
        split.addWidget(self.detail_split)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([480, 300])
        self.splitter = split
        self.follow = FollowTail(v, model.grown, parent=self)

        # The bar: what is shown, then the tools.
        self.go_to_button = QToolButton(self)
        self.go_to_button.setText("Go to …")
        self.go_to_button.setToolTip(f"Go to a line, an event seq or a file byte ({GO_TO_KEY})")
        self.go_to_button.clicked.connect(self.open_go_to)
        self.wrap_button = QToolButton(self)
        self.wrap_button.setText("Wrap")
        self.wrap_button.setCheckable(True)
        self.wrap_button.setToolTip("Wrap long lines: the selected line in the list and the record below")
        self.wrap_button.toggled.connect(self.set_wrap)
        self.newlines_button = QToolButton(self)
        self.newlines_button.setText("\\n ⏎")
        self.newlines_button.setCheckable(True)
        self.newlines_button.setToolTip("Show \\n inside strings as line breaks (a tool's output reads as it was printed)")
        self.newlines_button.toggled.connect(self.set_show_newlines)
        self.damage_button = QPushButton(f"Go to damage ({GO_TO_DAMAGE_KEY})", self)
        self.damage_button.setToolTip("Select the first marker line: where decoding of the artifact first stopped")
        theme.bind(
            self.damage_button,
            lambda: self.damage_button.setStyleSheet(f"QPushButton {{ color: {theme.hex_of('status.corrupt')}; }}"),
        )
        self.damage_button.clicked.connect(self.go_to_damage)
        self.damage_button.hide()
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(4)
        top.addWidget(self.info, 1)
        for w in (self.go_to_button, self.wrap_button, self.newlines_button, self.damage_button, self.follow.pin):
            w.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
            top.addWidget(w)

        # The go-to bar (hidden until asked for).
        self.go_bar = QWidget(self)
        self.go_kind = QComboBox(self.go_bar)
        for kind in KINDS:
            self.go_kind.addItem(kind, kind)
        self.go_kind.setToolTip("What the number is: a line (as numbered here), an event seq or a file byte offset")
        self.go_edit = GoField(self.go_bar)
        self.go_edit.escape_pressed.connect(self.close_go_to)
        self.go_edit.setPlaceholderText("number, or: line 12 · seq 40 · byte 2465 · 0x9a1")
        self.go_edit.setClearButtonEnabled(True)
        self.go_edit.returnPressed.connect(self.go_to_typed)
        go_button = QPushButton("Go", self.go_bar)
        go_button.clicked.connect(self.go_to_typed)
        self.go_note = QLabel(self.go_bar)
        self.go_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        close = QToolButton(self.go_bar)
        close.setText("×")
        close.setToolTip("Close (Esc)")
        close.clicked.connect(self.close_go_to)
        go_layout = QHBoxLayout(self.go_bar)
        go_layout.setContentsMargins(4, 0, 4, 0)
        go_layout.setSpacing(4)
        go_layout.addWidget(QLabel("Go to", self.go_bar))
        go_layout.addWidget(self.go_kind)
        go_layout.addWidget(self.go_edit, 1)
        go_layout.addWidget(go_button)
        go_layout.addWidget(self.go_note, 2)
        go_layout.addWidget(close)
        self.go_bar.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.go_bar)
        layout.addWidget(split)
        v.selectionModel().currentRowChanged.connect(self._current_changed)
        self._pending_line = -1
        self._show_newlines = False
        self._pretty = ""
        model.modelReset.connect(lambda: setattr(self, "_pending_line", -1))
        model.modelReset.connect(lambda: setattr(self, "_wrapped_row", -1))
        model.damage_changed.connect(self._damage_changed)

    # ------------------------------------------------------------------ the bar

    def set_info(self, text: str) -> None:
        self.info.setText(text)

    def _lay_out_columns(self) -> None:
        """Line, Byte, Frame, then Text (the model keeps Text at column 1; the header moves it last).

        Only when the columns changed, and only while shown: sizing a hidden view's columns makes it
        compute its scroll range for a zero-height viewport, and a selection synced from the timeline
        then scrolls a long text (opened at its top) to the bottom.
        """
        if not self.view.isVisible():
            self._columns_pending = True
            return
        self._columns_pending = False
        n = self.model.columnCount()
        v, h = self.view, self.view.horizontalHeader()
        digits = v.fontMetrics().horizontalAdvance
        # Wide enough for this text with room to grow (a live log), no wider: at 1024 px the text needs the room.
        t = self.model.text
        last_offset = max((t.file_offset(i) for i in range(max(0, len(t) - 4), len(t))), default=0)
        widths = {
            LINE_COL: max(5, len(glossary.number(len(t))) + 1),
            BYTE_COL: max(7, len(glossary.number(max(0, last_offset))) + 2),
            FRAME_COL: max(6, len(glossary.number(len(t.frame_starts))) + 1),  # the header "Frame" fits
        }
        for col, width in widths.items():
            if col < n:
                h.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
                v.setColumnWidth(col, digits("0" * width) + 14)
        h.setSectionResizeMode(TEXT_COL, QHeaderView.ResizeMode.Stretch)
        if h.visualIndex(TEXT_COL) != n - 1:
            h.moveSection(h.visualIndex(TEXT_COL), n - 1)

    def _damage_changed(self) -> None:
        self.damage_button.setVisible(self.model.damage_line() >= 0)

    # ------------------------------------------------------------------ selection (stable API: the window and features use it)

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
        idx = self.model.index(line, TEXT_COL)
        self.view.selectionModel().setCurrentIndex(
            idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        if self.view.viewport().height() <= 0:
            # A view never shown has no height to centre in (its scroll range may still be counted, and the
            # line would land at the bottom): callers that want the line shown when the tab opens say so with
            # ``show_line``.  A view shown before keeps its height and scrolls while hidden, as it always did.
            return
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
            self.view.scrollTo(self.model.index(line, TEXT_COL), QAbstractItemView.ScrollHint.EnsureVisible)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._columns_pending:
            self._lay_out_columns()
        if self._pending_line >= 0:
            QTimer.singleShot(0, self._apply_pending)  # after the layout has given the view its size

    def current_line(self) -> int:
        idx = self.view.currentIndex()
        return idx.row() if idx.isValid() else -1

    def _current_changed(self, current: QModelIndex, _prev: QModelIndex) -> None:
        if not current.isValid():
            self.detail.clear()
            self._pretty = ""
            self.tree_model.set_tree(None)
            return
        text = self.model.data(current.siblingAtColumn(TEXT_COL), FULL_TEXT_ROLE) or ""
        self._pretty = pretty_line(text)
        self._show_detail()
        self.tree_model.set_tree(JsonTree.parse(text) if len(text) <= PRETTY_LIMIT else None)
        self.path_label.clear()
        self._fit_wrapped_row(current.row())
        self.line_selected.emit(current.row())

    # ------------------------------------------------------------------ go to

    def open_go_to(self) -> None:
        """Show the go-to bar with its text selected (Ctrl+J in the window)."""
        self.go_bar.show()
        self.go_note.clear()
        self.go_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.go_edit.selectAll()

    def close_go_to(self) -> None:
        self.go_bar.hide()
        self.view.setFocus(Qt.FocusReason.OtherFocusReason)

    def go_to(self, kind: str, value: int) -> GoResult:
        """Select the line that line number / event seq / file byte ``value`` names; the result says where."""
        result = resolve(self.model.text, GoTarget(kind, value))
        self._went(result)
        return result

    def go_to_typed(self) -> GoResult | None:
        target = parse_target(self.go_edit.text(), str(self.go_kind.currentData() or LINE))
        if target is None:
            self.go_note.setText("Type a number: a line, seq 40, byte 2465 or 0x9a1")
            return None
        if target.kind in (LINE, SEQ, BYTE):
            self.go_kind.setCurrentIndex(KINDS.index(target.kind))
        result = resolve(self.model.text, target)
        self._went(result)
        return result

    def _went(self, result: GoResult) -> None:
        self.go_note.setText(result.note)
        self.go_note.setToolTip(result.note)
        if result.line >= 0:
            self.follow.set_pinned(False)  # the user is reading there: new lines must not scroll it away
            self.select_line(result.line)
            if not self.isVisible():
                self.show_line(result.line)

    # ------------------------------------------------------------------ wrap and line breaks

    def set_wrap(self, on: bool) -> None:
        """Wrap long lines: the record below, and the selected line in the list (grown up to a few lines)."""
        if self.wrap_button.isChecked() != on:
            self.wrap_button.setChecked(on)  # toggled calls back here
            return
        self.view.setWordWrap(on)
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth if on else QPlainTextEdit.LineWrapMode.NoWrap)
        self._fit_wrapped_row(self.current_line())

    def wraps(self) -> bool:
        return self.wrap_button.isChecked()

    def _fit_wrapped_row(self, row: int) -> None:
        header = self.view.verticalHeader()
        old, self._wrapped_row = self._wrapped_row, -1
        if 0 <= old < self.model.rowCount():
            header.resizeSection(old, self._row_height)
        if not self.wraps() or not 0 <= row < self.model.rowCount():
            return
        text = str(self.model.data(self.model.index(row, TEXT_COL)) or "")
        width = max(40, self.view.columnWidth(TEXT_COL) - 8)
        fm = self.view.fontMetrics()
        limit = QRect(0, 0, width, fm.lineSpacing() * WRAP_MAX_LINES)
        rect = fm.boundingRect(limit, int(Qt.TextFlag.TextWrapAnywhere), text)
        height = min(rect.height(), fm.lineSpacing() * WRAP_MAX_LINES) + 4
        if height > self._row_height:
            header.resizeSection(row, height)
            self._wrapped_row = row

    def set_show_newlines(self, on: bool) -> None:
        """Show ``\\n`` inside strings as line breaks in the record below (the table keeps one line per record)."""
        if self.newlines_button.isChecked() != on:
            self.newlines_button.setChecked(on)
            return
        self._show_newlines = on
        if self._pretty:
            self._show_detail()

    def _show_detail(self) -> None:
        shown, folded = fold_long_lines(render_newlines(self._pretty) if self._show_newlines else self._pretty, FOLD_WIDTH)
        self.highlighter.set_text(shown)
        self.detail.setToolTip(FOLDED_TIP if folded else "")

    def shows_newlines(self) -> bool:
        return self._show_newlines

    # ------------------------------------------------------------------ the tree

    def _tree_current_changed(self, current: QModelIndex, _prev: QModelIndex) -> None:
        node = self.tree_model.node(current) if current.isValid() else None
        self.path_label.setText(node.path() if node is not None else "")

    def _selected_node_text(self, what: str) -> str | None:
        idx = self.tree.currentIndex()
        node = self.tree_model.node(idx) if idx.isValid() else self.tree_model.node(QModelIndex())
        if node is None:
            return None
        return node.path() if what == "path" else node.copy_text()

    def copy_path(self) -> str | None:
        """Put the selected member's JSONPath (``$`` for the record) on the clipboard; returns it."""
        text = self._selected_node_text("path")
        if text is not None:
            QGuiApplication.clipboard().setText(text)
        return text

    def copy_value(self) -> str | None:
        """Put the selected member's value on the clipboard (a string's text as is, else JSON); returns it."""
        text = self._selected_node_text("value")
        if text is not None:
            QGuiApplication.clipboard().setText(text)
        return text

    def _tree_menu(self, pos: QPoint) -> None:
        menu = QMenu(self.tree)
        menu.addAction("Copy value", self.copy_value)
        menu.addAction("Copy path", self.copy_path)
        menu.exec(self.tree.viewport().mapToGlobal(pos))


def pretty_line(text: str) -> str:
    """A JSON line indented (orjson: a 200 KB record in about a millisecond); other text as it is."""
    if len(text) > PRETTY_LIMIT:
        return text[:PRETTY_LIMIT] + f"\n… ({len(text) - PRETTY_LIMIT:,} more characters)"
    try:
        return orjson.dumps(orjson.loads(text), option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONDecodeError:
        pass
    try:  # what orjson refuses but JSON allows (an integer past 64 bits)
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text
