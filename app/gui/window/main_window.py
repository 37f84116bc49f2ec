"""The main window: session list on the left, Header / Timeline / Raw on the right.

It wires controllers to views and keeps the timeline and raw selections in step; it holds no
session logic of its own.
"""

from __future__ import annotations

import asyncio
import html
import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui import style
from app.gui.details import DetailsPass
from app.gui.gcpolicy import share_gil_with_gui
from app.gui.jobs import Jobs
from app.gui.list_controller import DEFAULT_POLL_MS, SessionListController
from app.gui.models.header_fields import HeaderFieldsModel, header_rows
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.sessions import SessionListModel
from app.gui.models.timeline import TimelineModel
from app.gui.rows import SessionRow
from app.gui.session_actions import SessionActions
from app.gui.session_loader import OpenSession, SessionLoader
from app.gui.settings import AppSettings
from app.gui.views.header_pane import HeaderPane
from app.gui.views.progress_panel import ProgressPanel
from app.gui.views.raw_pane import RawPane
from app.gui.views.session_list import SessionListPane
from app.gui.views.timeline_pane import TimelinePane
from app.gui.workers import Progress
from persistence.timeline import TimelineNode

TAB_HEADER, TAB_TIMELINE, TAB_RAW = 0, 1, 2
TAB_NAMES = {"header": TAB_HEADER, "timeline": TAB_TIMELINE, "raw": TAB_RAW}

BANNERS = {
    "ok": "✓ balanced log",
    "open-turn": "⚠ open turn: crashed or still running",
    "torn-tail": "⚠ torn tail: the end of the log is damaged",
    "corrupt": "✖ corrupt log",
    "unsupported": "✖ unsupported log",
    "missing": "✖ not found by the engine",
}


class MainWindow(QMainWindow):
    session_opened = Signal(str)  # key, once its first view is complete

    def __init__(self, settings: AppSettings | None = None, *, poll_ms: int = DEFAULT_POLL_MS,
                 restore_geometry: bool = True, icon: QIcon | None = None) -> None:
        super().__init__()
        share_gil_with_gui()
        self.settings = settings or AppSettings()
        self.setWindowTitle("SessionScope")
        if icon is not None:
            self.setWindowIcon(icon)
        self.jobs = Jobs(self)
        self.session_model = SessionListModel(self)
        self.details = DetailsPass(self.session_model, self.jobs, parent=self)
        self.controller = SessionListController(self.session_model, self.jobs, self.details, poll_ms=poll_ms, parent=self)
        self.timeline_model = TimelineModel(self)
        self.raw_model = RawLinesModel(self)
        self.header_model = HeaderFieldsModel(self)
        self.loader = SessionLoader(self.jobs, self.timeline_model, self.raw_model, self)
        self.actions = SessionActions(parent_widget=self, jobs=self.jobs, controller=self.controller,
                                      model=self.session_model, loader=self.loader, settings=self.settings,
                                      select_session=self.select_session)
        self._open_key: str | None = None
        self._want_session: str | None = None
        self._syncing = False
        self.opened_keys: list[str] = []
        self.first_view = asyncio.Event()

        self._build_views()
        self._build_actions()
        self._connect()
        self.resize(1600, 960)
        if restore_geometry:
            self._restore()

    # ------------------------------------------------------------ construction

    def _build_views(self) -> None:
        self.list_pane = SessionListPane(self.session_model, self)
        self.header_pane = HeaderPane(self.header_model, self)
        self.timeline_pane = TimelinePane(self.timeline_model, self)
        self.raw_pane = RawPane(self.raw_model, self)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.header_pane, "Header")
        self.tabs.addTab(self.timeline_pane, "Timeline")
        self.tabs.addTab(self.raw_pane, "Raw")
        self.tabs.setCurrentIndex(TAB_TIMELINE)
        self.session_label = QLabel(self)
        self.session_label.setTextFormat(Qt.TextFormat.RichText)
        # Long titles must not widen the right pane (the splitter would squeeze the list).
        self.session_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.session_label.setContentsMargins(6, 6, 6, 2)
        self.session_label.setText(f"<span style='color:{style.MUTED}'>No session selected</span>")
        right = QWidget(self)
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 4, 0)
        rl.setSpacing(2)
        rl.addWidget(self.session_label)
        rl.addWidget(self.tabs)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.list_pane)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 6)
        self.splitter.setSizes([760, 840])
        self.setCentralWidget(self.splitter)
        self.root_label = QLabel(self)
        self.counts_label = QLabel(self)
        self.progress = ProgressPanel(self)
        sb = self.statusBar()
        sb.addWidget(self.root_label, 1)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.counts_label)

    def _build_actions(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.act_open = QAction("&Open root folder …", self, shortcut=QKeySequence("Ctrl+O"), triggered=self.choose_root)
        self.act_open_store = QAction("Open SQLite &store file …", self, triggered=self.choose_store)
        self.act_demo = QAction("Open the &demo root", self, triggered=self.open_demo)
        self.act_refresh = QAction("&Refresh", self, shortcut=QKeySequence("F5"), triggered=self.refresh)
        self.act_quit = QAction("&Quit", self, shortcut=QKeySequence("Ctrl+Q"), triggered=self.close)
        self.recent_menu = file_menu.addMenu("Recent roots")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        for a in (self.act_open, self.act_open_store, self.act_demo, self.act_refresh, self.act_quit):
            file_menu.addAction(a)
            self.addAction(a)
        session_menu = self.menuBar().addMenu("&Session")
        self.act_repair = QAction("&Repair …", self, shortcut=QKeySequence("Ctrl+R"),
                                  triggered=lambda: self._on_current(self.actions.repair))
        self.act_fork_here = QAction("Fork &here, after the selected turn …", self, shortcut=QKeySequence("Ctrl+Shift+F"),
                                     triggered=self._fork_here)
        self.act_fork_last = QAction("&Fork after the last completed turn …", self,
                                     triggered=lambda: self._on_current(self.actions.fork))
        self.act_resume = QAction("Re&sume in the harness …", self, shortcut=QKeySequence("Ctrl+Shift+R"),
                                  triggered=lambda: self._on_current(self.actions.resume))
        self.act_copy_raw = QAction("&Copy raw artifact …", self, triggered=lambda: self._on_current(self.actions.ask_copy_raw))
        self.act_restore = QAction("Res&tore a backup …", self, triggered=lambda: self._on_current(self.actions.restore))
        self.session_actions = (self.act_repair, self.act_fork_here, self.act_fork_last, self.act_resume, self.act_copy_raw,
                                self.act_restore)
        for a in self.session_actions:
            session_menu.addAction(a)
            self.addAction(a)
        session_menu.insertSeparator(self.act_copy_raw)
        self._update_actions()
        view_menu = self.menuBar().addMenu("&View")
        for key, (name, tab) in {"Ctrl+1": ("&Header", TAB_HEADER), "Ctrl+2": ("&Timeline", TAB_TIMELINE),
                                 "Ctrl+3": ("&Raw", TAB_RAW)}.items():
            act = QAction(name, self, shortcut=QKeySequence(key), triggered=lambda _c=False, t=tab: self.show_tab(t))
            view_menu.addAction(act)
            self.addAction(act)
        self.act_filter = QAction("&Filter sessions", self, shortcut=QKeySequence("Ctrl+F"),
                                  triggered=self.list_pane.focus_filter)
        view_menu.addAction(self.act_filter)
        self.addAction(self.act_filter)
        esc = QShortcut(QKeySequence("Esc"), self)
        esc.activated.connect(self._escape)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(QAction("&Keyboard", self, triggered=self._show_keys))

    def _connect(self) -> None:
        lp = self.list_pane
        lp.session_selected.connect(self.open_session_key)
        lp.session_activated.connect(self._focus_content)
        lp.demo_requested.connect(self.open_demo)
        lp.open_root_requested.connect(self.choose_root)
        lp.context_menu_requested.connect(self._list_menu)
        c = self.controller
        c.listing_finished.connect(self._listing_finished)
        c.root_failed.connect(self._root_failed)
        c.session_changed.connect(self._session_changed)
        c.session_removed.connect(self._session_removed)
        c.message.connect(lambda m: self.statusBar().showMessage(m, 10_000))
        self.details.progressed.connect(self._schedule_counts)
        self._counts_timer = QTimer(self)
        self._counts_timer.setSingleShot(True)
        self._counts_timer.setInterval(250)
        self._counts_timer.timeout.connect(self._update_counts)
        self.session_model.dataChanged.connect(self._rows_changed)
        ld = self.loader
        ld.opened.connect(self._session_diagnosed)
        ld.timeline_ready.connect(lambda _k: self.timeline_pane.show_tail_or_kept())
        ld.timeline_replacing.connect(lambda _k: self.timeline_pane.keep_selection())
        ld.raw_ready.connect(self._raw_ready)
        ld.loaded.connect(self._session_loaded)
        ld.stopped_early.connect(self._stopped_early)
        ld.progress_started.connect(self._progress_started)
        ld.progress_finished.connect(self.progress.untrack)
        self.progress.cancel_requested.connect(self.loader.cancel)
        self.timeline_pane.node_selected.connect(self._timeline_selected)
        self.timeline_pane.node_selected.connect(lambda _n: self._update_actions())
        self.timeline_pane.fork_requested.connect(self._fork_turn)
        self.actions.message.connect(lambda m: self.statusBar().showMessage(m, 15_000))
        self.actions.lost_records_found.connect(self._offer_restore)
        self.raw_pane.line_selected.connect(self._raw_selected)
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

    def open_root(self, root: str, *, session: str | None = None) -> asyncio.Task[Any]:
        root = os.path.abspath(os.path.expanduser(root))
        self._want_session = session
        self.loader.close()
        self._open_key = None
        self.first_view.clear()
        self.root_label.setText(f"Root: {root}")
        self.setWindowTitle(f"SessionScope — {root}")
        self.list_pane.show_table()
        self.root_error: str | None = None
        return self.controller.open_root(root)

    def choose_root(self) -> None:
        dlg = QFileDialog(self, "Open a session root folder")
        dlg.setFileMode(QFileDialog.FileMode.Directory)
        dlg.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dlg.fileSelected.connect(lambda path: self.open_root(path))
        dlg.open()

    def choose_store(self) -> None:
        dlg = QFileDialog(self, "Open a SQLite session store")
        dlg.setFileMode(QFileDialog.FileMode.ExistingFile)
        dlg.setNameFilters(["SQLite stores (*.sqlite *.db)", "All files (*)"])
        dlg.fileSelected.connect(lambda path: self.open_root(path))
        dlg.open()

    def open_demo(self) -> None:
        self.jobs.spawn(self._open_demo(), name="demo root", key="demo")

    async def _open_demo(self) -> None:
        from app.gui.demo import demo_root_path, ensure_demo_root

        progress = Progress("Building the demo root …")
        self.progress.track(progress)
        try:
            root = await ensure_demo_root(demo_root_path())
        finally:
            self.progress.untrack(progress)
        self.open_root(root)

    def refresh(self) -> None:
        self.controller.refresh()
        row = self.session_model.get(self._open_key) if self._open_key else None
        if row is not None:
            self.loader.open(row)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for root in self.settings.recent_roots():
            self.recent_menu.addAction(root, lambda r=root: self.open_root(r))
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    def _root_failed(self, message: str) -> None:
        # Kept until the next root opens: the "0 sessions" of the finished listing must not replace it.
        self.root_error = message
        if self.session_model.total:  # rows already shown stay; the error goes to the status bar
            self.statusBar().showMessage(message)
            return
        self.list_pane.show_empty(f"{html.escape(message)}<br><br>Open the demo root to look around, "
                                  "or choose the folder that holds your sessions.")
        self.loader.close()
        self._show_no_session()

    def _offer_restore(self, found: list[Any]) -> None:
        """A backup holds records its log lacks (an interrupted repair by an older tool): offer to put it back."""
        sid, info = found[0]
        more = f" ({len(found) - 1} more session(s) too)" if len(found) > 1 else ""
        box = QMessageBox(QMessageBox.Icon.Warning, "A backup holds records the log lacks",
                          f"The backup {info.path} holds {info.lacking:,} record(s) that session {sid} no longer "
                          f"has{more}. Restore it? The current log is backed up first.",
                          QMessageBox.StandardButton.NoButton, self)
        restore = box.addButton("Restore …", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def chosen(_code: int) -> None:
            if box.clickedButton() is restore and self.select_session(sid):
                self._on_current(self.actions.restore)

        box.finished.connect(chosen)
        self.restore_offer = box
        box.open()

    def _listing_finished(self, count: int) -> None:
        self.actions.check_backups()
        root = self.controller.root
        if root and os.path.exists(root):
            self.settings.remember_root(root)
        self.root_label.setText(f"Root: {root}  ({self._backend_text()})")
        if getattr(self, "root_error", None):
            self.statusBar().showMessage(self.root_error or "")
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

    def _backend_text(self) -> str:
        store = self.controller.store
        if store is None:
            return "not opened"
        if not self.controller.is_jsonl:
            return "SQLite store"
        comp = getattr(store, "compression", None)
        return "JSONL, zstd frames" if comp == "zstd" else "JSONL, plain lines"

    # ------------------------------------------------------------ sessions

    def open_session_key(self, key: str) -> None:
        row = self.session_model.get(key)
        if row is None:
            return
        if key == self._open_key and self.loader.current is not None:
            return
        self._open_key = key
        self._update_actions()
        self.loader.store = self.controller.store
        self.loader.is_jsonl = self.controller.is_jsonl
        self._show_header(row)
        self._show_session_label(row)
        self.timeline_pane.set_banner("Loading …", "pending")
        self.raw_pane.set_info("Loading …")
        self.loader.open(row)

    def open_linked(self, key: str) -> None:
        self.list_pane.select_key(key)

    def select_session(self, session_id: str) -> bool:
        row = self.session_model.find_id(session_id) or self.session_model.get(session_id)
        return row is not None and self.list_pane.select_key(row.key)

    def show_tab(self, tab: int) -> None:
        self.tabs.setCurrentIndex(tab)
        self._focus_content()

    def _focus_content(self, _key: str | None = None) -> None:
        w = {TAB_HEADER: self.header_pane.view, TAB_TIMELINE: self.timeline_pane.tree, TAB_RAW: self.raw_pane.view}
        w[self.tabs.currentIndex()].setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _escape(self) -> None:
        if self.progress.busy:
            self.loader.cancel()
        elif self.list_pane.filter.hasFocus():
            self.list_pane.filter.clear()
            self.list_pane.table.setFocus()

    def _show_no_session(self) -> None:
        self.session_label.setText(f"<span style='color:{style.MUTED}'>No session selected</span>")
        self.header_model.set_rows([])
        self.timeline_pane.set_banner("", None)
        self.raw_pane.set_info("")

    def _show_header(self, row: SessionRow) -> None:
        parent = self.session_model.find_id(row.parent_id) if row.parent_id else None
        children = self.session_model.children_of(row.session_id)
        self.header_model.set_rows(header_rows(row, parent, children, row.path))

    def _show_session_label(self, row: SessionRow) -> None:
        fg, bg = style.STATUS_COLORS.get(row.status, ("#000", None))
        status = style.STATUS_LABELS.get(row.status, row.status)
        if row.title or row.status == "pending":
            title = html.escape(row.title or "")
        else:
            title = "(untitled)" if row.status in ("ok", "open-turn", "torn-tail") else f"({html.escape(row.status)} log)"
        where = html.escape(row.cwd or row.project)
        lineage = f" · {html.escape(row.lineage)}" if row.lineage else ""
        self.session_label.setText(
            f"<span style='font-size:13pt; font-weight:600'>{title}</span>&nbsp;&nbsp;"
            f"<span style='color:{fg}; background:{bg or '#eef7f0'}'>&nbsp;{status}&nbsp;</span>"
            f"<br><span style='color:{style.MUTED}'>{html.escape(row.session_id)} · {where}{lineage}</span>")

    def _session_diagnosed(self, cur: OpenSession) -> None:
        row = cur.row
        d = cur.diagnosis
        status = d.status if d is not None else row.status
        reason = d.reason if d is not None else row.reason
        head = BANNERS.get(status, status)
        text = f"<b>{html.escape(head)}</b>"
        if status == "ok" and d is not None:
            text += f" · {d.event_count:,} events"
        else:
            text += f" — {html.escape(reason)}"
        if d is not None and d.closers:
            text += (f"<br>{len(d.closers)} synthetic closer(s) are shown in <i>italics</i> on a purple background: "
                     "they exist in memory only; loading or resuming the session in the harness would write them.")
        if status in ("corrupt", "unsupported", "missing"):
            text += "<br>The Raw tab shows every byte that can still be decoded."
        self.timeline_pane.set_banner(text, status)

    def _raw_ready(self, _key: str) -> None:
        t = self.raw_model.text
        cur = self.loader.current
        what = "event rows (SQLite)" if t.source == "rows" else (
            f"{os.path.basename(cur.row.path or '')} · "
            + ("zstd frames, decoded" if t.compression == "zstd" else "plain JSONL")) if cur else ""
        torn = f" · {len(t.markers)} marker line(s) for bytes that could not be decoded" if t.markers else ""
        self.raw_pane.set_info(f"{what} · {len(t):,} lines · {style.format_size(len(t.data))} decoded{torn}")
        node = self.timeline_pane.current_node()
        if node is not None:
            self._timeline_selected(node)  # the timeline may have chosen its row before the text was ready
        if t.markers:
            self.raw_pane.show_line(max(t.markers))  # where decoding stopped is the interesting part

    def _stopped_early(self, key: str) -> None:
        if key == self._open_key:  # not when the load was cancelled because another session was picked
            self.timeline_pane.set_banner("<b>Reading stopped</b> — only the newest turns of this log are shown "
                                          "and nothing was checked yet; F5 reads the whole log.", "pending")

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
            self.timeline_pane.set_banner("<b>This session's log was removed from the root.</b>", "missing")
            self.loader.close()
            self._open_key = None

    def _rows_changed(self, top: QModelIndex, bottom: QModelIndex, _roles: Any = None) -> None:
        if self._open_key is None:
            return
        row = self.session_model.row_for_key(self._open_key)
        if top.row() <= row <= bottom.row():
            r = self.session_model.row_at(row)
            self._show_session_label(r)
            self._show_header(r)
            self._update_actions()

    def _schedule_counts(self, _waiting: int = 0) -> None:
        if not self._counts_timer.isActive():  # a throttle, not a debounce: a steady stream still updates
            self._counts_timer.start()

    def _update_counts(self) -> None:
        counts = self.session_model.status_counts()
        total = self.session_model.total
        parts = [f"{total:,} sessions"]
        for s in ("open-turn", "torn-tail", "corrupt", "unreadable", "symlink", "unsupported", "busy", "missing"):
            if counts.get(s):
                parts.append(f"{counts[s]} {style.STATUS_LABELS[s]}")
        if counts.get("pending"):
            parts.append(f"diagnosing {counts['pending']:,} …")
        self.counts_label.setText("  ·  ".join(parts))

    def _progress_started(self, progress: Progress) -> None:
        self.progress.track(progress)

    # ------------------------------------------------------------ session actions

    def current_row(self) -> SessionRow | None:
        return self.session_model.get(self._open_key) if self._open_key else None

    def _on_current(self, action: Callable[[SessionRow], object]) -> None:
        row = self.current_row()
        if row is not None:
            action(row)

    def _update_actions(self) -> None:
        row = self.current_row()
        a = self.actions
        self.act_repair.setEnabled(a.can_repair(row))
        self.act_fork_last.setEnabled(a.can_fork(row))
        self.act_resume.setEnabled(a.can_resume(row))
        self.act_copy_raw.setEnabled(a.can_copy_raw(row))
        self.act_restore.setEnabled(a.can_restore(row))
        text, turn = self.timeline_pane.fork_action_text()
        self.act_fork_here.setText(text)
        self.act_fork_here.setEnabled(a.can_fork(row) and turn is not None)

    def _fork_here(self) -> None:
        _text, turn = self.timeline_pane.fork_action_text()
        if turn is None:
            self.statusBar().showMessage("Select a row inside a completed turn to fork after it", 10_000)
            return
        self._fork_turn(turn)

    def _fork_turn(self, turn: int) -> None:
        row = self.current_row()
        if row is not None:
            self.actions.fork(row, turn)

    def _list_menu(self, key: str, pos: QPoint) -> None:
        if key != self._open_key:
            self.list_pane.select_key(key)
        self._update_actions()
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        for a in (self.act_repair, self.act_fork_last, self.act_resume, self.act_copy_raw):
            menu.addAction(a)
        self.list_pane.last_menu = menu
        menu.popup(pos)

    # ------------------------------------------------------------ timeline <-> raw

    def _timeline_selected(self, node: TimelineNode) -> None:
        if self._syncing:
            return
        seq = node.first_seq
        line = self.raw_model.text.line_for_seq(seq) if seq >= 0 else -1
        if line < 0:
            return
        self._syncing = True
        try:
            self.raw_pane.select_line(line)
        finally:
            self._syncing = False

    def _raw_selected(self, line: int) -> None:
        if self._syncing:
            return
        seqs = self.raw_model.text.seqs_of_line(line)
        if seqs is None:
            return
        idx = self.timeline_model.index_for_seq(seqs[0])
        if not idx.isValid():
            return
        self._syncing = True
        try:
            self.timeline_pane.select_index(idx)
        finally:
            self._syncing = False

    # ------------------------------------------------------------ help / lifecycle

    def _show_keys(self) -> None:
        QMessageBox.information(self, "Keyboard", "\n".join((
            "↑/↓  move in the list, tree or raw lines",
            "Enter  open the session's content / expand a row / follow a lineage link",
            "Ctrl+F  filter sessions      Esc  cancel a load / leave the filter",
            "Ctrl+1 / Ctrl+2 / Ctrl+3  Header / Timeline / Raw",
            "Ctrl+O  open a root folder   F5  refresh",
            "Ctrl+R  repair …   Ctrl+Shift+R  resume …   Ctrl+Shift+F  fork after the selected turn …",
        )))

    def closeEvent(self, event: QCloseEvent) -> None:
        self.settings.save_window(self.saveGeometry(), {n: s.saveState() for n, s in self._splitters().items()})
        super().closeEvent(event)

    async def shutdown(self) -> None:
        """Stop watching, cancel every job, close the store (awaited by the launcher and tests)."""
        self.loader.close()
        await self.controller.close()
        await self.jobs.shutdown()
