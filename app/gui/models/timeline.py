"""The timeline tree (turn → step → item) as a lazy QAbstractItemModel: the Qt adapter over ``app.timeline``.

It opens at the tail: only the newest blocks are rows at first, and a "N older turns" row at the top
asks for more through ``canFetchMore``/``fetchMore`` on that row (the view calls it when the user
scrolls to the top or activates the row): a page of about a screenful of blocks at a time
(``load_older(rows=…)``), or all of them.  Older blocks come from the background full index when it
is ready, or are derived on demand.  Appends to the open session are merged into the rows by node
key, so expanded rows, the selection and the scroll position survive a refresh; ``grown`` then says
how many events arrived (a view that is not following the tail offers to jump to them).

A log the engine refuses can still show its decodable prefix (``app.timeline.damaged``): its last
row is then a red "Stopped here" row saying what stopped it (``stop``).

The nodes, the fold and the span arithmetic are Qt-free (``app.timeline``); this module only keeps
which blocks are rows and translates changes into ``beginInsertRows``/``dataChanged`` and friends.

May import: PySide6, ``app.gui.style``, ``models.one_call_per_cell``, ``models.columns`` and ``app.timeline``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFont

from app.glossary import OPEN_TURN_INFO
from app.gui import style, theme
from app.gui.models.columns import column_header, read_only_flags
from app.gui.models.one_call_per_cell import OneCallPerCell
from app.timeline import (
    OPEN,
    SYNTHETIC,
    TimelineNode,
    derive,
    older_label,
    older_start,
    older_turns,
    page_start,
    span_containing,
)
from app.timeline.damaged import DAMAGE, Stop, stop_node

Index = QModelIndex | QPersistentModelIndex

COLUMNS = ("Item", "Summary", "Info", "Seq", "Time")
NODE_ROLE = Qt.ItemDataRole.UserRole + 1
SEQ_ROLE = Qt.ItemDataRole.UserRole + 2

_FLAG_TIPS = {
    "error": "an error (tool error, failed attempt or error turn end)",
    "synthetic": "synthetic crash closer added in memory by inspect(); it is NOT on disk",
    "repaired": "crash repair: the harness recorded no outcome for this call/turn",
    "interrupted": "the turn ended with reason 'interrupted' (only crash repair writes that)",
    "open": OPEN_TURN_INFO,
    "cancelled": "cancelled mid-stream",
    "human": "direct human prompt",
    "seed": "end of the constructor seed: events above were inherited",
    "pruned": "model-only surface replacement (the human transcript keeps the original)",
    DAMAGE: "the log is damaged here: rows above are its decodable part (the Raw tab shows every byte that decodes)",
}

# A flagged row's background in the current theme (roles "flag.<flag>.bg"; refreshed on each theme change).
_BG: dict[str, str] = {}
_BG_FLAGS = ("error", "synthetic", "repaired", "open", "seed")


def _refresh_backgrounds(name: str) -> None:
    _BG.update({flag: theme.hex_of(f"flag.{flag}.bg", name) for flag in _BG_FLAGS})


_refresh_backgrounds(theme.current())
theme.on_apply(_refresh_backgrounds)
# A turn's band carries text in the theme's own colour: "timeline.turn" where the band is set.
_TURN_BG = "timeline.turn.bg"
# The "Stopped here" row: the one solid red row, found at a glance.
_DAMAGE_FG, _DAMAGE_BG = "timeline.damage", "timeline.damage.bg"


SENTINEL_SEP = "  ·  "  # between the "older turns" row's two links


class TimelineModel(OneCallPerCell, QAbstractItemModel):
    grown = Signal(int)  # events a live append added (after its rows are merged)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._records: Sequence[dict[str, Any]] = ()
        self._stored = 0
        self._spans: list[tuple[int, int]] = []
        self._derived: list[TimelineNode | None] = []
        self._first = 0
        self._roots: list[TimelineNode] = []
        self._sentinel: TimelineNode | None = None
        # The "N older turns" row's Summary cell reads "Load 33 more · Load all": the view paints it as
        # links (no index widget: a widget inside a row that rows are inserted above crashed Qt on its
        # deferred delete) and tells the model its page size and whether a "Load all" runs.
        self.sentinel_page = 0
        self.loading_all = False
        self._stop: TimelineNode | None = None  # a damaged log's "Stopped here" row, always the last
        self._stop_value: Stop | None = None
        self._top_row: dict[int, int] = {}
        self._bold = QFont()
        self._bold.setBold(True)
        self._italic = QFont()
        self._italic.setItalic(True)
        self._link_font = QFont()
        self._link_font.setUnderline(True)
        self._bold_italic = QFont(self._bold)
        self._bold_italic.setItalic(True)

    # ------------------------------------------------------------ loading

    @property
    def records(self) -> Sequence[dict[str, Any]]:
        return self._records

    @property
    def stored_count(self) -> int:
        return self._stored

    @property
    def spans(self) -> list[tuple[int, int]]:
        return self._spans

    @property
    def first_loaded_span(self) -> int:
        return self._first

    @property
    def stop_node(self) -> TimelineNode | None:
        """The "Stopped here" row of a damaged log's partial timeline (None: the log is not damaged)."""
        return self._stop

    @property
    def stop(self) -> Stop | None:
        """What stopped a damaged log's partial timeline (None: the log is not damaged)."""
        return self._stop_value

    def damage_line(self) -> int:
        """The Raw tab's line where a damaged log's partial timeline stopped (-1: none, or not a line)."""
        return -1 if self._stop_value is None else self._stop_value.raw_line

    def older_turns(self) -> int:
        """Turns in the blocks above the loaded ones (the "N older turns" row)."""
        return older_turns(self._records, self._spans, self._first)

    def underived_events(self, start: int = 0) -> int:
        """Events of ``spans[start:first]`` not derived yet (what loading them costs on this thread)."""
        return sum(e - s for i, (s, e) in enumerate(self._spans[start : self._first], start) if self._derived[i] is None)

    def _drop_trees(self) -> None:
        """Break parent/child cycles of the trees being dropped, so reference counting frees them."""
        for top in self._derived:
            if top is None:
                continue
            stack = [top]
            while stack:
                n = stack.pop()
                stack.extend(n.children)
                n.parent = None
                n.children = []

    def clear(self) -> None:
        self.beginResetModel()
        self._drop_trees()
        self._records = ()
        self._stored = 0
        self._spans = []
        self._derived = []
        self._first = 0
        self._roots = []
        self._sentinel = None
        self._stop = None
        self._stop_value = None
        self._top_row = {}
        self.endResetModel()

    def load(
        self,
        records: Sequence[dict[str, Any]],
        stored: int,
        spans: list[tuple[int, int]],
        tail: list[TimelineNode],
        first: int,
        *,
        stop: Stop | None = None,
    ) -> None:
        """A newly opened session: ``tail`` holds the nodes of ``spans[first:]``; ``stop`` is a damaged
        log's "Stopped here" row (shown last)."""
        self.beginResetModel()
        self._drop_trees()
        self._records = records
        self._stored = stored
        self._spans = list(spans)
        self._derived = [None] * len(spans)
        self._derived[first:] = tail
        self._first = first
        self._roots = list(tail)
        self._sentinel = self._make_sentinel() if first > 0 else None
        self._stop_value = stop
        self._stop = None if stop is None else stop_node(stop)
        self._rebuild_rows()
        self.endResetModel()

    def set_full_index(self, nodes: list[TimelineNode], upto: int) -> None:
        """Background derivation of ``spans[:upto]`` finished: keep it for later fetches."""
        if len(nodes) != upto:
            return
        for i in range(min(upto, len(self._derived))):
            if self._derived[i] is None:
                self._derived[i] = nodes[i]

    def sentinel_links(self) -> str:
        """The "older turns" row's Summary: its two links (``SENTINEL_SEP`` between them)."""
        more = f"Load {self.sentinel_page:,} more" if self.sentinel_page > 0 else "Load more"
        return more + SENTINEL_SEP + ("Loading all …" if self.loading_all else "Load all")

    def set_sentinel_state(self, page: int, loading_all: bool) -> None:
        if (page, loading_all) == (self.sentinel_page, self.loading_all):
            return
        self.sentinel_page, self.loading_all = page, loading_all
        if self._sentinel is not None:
            self.dataChanged.emit(self.index(0, 1), self.index(0, 1))

    def _make_sentinel(self) -> TimelineNode:
        first_event = self._spans[self._first][0]
        return TimelineNode(
            "sentinel",
            ("sentinel",),
            older_label(self.older_turns()),  # issue 16: "N older turns", not "turns in M blocks"
            "Load more: click, Enter or scroll up · Load all: Shift+Enter",
            f"{first_event:,} events above",
        )

    def _rebuild_rows(self) -> None:
        off = 1 if self._sentinel is not None else 0
        self._top_row = {id(n): i + off for i, n in enumerate(self._roots)}
        if self._stop is not None:
            self._top_row[id(self._stop)] = off + len(self._roots)

    # ------------------------------------------------------------ structure

    def node(self, index: Index) -> TimelineNode | None:
        if not index.isValid():
            return None
        return index.internalPointer()

    def turn_info(self, index: Index) -> tuple[int, bool] | None:
        """(turn number, completed) of the turn that holds ``index``; completed means a stored ``turn/end``.

        A turn closed only by ``inspect``'s synthetic closers is not completed: nothing on disk ends it.
        """
        node = self.node(index)
        while node is not None and node.kind != "turn":
            node = node.parent
        if node is None or not 0 <= node.index < len(self._records):
            return None
        data = self._records[node.index].get("data")
        turn = data.get("turn") if isinstance(data, dict) else None
        if not isinstance(turn, int) or isinstance(turn, bool):
            return None
        return turn, not (node.flags & {OPEN, SYNTHETIC})

    def is_sentinel(self, index: Index) -> bool:
        return index.isValid() and index.internalPointer() is self._sentinel and self._sentinel is not None

    def is_stop(self, index: Index) -> bool:
        return index.isValid() and self._stop is not None and index.internalPointer() is self._stop

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            if parent.column() != 0:
                return 0
            node: TimelineNode = parent.internalPointer()
            return len(node.children)
        return len(self._roots) + (1 if self._sentinel is not None else 0) + (1 if self._stop is not None else 0)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        if parent.isValid():
            if parent.column() != 0:
                return QModelIndex()
            node: TimelineNode = parent.internalPointer()
            if row >= len(node.children):
                return QModelIndex()
            return self.createIndex(row, column, node.children[row])
        if self._sentinel is not None:
            if row == 0:
                return self.createIndex(0, column, self._sentinel)
            row -= 1
        if row == len(self._roots) and self._stop is not None:
            return self.createIndex(row + (1 if self._sentinel is not None else 0), column, self._stop)
        if row >= len(self._roots):
            return QModelIndex()
        return self.createIndex(row + (1 if self._sentinel is not None else 0), column, self._roots[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        node: TimelineNode = index.internalPointer()
        p = node.parent
        if p is None:
            return QModelIndex()
        return self.createIndex(self._row_of(p), 0, p)

    def _row_of(self, node: TimelineNode) -> int:
        if node.parent is None:
            return self._top_row.get(id(node), 0)
        return node.parent.children.index(node)

    def index_of_node(self, node: TimelineNode, column: int = 0) -> QModelIndex:
        if node.parent is None and id(node) not in self._top_row and node is not self._sentinel:
            return QModelIndex()
        return self.createIndex(self._row_of(node) if node is not self._sentinel else 0, column, node)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(COLUMNS, section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        return read_only_flags(index)

    # ------------------------------------------------------------ data

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node: TimelineNode = index.internalPointer()
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0 and node.kind == DAMAGE:
                return f"{node.label}: {node.summary} — {node.info}"  # the view spans this cell over the row
            if col == 0:
                return node.label
            if col == 1:
                return self.sentinel_links() if node is self._sentinel else node.summary
            if col == 2:
                return node.info
            if col == 3:
                return "" if node.seq < 0 else str(node.seq)
            return style.format_clock(node.time)
        if role == NODE_ROLE:
            return node
        if role == SEQ_ROLE:
            return node.seq
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(node)
        if role == Qt.ItemDataRole.FontRole:
            if node.kind == "turn":
                return self._bold_italic if "synthetic" in node.flags else self._bold
            if node is self._sentinel and col == 1:
                return self._link_font
            if "synthetic" in node.flags or node.kind == "sentinel":
                return self._italic
            if node.kind == DAMAGE:
                return self._bold
            return None
        if role == Qt.ItemDataRole.ForegroundRole:
            if node is self._sentinel and col == 1:
                return style.brush(style.LINK_COLOR)
            return self._foreground(node, col)
        if role == Qt.ItemDataRole.BackgroundRole:
            if node.kind == DAMAGE:
                return theme.brush(_DAMAGE_BG)
            for flag in ("synthetic", "error", "repaired", "open", "seed"):
                if flag in node.flags and (node.kind != "turn" or flag != "error"):
                    return style.brush(_BG[flag])
            if node.kind == "turn":
                return theme.brush(_TURN_BG)
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _foreground(self, node: TimelineNode, col: int) -> Any:
        if node.kind == DAMAGE:
            return theme.brush(_DAMAGE_FG)
        for flag in ("error", "synthetic", "repaired", "open", "seed", "human", "cancelled", "pruned"):
            if flag in node.flags and (col in (0, 2) or flag in ("synthetic", "cancelled", "pruned")):
                return style.brush(style.FLAG_COLORS[flag][0])
        if col == 0 and node.kind in style.KIND_COLORS:
            return style.brush(style.KIND_COLORS[node.kind])
        if col in (2, 3, 4):
            return style.brush(style.MUTED)
        return None

    def _tooltip(self, node: TimelineNode) -> str:
        lines = [f"{node.label}: {node.summary}" if node.summary else node.label]
        if node.info:
            lines.append(node.info)
        for f in sorted(node.flags):
            if f in _FLAG_TIPS:
                lines.append(f"• {_FLAG_TIPS[f]}")
        return "\n".join(lines)

    # ------------------------------------------------------------ fetching older blocks

    def canFetchMore(self, parent: Index) -> bool:
        return self.is_sentinel(parent) and self._first > 0

    def fetchMore(self, parent: Index) -> None:
        if not self.canFetchMore(parent):
            return
        self.load_older()

    def load_older(self, until_span: int | None = None, *, rows: int | None = None) -> int:
        """Expose older blocks: down to ``until_span`` when given, else a page of ``rows`` blocks (a
        screenful; fewer when they would take long to derive here), else one budgeted step.  Returns
        how many rows were added."""
        if self._first == 0:
            return 0
        end = self._first
        if rows is not None and until_span is None:
            start = page_start(self._spans, end, max(1, rows), self._derived)  # budget: spans.OLDER_EVENT_BUDGET
        else:
            start = older_start(self._spans, end, until_span)  # budgets: app.timeline.spans.OLDER_*
        missing = [i for i in range(start, end) if self._derived[i] is None]
        if missing:
            lo, hi = missing[0], missing[-1] + 1
            nodes = derive(self._records, self._spans[lo][0], self._spans[hi - 1][1], stored_count=self._stored)
            if len(nodes) == hi - lo:
                for i, n in zip(range(lo, hi), nodes, strict=True):
                    if self._derived[i] is None:
                        self._derived[i] = n
        new_nodes = [n for n in self._derived[start:end] if n is not None]
        if not new_nodes:
            return 0
        off = 1 if self._sentinel is not None else 0
        self.beginInsertRows(QModelIndex(), off, off + len(new_nodes) - 1)
        self._roots[0:0] = new_nodes
        self._first = start
        self._rebuild_rows()
        self.endInsertRows()
        if self._first == 0 and self._sentinel is not None:
            self.beginRemoveRows(QModelIndex(), 0, 0)
            self._sentinel = None
            self._rebuild_rows()
            self.endRemoveRows()
        elif self._sentinel is not None:
            fresh = self._make_sentinel()
            self._sentinel.label, self._sentinel.summary, self._sentinel.info = fresh.label, fresh.summary, fresh.info
            self.dataChanged.emit(self.index(0, 0), self.index(0, len(COLUMNS) - 1))
        return len(new_nodes)

    # ------------------------------------------------------------ seq lookups

    def span_of_seq(self, seq: int) -> int:
        if not self._spans:
            return -1
        idx = seq
        recs = self._records
        if not (0 <= idx < len(recs) and recs[idx].get("seq") == seq):
            idx = next((i for i, r in enumerate(recs) if r.get("seq") == seq), -1)
            if idx < 0:
                return -1
        return span_containing(self._spans, idx)

    def index_for_seq(self, seq: int, *, load: bool = True) -> QModelIndex:
        """The deepest row standing for event ``seq`` (older blocks are loaded when ``load``)."""
        span = self.span_of_seq(seq)
        if span < 0:
            return QModelIndex()
        if span < self._first:
            if not load:
                return QModelIndex()
            self.load_older(until_span=span)
        top = self._roots[span - self._first] if 0 <= span - self._first < len(self._roots) else None
        if top is None:
            return QModelIndex()
        best = _deepest(top, seq) or top
        return self.index_of_node(best)

    # ------------------------------------------------------------ live appends

    def merge_tail(
        self,
        records: Sequence[dict[str, Any]],
        stored: int,
        spans: list[tuple[int, int]],
        from_span: int,
        nodes: list[TimelineNode],
    ) -> None:
        """The log grew: ``nodes`` are the re-derived blocks ``spans[from_span:]``; merge them by key."""
        before = self._stored
        self._merge_tail(records, stored, spans, from_span, nodes)
        if stored > before:
            self.grown.emit(stored - before)

    def _merge_tail(
        self,
        records: Sequence[dict[str, Any]],
        stored: int,
        spans: list[tuple[int, int]],
        from_span: int,
        nodes: list[TimelineNode],
    ) -> None:
        if self._stop is not None:
            # A damaged log does not grow in place (the loader reopens it); should it, the marker goes.
            last = self.rowCount() - 1
            self.beginRemoveRows(QModelIndex(), last, last)
            self._stop = self._stop_value = None
            self._rebuild_rows()
            self.endRemoveRows()
        self._records = records
        self._stored = stored
        if from_span < self._first or from_span > len(self._roots) + self._first:
            # Should not happen (the tail is always loaded); fall back to showing the new tail alone.
            self.load(records, stored, spans, nodes, from_span)
            return
        old_tail = self._roots[from_span - self._first :]
        self._spans = list(spans)
        self._derived = self._derived[:from_span] + [None] * (len(spans) - from_span)
        common = 0
        while common < min(len(old_tail), len(nodes)) and old_tail[common].key == nodes[common].key:
            self._merge_node(old_tail[common], nodes[common])
            self._derived[from_span + common] = old_tail[common]
            common += 1
        off = 1 if self._sentinel is not None else 0
        base = off + (from_span - self._first)
        if common < len(old_tail):
            first = base + common
            self.beginRemoveRows(QModelIndex(), first, base + len(old_tail) - 1)
            del self._roots[from_span - self._first + common :]
            self._rebuild_rows()
            self.endRemoveRows()
        if common < len(nodes):
            added = nodes[common:]
            first = base + common
            self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
            for n in added:
                n.parent = None
            self._roots.extend(added)
            for i, n in enumerate(added):
                self._derived[from_span + common + i] = n
            self._rebuild_rows()
            self.endInsertRows()

    def _merge_node(self, old: TimelineNode, new: TimelineNode) -> None:
        changed = not old.same_content(new)
        old.kind, old.label, old.summary, old.info = new.kind, new.label, new.summary, new.info
        old.seq, old.index, old.seqs, old.time = new.seq, new.index, new.seqs, new.time
        old.flags, old.usage = new.flags, new.usage
        idx = self.index_of_node(old)
        if changed and idx.isValid():
            self.dataChanged.emit(idx, idx.siblingAtColumn(len(COLUMNS) - 1))
        common = 0
        while common < min(len(old.children), len(new.children)) and old.children[common].key == new.children[common].key:
            self._merge_node(old.children[common], new.children[common])
            common += 1
        if common < len(old.children):
            self.beginRemoveRows(idx, common, len(old.children) - 1)
            del old.children[common:]
            self.endRemoveRows()
        if common < len(new.children):
            added = new.children[common:]
            self.beginInsertRows(idx, common, common + len(added) - 1)
            for c in added:
                c.parent = old
                old.children.append(c)
            self.endInsertRows()


def _deepest(node: TimelineNode, seq: int) -> TimelineNode | None:
    for child in node.children:
        found = _deepest(child, seq)
        if found is not None:
            return found
    if node.seq == seq or seq in node.seqs:
        return node
    return None
