"""The selected raw record as a tree (Key, Value): a Qt item model over ``app.rawview.json_tree``.

Why lazy: ``rowCount`` reads a container's length without building its members; a node's members
become nodes only when the view asks for their indexes, which it does for the top level and for
the nodes the user expands.  A 200 KB tool result is one string node whose value column shows a
short preview (the full text is Copy value), so showing it costs the same as showing a small one.

May import: PySide6, ``app.gui.style``, ``app.gui.theme`` and ``app.rawview.json_tree``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from app.gui import style, theme
from app.rawview.json_tree import JsonNode, JsonTree

Index = QModelIndex | QPersistentModelIndex
KEY_COL, VALUE_COL = 0, 1
_ROLE_OF_TYPE = {"string": "json.string", "number": "json.number", "boolean": "json.literal", "null": "json.literal"}


class JsonTreeModel(QAbstractItemModel):
    COLUMNS = ("Key", "Value")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._tree: JsonTree | None = None
        self._mono = style.mono_font()

    @property
    def tree(self) -> JsonTree | None:
        return self._tree

    def set_tree(self, tree: JsonTree | None) -> None:
        self.beginResetModel()
        self._tree = tree  # the old tree lives until the reset is over (indexes point into it)
        self.endResetModel()

    def node(self, index: Index) -> JsonNode | None:
        if not index.isValid():
            return self._tree.root if self._tree is not None else None
        ptr = index.internalPointer()
        return ptr if isinstance(ptr, JsonNode) else None

    def index_of(self, node: JsonNode) -> QModelIndex:
        """The index of ``node`` (column 0); invalid for the root."""
        if node.parent is None:
            return QModelIndex()
        return self.createIndex(node.row, 0, node)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        owner = self.node(parent)
        if owner is None or not 0 <= row < owner.child_count() or not 0 <= column < 2:
            return QModelIndex()
        return self.createIndex(row, column, owner.child(row))

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        # The stub has QObject.parent() and this one overloaded under one name; Qt calls this one with an index.
        node = self.node(index) if index.isValid() else None
        if node is None or node.parent is None or node.parent.parent is None:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        owner = self.node(parent)
        return owner.child_count() if owner is not None else 0

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 2:
            return self.COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self.node(index) if index.isValid() else None
        if node is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return node.key_text() if col == KEY_COL else node.preview()
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{node.path()} · {node.type_name()}"
        if role == Qt.ItemDataRole.FontRole:
            return self._mono
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == KEY_COL:
                return theme.brush("json.key")
            tone = _ROLE_OF_TYPE.get(node.type_name())
            return theme.brush(tone) if tone else theme.brush("json.punctuation")
        return None


__all__ = ["JsonTreeModel"]
