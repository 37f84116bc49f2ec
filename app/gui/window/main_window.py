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

May import every ``app.gui`` package (it is the only module that imports controllers *and* views),
``app.demo`` and ``app.paths``.
"""

from __future__ import annotations

import asyncio
import html
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QIcon
from PySide6.QtWidgets import QLabel, QMainWindow, QMessageBox, QSplitter, QTabWidget, QVBoxLayout, QWidget

from app.activity import ActivityLog
from app.demo import ensure_demo_root
from app.glossary import SESSION, plural
from app.gui import style
from app.gui.controllers.diagnosis_pass import DiagnosisPass
from app.gui.controllers.session_actions import SessionActions
from app.gui.controllers.session_list import DEFAULT_POLL_MS, SessionListController
from app.gui.controllers.session_loader import OpenSession, SessionLoader
from app.gui.dialogs.about_dialog import AboutDialog
from app.gui.models.header_fields import HeaderFieldsModel, header_rows
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.session_row import SessionRow
from app.gui.models.session_snapshot import SessionSnapshot
from app.gui.models.sessions import SessionListModel
from app.gui.models.timeline import TimelineModel
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.worker_threads import Progress
from app.gui.settings import AppSettings
from app.gui.views.header_pane import HeaderPane
from app.gui.views.progress_panel import ProgressPanel
from app.gui.views.raw_pane import RawPane
from app.gui.views.selection_sync import SelectionSync
from app.gui.views.session_banner import (
    LOADING,
    REMOVED,
    STOPPED_EARLY,
    SessionBanner,
    raw_summary,
    seconds_until_stale,
    snapshot_banner,
)
from app.gui.views.session_list import SessionListPane, TabBarNote
from app.gui.views.status_bar import ElidedLabel, MessageStatusBar
from app.gui.views.timeline_pane import TimelinePane
from app.gui.window.features import Features, install_features
from app.gui.window.insight_wiring import InsightFeatures
from app.gui.window.keyboard_wiring import KeyboardFeatures
from app.gui.window.menus import TAB_HEADER, TAB_RAW, TAB_TIMELINE, MenuCommands, WindowMenus
from app.gui.window.prompts import WindowPrompts
from app.gui.window.search_wiring import SearchFeatures
from app.gui.window.sources import WindowSources
from app.gui.window.tabs import HEADER, RAW, TIMELINE, ContentTabs
from app.paths import default_root, demo_root_path
from persistence import CoordinatedPersistence

COUNTED_STATUSES = ("open-turn", "torn-tail", "corrupt", "unreadable", "symlink", "unsupported", "busy", "missing")
COUNTS_THROTTLE_MS = 250  # the status bar's counts are redrawn at most this often while diagnoses stream in
LIVE_SLACK_MS = 50  # a live turn is judged again this long after its quiet period ends (mtime granularity)


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
        self.session: OpenSession | None = None  # what the loader handed over for the open session
        self.root_error: str | None = None
        self._open_key: str | None = None
        self._live_key: str | None = None  # the open session while its snapshot says a writer is active
        self._want_session: str | None = None
        self.opened_keys: list[str] = []
        self.first_view = asyncio.Event()
        self.activity = ActivityLog()  # View > Activity shows it; every feature records its results here

        self._build_views()
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
        self.list_pane = SessionListPane(self.session_model, self)
        hidden = self.settings.list_hidden_columns()
        if hidden is not None:  # the user's choice from the header menu, kept across runs
            self.list_pane.set_hidden_columns(hidden)
        self.list_pane.columns_changed.connect(lambda: self.settings.set_list_hidden_columns(self.list_pane.hidden_columns()))
        self.header_pane = HeaderPane(self.header_model, self)
        self.timeline_pane = TimelinePane(self.timeline_model, self)
        self.raw_pane = RawPane(self.raw_model, self)
        self.tabs = QTabWidget(self)
        self.content_tabs = ContentTabs(self.tabs)
        self.content_tabs.add(HEADER, self.header_pane, "Header")
        self.content_tabs.add(TIMELINE, self.timeline_pane, "Timeline")
        self.content_tabs.add(RAW, self.raw_pane, "Raw")
        self.content_tabs.show(TIMELINE)
        self.banner = SessionBanner(self)
        self.session_label = self.banner.label
        right = self.content_area = QWidget(self)
        rl = self._content_layout = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 4, 0)
        rl.setSpacing(2)
        rl.addWidget(self.banner.widget)
        # When the list filter hides the open session, the right pane says so in the tabs' row (issue 16).
        self.hidden_note = TabBarNote(self.tabs)
        rl.addWidget(self.tabs)
        # The left side: the session list, and the Search tab (Ctrl+K) that the search feature adds.
        self.left_tabs = QTabWidget(self)
        self.left_tabs.setDocumentMode(True)
        self.left_tabs.addTab(self.list_pane, "Sessions")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.left_tabs)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 6)
        self.splitter.setSizes([760, 840])
        self.setCentralWidget(self.splitter)
        # Transient messages show in their own eliding label, never under the counts (issue 24 item 7).
        sb = MessageStatusBar(self)
        self.setStatusBar(sb)
        self.message_label = sb.message_label
        self.root_label = ElidedLabel(self, elide=Qt.TextElideMode.ElideMiddle)
        self.counts_label = QLabel(self)
        self.progress = ProgressPanel(self)
        sb.addWidget(self.root_label, 1)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.counts_label)
        self.selection_sync = SelectionSync(self.timeline_pane, self.raw_pane, self.timeline_model, self.raw_model)

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
        c.session_changed.connect(self._session_changed)
        c.session_removed.connect(self._session_removed)
        c.message.connect(lambda m: self.statusBar().showMessage(m, 10_000))
        self.diagnosis_pass.progressed.connect(self._schedule_counts)
        self._counts_timer = QTimer(self)
        self._counts_timer.setSingleShot(True)
        self._counts_timer.setInterval(COUNTS_THROTTLE_MS)
        self._counts_timer.timeout.connect(self._update_counts)
        self.session_model.dataChanged.connect(self._rows_changed)
        ld = self.loader
        ld.opened.connect(self._session_diagnosed)
        ld.snapshot_ready.connect(self._show_snapshot)
        ld.quiet_seconds = self.settings.quiet_seconds  # "live" uses the liveness guard's quiet period
        self._live_timer = QTimer(self)
        self._live_timer.setSingleShot(True)
        self._live_timer.timeout.connect(ld.reevaluate)
        self.banner.repair_button.clicked.connect(
            lambda: self._on_current(self.session_ops.repair_copy if self.session_ops.read_only else self.session_ops.repair)
        )
        self.banner.restore_button.clicked.connect(lambda: self._on_current(self.session_ops.restore))
        self.banner.closers_box.toggled.connect(ld.set_show_closers)
        ld.timeline_ready.connect(lambda _k: self.timeline_pane.show_tail_or_kept())
        ld.timeline_ready.connect(lambda _k: self.raw_model.set_damage_hint(self.timeline_model.damage_line()))
        ld.timeline_replacing.connect(lambda _k: self.timeline_pane.keep_selection())
        ld.raw_ready.connect(self._raw_ready)
        ld.loaded.connect(self._session_loaded)
        ld.stopped_early.connect(self._stopped_early)
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
        self._close_session()
        self.first_view.clear()
        label = self.sources.label()
        self.root_label.setText(f"Root: {root}" if label is None else label)
        self.setWindowTitle(f"SessionScope — {root if label is None else label}")
        self.list_pane.show_table()
        self.root_error = None
        self._update_actions()
        return self.controller.open_root(root, opener)

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
        self.root_error = message
        if self.session_model.total:  # rows already shown stay; the error goes to the status bar
            self.statusBar().showMessage(message)
            return
        self.list_pane.show_empty(
            f"{html.escape(message)}<br><br>Open the demo to look around, or open the folder that holds your sessions."
        )
        self.loader.close()
        self.session = None
        self._show_no_session()

    def _offer_restore(self, found: list[Any]) -> None:
        """A backup holds records its log lacks (an interrupted repair by an older tool): offer to put it back."""
        sid, info = found[0]
        more = f" ({plural(len(found) - 1, 'more session')} too)" if len(found) > 1 else ""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "A backup holds records the log lacks",
            f"The backup {info.path} holds {info.lacking:,} record(s) that session {sid} no longer "
            f"has{more}. Restore it? The current log is backed up first.",
            QMessageBox.StandardButton.NoButton,
            self,
        )
        restore = box.addButton("Restore …", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def chosen(_code: int) -> None:
            if box.clickedButton() is restore and self.select_session(sid):
                self._on_current(self.session_ops.restore)

        box.finished.connect(chosen)
        self.restore_offer = box
        box.open()

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
            self.list_pane.show_empty(f"No sessions in {html.escape(root)} yet.")
        self._update_counts()
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
        row = self.session_model.get(key)
        opened = self.controller.opened
        if row is None or opened is None:
            return
        if key == self._open_key and self.loader.current is not None:
            return
        self._open_key, self._live_key = key, None
        self.session_model.pin_details(None)  # the previous session's row follows the background pass again
        self._update_actions()
        self._show_header(row)
        self._show_title(row)
        self.timeline_pane.set_banner(LOADING, "pending")
        self.raw_pane.set_info(LOADING)
        self.loader.open(row, opened)

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

    def _close_session(self) -> None:
        self.loader.close()
        self.session = None
        self._open_key = self._live_key = None
        self.session_model.pin_details(None)
        self._live_timer.stop()

    def _show_no_session(self) -> None:
        self.banner.show_none()
        self.header_model.set_rows([])
        self.timeline_pane.set_banner("", None)
        self.raw_pane.set_info("")

    def _show_header(self, row: SessionRow) -> None:
        parent = self.session_model.find_id(row.parent_id) if row.parent_id else None
        children = self.session_model.children_of(row.session_id)
        live = self._live_key == row.key
        self.header_model.set_rows(header_rows(row, parent, children, row.path, live=live))

    def _session_diagnosed(self, session: OpenSession) -> None:
        # The banners wait for the snapshot (``_show_snapshot``): the models do not hold this read yet.
        self.session = session

    def _show_snapshot(self, snap: SessionSnapshot) -> None:
        """One read of the open session, and the models hold it: every view shows it (issue 16 bugs 1-3)."""
        row = self.session_model.get(snap.key)
        if row is None or snap.key != self._open_key:
            return
        self._live_key = snap.key if snap.live else None
        if row.problem_status is None:
            self.session_model.pin_details(snap.key, snap.details, live=snap.live)  # the list row says the same
            self._schedule_counts()  # and the status bar's counts ("1 open turn")
        self._show_title(row)
        self._show_header(row)
        self.timeline_pane.set_banner(*snapshot_banner(snap))
        self.raw_pane.set_info(raw_summary(snap))
        self._update_actions()
        wait = seconds_until_stale(snap)
        if wait is None:
            self._live_timer.stop()
        else:  # live until the quiet period passes without a change: then judged again (crashed or not)
            self._live_timer.start(int(wait * 1000) + LIVE_SLACK_MS)

    def _show_title(self, row: SessionRow) -> None:
        cur = self.loader.current
        snap = cur.snapshot if cur is not None and cur.key == row.key else None
        if snap is None:
            self.banner.show_row(row)
            self.banner.show_actions(None, restorable=False)
        else:
            self.banner.show_snapshot(row, snap, restorable=self.session_ops.has_repair_backup(row.session_id))

    def _raw_ready(self, key: str) -> None:
        # The info line (what is shown, how many lines) comes with the snapshot: ``_show_snapshot``.
        t = self.raw_model.text
        self.selection_sync.raw_text_ready()
        if t.markers:
            self.raw_pane.show_line(max(t.markers))  # where decoding stopped is the interesting part

    def go_to_damage(self) -> None:
        """View > Go to damage (F8): the Raw tab, its first damage marker line selected (issue 16)."""
        if self.raw_model.damage_line() < 0:
            self.statusBar().showMessage("No damage: every byte of this session's artifact decodes", 10_000)
            return
        self.content_tabs.show(RAW)
        self.raw_pane.go_to_damage()

    def _stopped_early(self, key: str) -> None:
        if key == self._open_key:  # not when the load was cancelled because another session was picked
            self.timeline_pane.set_banner(STOPPED_EARLY, "pending")

    def _session_loaded(self, key: str) -> None:
        self.opened_keys.append(key)
        self.first_view.set()
        self.session_opened.emit(key)

    def _session_changed(self, key: str) -> None:
        row = self.session_model.get(key)
        if row is None or key != self._open_key:
            return
        self._show_header(row)
        self.loader.follow(row)

    def _session_removed(self, key: str) -> None:
        if key == self._open_key:
            self.timeline_pane.set_banner(REMOVED, "missing")
            self._close_session()

    def _rows_changed(self, top: QModelIndex, bottom: QModelIndex, _roles: Any = None) -> None:
        if self._open_key is None:
            return
        row = self.session_model.row_for_key(self._open_key)
        if row < 0:
            # The filter hides the open session: no display row to compare, so follow it by key.
            hidden = self.session_model.get(self._open_key)
            if hidden is not None:
                self._show_title(hidden)
                self._show_header(hidden)
                self._update_actions()
            return
        if top.row() <= row <= bottom.row():
            r = self.session_model.row_at(row)
            self._show_title(r)
            self._show_header(r)
            self._update_actions()

    def _schedule_counts(self, _waiting: int = 0) -> None:
        if not self._counts_timer.isActive():  # a throttle, not a debounce: a steady stream still updates
            self._counts_timer.start()

    def _update_counts(self) -> None:
        counts = self.session_model.status_counts()
        parts = [plural(self.session_model.total, SESSION)]
        parts += [f"{counts[s]} {style.STATUS_LABELS[s]}" for s in COUNTED_STATUSES if counts.get(s)]
        if counts.get("pending"):
            parts.append(f"diagnosing {counts['pending']:,} …")
        self.counts_label.setText("  ·  ".join(parts))

    # ------------------------------------------------------------ session actions

    def current_row(self) -> SessionRow | None:
        return self.session_model.get(self._open_key) if self._open_key else None

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
        self._close_session()
        await self.features.close()
        await self.sources.close()
        await self.controller.close()
        await self.jobs.shutdown()


__all__ = ["TAB_HEADER", "TAB_RAW", "TAB_TIMELINE", "MainWindow"]
