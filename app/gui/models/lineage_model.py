"""The lineage of a root as a Qt tree: sessions under their parents, orphans in a group of their own.

A read-only adapter over ``app.insight.Lineage`` (built off the GUI thread from the statistics
cache).  Each row is one ``LineageNode``; the tree's shape is the lineage's (forks of forks and
subagents nest to any depth), and sessions whose parent is missing (or sit in a loop of parents)
are listed under one "Orphans" row at the end, each saying which parent it names.

May import: PySide6, ``app.gui.style``, ``models.columns`` and ``app.insight`` (values).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from app.glossary import CREATED, plural
from app.gui import style
from app.gui.models.columns import column_header, read_only_flags
from app.insight import FORK, SUBAGENT, Lineage, LineageNode

Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("Session", "Kind", "Fork point", "Status", CREATED, "Id")
COL_SESSION, COL_KIND, COL_FORK, COL_STATUS, COL_STARTED, COL_ID = range(len(COLUMNS))
NodeRole = Qt.ItemDataRole.UserRole + 1  # the row's LineageNode (None for the Orphans group)
UNTITLED = "(untitled)"


class _Item:
    """One row: a lineage node (or the Orphans group), its parent row and its child rows."""

    __slots__ = ("children", "label", "node", "parent", "row")

    def __init__(self, node: LineageNode | None, parent: _Item | None, row: int, label: str = "") -> None:
        self.node = node
        self.parent = parent
        self.row = row
        self.label = label
        self.children: list[_Item] = []


def kind_text(node: LineageNode) -> str:
    if node.kind == SUBAGENT:
        depth = node.info.delegation_depth
        return f"subagent (depth {depth})" if depth is not None else "subagent"
    return "fork" if node.kind == FORK else "root"


def fork_point_text(node: LineageNode) -> str:
    seed, turn = node.fork_point
    parts = []
    if turn is not None:
        parts.append(f"after turn {turn}")
    if seed is not None:
        parts.append(plural(seed, "seed event"))
    if node.missing_parent is not None:
        parts.append(f"parent {node.missing_parent} missing")
    if node.cycle:
        parts.append("in a loop of parents")
    return " · ".join(parts)


def node_tooltip(node: LineageNode) -> str:
    i = node.info
    lines = [i.title or UNTITLED, f"id {i.session_id}", kind_text(node)]
    if i.parent is not None:
        lines.append(f"parent {i.parent}" + (" (not in this root)" if node.missing_parent is not None else ""))
    fp = fork_point_text(node)
    if fp:
        lines.append(fp)
    if i.status:
        lines.append(f"status {style.STATUS_LABELS.get(i.status, i.status)}")
    if node.children:
        lines.append(plural(len(node.children), "child session"))
    return "\n".join(lines)


class LineageModel(QAbstractItemModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.lineage: Lineage | None = None
        self._top: list[_Item] = []
        self._by_id: dict[str, _Item] = {}

    # ------------------------------------------------------------ content

    def set_lineage(self, lineage: Lineage | None) -> None:
        self.beginResetModel()
        self.lineage = lineage
        self._top = []
        self._by_id = {}
        if lineage is not None:
            for top in lineage.roots:
                self._top.append(self._build(top, None, len(self._top)))
            if lineage.orphans:
                group = _Item(None, None, len(self._top), f"Orphans — parent missing ({len(lineage.orphans)})")
                for orphan in lineage.orphans:
                    group.children.append(self._build(orphan, group, len(group.children)))
                self._top.append(group)
        self.endResetModel()

    def _build(self, node: LineageNode, parent: _Item | None, row: int) -> _Item:
        # Iterative: a chain of thousands of forks must not hit the recursion limit.
        root = _Item(node, parent, row)
        self._by_id.setdefault(node.session_id, root)
        stack = [root]
        while stack:
            item = stack.pop()
            assert item.node is not None
            for k, child in enumerate(item.node.children):
                c = _Item(child, item, k)
                item.children.append(c)
                self._by_id.setdefault(child.session_id, c)
                stack.append(c)
        return root

    def node(self, index: Index) -> LineageNode | None:
        item = self._item(index)
        return None if item is None else item.node

    def tree_parent(self, index: Index) -> LineageNode | None:
        """The session a row hangs under (None for a root, an orphan or the group)."""
        item = self._item(index)
        return None if item is None or item.parent is None else item.parent.node

    def index_of(self, session_id: str, column: int = 0) -> QModelIndex:
        item = self._by_id.get(session_id)
        return QModelIndex() if item is None else self.createIndex(item.row, column, item)

    def __len__(self) -> int:
        return len(self._by_id)

    @property
    def orphans_index(self) -> QModelIndex:
        if self._top and self._top[-1].node is None:
            return self.createIndex(len(self._top) - 1, 0, self._top[-1])
        return QModelIndex()

    # ------------------------------------------------------------ QAbstractItemModel

    def _item(self, index: Index) -> _Item | None:
        if not index.isValid():
            return None
        item = index.internalPointer()
        return item if isinstance(item, _Item) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        item = self._item(parent)
        return len(self._top) if item is None else len(item.children)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        item = self._item(parent)
        rows = self._top if item is None else item.children
        if row >= len(rows):
            return QModelIndex()
        return self.createIndex(row, column, rows[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        item = self._item(index)
        if item is None or item.parent is None:
            return QModelIndex()
        return self.createIndex(item.parent.row, 0, item.parent)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(COLUMNS, section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        return read_only_flags(index)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self._item(index)
        if item is None:
            return None
        node = item.node
        col = index.column()
        if node is None:  # the Orphans group
            if role == Qt.ItemDataRole.DisplayRole and col == 0:
                return item.label
            if role == Qt.ItemDataRole.ToolTipRole:
                return "Sessions whose parent session is not in this root (or whose parents form a loop)"
            return None
        if role == NodeRole:
            return node
        if role == Qt.ItemDataRole.DisplayRole:
            i = node.info
            if col == COL_SESSION:
                return i.title or UNTITLED
            if col == COL_KIND:
                return kind_text(node)
            if col == COL_FORK:
                return fork_point_text(node)
            if col == COL_STATUS:
                return style.STATUS_LABELS.get(i.status or "", i.status or "")
            if col == COL_STARTED:
                return style.format_ms(i.start_ms)
            if col == COL_ID:
                return i.session_id
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return node_tooltip(node)
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_STATUS and node.info.status:
            fg, _bg = style.STATUS_COLORS.get(node.info.status, (style.MUTED, None))
            return style.brush(fg)
        if role == Qt.ItemDataRole.FontRole and col == COL_ID:
            return style.mono_font()
        return None


__all__ = ["COLUMNS", "LineageModel", "NodeRole", "fork_point_text", "kind_text"]
