"""The session list as a Qt table model: a thin adapter over the Qt-free ``app.listing.SessionList``.

The rows, their sort order, the filter and the unseen marks live in ``app.listing`` (plain Python,
tested without Qt); this module says what each cell shows (text, colours, fonts, the unseen dot,
tooltips) and turns the listing's events into Qt's ``begin…``/``end…`` calls and signals, as napari's
Qt item models do over its evented lists.  Sorting and filtering are not a QSortFilterProxyModel: it
would compare rows through ``data()`` calls from C++, which at 10k rows cost ~0.3 s per inserted batch.

Rows appear as soon as their header is known; status, event count and title arrive later from the
background diagnosis pass (a row without them says so instead of blocking).  Asking for a pending
row's display data tells that pass to look at it first (lazy, Anki-style).  The view coalesces filter
keys (``views.session_list.FILTER_DEBOUNCE_MS``) and each filter pass is one ``layoutChanged``, never
a reset, so the selection and the current row stay on their sessions.

Unseen sessions (issue 16) are drawn with a bold title and a dot; the list controller loads and saves
the looked-at state per root.

May import: PySide6, ``app.gui.style``, ``app.listing`` and ``models.session_row``.
"""

from __future__ import annotations

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

from app.glossary import CLOSER, OPEN_TURN_LIVE, noun, plural
from app.gui import style
from app.gui.models.session_row import Details, SessionRow
from app.listing import ListObserver, SessionList

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


class _QtSignals(ListObserver):
    """The listing's events as the table model's Qt notifications (rows are display rows on both sides)."""

    def __init__(self, model: SessionListModel) -> None:
        self._m = model
        self._kept: tuple[list[QModelIndex], list[tuple[str | None, int]]] | None = None

    def inserting(self, first: int, last: int) -> None:
        self._m.beginInsertRows(QModelIndex(), first, last)

    def inserted(self) -> None:
        self._m.endInsertRows()

    def removing(self, first: int, last: int) -> None:
        self._m.beginRemoveRows(QModelIndex(), first, last)

    def removed(self) -> None:
        self._m.endRemoveRows()

    def moving(self, src: int, final: int) -> None:
        dst = final if final < src else final + 1  # Qt counts the destination before the removal
        self._m.beginMoveRows(QModelIndex(), src, src, QModelIndex(), dst)

    def moved(self) -> None:
        self._m.endMoveRows()

    def layout_changing(self) -> None:
        """Remember which session each persistent index (selection, current row) is on."""
        m = self._m
        m.layoutAboutToBeChanged.emit()
        old = m.persistentIndexList()
        listing, n = m.listing, m.listing.shown
        self._kept = (old, [(listing.key_at(i.row()) if 0 <= i.row() < n else None, i.column()) for i in old])

    def layout_changed(self) -> None:
        """Put every persistent index back on its session's new row."""
        m = self._m
        assert self._kept is not None  # always after layout_changing
        old, old_keys = self._kept
        self._kept = None
        new = [m.index_for_key(k, c) if k is not None else QModelIndex() for k, c in old_keys]
        m.changePersistentIndexList(old, new)
        m.layoutChanged.emit()

    def resetting(self) -> None:
        self._m.beginResetModel()

    def reset(self) -> None:
        self._m.endResetModel()

    def changed(self, first: int, last: int) -> None:
        m = self._m
        m.dataChanged.emit(m.index(first, 0), m.index(last, N_COLS - 1))

    def seen_changed(self) -> None:
        self._m.seen_changed.emit()


class SessionListModel(QAbstractTableModel):
    seen_changed = Signal()  # the looked-at state changed (the controller saves it, debounced)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.listing: SessionList[SessionRow] = SessionList(
            sort_value, filter_text, sort_column=Col.MODIFIED, descending=True, detail_columns=DETAIL_COLUMNS
        )
        self.listing.observer = _QtSignals(self)
        self.on_pending: Callable[[str], None] | None = None  # the details pass wants to hear about visible rows
        self.pinned_live = False  # the pinned (open) session's open turn is being written (issue 16 bug 3)
        self._fonts = {(b, i): _font(bold=b, italic=i) for b in (False, True) for i in (False, True)}
        self._dot: QIcon | None = None  # made on first use: a QPixmap needs the GUI application
        # The folder holding the root's artifacts (the root, or a SQLite store's folder; set by the controller).
        self.root_folder: str | None = None

    # ------------------------------------------------------------ the listing's state, as the window reads it

    @property
    def pinned_key(self) -> str | None:
        """The open session's key: its row shows the loader's snapshot, never the background pass (issue 16)."""
        return self.listing.pinned_key

    @pinned_key.setter
    def pinned_key(self, key: str | None) -> None:
        self.listing.pinned_key = key

    @property
    def looking_at(self) -> str | None:
        """The open session: its own changes are seen as they arrive."""
        return self.listing.looking_at

    @looking_at.setter
    def looking_at(self, key: str | None) -> None:
        self.listing.looking_at = key

    def row_at(self, row: int) -> SessionRow:
        """The row shown at display position ``row``."""
        return self.listing.row_at(row)

    def key_at(self, row: int) -> str:
        return self.listing.key_at(row)

    def rows(self) -> list[SessionRow]:
        """Every row, shown or filtered out."""
        return self.listing.rows()

    def keys(self) -> Iterable[str]:
        return self.listing.keys()

    @property
    def total(self) -> int:
        return self.listing.total

    @property
    def filter_words(self) -> list[str]:
        """The lower-case words of the filter that is applied (every one must occur in a shown row)."""
        return self.listing.filter_words

    @property
    def project_filter(self) -> str | None:
        return self.listing.project_filter

    @property
    def filtering(self) -> bool:
        return self.listing.filtering

    def status_counts(self) -> dict[str, int]:
        return self.listing.status_counts()

    def project_counts(self) -> dict[str, int]:
        return self.listing.project_counts()

    def row_for_key(self, key: str) -> int:
        """Display position of ``key`` (-1 when unknown or filtered out)."""
        return self.listing.row_for_key(key)

    def index_for_key(self, key: str, column: int = 0) -> QModelIndex:
        row = self.listing.row_for_key(key)
        return QModelIndex() if row < 0 else self.index(row, column)

    def get(self, key: str) -> SessionRow | None:
        return self.listing.get(key)

    def find_id(self, session_id: str) -> SessionRow | None:
        return self.listing.find_id(session_id)

    def children_of(self, session_id: str) -> list[SessionRow]:
        return self.listing.children_of(session_id)

    def is_unseen(self, r: SessionRow) -> bool:
        """Changed since the user last opened it (or, never opened, modified after the previous visit)."""
        return self.listing.is_unseen(r)

    def unseen_count(self) -> int:
        return self.listing.unseen_count()

    def set_seen_state(self, seen: dict[str, str | None], baseline_ns: int | None) -> None:
        """The root's looked-at state (from the controller, when a root opens; before its rows arrive)."""
        self.listing.set_seen_state(seen, baseline_ns)

    def seen_state(self) -> tuple[dict[str, str | None], int | None]:
        return self.listing.seen_state()

    def mark_seen(self, key: str) -> None:
        """The user opened ``key``: its current revision counts as looked at (clears its mark)."""
        self.listing.mark_seen(key)

    # ------------------------------------------------------------ user actions and refreshes (the listing's)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if 0 <= column < N_COLS:
            self.listing.sort(Col(column), descending=order == Qt.SortOrder.DescendingOrder)

    def set_filter_text(self, text: str) -> None:
        self.listing.set_filter_text(text)

    def set_project(self, project: str | None) -> None:
        self.listing.set_project(project)

    def clear(self) -> None:
        """Only for switching roots: refreshes of one root never reset."""
        self.listing.clear()

    def append_rows(self, rows: list[SessionRow]) -> None:
        self.listing.append_rows(rows)

    def remove_keys(self, keys: Iterable[str]) -> None:
        self.listing.remove_keys(keys)

    def replace_row(self, row: SessionRow) -> None:
        """A changed listing for an existing key: details survive when the revision still matches."""
        self.listing.replace_row(row)

    def apply_details(self, updates: dict[str, Details], *, pinned: bool = False) -> None:
        self.listing.apply_details(updates, pinned=pinned)

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

    # ------------------------------------------------------------ Qt's read access

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.listing.shown

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else N_COLS

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY and 0 <= section < N_COLS:
            return HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def _row_of(self, index: Index) -> SessionRow | None:
        return self.listing.row_or_none(index.row()) if index.isValid() else None

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


LIVE_LABEL = OPEN_TURN_LIVE  # the Status cell of the open session while a writer is active (as its banner)


# ---------------------------------------------------------------- cell values


def status_colors(r: SessionRow) -> tuple[str, str | None]:
    """(foreground, background) of the status cell; a bad row whose status has no colours of its own
    (``unreadable``) is painted like ``corrupt``: it must stand out, never look fine."""
    colors = style.STATUS_COLORS.get(r.status)
    if colors is None:
        colors = style.STATUS_COLORS["corrupt"] if r.problem_status is not None else (style.MUTED, None)
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
            text += f"\n{plural(r.details.closers, CLOSER)} {noun(r.details.closers, 'is')} shown in memory only"
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
