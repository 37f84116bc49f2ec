"""The session list as a table model that sorts and filters itself.

Rows appear as soon as their header is known; status, event count and title arrive later from the
background diagnosis pass (a row without them says so instead of blocking).  Asking for a pending
row's display data tells that pass to look at it first (lazy, Anki-style).

Sorting and filtering happen here, in Python, over cached sort keys: a QSortFilterProxyModel would
compare rows through ``data()`` calls from C++, which at 10k rows cost ~0.3 s per inserted batch.
Refreshes are per row: an inserted row goes to its sorted place, a changed row is updated (and moved
if its sort key moved), a removed row is removed.  Only user actions (sorting, filtering) and
switching roots relayout or reset the whole list.

May import: PySide6, ``app.gui.style``, ``models.one_call_per_cell`` and ``models.session_row``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from app.gui import style
from app.gui.models.one_call_per_cell import OneCallPerCell
from app.gui.models.session_row import Details, SessionRow

Index = QModelIndex | QPersistentModelIndex


class Col(IntEnum):
    STATUS = 0
    TITLE = 1
    PROJECT = 2
    ORIGIN = 3
    MODIFIED = 4
    EVENTS = 5
    SIZE = 6
    ID = 7
    CREATED = 8


HEADERS = ("Status", "Title", "Project / cwd", "Origin", "Modified", "Events", "Size", "Session id", "Created")
N_COLS = len(HEADERS)
DETAIL_COLUMNS = frozenset({Col.STATUS, Col.TITLE, Col.EVENTS})
BULK_INSERT = 32  # above this many new rows at once, append and re-sort instead of inserting one by one

KEY_ROLE = Qt.ItemDataRole.UserRole + 1
PROJECT_ROLE = Qt.ItemDataRole.UserRole + 4
STATUS_ROLE = Qt.ItemDataRole.UserRole + 5
ID_ROLE = Qt.ItemDataRole.UserRole + 6

_DISPLAY = Qt.ItemDataRole.DisplayRole
_TOOLTIP = Qt.ItemDataRole.ToolTipRole
_FOREGROUND = Qt.ItemDataRole.ForegroundRole
_BACKGROUND = Qt.ItemDataRole.BackgroundRole
_FONT = Qt.ItemDataRole.FontRole
_ALIGN = Qt.ItemDataRole.TextAlignmentRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren


class SessionListModel(OneCallPerCell, QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._all: dict[str, SessionRow] = {}
        self._asc: list[str] = []  # visible keys, ascending by sort key (display order flips when descending)
        self._asc_keys: list[tuple[Any, str]] = []
        self._pos: dict[str, int] | None = None  # key -> index in _asc (rebuilt lazily)
        self._sort_col = Col.MODIFIED
        self._desc = True
        self._words: list[str] = []
        self._project: str | None = None
        self.on_pending: Callable[[str], None] | None = None  # the details pass wants to hear about visible rows
        self._status_counts: Counter[str] = Counter()
        self._project_counts: Counter[str] = Counter()
        self._italic = QFont()
        self._italic.setItalic(True)

    # ------------------------------------------------------------ positions

    def _positions(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {k: i for i, k in enumerate(self._asc)}
        return self._pos

    def _display_row(self, asc_index: int) -> int:
        return len(self._asc) - 1 - asc_index if self._desc else asc_index

    def _asc_index(self, display_row: int) -> int:
        return len(self._asc) - 1 - display_row if self._desc else display_row

    def _sort_key(self, r: SessionRow) -> tuple[Any, str]:
        return (sort_value(r, self._sort_col), r.key)

    def _accepts(self, r: SessionRow) -> bool:
        if self._project is not None and r.project != self._project:
            return False
        if not self._words:
            return True
        hay = filter_text(r)
        return all(w in hay for w in self._words)

    # ------------------------------------------------------------ read access

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._asc)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else N_COLS

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY and 0 <= section < N_COLS:
            return HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def row_at(self, row: int) -> SessionRow:
        """The row shown at display position ``row``."""
        return self._all[self._asc[self._asc_index(row)]]

    def key_at(self, row: int) -> str:
        return self._asc[self._asc_index(row)]

    def rows(self) -> list[SessionRow]:
        """Every row, shown or filtered out."""
        return list(self._all.values())

    def keys(self) -> Iterable[str]:
        return self._all.keys()

    @property
    def total(self) -> int:
        return len(self._all)

    def status_counts(self) -> dict[str, int]:
        return {k: v for k, v in self._status_counts.items() if v}

    def project_counts(self) -> dict[str, int]:
        return {k: v for k, v in self._project_counts.items() if v}

    def _count(self, r: SessionRow, delta: int) -> None:
        self._status_counts[r.status] += delta
        self._project_counts[r.project] += delta

    def row_for_key(self, key: str) -> int:
        """Display position of ``key`` (-1 when unknown or filtered out)."""
        i = self._positions().get(key)
        return -1 if i is None else self._display_row(i)

    def index_for_key(self, key: str, column: int = 0) -> QModelIndex:
        row = self.row_for_key(key)
        return QModelIndex() if row < 0 else self.index(row, column)

    def get(self, key: str) -> SessionRow | None:
        return self._all.get(key)

    def find_id(self, session_id: str) -> SessionRow | None:
        for r in self._all.values():
            if r.session_id == session_id:
                return r
        return None

    def children_of(self, session_id: str) -> list[SessionRow]:
        return [r for r in self._all.values() if r.parent_id == session_id]

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        if not index.isValid():
            return None
        row = index.row()
        if not 0 <= row < len(self._asc):
            return None
        r = self._all[self._asc[len(self._asc) - 1 - row if self._desc else row]]
        col = index.column()
        if role == _DISPLAY:
            if col in DETAIL_COLUMNS and self.on_pending is not None and r.status == "pending":
                self.on_pending(r.key)
            return display_text(r, col)
        if role == _FOREGROUND:
            if col == Col.STATUS:
                return style.brush(status_colors(r)[0])
            if col == Col.TITLE and not r.title:
                return style.brush(style.MUTED)
            return None
        if role == _BACKGROUND:
            if col == Col.STATUS:
                bg = status_colors(r)[1]
                return style.brush(bg) if bg else None
            return None
        if role == _FONT:
            return self._italic if col == Col.TITLE and not r.title else None
        if role == _ALIGN:
            return _RIGHT if col in (Col.SIZE, Col.EVENTS) else None
        if role == _TOOLTIP:
            return tooltip(r, col)
        if role == KEY_ROLE:
            return r.key
        if role == ID_ROLE:
            return r.session_id
        if role == PROJECT_ROLE:
            return r.project
        if role == STATUS_ROLE:
            return r.status
        return None

    # ------------------------------------------------------------ sorting and filtering (user actions)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < N_COLS:
            return
        self._sort_col = Col(column)
        self._desc = order == Qt.SortOrder.DescendingOrder
        self._relayout()

    def set_filter_text(self, text: str) -> None:
        words = text.lower().split()
        if words != self._words:
            self._words = words
            self._relayout()

    def set_project(self, project: str | None) -> None:
        if project != self._project:
            self._project = project
            self._relayout()

    def _rebuild(self) -> None:
        visible = [r for r in self._all.values() if self._accepts(r)]
        pairs = sorted((self._sort_key(r), r.key) for r in visible)
        self._asc_keys = [p[0] for p in pairs]
        self._asc = [p[1] for p in pairs]
        self._pos = None

    def _relayout(self, merge_from: int | None = None) -> None:
        """Re-sort/re-filter everything, keeping persistent indexes (selection, current row) on their rows.

        With ``merge_from`` only the two sorted runs ``[:merge_from]`` and ``[merge_from:]`` are merged.
        """
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        old_keys = [(self.key_at(i.row()) if 0 <= i.row() < len(self._asc) else None, i.column()) for i in old]
        if merge_from is None:
            self._rebuild()
        else:
            # Two sorted runs: Timsort finds them and merges in C (heapq.merge would step in Python).
            pairs = list(zip(self._asc_keys, self._asc, strict=True))
            pairs.sort()
            self._asc_keys = [p[0] for p in pairs]
            self._asc = [p[1] for p in pairs]
            self._pos = None
        new = [self.index_for_key(k, c) if k is not None else QModelIndex() for k, c in old_keys]
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # ------------------------------------------------------------ refreshes (row by row)

    def clear(self) -> None:
        """Only for switching roots: refreshes of one root never reset."""
        self.beginResetModel()
        self._all = {}
        self._asc = []
        self._asc_keys = []
        self._pos = None
        self._status_counts.clear()
        self._project_counts.clear()
        self.endResetModel()

    def append_rows(self, rows: list[SessionRow]) -> None:
        fresh = [r for r in rows if r.key not in self._all]
        for r in fresh:
            self._all[r.key] = r
            self._count(r, +1)
        shown = [r for r in fresh if self._accepts(r)]
        if not shown:
            return
        if len(shown) > BULK_INSERT:
            # A listing batch: one insert notification at the end, then one merge into sorted order.
            first = len(self._asc)
            new = sorted((self._sort_key(r), r.key) for r in shown)
            self.beginInsertRows(QModelIndex(), first, first + len(shown) - 1)
            self._asc.extend(k for _sk, k in new)
            self._asc_keys.extend(sk for sk, _k in new)
            self._pos = None
            self.endInsertRows()
            self._relayout(merge_from=first)
            return
        for r in shown:
            self._insert_sorted(r)

    def _insert_sorted(self, r: SessionRow) -> None:
        k = self._sort_key(r)
        i = bisect.bisect_left(self._asc_keys, k)
        row = len(self._asc) - i if self._desc else i
        self.beginInsertRows(QModelIndex(), row, row)
        self._asc.insert(i, r.key)
        self._asc_keys.insert(i, k)
        self._pos = None
        self.endInsertRows()

    def _remove_visible(self, key: str) -> None:
        i = self._positions().get(key)
        if i is None:
            return
        row = self._display_row(i)
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._asc[i]
        del self._asc_keys[i]
        self._pos = None
        self.endRemoveRows()

    def remove_keys(self, keys: Iterable[str]) -> None:
        for key in list(keys):
            r = self._all.pop(key, None)
            if r is not None:
                self._count(r, -1)
                self._remove_visible(key)

    def replace_row(self, row: SessionRow) -> None:
        """A changed listing for an existing key: details survive when the revision still matches."""
        old = self._all.get(row.key)
        if old is None:
            self.append_rows([row])
            return
        if row.details is None and old.details is not None:
            row.details = old.details
        self._count(old, -1)
        self._count(row, +1)
        self._all[row.key] = row
        self._place(row)

    def apply_details(self, updates: dict[str, Details]) -> None:
        changed: list[SessionRow] = []
        for key, det in updates.items():
            r = self._all.get(key)
            if r is not None:
                self._status_counts[r.status] -= 1
                r.details = det
                self._status_counts[r.status] += 1
                changed.append(r)
        if not changed:
            return
        if len(changed) > BULK_INSERT and (self._sort_col in DETAIL_COLUMNS or self._words):
            self._relayout()  # many sort keys/filter matches moved at once: one relayout
            self.dataChanged.emit(self.index(0, 0), self.index(max(0, len(self._asc) - 1), N_COLS - 1))
            return
        if self._sort_col not in DETAIL_COLUMNS and not self._words:
            self._emit_changed(changed)  # no row moves: batched dataChanged
            return
        for r in changed:
            self._place(r)

    def _emit_changed(self, changed: list[SessionRow]) -> None:
        pos = self._positions()
        rows = sorted(self._display_row(pos[r.key]) for r in changed if r.key in pos)
        if not rows:
            return
        start = prev = rows[0]
        for p in [*rows[1:], None]:
            if p is not None and p == prev + 1:
                prev = p
                continue
            self.dataChanged.emit(self.index(start, 0), self.index(prev, N_COLS - 1))
            if p is not None:
                start = prev = p

    def _place(self, r: SessionRow) -> None:
        """After ``r`` changed: update it in place, move it, show it or hide it, as its keys now say."""
        pos = self._positions()
        i = pos.get(r.key)
        visible = self._accepts(r)
        if i is None:
            if visible:
                self._insert_sorted(r)
            return
        if not visible:
            self._remove_visible(r.key)
            return
        k = self._sort_key(r)
        j = bisect.bisect_left(self._asc_keys[:i] + self._asc_keys[i + 1 :], k)  # its place among the others
        if j == i:
            self._asc_keys[i] = k
            row = self._display_row(i)
            self.dataChanged.emit(self.index(row, 0), self.index(row, N_COLS - 1))
            return
        # The row moves (selection and scroll position follow it), then its cells refresh.
        n = len(self._asc)
        src = self._display_row(i)
        final = n - 1 - j if self._desc else j  # display row once moved
        dst = final if final < src else final + 1  # Qt counts the destination before the removal
        self.beginMoveRows(QModelIndex(), src, src, QModelIndex(), dst)
        del self._asc[i]
        del self._asc_keys[i]
        self._asc.insert(j, r.key)
        self._asc_keys.insert(j, k)
        self._pos = None
        self.endMoveRows()
        self.dataChanged.emit(self.index(final, 0), self.index(final, N_COLS - 1))


# ---------------------------------------------------------------- cell values


def status_colors(r: SessionRow) -> tuple[str, str | None]:
    """(foreground, background) of the status cell; a bad row whose status has no colours of its own
    (``unreadable``) is painted like ``corrupt``: it must stand out, never look fine."""
    colors = style.STATUS_COLORS.get(r.status)
    if colors is None:
        colors = style.STATUS_COLORS["corrupt"] if r.problem_status is not None else ("#000000", None)
    return colors


def sort_value(r: SessionRow, col: int) -> Any:
    if col == Col.CREATED:
        v = r.header("createdAt")
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else -1
    if col == Col.MODIFIED:
        return r.modified_ns or 0
    if col == Col.SIZE:
        return r.size or 0
    if col == Col.EVENTS:
        return -1 if r.event_count is None else r.event_count
    if col == Col.STATUS:
        return style.STATUS_ORDER.get(r.status, 0 if r.problem_status is not None else 9)
    return display_text(r, col).lower()


def display_text(r: SessionRow, col: int) -> str:
    if col == Col.TITLE:
        if r.title:
            return r.title
        if r.status == "pending":
            return "loading…"
        if r.status in ("ok", "open-turn", "torn-tail"):
            return "(untitled)"
        return short_reason(r.reason)
    if col == Col.PROJECT:
        return project_label(r)
    if col == Col.ID:
        return r.session_id
    if col == Col.CREATED:
        return style.format_ms(r.header("createdAt"))
    if col == Col.MODIFIED:
        return style.format_ns(r.modified_ns)
    if col == Col.SIZE:
        return style.format_size(r.size)
    if col == Col.EVENTS:
        n = r.event_count
        return "" if n is None else f"{n:,}"
    if col == Col.ORIGIN:
        return r.lineage
    return style.STATUS_LABELS.get(r.status, r.status)


def tooltip(r: SessionRow, col: int) -> str:
    if col == Col.STATUS:
        text = f"{style.STATUS_LABELS.get(r.status, r.status)}: {r.reason}"
        if r.details is not None and r.details.error_class:
            text += f"\n({r.details.error_class})"
        if r.details is not None and r.details.closers:
            text += f"\n{r.details.closers} synthetic closer(s) are shown in memory only"
        return text
    if col == Col.PROJECT:
        return f"cwd: {r.cwd or '(none)'}\nproject dir: {r.project}"
    if col == Col.ID:
        return f"{r.session_id}\n{r.path or ''}"
    if col == Col.TITLE:
        return r.title or r.reason
    if col == Col.SIZE and r.size is not None:
        if r.compression is None:
            return f"{r.size:,} bytes of event data in the SQLite store"
        return f"{r.size:,} bytes on disk ({r.compression})"
    return ""


def filter_text(r: SessionRow) -> str:
    return " ".join(
        (r.title or "", r.session_id, r.cwd or "", r.project, style.STATUS_LABELS.get(r.status, r.status), r.lineage)
    ).lower()


def short_reason(reason: str, limit: int = 90) -> str:
    """A one-line gist of a diagnosis for the title column of an unreadable log."""
    text = reason
    for prefix in ("header unreadable: ", "corrupt session log: ", "corrupt Zstandard session log: "):
        if text.startswith(prefix):
            text = prefix.split(":")[0] + ": " + text[len(prefix) :]
            break
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def project_label(r: SessionRow) -> str:
    return r.cwd or r.project
