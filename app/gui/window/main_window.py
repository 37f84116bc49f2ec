"""The main window: session list on the left, Header / Timeline / Raw on the right.

The composition root of the GUI: it builds the models, the controllers and the views and wires them
to each other.  It holds no session logic and few rules of its own: the menus are ``WindowMenus``,
the banners ``SessionBanner``/``snapshot_banner``, the timeline<->raw selection ``SelectionSync``,
search, find in session, going to an event and links ``SearchFeatures`` (``window.search_wiring``);
the features (search, statistics, keyboard and Activity) are built from this window as a
``WindowContext`` (``window.context``) by the registry ``window.features``, and none imports this module;
what it shows about the open session comes from the one ``SessionSnapshot`` the loader hands over
after each read (``SessionLoader.snapshot_ready``: list row, banners, Header, raw count, status-bar
counts, all from one revision), and the loader gets the root from the list controller's ``OpenRoot``.
Every way of opening a source (File > Open, drops, Open Recent, links, the command line's path) goes
through ``window.sources`` (``WindowSources``), which hands the window the source's store to show.
Where the panes sit is ``window.layout``, what every view shows of the open session
``window.session_display``, the status bar's counts ``window.status_counts`` and the backup offer
``window.restore_offer`` (split out when this file passed the 600-line limit).

May import every ``app.gui`` package (it is the only module that imports controllers *and* views),
``app.demo`` and ``app.paths``.
"""

from __future__ import annotations

import asyncio
import html
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QIcon
from PySide6.QtWidgets import QMainWindow, QSplitter, QWidget

from app.activity import ActivityLog
from app.demo import ensure_demo_root
from app.gui.controllers.diagnosis_pass import DiagnosisPass
from app.gui.controllers.session_actions import SessionActions
from app.gui.controllers.session_list import DEFAULT_POLL_MS, SessionListController
from app.gui.controllers.session_loader import OpenSession, SessionLoader
from app.gui.dialogs.about_dialog import AboutDialog
from app.gui.models.header_fields import HeaderFieldsModel
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.session_row import SessionRow
from app.gui.models.sessions import SessionListModel
from app.gui.models.timeline import TimelineModel
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.worker_threads import Progress
from app.gui.settings import AppSettings
from app.gui.window.features import Features, install_features
from app.gui.window.insight_wiring import InsightFeatures
from app.gui.window.keyboard_wiring import KeyboardFeatures
from app.gui.window.layout import build_panes
from app.gui.window.menus import TAB_HEADER, TAB_RAW, TAB_TIMELINE, MenuCommands, WindowMenus
from app.gui.window.prompts import WindowPrompts
from app.gui.window.restore_offer import offer_restore
from app.gui.window.search_wiring import SearchFeatures
from app.gui.window.session_display import SessionDisplay
from app.gui.window.sources import WindowSources
from app.gui.window.status_counts import StatusCounts
from app.gui.window.tabs import HEADER, RAW, TIMELINE
from app.paths import default_root, demo_root_path
from persistence import CoordinatedPersistence


class MainWindow(QMainWindow):
    session_opened = Signal(str)  # key, once its first view is complete

    def __init__(
        self,
        settings: AppSettings | None = None,
        *,
        poll_ms: int = DEFAULT_POLL_MS,
        restore_geometry: bool = True,
        icon: QIcon | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings or AppSettings()
        self.setWindowTitle("SessionScope")
        if icon is not None:
            self.setWindowIcon(icon)
        self.jobs = Jobs(self)
        self.session_model = SessionListModel(self)
        self.diagnosis_pass = DiagnosisPass(self.session_model, self.jobs, parent=self)
        self.controller = SessionListController(
            self.session_model, self.jobs, self.diagnosis_pass, poll_ms=poll_ms, settings=self.settings.q, parent=self
        )
        self.timeline_model = TimelineModel(self)
        self.raw_model = RawLinesModel(self)
        self.header_model = HeaderFieldsModel(self)
        self.loader = SessionLoader(self.jobs, self.timeline_model, self.raw_model, self)
        self.diagnosis_pass.in_window = lambda key: self.loader.current is not None and self.loader.current.key == key
        self.prompts = WindowPrompts(self)  # the controllers' questions, as dialogs of this window
        self.session_ops = SessionActions(
            parent=self,
            prompts=self.prompts,
            jobs=self.jobs,
            controller=self.controller,
            model=self.session_model,
            loader=self.loader,
            settings=self.settings,
            select_session=self.select_session,
            show_header=lambda: self.show_tab(HEADER),
            open_copy=lambda root, sid: self.sources.open(root, session=sid),
        )
        self.root_error: str | None = None
        self._want_session: str | None = None
        self.opened_keys: list[str] = []
        self.first_view = asyncio.Event()
        self.activity = ActivityLog()  # View > Activity shows it; every feature records its results here

        self._build_views()
        self.counts = StatusCounts(self.session_model, self.counts_label, self)
        self.display = SessionDisplay(
            model=self.session_model,
            controller=self.controller,
            loader=self.loader,
            session_ops=self.session_ops,
            banner=self.banner,
            header_model=self.header_model,
            timeline_model=self.timeline_model,
            timeline_pane=self.timeline_pane,
            raw_model=self.raw_model,
            raw_pane=self.raw_pane,
            selection_sync=self.selection_sync,
            content_tabs=self.content_tabs,
            show_status=self.show_status,
            actions_changed=lambda: self._update_actions(),  # the menus are built next
            counts_changed=self.counts.schedule,
            parent=self,
        )
        self.sources = WindowSources(self, self.jobs, self.progress, self.settings, self)
        self._content_layout.insertWidget(0, self.sources.check_banner)
        self.setAcceptDrops(True)  # a file or folder dropped on the window opens (dragEnterEvent/dropEvent)
        self.menus = WindowMenus(self, self._menu_commands())
        self._update_actions()
        self._connect()
        # Search, the Stats tab and its dialogs, the keyboard features and Activity: each one plugs in
        # through this window's WindowContext (window.features lists them, in the order they are built).
        self.features: Features = install_features(self)
        self.search = self.features.get("search", SearchFeatures)
        self.insight = self.features.get("insight", InsightFeatures)
        self.keyboard = self.features.get("keyboard", KeyboardFeatures)
        self.resize(1600, 960)
        if restore_geometry:
            self._restore()

    # ------------------------------------------------------------ construction

    def _build_views(self) -> None:
        p = build_panes(self, self.session_model, self.header_model, self.timeline_model, self.raw_model)
        self.list_pane, self.left_tabs, self.banner, self.session_label = p.list_pane, p.left_tabs, p.banner, p.banner.label
        self.header_pane, self.timeline_pane, self.raw_pane = p.header_pane, p.timeline_pane, p.raw_pane
        self.tabs, self.content_tabs, self.hidden_note = p.tabs, p.content_tabs, p.hidden_note
        self.content_area, self._content_layout, self.splitter = p.content_area, p.content_layout, p.splitter
        self.message_label, self.root_label, self.counts_label = p.message_label, p.root_label, p.counts_label
        self.progress, self.selection_sync = p.progress, p.selection_sync
        hidden = self.settings.list_hidden_columns()
        if hidden is not None:  # the user's choice from the header menu, kept across runs
            self.list_pane.set_hidden_columns(hidden)
        self.list_pane.columns_changed.connect(lambda: self.settings.set_list_hidden_columns(self.list_pane.hidden_columns()))

    def _menu_commands(self) -> MenuCommands:
        ops = self.session_ops
        # The Search menu's entries run the search feature, which is built after the menus (it adds to them).
        return MenuCommands(
            open_root=self.sources.choose_folder,
            open_store=self.sources.choose_file,
            open_demo=self.open_demo,
            refresh=self.refresh,
            quit=self.close,
            repair=lambda: self._on_current(ops.repair),
            fork_here=self._fork_here,
            fork_last=lambda: self._on_current(ops.fork),
            resume=lambda: self._on_current(ops.resume),
            copy_raw=lambda: self._on_current(ops.ask_copy_raw),
            restore=lambda: self._on_current(ops.restore),
            show_tab=self.show_tab,
            focus_filter=self.list_pane.focus_filter,
            escape=self._escape,
            recent_roots=self.settings.recent_sources,
            open_recent=self.sources.open,
            repair_copy=lambda: self._on_current(ops.repair_copy),
            fork_into=lambda: self._on_current(ops.fork_into),
            search_all=lambda: self.search.focus_search(),
            find_in_session=lambda: self.search.open_find(),
            find_next=lambda: self.search.find_step("next"),
            find_previous=lambda: self.search.find_step("previous"),
            back=lambda: self.search.navigator.back(),
            forward=lambda: self.search.navigator.forward(),
            copy_link=lambda: self.search.navigator.copy_link(),
            update_index=lambda: self.search.controller.update_index(),
            rebuild_index=lambda: self.search.controller.rebuild_index(),
            stop_indexing=lambda: self.search.controller.cancel_indexing(),
            about=self.show_about,
            go_to_damage=self.go_to_damage,
        )

    def _connect(self) -> None:
        lp = self.list_pane
        lp.session_selected.connect(self.open_session_key)
        lp.session_activated.connect(self._focus_content)
        lp.demo_requested.connect(self.open_demo)
        lp.open_root_requested.connect(self.sources.choose_folder)
        lp.open_file_requested.connect(self.sources.choose_file)
        lp.empty_shown.connect(self._show_first_run)
        lp.context_menu_requested.connect(self._list_menu)
        lp.shown_changed.connect(self._show_hidden_note)
        lp.message.connect(lambda m: self.statusBar().showMessage(m, 10_000))
        c = self.controller
        c.listing_finished.connect(self._listing_finished)
        c.root_failed.connect(self._root_failed)
        c.message.connect(lambda m: self.statusBar().showMessage(m, 10_000))
        self.diagnosis_pass.progressed.connect(self.counts.schedule)
        ld = self.loader
        ld.quiet_seconds = self.settings.quiet_seconds  # "live" uses the liveness guard's quiet period
        self.banner.repair_button.clicked.connect(
            lambda: self._on_current(self.session_ops.repair_copy if self.session_ops.read_only else self.session_ops.repair)
        )
        self.banner.restore_button.clicked.connect(lambda: self._on_current(self.session_ops.restore))
        self.banner.closers_box.toggled.connect(ld.set_show_closers)
        ld.loaded.connect(self._session_loaded)
        ld.progress_started.connect(self.progress.track)
        ld.progress_finished.connect(self.progress.untrack)
        self.progress.cancel_requested.connect(self.loader.cancel)
        self.timeline_pane.node_selected.connect(lambda _n: self._update_actions())
        self.timeline_pane.fork_requested.connect(self._fork_turn)
        self.timeline_pane.damage_requested.connect(self.go_to_damage)
        self.session_ops.message.connect(lambda m: self.statusBar().showMessage(m, 15_000))
        self.session_ops.lost_records_found.connect(self._offer_restore)
        self.header_pane.link_activated.connect(self.open_linked)
        self.jobs.failed.connect(lambda name, msg: self.statusBar().showMessage(f"{name} failed: {msg}", 15_000))

    def _restore(self) -> None:
        geo = self.settings.geometry()
        if geo is not None:
            self.restoreGeometry(geo)
        for name, split in self._splitters().items():
            state = self.settings.splitter(name)
            if state is not None:
                split.restoreState(state)

    def _splitters(self) -> dict[str, QSplitter]:
        return {"main": self.splitter, "timeline": self.timeline_pane.splitter, "raw": self.raw_pane.splitter}

    # ------------------------------------------------------------ roots

    def open_root(
        self,
        root: str,
        *,
        session: str | None = None,
        seq: int | None = None,
        opener: Callable[[], CoordinatedPersistence] | None = None,
    ) -> asyncio.Task[Any]:
        """Show ``root``; with ``session`` select that session, with ``seq`` too go to that event of it.

        ``opener`` (from ``WindowSources``): the store of the source being shown; without it this root
        is opened directly and no source is open any more.
        """
        root = os.path.abspath(os.path.expanduser(root))
        if opener is None:
            self.sources.root_opened_directly()
        read_only = self.session_ops.read_only = self.sources.read_only
        self.loader.received = read_only is not None  # never live: nothing writes into a received source
        self.banner.repair_button.setText("Repair a copy …" if read_only else "Repair …")
        self._want_session = session
        self.search.root_closing()
        if session is not None and seq is not None:
            self.search.navigator.expect(session, seq)
        self.display.close()
        self.first_view.clear()
        label = self.sources.label()
        self.root_label.setText(f"Root: {root}" if label is None else label)
        self.setWindowTitle(f"SessionScope — {root if label is None else label}")
        self.list_pane.show_table()
        self.root_error = None
        self._update_actions()
        return self.controller.open_root(root, opener, self.sources.shown_paths())

    def _show_first_run(self, empty: bool) -> None:
        """No session to show (an empty, missing or unreadable root): the empty state takes the whole width,
        saying where the harness keeps its sessions, instead of an empty timeline beside it (issue 24 item 9)."""
        self.content_area.setVisible(not empty)
        if not empty:
            return
        harness = default_root()
        state = "" if os.path.isdir(harness) else " — it does not exist yet (the harness makes it with its first session)"
        self.list_pane.set_hint(
            "The harness keeps its sessions in <code>$DSH_HOME/sessions</code>, else <code>~/.dsh/sessions</code>;"
            f" on this computer: <b>{html.escape(harness)}</b>{state}.<br>Open a folder of sessions, one session's file"
            " (a transcript, a support bundle, a SQLite store), or look around in the demo."
        )

    def show_source_failure(self, path: str, message: str) -> None:
        """A path that is no source (or could not be opened): said where the sessions would be."""
        self.root_label.setText(f"Cannot open {path}")
        self.statusBar().showMessage(message, 15_000)
        self.list_pane.show_empty(f"{html.escape(message)}<br><br>Open a folder or file (File menu), or drop one here.")

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self.sources.drag_enter(event)

    def dropEvent(self, event: QDropEvent) -> None:
        self.sources.drop(event)

    def show_about(self) -> AboutDialog:
        """Help > About (window-modal, not a nested loop); kept on the window so tests can read it."""
        dlg = AboutDialog(self, settings_file=self.settings.q.fileName())
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.about_dialog = dlg
        dlg.open()
        return dlg

    def open_demo(self) -> None:
        self.jobs.spawn(self._open_demo(), name="demo root", key="demo")

    async def _open_demo(self) -> None:
        progress = Progress("Building the demo root …")
        self.progress.track(progress)
        try:
            root = await ensure_demo_root(demo_root_path())
        finally:
            self.progress.untrack(progress)
        self.open_root(root)

    def refresh(self) -> None:
        self.controller.refresh()
        self.search.controller.update_index()
        row = self.current_row()
        opened = self.controller.opened
        if row is not None and opened is not None:
            self.loader.open(row, opened)

    def _root_failed(self, message: str) -> None:
        # Kept until the next root opens: the "0 sessions" of the finished listing must not replace it.
        message = self.sources.shown(message)  # a bundle's file by its name in the bundle, not our extraction
        self.root_error = message
        if self.session_model.total:  # rows already shown stay; the error goes to the status bar
            self.statusBar().showMessage(message)
            return
        self.list_pane.show_empty(
            f"{html.escape(message)}<br><br>Open the demo to look around, or open the folder that holds your sessions."
        )
        self.loader.close()
        self.display.session = None
        self.display.show_none()

    def _offer_restore(self, found: list[Any]) -> None:
        """A backup holds records its log lacks (an interrupted repair by an older tool): offer to put it back."""

        def restore(sid: str) -> None:
            if self.select_session(sid):
                self._on_current(self.session_ops.restore)

        self.restore_offer = offer_restore(self, found, restore)

    def _listing_finished(self, count: int) -> None:
        label = self.sources.label()
        if label is None:  # a received source has no backups of ours; its folder is not looked at
            self.session_ops.check_backups()
        root = self.controller.root
        if root and os.path.exists(root):
            if label is None:
                self.settings.remember_root(root)
            self.settings.remember_source(self.sources.recent_path(root))  # the .zip, never its extraction
        opened = self.controller.opened
        if label is not None:
            self.root_label.setText(label + ("  (read-only)" if self.session_ops.read_only else ""))
        else:
            self.root_label.setText(f"Root: {root}  ({opened.backend_text if opened is not None else 'not opened'})")
        if self.root_error:
            self.statusBar().showMessage(self.root_error)
        elif count == 0 and root and os.path.exists(root):
            self.list_pane.show_empty(self.sources.empty_text() or f"No sessions in {html.escape(root)} yet.")
        self.counts.update()
        want = self._want_session
        self._want_session = None
        if want is not None:
            row = self.session_model.find_id(want) or self.session_model.get(want)
            if row is not None and self.list_pane.select_key(row.key):
                return
            self.statusBar().showMessage(f"Session {want} is not in this root", 15_000)
        if self.list_pane.current_key() is None:
            self.list_pane.select_first()

    # ------------------------------------------------------------ sessions

    def open_session_key(self, key: str) -> None:
        opened = self.controller.opened
        if opened is not None:
            self.display.open(key, opened)

    def open_linked(self, key: str) -> None:
        self.list_pane.select_key(key)

    def select_session(self, session_id: str) -> bool:
        row = self.session_model.find_id(session_id) or self.session_model.get(session_id)
        return row is not None and self.list_pane.select_key(row.key)

    def show_tab(self, tab: str | int) -> None:
        """Show content tab ``tab`` (its key; a position is still taken) and focus its content."""
        if isinstance(tab, str):
            self.content_tabs.show(tab)
        else:
            self.tabs.setCurrentIndex(tab)
        self._focus_content()

    def _focus_content(self, _key: str | None = None) -> None:
        w = {HEADER: self.header_pane.view, TIMELINE: self.timeline_pane.tree, RAW: self.raw_pane.view}
        current = self.content_tabs.current()
        target = w.get(current) if current is not None else None
        (target or self.tabs.currentWidget()).setFocus(Qt.FocusReason.ShortcutFocusReason)

    # ------------------------------------------------------------ what a feature is handed (WindowContext)

    @property
    def qwindow(self) -> QMainWindow:
        return self

    def show_status(self, text: str, ms: int = 0) -> None:
        self.statusBar().showMessage(text, ms)

    def add_status_widget(self, widget: QWidget) -> None:
        self.statusBar().addPermanentWidget(widget)

    def add_below_content(self, widget: QWidget) -> None:
        self._content_layout.addWidget(widget)

    def _escape(self) -> None:
        if self.search.handle_escape():
            return
        if self.progress.busy:
            self.loader.cancel()
            self.sources.cancel()  # a source still opening (a bundle being unpacked and hashed)
        elif self.list_pane.filter.hasFocus():
            self.list_pane.filter.clear()
            self.list_pane.table.setFocus()

    @property
    def session(self) -> OpenSession | None:
        """What the loader handed over for the open session (``SessionDisplay`` keeps it)."""
        return self.display.session

    @property
    def _open_key(self) -> str | None:  # the open session's key (tests set it to open a session again)
        return self.display.open_key

    @_open_key.setter
    def _open_key(self, key: str | None) -> None:
        self.display.open_key = key

    def go_to_damage(self) -> None:
        self.display.go_to_damage()

    def _session_loaded(self, key: str) -> None:
        self.opened_keys.append(key)
        self.first_view.set()
        self.session_opened.emit(key)

    # ------------------------------------------------------------ session actions

    def current_row(self) -> SessionRow | None:
        return self.display.current_row()

    def _on_current(self, action: Callable[[SessionRow], object]) -> None:
        row = self.current_row()
        if row is not None:
            action(row)

    def _update_actions(self) -> None:
        self.menus.enable_for(self.current_row(), *self.timeline_pane.fork_action_text(), self.session_ops.read_only)

    def _fork_here(self) -> None:
        _text, turn = self.timeline_pane.fork_action_text()
        if turn is None:
            self.statusBar().showMessage("Select a row inside a completed turn to fork after it", 10_000)
            return
        self._fork_turn(turn)

    def _fork_turn(self, turn: int) -> None:
        row = self.current_row()
        if row is not None:
            self.session_ops.fork(row, turn)

    def _list_menu(self, key: str, pos: QPoint) -> None:
        if key != self._open_key:
            self.list_pane.select_key(key)
        self._update_actions()
        self.list_pane.last_menu = self.menus.popup_list_menu(self, pos, self.list_pane.row_actions())

    def _show_hidden_note(self) -> None:
        note = self.list_pane.hidden_note(self._open_key)
        if note != self.hidden_note.note:
            self.hidden_note.set_note(note)

    # ------------------------------------------------------------ lifecycle

    def closeEvent(self, event: QCloseEvent) -> None:
        self.settings.save_window(self.saveGeometry(), {n: s.saveState() for n, s in self._splitters().items()})
        super().closeEvent(event)

    async def shutdown(self) -> None:
        """Stop watching, cancel every job, close the store (awaited by the launcher and tests)."""
        self.display.close()
        await self.features.close()
        await self.sources.close()
        await self.controller.close()
        await self.jobs.shutdown()


__all__ = ["TAB_HEADER", "TAB_RAW", "TAB_TIMELINE", "MainWindow"]
