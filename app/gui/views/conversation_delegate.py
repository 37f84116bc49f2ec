"""Paints a Conversation block: its header line (title, then duration, tokens or status), then its document.

Why a painting delegate (no web engine, no widget per block): a 202k-event session has thousands of
blocks; only the visible ones get a ``QTextDocument`` (built when first painted, the last
``DOC_CACHE`` = 160 kept), and rows not painted yet answer ``sizeHint`` from an estimate of their
lines, corrected once painted, so a layout of every row costs a table lookup per row.  Split out of
``views.conversation_pane`` (which keeps the list and its scrolling) when that file passed 600 lines.

Links inside a block are the block's own controls: "Copy" under a code block copies that block's
text (``copy:N``), "show all N lines" and "show reasoning" fold and unfold (``toggle:``).

May import: PySide6, ``app.gui.style``/``theme``, ``models.conversation``, ``views.conversation_html``
and ``app.conversation``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPointF, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QGuiApplication, QMouseEvent, QPainter, QTextDocument
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from app.conversation import COPY_SCHEME, RESULT_FOLD_LINES, Block, fold_lines, markdown_with_copy_links
from app.conversation.blocks import ANSWER, CLOSER, CONTEXT, DAMAGE_BLOCK, EVENT, PROMPT, REASONING, STEP, TOOL, TURN
from app.gui import style, theme
from app.gui.models.conversation import BLOCK_ROLE, OLDER, ConversationModel
from app.gui.views.conversation_html import MESSAGE_FOLD_LINES, TOGGLE, block_html, monospace_code

PAD = 6  # px around a block's content
INDENT = 18  # px an item of a turn is indented under the turn's header
DOC_CACHE = 160  # documents kept (about four screenfuls of blocks)
Index = QModelIndex | QPersistentModelIndex

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
            monospace_code(doc, self.mono)
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


__all__ = ["DOC_CACHE", "INDENT", "PAD", "BlockDelegate"]
