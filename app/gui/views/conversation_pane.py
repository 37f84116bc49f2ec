"""The Conversation tab: a session's turns to read — prompts, answers as Markdown, tool calls, errors.

Why a list view with a painting delegate (no web engine, no widget per block): a 202k-event session
has thousands of blocks; only the visible ones get a ``QTextDocument`` (built when first painted,
kept in a small cache), and rows not painted yet answer ``sizeHint`` from an estimate of their lines,
corrected once painted.  So the tab opens at its newest turns at once and scrolls smoothly.

Links inside a block are the block's own controls: "Copy" under a code block copies that block's
text (``copy:N``), "show all N lines" unfolds a long result and "show reasoning" opens reasoning
(``toggle:``); the "older turns" row loads more.  A selection names an event (``seq_selected``): the
window keeps the Timeline and Raw tabs on the same event.

May import: PySide6, ``app.gui.style``/``theme``, ``models.conversation`` and ``app.conversation``.
"""

from __future__ import annotations

import html
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPointF, QRect, QSignalBlocker, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.conversation import COPY_SCHEME, RESULT_FOLD_LINES, Block, fold_lines, markdown_with_copy_links
from app.conversation.blocks import ANSWER, CLOSER, CONTEXT, DAMAGE_BLOCK, EVENT, PROMPT, REASONING, STEP, TOOL, TURN
from app.gui import style, theme
from app.gui.models.conversation import BLOCK_ROLE, OLDER, ConversationModel

Index = QModelIndex | QPersistentModelIndex
TOGGLE = "toggle"  # a block's fold link: "show all N lines" / "show reasoning" / "hide"
PAD = 6  # px around a block's content
INDENT = 18  # px an item of a turn is indented under the turn's header
DOC_CACHE = 160  # documents kept (about four screenfuls of blocks)
MESSAGE_FOLD_LINES = 40  # lines of a prompt or context shown before "show all N lines"

# Header colour roles (app.gui.theme) per block kind.
_TITLE_ROLE = {
    TURN: "kind.turn",
    PROMPT: "role.user",
    CONTEXT: "kind.context",
    STEP: "kind.step",
    ANSWER: "role.assistant",
    REASONING: "role.reasoning",
    TOOL: "role.tool-call",
    EVENT: "role.meta",
    CLOSER: "flag.synthetic",
    OLDER: "link",
}


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _pre(text: str, color: str | None = None) -> str:
    """Monospace text as it is, its long lines wrapped (the list never scrolls sideways)."""
    colour = f" color:{color};" if color else ""
    return f'<pre style="white-space: pre-wrap;{colour}">{_esc(text)}</pre>'


def _fold_link(text: str, limit: int, expanded: bool, link: str) -> str:
    total = fold_lines(text, limit)[1]
    if total <= limit:
        return ""
    if expanded:
        return f'<p><a href="{TOGGLE}:">▴ show the first {limit} lines</a></p>'
    return f'<p><a href="{TOGGLE}:">▾ show all {total:,} lines</a> <span style="color:{link}">({total - limit:,} more)</span></p>'


def block_html(block: Block, expanded: bool) -> tuple[str, bool]:
    """The body of ``block`` as (text, is_markdown); Markdown for prompts and answers, HTML otherwise."""
    err = theme.hex_of("role.error")
    muted = theme.hex_of("text.muted")
    if block.kind == ANSWER:
        return markdown_with_copy_links(block.body)[0], True
    if block.kind == PROMPT:
        text = block.body if expanded else fold_lines(block.body, MESSAGE_FOLD_LINES)[0]
        more = fold_lines(block.body, MESSAGE_FOLD_LINES)[1] - MESSAGE_FOLD_LINES
        link = f"\n\n[▾ show all {more + MESSAGE_FOLD_LINES:,} lines]({TOGGLE}:)" if more > 0 and not expanded else ""
        return text + link, True
    parts: list[str] = []
    if block.kind == REASONING:
        lines = fold_lines(block.body, 1)[1]
        if expanded:
            parts.append(f'<p style="color:{muted}"><i>{_esc(block.body).replace(chr(10), "<br>")}</i></p>')
            parts.append(f'<p><a href="{TOGGLE}:">▴ hide reasoning</a></p>')
        else:
            count = f"{lines:,} line" + ("" if lines == 1 else "s")
            parts.append(f'<p><a href="{TOGGLE}:">▸ show reasoning</a> <span style="color:{muted}">({count})</span></p>')
        return "".join(parts), False
    if block.kind == CONTEXT:
        shown = block.body if expanded else fold_lines(block.body, RESULT_FOLD_LINES)[0]
        parts.append(_pre(shown, muted))
        parts.append(_fold_link(block.body, RESULT_FOLD_LINES, expanded, muted))
        return "".join(parts), False
    if block.kind == TOOL:
        if block.body:
            parts.append(_pre(block.body))
        if block.error:
            parts.append(f'<p style="color:{err}"><b>✗ {_esc(block.error)}</b></p>')
        if block.result:
            shown = block.result if expanded else fold_lines(block.result, RESULT_FOLD_LINES)[0]
            parts.append(_pre(shown, err if "error" in block.flags else None))
            parts.append(_fold_link(block.result, RESULT_FOLD_LINES, expanded, muted))
        if block.note:
            parts.append(f'<p style="color:{theme.hex_of("flag.synthetic")}"><i>{_esc(block.note)}</i></p>')
        return "".join(parts), False
    if block.body:
        parts.append(f"<p>{_esc(block.body)}</p>")
    if block.error:
        parts.append(f'<p style="color:{err}"><b>✗ {_esc(block.error)}</b></p>')
    if block.note:
        parts.append(f"<p><i>{_esc(block.note)}</i></p>")
    return "".join(parts), False


class BlockDelegate(QStyledItemDelegate):
    """Paints a block: its header line (title, then duration, tokens or status), then its document."""

    copied = Signal(str)  # the status line after a code block was copied

    def __init__(self, model: ConversationModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._docs: OrderedDict[tuple[Any, ...], QTextDocument] = OrderedDict()
        self._heights: dict[tuple[Any, ...], int] = {}  # painted blocks: their real heights
        self._guesses: dict[tuple[Any, ...], int] = {}  # the others: estimated once (a layout asks for every row)
        self._rows: dict[int, QSize] = {}  # row -> its size at ``_rows_width``
        self._rows_width = 0
        model.modelReset.connect(self.forget_rows)
        model.dataChanged.connect(self.forget_rows)
        model.rowsInserted.connect(self.forget_rows)
        model.rowsRemoved.connect(self.forget_rows)
        self._pending: QPersistentModelIndex | None = None  # a row whose height a paint corrected
        self._tell = QTimer(self)
        self._tell.setSingleShot(True)
        self._tell.setInterval(0)
        self._tell.timeout.connect(self._tell_sizes)
        self.mono = style.mono_font()
        self.bold = QFont()
        self.bold.setBold(True)

    # ------------------------------------------------------------ documents

    def _doc_key(self, block: Block, width: int) -> tuple[Any, ...]:
        return (block, width, block.key in self.model.expanded, theme.current())

    def document(self, block: Block, width: int) -> QTextDocument:
        key = self._doc_key(block, width)
        doc = self._docs.get(key)
        if doc is not None:
            self._docs.move_to_end(key)
            return doc
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultStyleSheet(f"pre {{ font-family: '{self.mono.family()}'; }} a {{ color: {theme.hex_of('link')}; }}")
        body, markdown = block_html(block, block.key in self.model.expanded)
        if markdown:
            doc.setMarkdown(body)
            _monospace_code(doc, self.mono)
        else:
            doc.setHtml(body)
        doc.setTextWidth(max(40, width))
        self._docs[key] = doc
        while len(self._docs) > DOC_CACHE:
            self._docs.popitem(last=False)
        return doc

    def trim(self, limit: int = 50_000) -> None:
        if len(self._guesses) + len(self._heights) > limit:
            self.clear()

    def clear(self) -> None:
        self._rows = {}
        self._docs.clear()
        self._heights.clear()
        self._guesses.clear()

    # ------------------------------------------------------------ geometry

    def _indent(self, block: Block) -> int:
        return 0 if block.kind in (TURN, OLDER, DAMAGE_BLOCK) else INDENT

    def _header_height(self, option: QStyleOptionViewItem) -> int:
        return QFontMetrics(option.font).height() + 4

    def _body_width(self, block: Block, width: int) -> int:
        return width - self._indent(block) - 2 * PAD

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        # A layout asks every row (thousands once every turn is loaded, again after each correction):
        # answered from a per-row table while the width holds, so a layout costs a lookup per row.
        row = index.row()
        width = option.rect.width()
        if not width:
            parent = self.parent()
            width = parent.viewport().width() if isinstance(parent, QListView) else 600
        width = max(200, width)
        if width != self._rows_width:
            self._rows_width = width
            self._rows = {}
        size = self._rows.get(row)
        if size is None:
            size = self._rows[row] = self._size(option, index, width)
        return size

    def forget_rows(self, *_args: object) -> None:
        """The rows changed (a rebuild, a block folded or unfolded): sizes are looked up again by block."""
        self._rows = {}

    def _size(self, option: QStyleOptionViewItem, index: Index, width: int) -> QSize:
        block: Block | None = index.data(BLOCK_ROLE)
        if block is None:
            return QSize(width, 20)
        header = self._header_height(option)
        if not _has_body(block):
            return QSize(width, header + PAD)
        key = self._doc_key(block, self._body_width(block, width))
        known = self._heights.get(key)
        if known is not None:
            return QSize(width, known)
        guess = self._guesses.get(key)
        if guess is None:
            guess = self._guesses[key] = header + 2 * PAD + self._estimate(block, self._body_width(block, width), option)
        return QSize(width, guess)

    def _estimate(self, block: Block, width: int, option: QStyleOptionViewItem) -> int:
        """Lines the body will take, counted without laying it out (corrected once it is painted)."""
        fm = QFontMetrics(option.font)
        per_line = max(10, width // max(1, fm.averageCharWidth()))
        expanded = block.key in self.model.expanded
        texts: list[str] = []
        if block.kind == REASONING:
            texts.append(block.body if expanded else "x")
        elif block.kind == TOOL:
            texts += [block.body, block.error, block.note, block.result if expanded else fold_lines(block.result)[0]]
            texts += ["x"] if fold_lines(block.result)[1] > RESULT_FOLD_LINES else []
        elif block.kind in (PROMPT, CONTEXT):
            texts.append(block.body if expanded else fold_lines(block.body, MESSAGE_FOLD_LINES)[0])
        else:
            texts += [block.body, block.error, block.note]
        lines = 0
        for t in texts:
            for line in t.split("\n") if t else []:
                lines += 1 + len(line) // per_line
        return max(1, lines) * (fm.lineSpacing() + 1) + (fm.lineSpacing() if block.kind == ANSWER else 0)

    def _doc_origin(self, block: Block, rect: QRect, option: QStyleOptionViewItem) -> QPointF:
        return QPointF(rect.left() + self._indent(block) + PAD, rect.top() + PAD + self._header_height(option))

    # ------------------------------------------------------------ painting

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        block: Block | None = index.data(BLOCK_ROLE)
        if block is None:
            return
        rect = option.rect
        palette = option.palette
        painter.save()
        bg = _background(block)
        if bg is not None:
            painter.fillRect(rect.adjusted(self._indent(block), 1, 0, -1), bg)
        if option.state & QStyle.StateFlag.State_Selected:
            hl = QColor(palette.highlight().color())
            hl.setAlpha(60)
            painter.fillRect(rect, hl)
            painter.fillRect(QRect(rect.left(), rect.top(), 3, rect.height()), palette.highlight().color())
        x = rect.left() + self._indent(block) + PAD
        header_h = self._header_height(option)
        title_font = QFont(option.font)
        title_font.setBold(block.kind not in (EVENT, OLDER))
        if block.kind == OLDER:
            title_font.setUnderline(True)
        painter.setFont(title_font)
        painter.setPen(_title_color(block, palette.text().color()))
        fm = QFontMetrics(title_font)
        title = fm.elidedText(block.title, Qt.TextElideMode.ElideRight, max(40, rect.width() // 2))
        painter.drawText(
            QRect(x, rect.top() + PAD // 2, fm.horizontalAdvance(title) + 2, header_h), Qt.AlignmentFlag.AlignVCenter, title
        )
        if block.meta:
            painter.setFont(option.font)
            meta_x = x + fm.horizontalAdvance(title) + 12
            meta_color = QColor("#ffffff") if block.kind == DAMAGE_BLOCK else _meta_color(block)
            painter.setPen(meta_color)
            mfm = QFontMetrics(option.font)
            meta = mfm.elidedText(block.meta, Qt.TextElideMode.ElideRight, max(20, rect.right() - meta_x - PAD))
            painter.drawText(
                QRect(meta_x, rect.top() + PAD // 2, rect.right() - meta_x, header_h), Qt.AlignmentFlag.AlignVCenter, meta
            )
        if _has_body(block):
            width = self._body_width(block, rect.width())
            doc = self.document(block, width)
            origin = self._doc_origin(block, rect, option)
            painter.translate(origin)
            if block.kind == DAMAGE_BLOCK:
                painter.setPen(QColor("#ffffff"))
            doc.drawContents(painter)
            height = int(doc.size().height()) + header_h + 2 * PAD
            key = self._doc_key(block, width)
            if self._heights.get(key) != height:
                self._heights[key] = height
                self._rows.pop(index.row(), None)
                self._size_changed(index)
        painter.restore()

    def _size_changed(self, index: Index) -> None:
        """A painted block is not as tall as estimated: one relayout for every correction of this paint."""
        self._pending = QPersistentModelIndex(index)
        self._tell.start()

    def _tell_sizes(self) -> None:
        # One signal is enough: the view lays out every row again, each answered from the tables.
        pending, self._pending = self._pending, None
        if pending is not None and pending.isValid():
            self.sizeHintChanged.emit(self.model.index(pending.row()))

    # ------------------------------------------------------------ links

    def anchor_at(self, index: Index, rect: QRect, option: QStyleOptionViewItem, pos: QPointF) -> str:
        block: Block | None = index.data(BLOCK_ROLE)
        if block is None or not _has_body(block):
            return ""
        doc = self.document(block, self._body_width(block, rect.width()))
        return doc.documentLayout().anchorAt(pos - self._doc_origin(block, rect, option))

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: Index) -> bool:
        if event.type() != QEvent.Type.MouseButtonRelease or not isinstance(event, QMouseEvent):
            return False
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        anchor = self.anchor_at(index, option.rect, option, event.position())
        return self.follow(index, anchor)

    def follow(self, index: Index, anchor: str) -> bool:
        """Act on a link of the block at ``index``: copy a code block, or fold/unfold it."""
        block: Block | None = index.data(BLOCK_ROLE)
        if block is None or not anchor:
            return False
        scheme, _, arg = anchor.partition(":")
        if scheme == COPY_SCHEME:
            codes = markdown_with_copy_links(block.body)[1]
            n = int(arg) if arg.isdigit() else -1
            if 0 <= n < len(codes):
                QGuiApplication.clipboard().setText(codes[n])
                lines = codes[n].count("\n") + 1
                self.copied.emit(f"Copied a code block ({lines:,} line{'s' if lines != 1 else ''})")
                return True
        if scheme == TOGGLE:
            self.model.toggle_expanded(index.row())
            return True
        return False


def _monospace_code(doc: QTextDocument, mono: QFont) -> None:
    """Markdown code (fenced and inline) in the monospace font (``setMarkdown`` marks it fixed-pitch only),
    and a fenced block on a band of its own, so it reads as code with its Copy link under it."""
    band = theme.color("header.section.bg")
    block = doc.begin()
    while block.isValid():
        if block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence):
            fmt = block.blockFormat()
            fmt.setBackground(band)
            QTextCursor(block).setBlockFormat(fmt)
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.charFormat().fontFixedPitch():
                cursor_fmt = frag.charFormat()
                cursor_fmt.setFontFamilies([mono.family()])
                cursor = QTextCursor(doc)
                cursor.setPosition(frag.position())
                cursor.setPosition(frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor)
                cursor.setCharFormat(cursor_fmt)
            it += 1
        block = block.next()


def _has_body(block: Block) -> bool:
    return block.kind not in (TURN, STEP, OLDER) and bool(block.body or block.result or block.error or block.note)


def _background(block: Block) -> QColor | None:
    if block.kind == TURN:
        return theme.color("timeline.turn.bg")
    if block.kind == DAMAGE_BLOCK:
        return theme.color("timeline.damage.bg")
    if "synthetic" in block.flags and block.kind in (CLOSER, TOOL):
        return theme.color("flag.synthetic.bg")
    if block.kind == CLOSER and block.flags & {"repaired", "open", "interrupted"}:
        return theme.color("flag.open.bg")
    if block.kind in (TOOL, EVENT, CLOSER) and "error" in block.flags:
        return theme.color("flag.error.bg")
    return None


def _title_color(block: Block, text: QColor) -> QColor:
    if block.kind == DAMAGE_BLOCK:
        return theme.color("timeline.damage")
    if "error" in block.flags and block.kind in (TOOL, EVENT, CLOSER):
        return theme.color("role.error")
    if block.kind == CLOSER and "synthetic" not in block.flags:
        return theme.color("flag.open")
    role = _TITLE_ROLE.get(block.kind)
    return theme.color(role) if role else text


def _meta_color(block: Block) -> QColor:
    if "error" in block.flags and block.kind in (TOOL, EVENT):
        return theme.color("role.error")
    return theme.color("text.muted")


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


__all__ = ["BlockDelegate", "ConversationList", "ConversationPane", "block_html"]
