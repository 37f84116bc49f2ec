"""Help > Keyboard shortcuts (F1, or ``?`` outside a text field): every key of the window, generated.

Why generated: the list is built from the window's actions when it opens (``window_actions``, the
same walk the command palette makes), so a new menu entry or a changed key shows here without an
edit, and the list cannot go stale.  An action without a shortcut is listed with its menu path
("Alt+S, T": the menu's and the entry's mnemonics), so every entry shows how to reach it by key.
Keys that belong to the views themselves (arrows, Enter, Esc, Tab) are not actions; they are the
short fixed ``VIEW_KEYS`` list at the end.

May import: PySide6 and ``dialogs.command_palette`` (the action walk).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from app.gui import style
from app.gui.dialogs.command_palette import MENU_SEP, PALETTE_KEY, CatalogEntry, window_actions

HELP_KEYS = ("F1", "?")  # "?" only outside text fields: a line edit takes it as text (ShortcutOverride)
VIEWS_GROUP = "In the lists, the timeline and the raw lines"
VIEW_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ / ↓   PgUp / PgDn", "move in the list, the timeline tree, the raw lines or the results"),
    ("Ctrl+Home / Ctrl+End", "first / last row"),
    ("Enter", "open the session's content, expand a row, follow a lineage link, open a search hit"),
    ("→ / ←", "expand / collapse a timeline row"),
    ("Tab / Shift+Tab", "the next / previous pane (the focused pane has a highlighted border)"),
    ("Menu key", "the focused row's context menu (copy a link, fork here …)"),
    ("Esc", "cancel a load, leave the filter, close the find bar or a dialog"),
    ("Alt+letter", "open a menu by its underlined letter, then the entry's letter"),
)


def mnemonic(text: str) -> str | None:
    """The underlined letter of a menu text ("Re&sume" -> "S"), or None."""
    i = 0
    while i < len(text) - 1:
        if text[i] == "&":
            if text[i + 1] != "&":
                return text[i + 1].upper()
            i += 1
        i += 1
    return None


def menu_route(window: QMainWindow, entry: CatalogEntry) -> str:
    """How to reach ``entry`` through the menus by key ("Alt+S, T"), or "" when a menu has no mnemonic.

    An entry without a letter of its own in a menu that has one (File > Recent roots' folders) is
    "Alt+F, N, then ↑/↓ and Enter"."""
    if not entry.menu:
        return ""
    names = entry.menu.split(MENU_SEP)
    steps: list[str] = []
    menus = [a for a in window.menuBar().actions() if a.menu() is not None]
    for depth, name in enumerate(names):
        holder = next((a for a in menus if a.text().replace("&", "") == name), None)
        letter = mnemonic(holder.text()) if holder is not None else None
        if holder is None or letter is None:
            return ""
        steps.append(f"Alt+{letter}" if depth == 0 else letter)
        sub = holder.menu()
        menus = [a for a in sub.actions() if a.menu() is not None] if isinstance(sub, QMenu) else []
    letter = mnemonic(entry.action.text())
    if letter is None:
        return ", ".join(steps) + ", then ↑/↓ and Enter" if len(steps) > 1 else ""
    return ", ".join([*steps, letter])


KeyRow = tuple[str, str, bool]  # keys, what they do, whether the keys are a shortcut (not a menu route)


def key_rows(window: QMainWindow, entries: Sequence[CatalogEntry] | None = None) -> list[tuple[str, list[KeyRow]]]:
    """(group, [(keys, action name, is shortcut)]) in menu order, then the views' own keys: what the dialog lists."""
    groups: dict[str, list[KeyRow]] = {}
    for e in entries if entries is not None else window_actions(window):
        keys = e.keys or menu_route(window, e) or f"{PALETTE_KEY}, then type"
        top, _sep, sub = e.menu.partition(MENU_SEP)  # grouped by menu bar entry; a submenu names its entries
        name = f"{sub}{MENU_SEP}{e.name}" if sub else e.name
        groups.setdefault(top or "Window", []).append((keys, name, bool(e.keys)))
    out = list(groups.items())
    out.append((VIEWS_GROUP, [(k, what, True) for k, what in VIEW_KEYS]))
    return out


class ShortcutsDialog(QDialog):
    """The generated list, with a filter field; non-modal, so it can stay open beside the window."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.setObjectName("shortcutsDialog")
        self.resize(720, 640)
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"Every action of the window: its key, or its menu letters. {PALETTE_KEY} opens the command palette "
            "(every action by name). Press F1 or ? (outside a text field) to see this list again.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.field = QLineEdit(self)
        self.field.setPlaceholderText("Filter by key or action")
        self.field.setClearButtonEnabled(True)
        self.field.textChanged.connect(self._filter)
        layout.addWidget(self.field)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Keys", "Action"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.rows = key_rows(window)
        bold = self.tree.font()
        bold.setBold(True)
        for group, rows in self.rows:
            top = QTreeWidgetItem([group, ""])
            top.setFirstColumnSpanned(True)
            top.setFont(0, bold)
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(top)
            for keys, name, shortcut in rows:
                item = QTreeWidgetItem([keys, name])
                if not shortcut:
                    item.setForeground(0, style.brush(style.MUTED))  # a menu route, not a shortcut
                    item.setToolTip(0, "No shortcut: reach it through the menus with these letters, or the palette")
                top.addChild(item)
        self.tree.expandAll()
        layout.addWidget(self.tree)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def text(self) -> str:
        """Everything listed, one "keys  action" line per row (tests, copying)."""
        lines: list[str] = []
        for group, rows in self.rows:
            lines.append(group)
            lines += [f"  {k}  {n}" for k, n, _s in rows]
        return "\n".join(lines)

    def _filter(self, text: str) -> None:
        needle = text.strip().lower()
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is None:
                continue
            shown = 0
            for j in range(top.childCount()):
                child = top.child(j)
                if child is None:
                    continue
                hit = not needle or needle in child.text(0).lower() or needle in child.text(1).lower()
                child.setHidden(not hit)
                shown += hit
            top.setHidden(shown == 0)


def show_shortcuts(window: QMainWindow) -> ShortcutsDialog:
    """Open (or raise) the window's shortcuts list."""
    existing = window.findChild(ShortcutsDialog, "shortcutsDialog")
    if isinstance(existing, ShortcutsDialog) and existing.isVisible():
        existing.raise_()
        existing.activateWindow()
        return existing
    dlg = ShortcutsDialog(window)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dlg.show()
    return dlg


__all__ = ["HELP_KEYS", "VIEW_KEYS", "KeyRow", "ShortcutsDialog", "key_rows", "menu_route", "mnemonic", "show_shortcuts"]
