"""The header and flags every read-only tree/table model of the window answers the same way.

Why shared: the search results, the lineage tree and the timeline each named their columns and
answered ``headerData``/``flags`` with the same lines; one place keeps them from drifting apart.

May import: PySide6.QtCore only.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt


def column_header(columns: Sequence[str], section: int, orientation: Qt.Orientation, role: int) -> str | None:
    """The horizontal header's label of ``section`` (display role only), or None."""
    if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(columns):
        return columns[section]
    return None


def read_only_flags(index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
    """Enabled and selectable, never editable; nothing for an invalid index."""
    if not index.isValid():
        return Qt.ItemFlag.NoItemFlags
    return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


__all__ = ["column_header", "read_only_flags"]
