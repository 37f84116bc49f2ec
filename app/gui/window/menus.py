"""The window's menus, keyboard actions and the list's context menu: built once, enabled per row.

Holds no session logic.  Each entry runs a command the window supplies (``MenuCommands``), and
``enable_for`` switches the Session entries on and off with the session actions' ``can_*`` rules and
the timeline's "fork here" choice; for a read-only source (a received transcript or bundle) the
in-place entries are off with a tooltip saying why, and "Repair a copy …" / "Fork into …" show instead.

A feature adds its own entries to these menus (``menu(title)``, ``add_shortcut``) from its own module;
nothing here knows the features.

May import: PySide6, ``controllers.session_actions`` (its static ``can_*`` rules only), the models'
values, ``window.tabs`` (tab keys) and ``dialogs.shortcuts_dialog`` (Help > Keyboard shortcuts).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from app.gui.controllers.session_actions import SessionActions
from app.gui.dialogs.shortcuts_dialog import HELP_KEYS, show_shortcuts
from app.gui.models.session_row import SessionRow
from app.gui.window.tabs import BASE_TABS, HEADER, RAW, TIMELINE

# Where the window's own tabs sit, derived from the order it adds them (tests and older callers); the
# window and its features go by key (``window.tabs``).
TAB_HEADER, TAB_TIMELINE, TAB_RAW = (BASE_TABS.index(k) for k in (HEADER, TIMELINE, RAW))

KEYS_HELP = "\n".join(
    (
        "↑/↓  move in the list, tree or raw lines",
        "Enter  open the session's content / expand a row / follow a lineage link",
        "Ctrl+F  filter sessions      Esc  cancel a load / leave the filter",
        "Ctrl+1 / Ctrl+2 / Ctrl+3  Header / Timeline / Raw",
        "Ctrl+O  open a folder (root, case folder)   Ctrl+Shift+O  open a file (transcript, bundle, store)   F5  refresh",
        "Ctrl+R  repair …   Ctrl+Shift+R  resume …   Ctrl+Shift+F  fork after the selected turn …",
        "",
        "Ctrl+K  search every session (Enter or click a hit: open the session at that event)",
        "Ctrl+G  find in this session   F3 / Shift+F3  next / previous match   Esc  close the find bar",
        "Alt+Left / Alt+Right  back / forward between visited events",
        "Ctrl+Shift+L  copy a link to the selected event (also in the timeline's and raw lines' menus)",
        "",
        "Ctrl+4  Stats   Ctrl+Shift+D  dashboard   Ctrl+Shift+T  lineage   Ctrl+E  export the open session …",
    )
)


@dataclass(frozen=True, slots=True)
class MenuCommands:
    """What each entry does: the window's slots (the Session ones act on the open row)."""

    open_root: Callable[[], object]
    open_store: Callable[[], object]
    open_demo: Callable[[], object]
    refresh: Callable[[], object]
    quit: Callable[[], object]
    repair: Callable[[], object]
    fork_here: Callable[[], object]
    fork_last: Callable[[], object]
    resume: Callable[[], object]
    copy_raw: Callable[[], object]
    restore: Callable[[], object]
    show_tab: Callable[[str], object]  # a content tab's key
    focus_filter: Callable[[], object]
    escape: Callable[[], object]
    recent_roots: Callable[[], list[str]]
    open_recent: Callable[[str], object]
    search_all: Callable[[], object]
    find_in_session: Callable[[], object]
    find_next: Callable[[], object]
    find_previous: Callable[[], object]
    back: Callable[[], object]
    forward: Callable[[], object]
    copy_link: Callable[[], object]
    update_index: Callable[[], object]
    rebuild_index: Callable[[], object]
    stop_indexing: Callable[[], object]
    repair_copy: Callable[[], object] | None = None  # a read-only source: repair a copy in a folder the user picks
    fork_into: Callable[[], object] | None = None  # a read-only source: fork a copy in a folder the user picks
    about: Callable[[], object] | None = None  # Help > About (disabled when the window offers none)
    go_to_damage: Callable[[], object] | None = None  # View > Go to damage (F8): the Raw tab's first damage marker


class WindowMenus:
    """File, Session, View and Help menus of ``window``; every QAction is also a window shortcut."""

    def __init__(self, window: QMainWindow, commands: MenuCommands) -> None:
        self._window = window
        self._commands = commands
        bar = window.menuBar()

        file_menu = bar.addMenu("&File")
        # One front door for every source (issue 23): a folder (a root or a case folder), or a file (a
        # transcript, a support bundle, a SQLite store), recognised by content whatever its name.
        self.open_root = QAction(
            "&Open folder …", window, shortcut=QKeySequence("Ctrl+O"), triggered=lambda: commands.open_root()
        )
        self.open_root.setToolTip("A session root or a case folder")
        self.open_store = QAction(
            "Open &file …", window, shortcut=QKeySequence("Ctrl+Shift+O"), triggered=lambda: commands.open_store()
        )
        self.open_store.setToolTip("A transcript, a support bundle (.zip) or a SQLite store: opened read-only when received")
        self.demo = QAction("Open the &demo root", window, triggered=lambda: commands.open_demo())
        self.refresh = QAction("&Refresh", window, shortcut=QKeySequence("F5"), triggered=lambda: commands.refresh())
        self.quit = QAction("&Quit", window, shortcut=QKeySequence("Ctrl+Q"), triggered=lambda: commands.quit())
        self.recent_menu = file_menu.addMenu("Open Rece&nt")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        for a in (self.open_root, self.open_store, self.demo, self.refresh, self.quit):
            file_menu.addAction(a)
            window.addAction(a)

        session_menu = bar.addMenu("&Session")
        self.repair = QAction("&Repair …", window, shortcut=QKeySequence("Ctrl+R"), triggered=lambda: commands.repair())
        self.fork_here = QAction(
            "Fork &here, after the selected turn …",
            window,
            shortcut=QKeySequence("Ctrl+Shift+F"),
            triggered=lambda: commands.fork_here(),
        )
        self.fork_last = QAction("&Fork after the last completed turn …", window, triggered=lambda: commands.fork_last())
        self.resume = QAction(
            "Re&sume in the harness …", window, shortcut=QKeySequence("Ctrl+Shift+R"), triggered=lambda: commands.resume()
        )
        self.copy_raw = QAction("&Copy raw artifact …", window, triggered=lambda: commands.copy_raw())
        self.restore = QAction("Res&tore a backup …", window, triggered=lambda: commands.restore())
        self.repair_copy = QAction("Repair a &copy …", window, triggered=lambda: commands.repair_copy and commands.repair_copy())
        self.fork_into = QAction("Fork &into …", window, triggered=lambda: commands.fork_into and commands.fork_into())
        self.repair_copy.setToolTip("Copy this session into a folder you pick and repair the copy; the source is only read")
        self.fork_into.setToolTip("Copy this session into a folder you pick and fork it there; the source is only read")
        self.in_place_entries = (self.repair, self.fork_here, self.fork_last, self.resume, self.restore)
        self.copy_entries = (self.repair_copy, self.fork_into)
        self.session_entries = (self.repair, self.fork_here, self.fork_last, self.resume, self.copy_raw, self.restore)
        for a in (*self.session_entries[:4], *self.copy_entries, *self.session_entries[4:]):
            session_menu.addAction(a)
            window.addAction(a)
        for a in self.copy_entries:
            a.setVisible(False)  # a read-only source only
        session_menu.insertSeparator(self.copy_raw)
        session_menu.setToolTipsVisible(True)  # a disabled entry says why

        view_menu = bar.addMenu("&View")
        for key, (name, tab) in {
            "Ctrl+1": ("&Header", HEADER),
            "Ctrl+2": ("&Timeline", TIMELINE),
            "Ctrl+3": ("&Raw", RAW),
        }.items():
            act = QAction(name, window, shortcut=QKeySequence(key), triggered=lambda _c=False, t=tab: commands.show_tab(t))
            view_menu.addAction(act)
            window.addAction(act)
        self.filter = QAction(
            "&Filter sessions", window, shortcut=QKeySequence("Ctrl+F"), triggered=lambda: commands.focus_filter()
        )
        view_menu.addAction(self.filter)
        window.addAction(self.filter)
        # Issue 16: the first place the open log's artifact fails to decode, in the Raw tab (F8 as "next problem").
        self.go_to_damage = QAction(
            "Go to da&mage",
            window,
            shortcut=QKeySequence("F8"),
            triggered=lambda: commands.go_to_damage and commands.go_to_damage(),
        )
        self.go_to_damage.setEnabled(commands.go_to_damage is not None)
        view_menu.addAction(self.go_to_damage)
        window.addAction(self.go_to_damage)
        self.escape = QShortcut(QKeySequence("Esc"), window)
        self.escape.activated.connect(lambda: commands.escape())

        search_menu = bar.addMenu("Sea&rch")
        self.search_all = QAction(
            "&Search every session …", window, shortcut=QKeySequence("Ctrl+K"), triggered=lambda: commands.search_all()
        )
        self.find = QAction(
            "&Find in this session …", window, shortcut=QKeySequence("Ctrl+G"), triggered=lambda: commands.find_in_session()
        )
        self.find_next = QAction("Find &next", window, shortcut=QKeySequence("F3"), triggered=lambda: commands.find_next())
        self.find_previous = QAction(
            "Find &previous", window, shortcut=QKeySequence("Shift+F3"), triggered=lambda: commands.find_previous()
        )
        self.back = QAction("&Back", window, shortcut=QKeySequence("Alt+Left"), triggered=lambda: commands.back())
        self.forward = QAction("F&orward", window, shortcut=QKeySequence("Alt+Right"), triggered=lambda: commands.forward())
        self.copy_link = QAction(
            "Copy &link to this event", window, shortcut=QKeySequence("Ctrl+Shift+L"), triggered=lambda: commands.copy_link()
        )
        self.update_index = QAction("&Update the search index", window, triggered=lambda: commands.update_index())
        self.rebuild_index = QAction("&Rebuild the search index", window, triggered=lambda: commands.rebuild_index())
        self.stop_indexing = QAction("S&top indexing", window, triggered=lambda: commands.stop_indexing())
        self.search_entries = (
            self.search_all,
            self.find,
            self.find_next,
            self.find_previous,
            self.back,
            self.forward,
            self.copy_link,
            self.update_index,
            self.rebuild_index,
            self.stop_indexing,
        )
        for a in self.search_entries:
            search_menu.addAction(a)
            window.addAction(a)
        search_menu.insertSeparator(self.back)
        search_menu.insertSeparator(self.update_index)

        help_menu = bar.addMenu("&Help")
        # F1, and "?" outside text fields (a line edit takes "?" as text first: Qt's ShortcutOverride).
        self.keyboard = QAction("&Keyboard shortcuts …", window, triggered=self._show_keys)
        self.keyboard.setShortcuts([QKeySequence(k) for k in HELP_KEYS])
        help_menu.addAction(self.keyboard)
        window.addAction(self.keyboard)
        self.about = QAction("&About SessionScope", window, triggered=lambda: commands.about and commands.about())
        self.about.setMenuRole(QAction.MenuRole.AboutRole)  # macOS moves it to the application menu
        self.about.setEnabled(commands.about is not None)
        help_menu.addAction(self.about)

    def menu(self, title: str) -> QMenu | None:
        """The menu bar's menu titled ``title`` (ampersands ignored): where a feature adds its entries."""
        for action in self._window.menuBar().actions():
            menu = action.menu()
            if isinstance(menu, QMenu) and action.text().replace("&", "") == title:
                return menu
        return None

    def add_shortcut(self, action: QAction) -> QAction:
        """Make ``action`` a window shortcut (it works while no menu is open; the palette lists it)."""
        self._window.addAction(action)
        return action

    def enable_for(self, row: SessionRow | None, fork_text: str, fork_turn: int | None, read_only: str | None = None) -> None:
        """Enable the Session entries for ``row`` (None: no session open) and the timeline's fork choice.

        ``read_only`` (why the open source may not be written) turns every in-place entry off, saying
        so in its tooltip, and shows "Repair a copy …" / "Fork into …" instead.
        """
        rules = SessionActions
        self.repair.setEnabled(rules.can_repair(row))
        self.fork_last.setEnabled(rules.can_fork(row))
        self.resume.setEnabled(rules.can_resume(row))
        self.copy_raw.setEnabled(rules.can_copy_raw(row))
        self.restore.setEnabled(rules.can_restore(row))
        self.fork_here.setText(fork_text)
        self.fork_here.setEnabled(rules.can_fork(row) and fork_turn is not None)
        for a in self.in_place_entries:
            if read_only is not None:
                a.setEnabled(False)
            a.setToolTip(read_only or "")
        self.repair_copy.setEnabled(read_only is not None and rules.can_repair(row))
        self.fork_into.setEnabled(read_only is not None and rules.can_fork(row))
        for a in self.copy_entries:
            a.setVisible(read_only is not None)

    def popup_list_menu(self, parent: QWidget, pos: QPoint, extra: tuple[QAction, ...] = ()) -> QMenu:
        """The session list's context menu (the entries that act on one session, then ``extra``: the list's
        own Copy session id / Open containing folder), shown at ``pos``."""
        menu = QMenu(parent)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        for a in (self.repair, self.fork_last, self.resume, *(c for c in self.copy_entries if c.isVisible()), self.copy_raw):
            menu.addAction(a)
        if extra:
            menu.addSeparator()
            for a in extra:
                menu.addAction(a)
        menu.popup(pos)
        return menu

    def _fill_recent(self) -> None:
        open_recent = self._commands.open_recent

        def opener(root: str) -> Callable[[], object]:
            return lambda: open_recent(root)

        self.recent_menu.clear()
        for root in self._commands.recent_roots():
            if os.path.exists(root):
                self.recent_menu.addAction(root, opener(root))
            else:  # moved or deleted since: shown, not offered
                self.recent_menu.addAction(f"{root}  (missing)").setEnabled(False)
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def _show_keys(self) -> None:
        # Generated from the window's actions when opened (dialogs.shortcuts_dialog), so it cannot go stale.
        show_shortcuts(self._window)


__all__ = ["KEYS_HELP", "TAB_HEADER", "TAB_RAW", "TAB_TIMELINE", "MenuCommands", "WindowMenus"]
