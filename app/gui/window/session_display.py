"""The open session as the window shows it: which one is open, whether a writer is live, and the banners.

Why its own module: the main window is the GUI's composition root, and the rules for showing the one
open session (about 130 lines: the list row pinned to the snapshot, the title banner, the Header, the
Timeline and Raw banners, the live timer that judges a quiet turn again) had grown beside the wiring of
everything else until the window passed the 600-line limit.  Here they are one concept with its own
state (the open key, the live key, the loader's ``OpenSession``).  Every view shows the same read:
the one ``SessionSnapshot`` the loader hands over (issue 16 bugs 1-3).

May import: PySide6, the window's controllers, models and views; never ``window.main_window``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QTimer

from app.gui.controllers.open_root import OpenRoot
from app.gui.controllers.session_actions import SessionActions
from app.gui.controllers.session_list import SessionListController
from app.gui.controllers.session_loader import OpenSession, SessionLoader
from app.gui.models.header_fields import HeaderFieldsModel, header_rows
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.session_row import SessionRow
from app.gui.models.session_snapshot import SessionSnapshot
from app.gui.models.sessions import SessionListModel
from app.gui.models.timeline import TimelineModel
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
from app.gui.views.timeline_pane import TimelinePane
from app.gui.window.tabs import RAW, ContentTabs

LIVE_SLACK_MS = 50  # a live turn is judged again this long after its quiet period ends (mtime granularity)


class SessionDisplay(QObject):
    """Which session is open and what every view shows of it; the window forwards the list's choices here."""

    def __init__(
        self,
        *,
        model: SessionListModel,
        controller: SessionListController,
        loader: SessionLoader,
        session_ops: SessionActions,
        banner: SessionBanner,
        header_model: HeaderFieldsModel,
        timeline_model: TimelineModel,
        timeline_pane: TimelinePane,
        raw_model: RawLinesModel,
        raw_pane: RawPane,
        selection_sync: SelectionSync,
        content_tabs: ContentTabs,
        show_status: Callable[[str, int], None],
        actions_changed: Callable[[], None],
        counts_changed: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.model, self.loader, self.session_ops, self.banner = model, loader, session_ops, banner
        self.header_model, self.timeline_model, self.timeline_pane = header_model, timeline_model, timeline_pane
        self.raw_model, self.raw_pane, self.selection_sync = raw_model, raw_pane, selection_sync
        self.content_tabs = content_tabs
        self.controller = controller
        self._status, self._actions_changed, self._counts_changed = show_status, actions_changed, counts_changed
        self.session: OpenSession | None = None  # what the loader handed over for the open session
        self.open_key: str | None = None
        self.live_key: str | None = None  # the open session while its snapshot says a writer is active
        self.live_timer = QTimer(self)
        self.live_timer.setSingleShot(True)
        self.live_timer.timeout.connect(loader.reevaluate)
        loader.opened.connect(self._diagnosed)
        loader.snapshot_ready.connect(self.show_snapshot)
        loader.timeline_ready.connect(lambda _k: timeline_pane.show_tail_or_kept())
        loader.timeline_ready.connect(lambda _k: raw_model.set_damage_hint(timeline_model.damage_line()))
        loader.timeline_replacing.connect(lambda _k: timeline_pane.keep_selection())
        loader.raw_ready.connect(self._raw_ready)
        loader.stopped_early.connect(self._stopped_early)
        controller.session_changed.connect(self._session_changed)
        controller.session_removed.connect(self._session_removed)
        model.dataChanged.connect(self._rows_changed)

    def open(self, key: str, opened: OpenRoot) -> None:
        """Open listed session ``key`` (unless it already is): its row shows at once, the read follows."""
        row = self.model.get(key)
        if row is None or (key == self.open_key and self.loader.current is not None):
            return
        self.open_key, self.live_key = key, None
        self.model.pin_details(None)  # the previous session's row follows the background pass again
        self._actions_changed()
        self.show_header(row)
        self.show_title(row)
        self.timeline_pane.set_banner(LOADING, "pending")
        self.raw_pane.set_info(LOADING)
        self.loader.open(row, opened)

    def close(self) -> None:
        self.loader.close()
        self.session = None
        self.open_key = self.live_key = None
        self.model.pin_details(None)
        self.live_timer.stop()

    def show_none(self) -> None:
        self.banner.show_none()
        self.header_model.set_rows([])
        self.timeline_pane.set_banner("", None)
        self.raw_pane.set_info("")

    def current_row(self) -> SessionRow | None:
        return self.model.get(self.open_key) if self.open_key else None

    def show_header(self, row: SessionRow) -> None:
        parent = self.model.find_id(row.parent_id) if row.parent_id else None
        children = self.model.children_of(row.session_id)
        live = self.live_key == row.key
        opened = self.controller.opened  # a bundle's transcript by its name in the bundle, not our extraction
        location = opened.shown(row.path) if opened is not None and row.path else row.path
        self.header_model.set_rows(header_rows(row, parent, children, location, live=live))

    def show_title(self, row: SessionRow) -> None:
        cur = self.loader.current
        snap = cur.snapshot if cur is not None and cur.key == row.key else None
        if snap is None:
            self.banner.show_row(row)
            self.banner.show_actions(None, restorable=False)
        else:
            self.banner.show_snapshot(row, snap, restorable=self.session_ops.has_repair_backup(row.session_id))

    def show_snapshot(self, snap: SessionSnapshot) -> None:
        """One read of the open session, and the models hold it: every view shows it (issue 16 bugs 1-3)."""
        row = self.model.get(snap.key)
        if row is None or snap.key != self.open_key:
            return
        self.live_key = snap.key if snap.live else None
        if row.problem_status is None:
            self.model.pin_details(snap.key, snap.details, live=snap.live)  # the list row says the same
            self._counts_changed()  # and the status bar's counts ("1 open turn")
        self.show_title(row)
        self.show_header(row)
        self.timeline_pane.set_banner(*snapshot_banner(snap))
        self.raw_pane.set_info(raw_summary(snap))
        self._actions_changed()
        wait = seconds_until_stale(snap)
        if wait is None:
            self.live_timer.stop()
        else:  # live until the quiet period passes without a change: then judged again (crashed or not)
            self.live_timer.start(int(wait * 1000) + LIVE_SLACK_MS)

    def go_to_damage(self) -> None:
        """View > Go to damage (F8): the Raw tab, its first damage marker line selected (issue 16)."""
        if self.raw_model.damage_line() < 0:
            self._status("No damage: every byte of this session's artifact decodes", 10_000)
            return
        self.content_tabs.show(RAW)
        self.raw_pane.go_to_damage()

    def _diagnosed(self, session: OpenSession) -> None:
        # The banners wait for the snapshot (``show_snapshot``): the models do not hold this read yet.
        self.session = session

    def _raw_ready(self, _key: str) -> None:
        # The info line (what is shown, how many lines) comes with the snapshot: ``show_snapshot``.
        t = self.raw_model.text
        self.selection_sync.raw_text_ready()
        if t.markers:
            self.raw_pane.show_line(max(t.markers))  # where decoding stopped is the interesting part

    def _stopped_early(self, key: str) -> None:
        if key == self.open_key:  # not when the load was cancelled because another session was picked
            self.timeline_pane.set_banner(STOPPED_EARLY, "pending")

    def _session_changed(self, key: str) -> None:
        row = self.model.get(key)
        if row is None or key != self.open_key:
            return
        self.show_header(row)
        self.loader.follow(row)

    def _session_removed(self, key: str) -> None:
        if key == self.open_key:
            self.timeline_pane.set_banner(REMOVED, "missing")
            self.close()

    def _rows_changed(self, top: QModelIndex, bottom: QModelIndex, _roles: Any = None) -> None:
        if self.open_key is None:
            return
        row = self.model.row_for_key(self.open_key)
        if row < 0:
            # The filter hides the open session: no display row to compare, so follow it by key.
            hidden = self.model.get(self.open_key)
            if hidden is not None:
                self._show_row(hidden)
            return
        if top.row() <= row <= bottom.row():
            self._show_row(self.model.row_at(row))

    def _show_row(self, row: SessionRow) -> None:
        self.show_title(row)
        self.show_header(row)
        self._actions_changed()


__all__ = ["LIVE_SLACK_MS", "SessionDisplay"]
