"""The Conversation tab's list of blocks as a QAbstractListModel: the Qt adapter over ``app.conversation``.

Why it follows the timeline model instead of loading the session itself: the Timeline tab's model
already holds the tail-first fold (the newest turns first, older blocks on demand, live appends
merged by key, a damaged log's stop row).  This model turns exactly those top-level nodes into blocks,
so both tabs stand for the same events, open at the same tail and load older turns together ("Load
more" here asks the timeline model).  Blocks of a top-level node are rebuilt only when that node
changed (a live append re-derives the last turn, not the session).

Row 0 is an "older turns" row while the timeline has blocks above the loaded ones.  With
``errors_only`` the rows are the error blocks and the headers of the turns that hold them.

May import: PySide6, ``app.gui.style``/``theme``, ``models.timeline`` and ``app.conversation``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, QTimer

from app.conversation import Block, block_for_seq, conversation_blocks, is_error_block
from app.conversation.blocks import TURN
from app.gui.models.timeline import TimelineModel
from app.timeline import TimelineNode

Index = QModelIndex | QPersistentModelIndex
BLOCK_ROLE = Qt.ItemDataRole.UserRole + 1
OLDER = "older"  # the kind of the "older turns" row


def _signature(node: TimelineNode) -> tuple[Any, ...]:
    """What a top-level node's blocks depend on: a live merge changes one of these when it changes the node."""
    return tuple((n.key, n.info, n.flags, n.summary, len(n.seqs)) for n in node.walk())


class ConversationModel(QAbstractListModel):
    def __init__(self, timeline: TimelineModel, parent: Any = None) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self._all: list[Block] = []
        self._rows: list[Block] = []
        self._cache: dict[int, tuple[TimelineNode, tuple[Any, ...], list[Block]]] = {}
        self.errors_only = False
        self.expanded: set[tuple[Any, ...]] = set()  # blocks shown whole (a long result, reasoning)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.rebuild)
        timeline.modelReset.connect(self.rebuild)
        for sig in (timeline.rowsInserted, timeline.rowsRemoved, timeline.dataChanged, timeline.layoutChanged):
            sig.connect(self._schedule)

    # ------------------------------------------------------------ building

    def _schedule(self, *_args: Any) -> None:
        self._timer.start()

    def _top_nodes(self) -> list[TimelineNode]:
        tl = self.timeline
        out = []
        for row in range(tl.rowCount()):
            idx = tl.index(row, 0)
            if tl.is_sentinel(idx):
                continue
            node = tl.node(idx)
            if node is not None:
                out.append(node)
        return out

    def stale(self) -> bool:
        """The timeline changed and the rebuild has not run yet (it runs on the next event-loop turn)."""
        return self._timer.isActive()

    def rebuild(self) -> None:
        """Blocks for the timeline's loaded top-level nodes (a node's blocks are reused while it is unchanged)."""
        self._timer.stop()
        records = self.timeline.records
        cache: dict[int, tuple[TimelineNode, tuple[Any, ...], list[Block]]] = {}
        blocks: list[Block] = []
        for node in self._top_nodes():
            sig = _signature(node)
            hit = self._cache.get(id(node))
            if hit is not None and hit[0] is node and hit[1] == sig:
                made = hit[2]
            else:
                made = conversation_blocks([node], records)
            cache[id(node)] = (node, sig, made)
            blocks.extend(made)
        self._cache = cache
        self.beginResetModel()
        self._all = blocks
        self._rows = self._visible()
        self.endResetModel()

    def _visible(self) -> list[Block]:
        rows: list[Block] = []
        older = self.timeline.older_turns() if self.timeline.first_loaded_span > 0 else -1
        if older >= 0:
            label = f"▲ {older:,} older turn" + ("" if older == 1 else "s") if older > 0 else "▲ Older events"
            rows.append(Block(OLDER, ("older",), -1, (), label, meta="Load more · Load all"))
        if not self.errors_only:
            return rows + self._all
        turn: Block | None = None
        shown: Block | None = None  # the last turn header added
        for b in self._all:
            if b.kind == TURN:
                turn = b
            elif is_error_block(b):
                if turn is not None and turn is not shown:
                    rows.append(turn)
                    shown = turn
                rows.append(b)
        return rows

    def set_errors_only(self, on: bool) -> None:
        if on == self.errors_only:
            return
        self.errors_only = on
        self.beginResetModel()
        self._rows = self._visible()
        self.endResetModel()

    def toggle_expanded(self, row: int) -> None:
        block = self.block(row)
        if block is None:
            return
        self.expanded ^= {block.key}
        idx = self.index(row)
        self.dataChanged.emit(idx, idx)

    # ------------------------------------------------------------ reading

    @property
    def blocks(self) -> list[Block]:
        """Every block of the loaded turns (the filter does not apply)."""
        return self._all

    def block(self, row: int) -> Block | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def is_older(self, row: int) -> bool:
        b = self.block(row)
        return b is not None and b.kind == OLDER

    def row_for_seq(self, seq: int) -> int:
        """The row standing for event ``seq`` (-1: not among the rows shown)."""
        start = 1 if self._rows and self._rows[0].kind == OLDER else 0
        pos = block_for_seq(self._rows[start:], seq)
        return -1 if pos < 0 else pos + start

    def error_seqs(self) -> list[int]:
        """The seq each error block lands on, in order (loaded turns only)."""
        return [b.seq for b in self._all if is_error_block(b) and b.seq >= 0]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        block = self.block(index.row()) if index.isValid() else None
        if block is None:
            return None
        if role == BLOCK_ROLE:
            return block
        if role == Qt.ItemDataRole.DisplayRole:
            return block.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return block.note or block.meta or None
        return None


__all__ = ["BLOCK_ROLE", "OLDER", "ConversationModel"]
