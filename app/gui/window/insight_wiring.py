"""The window's statistics features, wired in one place: the Stats tab, View > Dashboard, View > Lineage
(and Compare with parent), File > Export… and Settings > Model prices….

Built from the window's ``WindowContext`` (registered in ``window.features``) after the window's own
views and menus: it adds the Stats tab (key ``STATS``) beside Header / Timeline / Raw, its entries to
the File and View menus and a Settings menu, and progress panels to the status bar; the window only
awaits ``close()``.  What each part does
lives in its own module: ``controllers.insight`` (session stats, the root's cache, lineage, compare),
``controllers.session_export`` (the export job), ``views.stats_pane`` / ``views.charts`` (widgets),
``dialogs.*_dialog`` (the dashboard, lineage, compare, export and prices dialogs).

The Stats tab folds the open session only while it is shown (a session opened with another tab in
front costs nothing); the root's cache is made when the dashboard or the lineage is first opened.

May import: every ``app.gui`` package (it wires controllers to views, as the window does), ``app.insight``
(values), ``app.activity`` and ``app.paths``; never ``window.main_window`` (it is handed a ``WindowContext``).
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QMenu, QMessageBox

from app.activity import ActivityLog
from app.glossary import SESSION, plural
from app.gui.controllers.insight import Comparison, InsightController, SessionInsight
from app.gui.controllers.session_export import SessionExport
from app.gui.dialogs.compare_dialog import CompareDialog
from app.gui.dialogs.dashboard_dialog import DashboardDialog
from app.gui.dialogs.export_dialog import ExportDialog
from app.gui.dialogs.lineage_dialog import LineageDialog
from app.gui.dialogs.modal import await_dialog
from app.gui.dialogs.prices_dialog import PricesDialog
from app.gui.models.session_row import READABLE, SessionRow
from app.gui.runtime.worker_threads import Progress
from app.gui.views.progress_panel import ProgressPanel
from app.gui.views.stats_pane import StatsPane
from app.gui.window.context import WindowContext
from app.gui.window.tabs import TIMELINE
from app.insight import CacheReport, Lineage, RootFilter, RootTotals, SessionInfo
from app.paths import home_dir
from app.redact import RedactionReport

STATS = "stats"  # the Stats tab's key (after Header / Timeline / Raw)
STATUS_MS = 15_000
GROWTH_REFOLD_MS = 1000  # a live session's appends fold the Stats tab again at most this often
STATS_KEY = "Ctrl+4"
EXPORT_KEY = "Ctrl+E"
DASHBOARD_KEY = "Ctrl+Shift+D"
LINEAGE_KEY = "Ctrl+Shift+T"


def row_info(row: SessionRow) -> SessionInfo:
    """A listed session's lineage fields (the header's; title and status once diagnosed)."""

    def num(key: str) -> int | None:
        v = row.header(key)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    origin = row.header("origin")
    return SessionInfo(
        row.session_id,
        row.parent_id,
        origin if isinstance(origin, str) else None,
        num("delegationDepth"),
        num("seedLength"),
        None,
        row.title,
        row.status,
        num("createdAt"),
    )


class InsightFeatures(QObject):
    def __init__(self, ctx: WindowContext, *, cache_dir: str | None = None, prices_file: str | None = None) -> None:
        window = ctx.qwindow
        super().__init__(window)
        self.w = ctx
        self.win = window  # the parent of this feature's dialogs and actions
        self.controller = InsightController(ctx.jobs, cache_dir=cache_dir, prices_file=prices_file, parent=self)
        self.exporter = SessionExport(ctx.jobs, self)
        self.pane = StatsPane(window)
        ctx.content_tabs.add(STATS, self.pane, "Stats")
        self.progress = ProgressPanel(window)
        self.progress.button.setToolTip("Stop computing statistics: sessions done so far stay cached")
        ctx.add_status_widget(self.progress)
        self.export_progress = ProgressPanel(window)
        self.export_progress.button.hide()  # an export cannot stop half-way (controllers.session_export)
        ctx.add_status_widget(self.export_progress)
        self.dashboard: DashboardDialog | None = None
        self.lineage: LineageDialog | None = None
        self.compare_dialog: CompareDialog | None = None
        self.export_dialog: ExportDialog | None = None
        self.prices_dialog: PricesDialog | None = None
        self.error_box: QMessageBox | None = None
        self.last_insight: SessionInsight | None = None
        self.last_totals: RootTotals | None = None
        self.last_lineage: Lineage | None = None
        self.export_folder = home_dir()
        self._dirty = True  # the open session's numbers are not the ones shown
        self._refold = QTimer(self)
        self._refold.setSingleShot(True)
        self._refold.setInterval(GROWTH_REFOLD_MS)
        self._refold.timeout.connect(self.refresh_stats)
        self._build_menus()
        self._connect()

    @property
    def tab_index(self) -> int:
        """Where the Stats tab is now (looked up by its key)."""
        return self.w.content_tabs.index(STATS)

    # ------------------------------------------------------------ construction

    def _action(self, text: str, slot: Any, key: str | None = None) -> QAction:
        act = QAction(text, self.win)
        if key:
            act.setShortcut(QKeySequence(key))
        act.triggered.connect(lambda _c=False: slot())
        return self.w.menus.add_shortcut(act)

    def _build_menus(self) -> None:
        w = self.w
        self.export_action = self._action("&Export …", self.ask_export, EXPORT_KEY)
        self.export_action.setToolTip("Export the open session as Markdown, HTML, JSONL or a support bundle")
        self.stats_action = self._action("&Stats", lambda: self.show_stats_tab(), STATS_KEY)
        self.dashboard_action = self._action("&Dashboard …", self.open_dashboard, DASHBOARD_KEY)
        self.lineage_action = self._action("&Lineage …", self.open_lineage, LINEAGE_KEY)
        self.compare_action = self._action("&Compare with parent …", self.compare_current)
        self.prices_action = self._action("Model &prices …", self.edit_prices)
        file_menu = w.menus.menu("File")
        if file_menu is not None:
            file_menu.insertAction(w.menus.quit, self.export_action)
            file_menu.insertSeparator(w.menus.quit)
        view_menu = w.menus.menu("View")
        if view_menu is not None:
            raw_entry = next((a for a in view_menu.actions() if a.text().replace("&", "") == "Raw"), None)
            after = view_menu.actions()[view_menu.actions().index(raw_entry) + 1] if raw_entry is not None else None
            if after is not None:
                view_menu.insertAction(after, self.stats_action)
            else:
                view_menu.addAction(self.stats_action)
            view_menu.addSeparator()
            for a in (self.dashboard_action, self.lineage_action, self.compare_action):
                view_menu.addAction(a)
        bar = self.win.menuBar()
        self.settings_menu = QMenu("Se&ttings", self.win)
        self.settings_menu.addAction(self.prices_action)
        help_menu = w.menus.menu("Help")
        if help_menu is not None:
            bar.insertMenu(help_menu.menuAction(), self.settings_menu)
        else:
            bar.addMenu(self.settings_menu)
        self.update_actions()

    def _connect(self) -> None:
        w, c = self.w, self.controller
        ld = w.loader
        ld.opened.connect(self._session_opening)
        ld.loaded.connect(self._session_loaded)
        ld.grew.connect(self._session_grew)
        w.content_tabs.widget.currentChanged.connect(self._tab_changed)
        w.list_pane.session_selected.connect(lambda _k: self.update_actions())
        w.controller.listing_finished.connect(self._listed)
        w.controller.session_removed.connect(self._removed)
        self.pane.turn_clicked.connect(self.select_turn)
        self.pane.chart_saved.connect(lambda path: w.show_status(f"Saved the chart to {path}", STATUS_MS))
        c.stats_ready.connect(self._stats_ready)
        c.totals_ready.connect(self._totals_ready)
        c.lineage_ready.connect(self._lineage_ready)
        c.comparison_ready.connect(self._comparison_ready)
        c.cache_updated.connect(self._cache_updated)
        c.failed.connect(self._failed)
        c.message.connect(lambda m: w.show_status(m, STATUS_MS))
        c.progress_started.connect(self._progress_started)
        c.progress_finished.connect(self._progress_finished)
        self.progress.cancel_requested.connect(c.cancel_update)
        ex = self.exporter
        ex.progress_started.connect(self.export_progress.track)
        ex.progress_finished.connect(self.export_progress.untrack)
        ex.done.connect(self._export_done)
        ex.preview_ready.connect(self._preview_ready)
        activity: ActivityLog = w.activity
        ex.done.connect(lambda outcome, message, _path: activity.record("export", outcome, message, session=ex.session_id))

    def update_actions(self) -> None:
        row = self.w.current_row()
        self.export_action.setEnabled(row is not None)
        parent = self.w.session_model.find_id(row.parent_id) if row is not None and row.parent_id else None
        fork = row is not None and row.lineage == "fork" and isinstance(row.header("seedLength"), int)
        self.compare_action.setEnabled(bool(fork and parent is not None))

    # ------------------------------------------------------------ the Stats tab

    def show_stats_tab(self) -> None:
        self.w.content_tabs.show(STATS)
        self.pane.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _session_opening(self, _cur: Any) -> None:
        self._dirty = True
        self.controller.cancel_session()
        self.pane.show_message("Reading the session …")
        self.update_actions()

    def _session_loaded(self, _key: str) -> None:
        self._dirty = True
        if self.w.content_tabs.current() == STATS:
            self.refresh_stats()

    def _session_grew(self, _key: str) -> None:
        self._dirty = True
        if self.w.content_tabs.current() == STATS and not self._refold.isActive():
            self._refold.start()

    def _tab_changed(self, index: int) -> None:
        if self.w.content_tabs.key_at(index) == STATS and self._dirty:
            self.refresh_stats()

    def refresh_stats(self) -> None:
        """Fold the open session's events (off the GUI thread) into the Stats tab."""
        cur = self.w.loader.current
        if cur is None:
            self.pane.show_message("Open a session to see its statistics.")
            return
        if not cur.loaded:
            self.pane.show_message("Reading the session …")
            return
        diagnosis = cur.diagnosis
        tl = self.w.timeline_model
        partial = None
        if diagnosis is None or diagnosis.status not in READABLE or cur.timeline_error is not None:
            status = diagnosis.status if diagnosis is not None else cur.row.status
            if tl.stop is None or not len(tl.records):
                why = cur.timeline_error or (diagnosis.reason if diagnosis is not None else cur.row.reason)
                self.pane.show_message(f"No statistics: the log cannot be read ({why}).")
                self._dirty = False
                return
            partial = status  # a refused log: the numbers of the readable part the timeline shows (issue 24 item 5)
        self._dirty = False
        seed = cur.row.header("seedLength")
        if self.pane.stats is None:
            self.pane.show_message("Computing statistics …")
        self.controller.session_stats(
            cur.key, cur.row.session_id, tl.records, tl.stored_count, seed if isinstance(seed, int) else None, partial
        )

    def _stats_ready(self, insight: SessionInsight) -> None:
        cur = self.w.loader.current
        if cur is None or cur.key != insight.key:
            return
        self.last_insight = insight
        self.pane.show_stats(insight.heading, insight.stats, insight.cost, insight.model_costs, priced=insight.priced)

    def select_turn(self, seq: int) -> bool:
        """A turn's bar was clicked: select that turn's row in the timeline and show it."""
        tl = self.w.timeline_model
        idx = tl.index_for_seq(seq)
        if not idx.isValid():
            self.w.show_status(f"The timeline has no turn starting at event {seq}", STATUS_MS)
            return False
        while idx.parent().isValid():
            idx = idx.parent()
        self.w.show_tab(TIMELINE)
        self.w.timeline_pane.select_index(QModelIndex(idx))
        return True

    # ------------------------------------------------------------ the root

    def _listed(self, _count: int) -> None:
        opened = self.w.controller.opened
        root = opened.path if opened is not None else None
        changed = root != self.controller.root
        self.controller.set_root(root)
        self.update_actions()
        if self.w.loader.current is None:  # a new root closes the open session
            self._dirty = True
            self.pane.show_message("Open a session to see its statistics.")
        if root is None:
            return
        if self.dashboard is not None and self.dashboard.isVisible():
            if changed:
                self.dashboard.show_message("Computing statistics …")
            self._refresh_root(totals=True)
        if self.lineage is not None and self.lineage.isVisible():
            self.request_lineage()

    def _removed(self, _key: str) -> None:
        self.update_actions()

    def _refresh_root(self, *, totals: bool) -> None:
        """Show what is cached now, then bring the cache up to date (its end shows the new numbers)."""
        if totals and self.dashboard is not None:
            self.controller.request_totals(self.dashboard.current_filter())
        self.controller.update_cache()

    def _progress_started(self, progress: Progress) -> None:
        for panel in self._panels():
            panel.track(progress)

    def _progress_finished(self, progress: Progress) -> None:
        for panel in self._panels():
            panel.untrack(progress)

    def _panels(self) -> list[ProgressPanel]:
        out = [self.progress]
        out += [d.progress for d in (self.dashboard, self.lineage) if d is not None]
        return out

    def _cache_updated(self, report: CacheReport) -> None:
        if self.dashboard is not None and self.dashboard.isVisible():
            self.controller.request_totals(self.dashboard.current_filter())
        if self.lineage is not None and self.lineage.isVisible():
            self.request_lineage()
        if report.computed:
            self.w.show_status(
                f"Statistics: {plural(report.computed, SESSION)} computed, {report.unchanged:,} unchanged "
                f"({report.seconds:.1f} s)" + (" — stopped" if report.cancelled else ""),
                STATUS_MS,
            )

    def _failed(self, what: str, message: str) -> None:
        text = f"{what.capitalize()}: {message}"
        self.w.show_status(text, STATUS_MS)
        if what == "dashboard" and self.dashboard is not None:
            self.dashboard.show_message(text)
        elif what == "lineage" and self.lineage is not None:
            self.lineage.show_message(text)
        elif what == "compare" and self.compare_dialog is not None:
            self.compare_dialog.show_message(text)
        elif what == "session statistics":
            self._dirty = True
            self.pane.show_message(f"No statistics: {message}")
        elif what == "statistics":
            for d in (self.dashboard, self.lineage):
                if d is not None and d.isVisible():
                    d.show_message(text)

    def _root_or_say(self) -> str | None:
        opened = self.w.controller.opened
        if opened is None:
            self.w.show_status("Open a session root first", STATUS_MS)
            return None
        self.controller.set_root(opened.path)
        return opened.path

    # ------------------------------------------------------------ dashboard

    def open_dashboard(self) -> DashboardDialog | None:
        if self._root_or_say() is None:
            return None
        if self.dashboard is None:
            d = self.dashboard = DashboardDialog(self.win)
            d.filter_changed.connect(self._filter_changed)
            d.session_requested.connect(self.open_session)
            d.refresh_requested.connect(lambda: self._refresh_root(totals=False))
            d.progress.cancel_requested.connect(self.controller.cancel_update)
        d = self.dashboard
        if self.controller.updating and self.controller.progress is not None:
            d.progress.track(self.controller.progress)
        d.show()
        d.raise_()
        d.activateWindow()
        self._refresh_root(totals=True)
        return d

    def _filter_changed(self, filt: RootFilter) -> None:
        self.controller.request_totals(filt)

    def _totals_ready(self, totals: RootTotals, filt: RootFilter) -> None:
        d = self.dashboard
        if d is None or filt != d.current_filter():
            return  # an answer to a filter the user has since changed
        self.last_totals = totals
        note = ""
        if self.controller.updating:
            note = "Computing the statistics of new and changed sessions: the numbers update when it is done."
        elif self.controller.prices_error:
            note = f"The price table is not used: {self.controller.prices_error}"
        d.show_totals(totals, note)

    def open_session(self, session_id: str) -> None:
        if not self.w.select_session(session_id):
            self.w.show_status(f"Session {session_id} is not in the list (any more)", STATUS_MS)

    # ------------------------------------------------------------ lineage and compare

    def open_lineage(self) -> LineageDialog | None:
        if self._root_or_say() is None:
            return None
        if self.lineage is None:
            d = self.lineage = LineageDialog(self.win)
            d.session_requested.connect(self.open_session)
            d.compare_requested.connect(self.compare)
            d.refresh_requested.connect(lambda: self._refresh_root(totals=False))
            d.progress.cancel_requested.connect(self.controller.cancel_update)
        d = self.lineage
        if self.controller.updating and self.controller.progress is not None:
            d.progress.track(self.controller.progress)
        d.show()
        d.raise_()
        d.activateWindow()
        self.request_lineage()
        self.controller.update_cache()  # its end adds the fork turns of sessions not yet cached
        return d

    def request_lineage(self) -> None:
        self.controller.request_lineage([row_info(r) for r in self.w.session_model.rows()])

    def _lineage_ready(self, lineage: Lineage) -> None:
        self.last_lineage = lineage
        if self.lineage is not None:
            row = self.w.current_row()
            self.lineage.show_lineage(lineage, current=row.session_id if row is not None else None)

    def compare_current(self) -> None:
        row = self.w.current_row()
        seed = row.header("seedLength") if row is not None else None
        if row is None or row.parent_id is None or not isinstance(seed, int):
            self.w.show_status("The open session is not a fork", STATUS_MS)
            return
        parent = self.w.session_model.find_id(row.parent_id)
        self.compare(row.session_id, row.parent_id, seed, (row.title, parent.title if parent is not None else None))

    def compare(self, fork_id: str, parent_id: str, seed: int, titles: Any) -> CompareDialog | None:
        opened = self.w.controller.opened
        if opened is None:
            return None
        if self.compare_dialog is None:
            self.compare_dialog = CompareDialog(self.win)
        d = self.compare_dialog
        d.show_message(f"Comparing {fork_id} with its parent {parent_id} …")
        d.show()
        d.raise_()
        t = tuple(titles) if isinstance(titles, (tuple, list)) and len(titles) == 2 else (None, None)
        self.controller.compare(opened.store, fork_id, parent_id, seed, (t[0], t[1]))
        return d

    def _comparison_ready(self, c: Comparison) -> None:
        if self.compare_dialog is not None:
            self.compare_dialog.show_comparison(c.fork_id, c.parent_id, (c.fork_title, c.parent_title), c.result, c.shared)

    # ------------------------------------------------------------ export

    def ask_export(self) -> None:
        row = self.w.current_row()
        root = self.w.controller.root
        if row is None or root is None:
            self.w.show_status("Open a session to export it", STATUS_MS)
            return
        self.w.jobs.spawn(self._ask_export(row, root), name="export dialog", key="export-dialog")

    async def _ask_export(self, row: SessionRow, root: str) -> None:
        dlg = ExportDialog(row.session_id, self.export_folder, parent=self.win)
        self.export_dialog = dlg
        # The redaction preview reads the whole session: computed off the GUI thread, answered by _preview_ready.
        dlg.preview_wanted.connect(lambda home: self.exporter.preview(root, row.session_id, home))
        dlg.request_preview()
        try:
            code = await await_dialog(dlg)
            # The dialog goes at the next loop turn: read it now.
            fmt, target, force, redact, home = dlg.fmt, dlg.target, dlg.force, dlg.redact, dlg.redact_home
        finally:
            self.export_dialog = None
            self.w.jobs.cancel("export-preview")
            dlg.deleteLater()
        if code != QDialog.DialogCode.Accepted or not target:
            return
        self.export_folder = os.path.dirname(target)
        # force: the dialog asked to replace; redact: a bundle with its secrets replaced (on by default)
        self.exporter.export(root, row.session_id, fmt, target, force=force, redact=redact, redact_home=home)

    def _preview_ready(self, session_id: str, home: bool, report: object) -> None:
        dlg = self.export_dialog
        if dlg is not None and dlg.session_id == session_id and isinstance(report, (RedactionReport, str)):
            dlg.show_preview(home, report)

    def _export_done(self, outcome: str, message: str, _path: str) -> None:
        if outcome == "done":
            self.w.show_status(message, STATUS_MS)
            return
        box = QMessageBox(QMessageBox.Icon.Warning, "Export failed", message, QMessageBox.StandardButton.Close, self.win)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.error_box = box
        box.open()
        self.w.show_status(f"Export failed: {message}", STATUS_MS)

    # ------------------------------------------------------------ prices

    def edit_prices(self) -> PricesDialog:
        known = [m.key for m in self.last_insight.stats.models] if self.last_insight is not None else []
        dlg = PricesDialog(self.controller.prices_location, known, self.win)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.accepted.connect(self._prices_saved)
        dlg.destroyed.connect(lambda _o=None: setattr(self, "prices_dialog", None))
        self.prices_dialog = dlg
        dlg.open()
        return dlg

    def _prices_saved(self) -> None:
        self.controller.prices_changed()
        self.w.show_status(f"Saved the price table to {self.controller.prices_location}", STATUS_MS)
        self._dirty = True
        if self.w.content_tabs.current() == STATS:
            self.refresh_stats()
        if self.dashboard is not None and self.dashboard.isVisible():
            self.controller.request_totals(self.dashboard.current_filter())

    # ------------------------------------------------------------ lifecycle

    async def close(self) -> None:
        for d in (self.dashboard, self.lineage, self.compare_dialog):
            if d is not None:
                d.close()
        await self.controller.close()


__all__ = ["STATS", "InsightFeatures", "row_info"]
