"""The command palette (Ctrl+Shift+P): every action of the window by name, filtered as you type.

Why collected from the menus and not a hand-kept list: an action added to a menu later shows up
here (and in the keyboard shortcuts, ``dialogs.shortcuts_dialog``) without anyone remembering to
list it, so neither can go stale.  ``window_actions`` walks the menu bar (submenus included) and
then the window's own actions, once per opening, so enabled states and shortcut texts are the ones
of that moment; a disabled action is listed greyed and cannot be run.

Matching (``match_score``) is Qt-free: every word of the query must occur in the action's name
(best), or in its name, menu and keys together; a word that is not a substring may still match as
a subsequence ("rsm" finds "Resume"), ranked below substrings.  The list is a few dozen entries,
so it is re-ranked on every keystroke.

May import: PySide6 and ``app.gui.style``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QTreeView,
    QVBoxLayout,
)

from app.gui import style

Index = QModelIndex | QPersistentModelIndex

PALETTE_KEY = "Ctrl+Shift+P"
PALETTE_WIDTH_PX = 680  # wide enough for "Fork here, after the selected turn …  Session  Ctrl+Shift+F"
PALETTE_ROWS = 14  # rows visible without scrolling
MENU_SEP = " ▸ "
NAME_BONUS = 1000  # a match in the action's own name always ranks above one that needs its menu or keys
SUBSTRING_SCORE = 100  # a word found as a substring (minus its position, up to 50)
WORD_START_BONUS = 50  # ... and more when it starts a word ("fork" in "Fork here" beats "unforked")
FUZZY_SCORE = 40  # a word found only as a subsequence (minus the gaps between its letters)
NAVIGATION_KEYS = (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown)


def plain_text(text: str) -> str:
    """A menu text without its mnemonic marks ("&Open root …" -> "Open root …"; "&&" stays "&")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def keys_text(action: QAction, fmt: QKeySequence.SequenceFormat = QKeySequence.SequenceFormat.NativeText) -> str:
    """The action's shortcut(s) as shown to the user, comma-separated ("" when it has none)."""
    return ", ".join(seq.toString(fmt) for seq in action.shortcuts() if not seq.isEmpty())


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One action of the window as the palette and the shortcuts list show it."""

    action: QAction
    name: str  # the text without mnemonic marks
    menu: str  # "Session", "File ▸ Recent roots"; "" for an action in no menu
    keys: str  # native shortcut text, "" when none

    @property
    def enabled(self) -> bool:
        return self.action.isEnabled()

    def haystack(self) -> str:
        return f"{self.name} {self.menu} {self.keys}"


def window_actions(window: QMainWindow, *, fill_dynamic: bool = True) -> list[CatalogEntry]:
    """Every visible action of ``window``'s menu bar (depth first, in menu order), then its other actions.

    With ``fill_dynamic``, each menu's ``aboutToShow`` is emitted first, so menus filled when they
    open (File > Recent roots) list their current entries.
    """
    out: list[CatalogEntry] = []
    seen: set[int] = set()

    def walk(menu: QMenu, path: str) -> None:
        if fill_dynamic:
            menu.aboutToShow.emit()
        for act in menu.actions():
            sub = act.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{path}{MENU_SEP}{plain_text(act.text())}" if path else plain_text(act.text()))
                continue
            add(act, path)

    def add(act: QAction, path: str) -> None:
        if act.isSeparator() or not act.isVisible() or not act.text() or id(act) in seen:
            return
        seen.add(id(act))
        out.append(CatalogEntry(act, plain_text(act.text()), path, keys_text(act)))

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, plain_text(top.text()))
        else:
            add(top, "")
    for act in window.actions():
        add(act, "")
    return out


def _word_score(word: str, text: str) -> int | None:
    i = text.find(word)
    if i >= 0:
        start = i == 0 or not text[i - 1].isalnum()
        return SUBSTRING_SCORE - min(i, 50) + (WORD_START_BONUS if start else 0)
    pos, gaps = -1, 0
    for ch in word:
        j = text.find(ch, pos + 1)
        if j < 0:
            return None
        gaps += j - pos - 1
        pos = j
    return max(1, FUZZY_SCORE - gaps)


def match_score(query: str, text: str) -> int | None:
    """How well ``query`` matches ``text`` (higher is better), or None when some word does not match."""
    t = text.lower()
    total = 0
    for word in query.lower().split():
        s = _word_score(word, t)
        if s is None:
            return None
        total += s
    return total


def rank(entries: Sequence[CatalogEntry], query: str) -> list[CatalogEntry]:
    """The entries matching ``query``, best first (menu order among equals); all of them for an empty query."""
    if not query.strip():
        return list(entries)
    scored: list[tuple[int, int, CatalogEntry]] = []
    for i, e in enumerate(entries):
        s = match_score(query, e.name)
        if s is not None:
            s += NAME_BONUS
        else:
            s = match_score(query, e.haystack())
        if s is not None:
            scored.append((-s, i, e))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [e for _s, _i, e in scored]


COLUMNS = ("Action", "Menu", "Keys")


class PaletteModel(QAbstractTableModel):
    """The ranked entries: name, menu, keys; a disabled action's row is not enabled (greyed, not selectable)."""

    def __init__(self, entries: Sequence[CatalogEntry], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.entries = list(entries)
        self.shown: list[CatalogEntry] = list(entries)

    def set_query(self, query: str) -> None:
        self.beginResetModel()
        self.shown = rank(self.entries, query)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.shown)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(COLUMNS)

    def entry(self, row: int) -> CatalogEntry | None:
        return self.shown[row] if 0 <= row < len(self.shown) else None

    def flags(self, index: Index) -> Qt.ItemFlag:
        e = self.entry(index.row()) if index.isValid() else None
        if e is None or not e.enabled:
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        e = self.entry(index.row()) if index.isValid() else None
        if e is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (e.name, e.menu, e.keys)[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = e.action.toolTip()
            tip = "" if plain_text(tip) == e.name else tip  # Qt's default tooltip is the text itself
            return tip or (e.name if e.enabled else f"{e.name}: not available now")
        if role == Qt.ItemDataRole.ForegroundRole and col > 0 and e.enabled:
            return style.brush(style.MUTED)
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class CommandPalette(QDialog):
    """Type to filter, ↑/↓ to choose, Enter to run, Esc to close."""

    def __init__(self, window: QMainWindow, entries: Sequence[CatalogEntry] | None = None) -> None:
        super().__init__(window)
        self.setWindowTitle("Command palette")
        self.setObjectName("commandPalette")
        self.window_ = window
        self.model = PaletteModel(entries if entries is not None else window_actions(window), self)
        self.ran: QAction | None = None  # the action Enter ran (tests)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(4)
        self.field = QLineEdit(self)
        self.field.setPlaceholderText("Type an action's name (or its menu or keys); Enter runs it, Esc closes")
        self.field.setClearButtonEnabled(True)
        self.field.textChanged.connect(self._filter)
        self.field.installEventFilter(self)
        layout.addWidget(self.field)
        self.list = QTreeView(self)
        self.list.setModel(self.model)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setItemsExpandable(False)
        self.list.setAllColumnsShowFocus(True)
        self.list.setHeaderHidden(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # typing always goes to the field
        h = self.list.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.list.activated.connect(lambda idx: self.run_row(idx.row()))
        layout.addWidget(self.list)
        self.hint = QLabel(self)
        self.hint.setStyleSheet(f"color: {style.MUTED};")
        layout.addWidget(self.hint)
        row_h = max(18, self.list.fontMetrics().height() + 6)
        self.list.setMinimumHeight(row_h * PALETTE_ROWS)
        self.resize(PALETTE_WIDTH_PX, self.sizeHint().height())
        self._filter("")

    # ------------------------------------------------------------ showing

    def popup(self) -> None:
        """Show at the top centre of the window, window-modal (never a nested event loop)."""
        geo = self.window_.geometry()
        self.move(geo.x() + (geo.width() - self.width()) // 2, geo.y() + 60)
        self.open()
        self.field.setFocus(Qt.FocusReason.PopupFocusReason)

    # ------------------------------------------------------------ filtering and choosing

    def _filter(self, text: str) -> None:
        self.model.set_query(text)
        first = self._next_enabled(0, 1)
        if first is not None:
            self.list.setCurrentIndex(self.model.index(first, 0))
        n = self.model.rowCount()
        off = sum(1 for e in self.model.shown if not e.enabled)
        if n == 0:
            self.hint.setText(f"No action matches '{text}'")
        else:
            grey = f" · {off} greyed: not available now" if off else ""
            self.hint.setText(f"{n} of {len(self.model.entries)} actions{grey}")

    def _next_enabled(self, start: int, step: int) -> int | None:
        row = start
        while 0 <= row < self.model.rowCount():
            e = self.model.entry(row)
            if e is not None and e.enabled:
                return row
            row += step
        return None

    def current_entry(self) -> CatalogEntry | None:
        idx = self.list.currentIndex()
        return self.model.entry(idx.row()) if idx.isValid() else None

    def _move(self, key: int) -> None:
        cur = self.list.currentIndex().row()
        n = self.model.rowCount()
        page = max(1, PALETTE_ROWS - 1)
        step = 1 if key in (Qt.Key.Key_Down, Qt.Key.Key_PageDown) else -1
        dist = page if key in (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown) else 1
        target = min(max(0, (cur if cur >= 0 else -step) + step * dist), max(0, n - 1))
        found = self._next_enabled(target, step)
        if found is None:
            found = self._next_enabled(target, -step)
        if found is not None:
            self.list.setCurrentIndex(self.model.index(found, 0))

    def run_row(self, row: int) -> bool:
        """Close the palette and run the action at ``row`` (not when it is disabled); True when run."""
        e = self.model.entry(row)
        if e is None or not e.enabled:
            if e is not None:
                self.hint.setText(f"“{e.name}” is not available now")
            return False
        self.ran = e.action
        self.accept()
        # After the palette is gone: the action may open a dialog or move focus in the window.
        QTimer.singleShot(0, e.action.trigger)
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key = event.key()
            if key in NAVIGATION_KEYS:
                self._move(key)
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                cur = self.list.currentIndex()
                if cur.isValid():
                    self.run_row(cur.row())
                return True
        return super().eventFilter(watched, event)


def open_palette(window: QMainWindow) -> CommandPalette:
    """Build the palette over ``window``'s actions as they are now and show it."""
    dlg = CommandPalette(window)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dlg.popup()
    return dlg


__all__ = [
    "MENU_SEP",
    "PALETTE_KEY",
    "CatalogEntry",
    "CommandPalette",
    "PaletteModel",
    "keys_text",
    "match_score",
    "open_palette",
    "plain_text",
    "rank",
    "window_actions",
]
