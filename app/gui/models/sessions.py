"""The session list as a table model that sorts and filters itself.

Rows appear as soon as their header is known; status, event count and title arrive later from the
background diagnosis pass (a row without them says so instead of blocking).  Asking for a pending
row's display data tells that pass to look at it first (lazy, Anki-style).

Sorting and filtering happen here, in Python, over cached keys: a QSortFilterProxyModel would
compare rows through ``data()`` calls from C++, which at 10k rows cost ~0.3 s per inserted batch.
Every row's sort key and its lower-case filter text are computed when the row arrives or changes, and
every row's sort key is kept in one sorted list (``_full``), so a filter pass is a substring test per
row over that list (its result is already sorted): ~2-7 ms on 10,000 rows instead of ~45 ms (sorting
and building each row's text on every key; issue 16, ``benchmarks/bench_filter.py``).  The view
coalesces keys (``views.session_list.FILTER_DEBOUNCE_MS``) and each pass is one ``layoutChanged``,
never a reset, so the selection and the current row stay on their sessions.

Refreshes are per row: an inserted row goes to its sorted place, a changed row is updated (and moved
if its sort key moved), a removed row is removed.  Only user actions (sorting, filtering) and
switching roots relayout or reset the whole list.

Unseen sessions (issue 16): a row whose revision moved since the user last opened it, or (never
opened) that was modified after the previous visit to the root, is drawn with a bold title and a dot.
The model only keeps that state (``seen``: key -> revision looked at, and the visit baseline); the
list controller loads and saves it per root.

May import: PySide6, ``app.gui.style`` and ``models.session_row``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable
from enum import IntEnum
from typing import Any, cast

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    QPointF,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap

from app.gui import style
from app.gui.models.session_row import Details, SessionRow

Index = QModelIndex | QPersistentModelIndex
SortKey = tuple[Any, str]  # (the sort column's value, row key): unique per row, so bisect finds one row


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
# Sessions remembered as looked at, per root (the oldest forgotten first): ~150 bytes each in the settings file.
SEEN_MAX_PER_ROOT = 1000
UNSEEN_TIP = "● Changed since you last looked"
UNSEEN_DOT_PX = 8  # diameter of the unseen dot in the title cell, in pixels

KEY_ROLE = Qt.ItemDataRole.UserRole + 1
PROJECT_ROLE = Qt.ItemDataRole.UserRole + 4
STATUS_ROLE = Qt.ItemDataRole.UserRole + 5
ID_ROLE = Qt.ItemDataRole.UserRole + 6
UNSEEN_ROLE = Qt.ItemDataRole.UserRole + 7

_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_DECORATION = int(Qt.ItemDataRole.DecorationRole)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren


def _font(*, bold: bool = False, italic: bool = False) -> QFont:
    f = QFont()
    f.setBold(bold)
    f.setItalic(italic)
    return f


class SessionListModel(QAbstractTableModel):
    seen_changed = Signal()  # the looked-at state changed (the controller saves it, debounced)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._all: dict[str, SessionRow] = {}
        self._hay: dict[str, str] = {}  # key -> lower-case filter text, computed when the row arrives or changes
        self._sk: dict[str, SortKey] = {}  # key -> its sort key under the current sort column
        self._full: list[SortKey] = []  # every row's sort key, ascending (a filter pass keeps this order)
        self._asc: list[str] = []  # visible keys, ascending by sort key (display order flips when descending)
        self._asc_keys: list[SortKey] = []
        self._pos: dict[str, int] | None = None  # key -> index in _asc (rebuilt lazily)
        self._sort_col = Col.MODIFIED
        self._desc = True
        self._words: list[str] = []
        self._project: str | None = None
        self.on_pending: Callable[[str], None] | None = None  # the details pass wants to hear about visible rows
        # The open session's row shows the loader's snapshot, never the background pass: one revision
        # for the list, the banners and the tabs (issue 16).  Set by ``pin_details``.
        self.pinned_key: str | None = None
        self.pinned_live = False  # the pinned (open) session's open turn is being written (issue 16 bug 3)
        self._status_counts: Counter[str] = Counter()
        self._project_counts: Counter[str] = Counter()
        self._fonts = {(b, i): _font(bold=b, italic=i) for b in (False, True) for i in (False, True)}
        self._dot: QIcon | None = None  # made on first use: a QPixmap needs the GUI application
        # The folder holding the root's artifacts (the root, or a SQLite store's folder; set by the controller).
        self.root_folder: str | None = None
        self._seen: dict[str, str | None] = {}  # key -> revision when the user last opened it (oldest first)
        self._baseline_ns: int | None = None  # never-opened rows modified after this are unseen (None: none are)
        self.looking_at: str | None = None  # the open session: its own changes are seen as they arrive

    # ------------------------------------------------------------ positions

    def _positions(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {k: i for i, k in enumerate(self._asc)}
        return self._pos

    def _display_row(self, asc_index: int) -> int:
        return len(self._asc) - 1 - asc_index if self._desc else asc_index

    def _asc_index(self, display_row: int) -> int:
        return len(self._asc) - 1 - display_row if self._desc else display_row

    def _sort_key(self, r: SessionRow) -> SortKey:
        return (sort_value(r, self._sort_col), r.key)

    def _accepts(self, r: SessionRow) -> bool:
        if self._project is not None and r.project != self._project:
            return False
        hay = self._hay.get(r.key)
        if hay is None:
            hay = self._hay[r.key] = filter_text(r)
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

    @property
    def filter_words(self) -> list[str]:
        """The lower-case words of the filter that is applied (every one must occur in a shown row)."""
        return list(self._words)

    @property
    def project_filter(self) -> str | None:
        return self._project

    @property
    def filtering(self) -> bool:
        return bool(self._words) or self._project is not None

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

    def _row_of(self, index: Index) -> SessionRow | None:
        if not index.isValid():
            return None
        row, n = index.row(), len(self._asc)
        if not 0 <= row < n:
            return None
        return self._all[self._asc[n - 1 - row if self._desc else row]]

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        r = self._row_of(index)
        return None if r is None else self._cell(r, index.column(), role)

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role a delegate asks for, with the row looked up once (painting 180 cells asks ~1,300 roles)."""
        if isinstance(roleDataSpan, QModelRoleData):
            roleDataSpan = QModelRoleDataSpan(roleDataSpan)
        r = self._row_of(index)
        col = index.column()
        # A span is iterable at run time (PySide6 gives it __len__ and __getitem__); its stub says not.
        for item in cast("Iterable[QModelRoleData]", roleDataSpan):
            value = None if r is None else self._cell(r, col, item.role())
            if value is None:
                item.clearData()  # delegates reuse their role buffer: a stale value would leak into this cell
            else:
                item.setData(value)

    def _cell(self, r: SessionRow, col: int, role: int) -> Any:
        if role == _DISPLAY:
            if col in DETAIL_COLUMNS and self.on_pending is not None and r.status == "pending":
                self.on_pending(r.key)
            if col == Col.STATUS and self.pinned_live and r.key == self.pinned_key and r.status == "open-turn":
                return LIVE_LABEL
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
            if col != Col.TITLE:
                return None
            unseen, italic = self.is_unseen(r), not r.title
            return self._fonts[(unseen, italic)] if unseen or italic else None
        if role == _DECORATION:
            return self._unseen_dot() if col == Col.TITLE and self.is_unseen(r) else None
        if role == _ALIGN:
            return _RIGHT if col in (Col.SIZE, Col.EVENTS) else None
        if role == _TOOLTIP:
            tip = tooltip(r, col)
            return f"{UNSEEN_TIP}\n{tip}" if col == Col.TITLE and self.is_unseen(r) else tip
        if role == KEY_ROLE:
            return r.key
        if role == ID_ROLE:
            return r.session_id
        if role == PROJECT_ROLE:
            return r.project
        if role == STATUS_ROLE:
            return r.status
        if role == UNSEEN_ROLE:
            return self.is_unseen(r)
        return None

    def _unseen_dot(self) -> QIcon:
        if self._dot is None:
            px = QPixmap(UNSEEN_DOT_PX, UNSEEN_DOT_PX)
            px.fill(Qt.GlobalColor.transparent)
            p = QPainter(px)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(style.LINK_COLOR))
            r = UNSEEN_DOT_PX / 2
            p.drawEllipse(QPointF(r, r), r - 0.5, r - 0.5)
            p.end()
            self._dot = QIcon(px)
        return self._dot

    # ------------------------------------------------------------ unseen sessions

    def is_unseen(self, r: SessionRow) -> bool:
        """Changed since the user last opened it (or, never opened, modified after the previous visit)."""
        seen = self._seen.get(r.key, _NEVER)
        if seen is not _NEVER:
            return seen != r.revision
        b = self._baseline_ns
        return b is not None and (r.modified_ns or 0) > b

    def unseen_count(self) -> int:
        return sum(1 for r in self._all.values() if self.is_unseen(r))

    def set_seen_state(self, seen: dict[str, str | None], baseline_ns: int | None) -> None:
        """The root's looked-at state (from the controller, when a root opens; before its rows arrive)."""
        self._seen = dict(seen)
        self._baseline_ns = baseline_ns
        self.looking_at = None
        if self._asc:
            self._emit_all_changed()

    def seen_state(self) -> tuple[dict[str, str | None], int | None]:
        return dict(self._seen), self._baseline_ns

    def mark_seen(self, key: str) -> None:
        """The user opened ``key``: its current revision counts as looked at (clears its mark)."""
        r = self._all.get(key)
        if r is None:
            return
        self.looking_at = key
        if self._seen.get(key, _NEVER) == r.revision and key in self._seen:
            return
        was = self.is_unseen(r)
        self._seen.pop(key, None)  # re-inserted last: the dict's order is oldest-looked-at first
        self._seen[key] = r.revision
        while len(self._seen) > SEEN_MAX_PER_ROOT:
            del self._seen[next(iter(self._seen))]
        if was:
            row = self.row_for_key(key)
            if row >= 0:
                self.dataChanged.emit(self.index(row, 0), self.index(row, N_COLS - 1))
        self.seen_changed.emit()

    # ------------------------------------------------------------ sorting and filtering (user actions)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < N_COLS:
            return
        self._sort_col = Col(column)
        self._desc = order == Qt.SortOrder.DescendingOrder
        self._sk = {k: self._sort_key(r) for k, r in self._all.items()}
        self._full = sorted(self._sk.values())
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

    def _filtered(self) -> list[SortKey]:
        """The shown rows' sort keys, ascending: ``_full`` filtered (already in order, so never re-sorted)."""
        out = self._full
        if self._project is not None:
            rows, project = self._all, self._project
            out = [p for p in out if rows[p[1]].project == project]
        hay = self._hay
        for w in self._words:  # one pass per word, each over what the previous one kept
            out = [p for p in out if w in hay[p[1]]]
        return list(out) if out is self._full else out

    def _relayout(self) -> None:
        """Re-filter everything, keeping persistent indexes (selection, current row) on their rows."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        old_keys = [(self.key_at(i.row()) if 0 <= i.row() < len(self._asc) else None, i.column()) for i in old]
        self._asc_keys = self._filtered()
        self._asc = [p[1] for p in self._asc_keys]
        self._pos = None
        new = [self.index_for_key(k, c) if k is not None else QModelIndex() for k, c in old_keys]
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # ------------------------------------------------------------ refreshes (row by row)

    def clear(self) -> None:
        """Only for switching roots: refreshes of one root never reset."""
        self.beginResetModel()
        self._all = {}
        self._hay = {}
        self._sk = {}
        self._full = []
        self._asc = []
        self._asc_keys = []
        self._pos = None
        self._status_counts.clear()
        self._project_counts.clear()
        self.looking_at = None
        self.endResetModel()

    def _index_row(self, r: SessionRow) -> None:
        """Compute ``r``'s filter text and sort key (and its place in ``_full``); it must be in ``_all``."""
        self._hay[r.key] = filter_text(r)
        k = self._sort_key(r)
        old = self._sk.get(r.key)
        if old == k:
            return
        if old is not None:
            i = bisect.bisect_left(self._full, old)
            if i < len(self._full) and self._full[i] == old:
                del self._full[i]
        bisect.insort(self._full, k)
        self._sk[r.key] = k

    def append_rows(self, rows: list[SessionRow]) -> None:
        fresh = [r for r in rows if r.key not in self._all]
        for r in fresh:
            self._all[r.key] = r
            self._count(r, +1)
            self._hay[r.key] = filter_text(r)
        if len(fresh) > BULK_INSERT:
            # A listing batch: one merge into ``_full`` (Timsort merges the two sorted runs in C).
            new = sorted(self._sort_key(r) for r in fresh)
            self._sk.update((k[1], k) for k in new)
            self._full.extend(new)
            self._full.sort()
        else:
            for r in fresh:
                self._index_row(r)
        shown = [r for r in fresh if self._accepts(r)]
        if not shown:
            return
        if len(shown) > BULK_INSERT:
            # One insert notification at the end, then one relayout into sorted order.
            first = len(self._asc)
            self.beginInsertRows(QModelIndex(), first, first + len(shown) - 1)
            self._asc.extend(r.key for r in shown)
            self._asc_keys.extend(self._sk[r.key] for r in shown)
            self._pos = None
            self.endInsertRows()
            self._relayout()
            return
        for r in shown:
            self._insert_sorted(r)

    def _insert_sorted(self, r: SessionRow) -> None:
        k = self._sk[r.key]
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
            if r is None:
                continue
            self._count(r, -1)
            self._remove_visible(key)
            self._hay.pop(key, None)
            old = self._sk.pop(key, None)
            if old is not None:
                i = bisect.bisect_left(self._full, old)
                if i < len(self._full) and self._full[i] == old:
                    del self._full[i]

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
        if row.key == self.looking_at:
            self.mark_seen(row.key)  # the open session's own changes are watched as they arrive
        self._place(row)

    def pin_details(self, key: str | None, det: Details | None = None, *, live: bool = False) -> None:
        """Show ``det`` for ``key`` and ignore the background pass for that row from now on (None: unpin);
        ``live``: its open turn is being written, and the Status cell says so as the banner does."""
        was_live = self.pinned_key if self.pinned_live else None
        self.pinned_key = key
        self.pinned_live = key is not None and live
        if key is not None and det is not None:
            self.apply_details({key: det}, pinned=True)
        for k in {was_live, key if self.pinned_live else None} - {None}:
            row = self.row_for_key(k)  # type: ignore[arg-type]
            if row >= 0:
                self.dataChanged.emit(self.index(row, Col.STATUS), self.index(row, Col.STATUS))

    def apply_details(self, updates: dict[str, Details], *, pinned: bool = False) -> None:
        changed: list[SessionRow] = []
        for key, det in updates.items():
            if key == self.pinned_key and not pinned:
                continue  # the open session: its snapshot decides what the row says
            r = self._all.get(key)
            if r is not None:
                self._status_counts[r.status] -= 1
                r.details = det
                self._status_counts[r.status] += 1
                changed.append(r)
        if not changed:
            return
        moves = self._sort_col in DETAIL_COLUMNS
        if len(changed) > BULK_INSERT and (moves or self._words):
            for r in changed:  # new titles and statuses: new filter texts (and sort keys)
                self._hay[r.key] = filter_text(r)
                if moves:
                    self._sk[r.key] = self._sort_key(r)
            if moves:
                self._full = sorted(self._sk.values())
            self._relayout()  # many sort keys/filter matches moved at once: one relayout
            self._emit_all_changed()
            return
        if not moves and not self._words:
            for r in changed:
                self._hay[r.key] = filter_text(r)
            self._emit_changed(changed)  # no row moves: batched dataChanged
            return
        for r in changed:
            self._place(r)

    def _emit_all_changed(self) -> None:
        self.dataChanged.emit(self.index(0, 0), self.index(max(0, len(self._asc) - 1), N_COLS - 1))

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
        self._index_row(r)
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
        k = self._sk[r.key]
        j = bisect.bisect_left(self._asc_keys, k)
        if j > i:
            j -= 1  # its place among the others: the old key at ``i`` sorts before ``k``
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


LIVE_LABEL = "open turn · live"  # the Status cell of the open session while a writer is active (as its banner)
_NEVER: Any = object()  # a key the user never opened (``None`` is a real revision: a row without one)


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
