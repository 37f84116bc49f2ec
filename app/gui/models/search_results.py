"""Search results as a two-level tree: one row per session (title, project, time, hit count), its hits below
(snippet with the match spans, event kind, turn and seq, time).

The Qt adapter over ``app.search.SearchResult``: a result replaces the rows at once (a query is one
reset), rows are small Python objects the indexes point at (``internalPointer``), and the snippet's
match spans travel in ``SPANS_ROLE`` for the pane's highlighting delegate.

May import: PySide6 (the item model), ``app.gui.style``, ``models.columns`` and ``app.search``'s values.
"""

from __future__ import annotations

import os
from typing import Any, cast

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QModelRoleData, QModelRoleDataSpan, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from app.glossary import plural
from app.gui import style, theme
from app.gui.models.columns import column_header, read_only_flags
from app.search import Hit, SearchResult, SessionHits

Index = QModelIndex | QPersistentModelIndex

COLUMNS = ("Match", "Kind", "Where", "Time")
COL_MATCH, COL_KIND, COL_WHERE, COL_TIME = range(4)
HIT_ROLE = int(Qt.ItemDataRole.UserRole) + 1  # the Hit of a hit row (None on a session row)
GROUP_ROLE = int(Qt.ItemDataRole.UserRole) + 2  # the SessionHits of a session row, or of a hit's session
SPANS_ROLE = int(Qt.ItemDataRole.UserRole) + 3  # [(start, end), ...] of the matches in the Match column's text

KIND_LABELS = {
    "user": "user",
    "assistant": "assistant",
    "reasoning": "reasoning",
    "tool-call": "tool call",
    "tool-result": "tool result",
    "error": "error",
    "title": "title",
    "meta": "session",
}
# Hit kinds in the timeline's palette (users teal, tools brown, results green, errors red).
# Theme roles (a light and a dark variant each).
KIND_COLORS = {
    "user": "role.user",
    "assistant": "role.assistant",
    "reasoning": "role.reasoning",
    "tool-call": "role.tool-call",
    "tool-result": "role.tool-result",
    "error": "role.error",
    "title": "role.title",
    "meta": "role.meta",
}
_CLEAN = frozenset({"ok", "open-turn"})  # statuses whose hits need no warning
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)


class _Group:
    __slots__ = ("cells", "hits", "row", "value")

    def __init__(self, row: int, value: SessionHits) -> None:
        self.row = row
        self.value = value
        self.hits = [_HitRow(self, i, h) for i, h in enumerate(value.hits)]
        self.cells: list[dict[int, Any]] | None = None  # per column: role -> value (built on first paint)


class _HitRow:
    __slots__ = ("cells", "group", "row", "value")

    def __init__(self, group: _Group, row: int, value: Hit) -> None:
        self.group = group
        self.row = row
        self.value = value
        self.cells: list[dict[int, Any]] | None = None


def where_text(hit: Hit) -> str:
    """``turn 3 · seq 41`` (the session header has no seq)."""
    if hit.seq is None:
        return "session header"
    return f"turn {hit.turn} · seq {hit.seq}" if hit.turn is not None else f"seq {hit.seq}"


def kind_text(hit: Hit) -> str:
    label = KIND_LABELS.get(hit.kind, hit.kind)
    return f"{label} · {hit.tool}" if hit.tool and hit.kind in ("tool-call", "tool-result", "error") else label


def project_text(group: SessionHits) -> str:
    return group.cwd or "(no cwd)"


class SearchResultsModel(QAbstractItemModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.result: SearchResult | None = None
        self._groups: list[_Group] = []
        self._bold = QFont()
        self._bold.setBold(True)
        theme.bind(self, self._forget_cells)  # the cells hold brushes of the theme they were built in

    def _forget_cells(self) -> None:
        for g in self._groups:
            g.cells = None
            for h in g.hits:
                h.cells = None
        if self._groups:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._groups) - 1, len(COLUMNS) - 1))

    # ------------------------------------------------------------ loading

    def set_result(self, result: SearchResult | None) -> None:
        self.beginResetModel()
        self.result = result
        self._groups = [_Group(i, g) for i, g in enumerate(result.sessions)] if result is not None else []
        self.endResetModel()

    def clear(self) -> None:
        self.set_result(None)

    def update_counts(self, result: SearchResult) -> bool:
        """Take ``result``'s counts for the groups shown (the same sessions, in the same order: the
        second step of a query); False (nothing changed) when the rows shown are of another result."""
        if self.result is None or result.query != self.result.query or len(result.sessions) != len(self._groups):
            return False
        if any(g.value.key != v.key for g, v in zip(self._groups, result.sessions, strict=True)):
            return False
        self.result = result
        for g, v in zip(self._groups, result.sessions, strict=True):
            g.value = v
            g.cells = None
            for h in g.hits:
                h.cells = None  # a hit row's cells hold its group too
        if self._groups:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._groups) - 1, len(COLUMNS) - 1))
        return True

    @property
    def group_count(self) -> int:
        return len(self._groups)

    def hit_count_shown(self) -> int:
        return sum(len(g.hits) for g in self._groups)

    def hit_at(self, index: Index) -> Hit | None:
        item = index.internalPointer() if index.isValid() else None
        return item.value if isinstance(item, _HitRow) else None

    def group_at(self, index: Index) -> SessionHits | None:
        item = index.internalPointer() if index.isValid() else None
        if isinstance(item, _HitRow):
            return item.group.value
        return item.value if isinstance(item, _Group) else None

    def index_of_hit(self, key: str, seq: int | None) -> QModelIndex:
        """The row of the hit at ``seq`` of session row ``key`` (invalid when the result has none)."""
        for g in self._groups:
            if g.value.key == key:
                for h in g.hits:
                    if h.value.seq == seq:
                        return self.createIndex(h.row, 0, h)
        return QModelIndex()

    def first_hit_index(self) -> QModelIndex:
        for g in self._groups:
            if g.hits:
                return self.createIndex(0, 0, g.hits[0])
        return QModelIndex()

    # ------------------------------------------------------------ structure

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._groups)
        if parent.column() != 0:
            return 0
        item = parent.internalPointer()
        return len(item.hits) if isinstance(item, _Group) else 0

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if row < 0 or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, self._groups[row]) if row < len(self._groups) else QModelIndex()
        item = parent.internalPointer()
        if not isinstance(item, _Group) or row >= len(item.hits) or parent.column() != 0:
            return QModelIndex()
        return self.createIndex(row, column, item.hits[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        item = index.internalPointer()
        if isinstance(item, _HitRow):
            return self.createIndex(item.group.row, 0, item.group)
        return QModelIndex()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(COLUMNS, section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        return read_only_flags(index)

    # ------------------------------------------------------------ data

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item = index.internalPointer()
        if role == _TOOLTIP:
            return self._tooltip(item)
        return self._cells(item)[index.column()].get(role)

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role a delegate asks for in one call into Python (see ``models.one_call_per_cell``),
        answered from the row's cells: one dict lookup per role."""
        if not index.isValid():
            return
        item = index.internalPointer()
        cell = self._cells(item)[index.column()]
        span = QModelRoleDataSpan(roleDataSpan) if isinstance(roleDataSpan, QModelRoleData) else roleDataSpan
        for rd in cast(Any, span):  # a span is iterable at run time; its stub says not
            role = rd.role()
            value = self._tooltip(item) if role == _TOOLTIP else cell.get(role)
            if value is None:
                rd.clearData()  # delegates reuse their role buffer: a stale value would leak into this cell
            else:
                rd.setData(value)

    def _cells(self, item: _Group | _HitRow) -> list[dict[int, Any]]:
        cells = item.cells
        if cells is None:
            # Built once per row, on its first paint: a repaint asks ~7 roles of each visible cell, and a
            # dict lookup per role keeps a 56-row repaint at a few ms (computing each role cost ~4x more).
            cells = item.cells = self._group_cells(item.value) if isinstance(item, _Group) else self._hit_cells(item)
        return cells

    def _group_cells(self, g: SessionHits) -> list[dict[int, Any]]:
        shown = len(g.hits)
        hits = plural(g.hit_count, "hit")
        muted = style.brush(style.MUTED)
        bad = style.STATUS_COLORS.get(g.status, style.STATUS_COLORS["corrupt"])[0]
        kind_color = style.brush(bad) if g.status not in _CLEAN else None
        cells: list[dict[int, Any]] = [
            {_DISPLAY: g.title or g.session_id, _FONT: self._bold},
            {_DISPLAY: hits if shown >= g.hit_count else f"{hits} ({shown} shown)", _FOREGROUND: kind_color},
            {_DISPLAY: project_text(g), _FOREGROUND: muted},
            {_DISPLAY: style.format_ms(g.updated), _FOREGROUND: muted},
        ]
        for c in cells:
            c[GROUP_ROLE] = g
        return cells

    def _hit_cells(self, item: _HitRow) -> list[dict[int, Any]]:
        h, g = item.value, item.group.value
        muted = style.brush(style.MUTED)
        if h.status in _CLEAN:
            kind, kind_color = kind_text(h), theme.brush(KIND_COLORS.get(h.kind, "text.muted"))
        else:
            kind = f"{kind_text(h)} · {style.STATUS_LABELS.get(h.status, h.status)} log"
            kind_color = style.brush(style.STATUS_COLORS.get(h.status, style.STATUS_COLORS["corrupt"])[0])
        cells: list[dict[int, Any]] = [
            {_DISPLAY: h.snippet, SPANS_ROLE: list(h.spans)},
            {_DISPLAY: kind, _FOREGROUND: kind_color},
            {_DISPLAY: where_text(h), _FOREGROUND: muted},
            {_DISPLAY: style.format_ms(h.time), _FOREGROUND: muted},
        ]
        for c in cells:
            c[HIT_ROLE] = h
            c[GROUP_ROLE] = g
        return cells

    def _tooltip(self, item: _Group | _HitRow) -> str:
        if isinstance(item, _Group):
            g = item.value
            lines = [g.title or "(untitled)", f"session {g.session_id}", f"cwd {project_text(g)}"]
            if g.path:
                lines.append(os.path.basename(os.path.dirname(g.path)) + os.sep + os.path.basename(g.path))
            if g.status not in _CLEAN:
                lines.append(f"{style.STATUS_LABELS.get(g.status, g.status)} log: only its readable part is indexed")
                if g.reason:
                    lines.append(g.reason)
            lines.append(f"{plural(g.hit_count, 'hit')}; Enter opens the session at its first hit")
            return "\n".join(lines)
        h = item.value
        lines = [h.marked("«", "»"), f"{h.event_type} · {where_text(h)} · {kind_text(h)}"]
        if h.status not in _CLEAN:
            lines.append(f"in a {style.STATUS_LABELS.get(h.status, h.status)} log: found in its readable part")
        lines.append("Enter or click: open the session at this event")
        return "\n".join(lines)


__all__ = ["COLUMNS", "GROUP_ROLE", "HIT_ROLE", "SPANS_ROLE", "SearchResultsModel", "kind_text", "where_text"]
