"""Keyboard-first features and the Activity panel, wired in one place (issue 16).

Built from the window's ``WindowContext`` (registered last in ``window.features``: the palette lists
every action, the search and statistics ones too), it adds:

* the command palette (View > Command palette, Ctrl+Shift+P: ``dialogs.command_palette``) and the
  generated keyboard shortcuts (Help > Keyboard shortcuts, F1 or ``?``: ``dialogs.shortcuts_dialog``,
  opened by ``window.menus``);
* the focus ring on the focused pane (``views.focus_ring``);
* View > Activity (Ctrl+Shift+A): a dock showing the window's ``ActivityLog`` (every action's result
  with its time); this module records the session actions (``SessionActions.done``), failed jobs and
  copied session ids, and each other feature records its own (export, copy link);
* View > Timeline legend (also the "Legend" button beside the content tabs);
* File > Reset the demo root …: rebuild it after a confirmation, then reopen it.

May import: every ``app.gui`` package (it wires controllers to views, as the window does),
``app.activity``, ``app.demo`` and ``app.paths``; never ``window.main_window`` or another feature.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QMessageBox, QToolButton

from app.activity import CANCELLED, DONE, FAILED, ActivityLog
from app.demo import rebuild_demo_root
from app.gui.dialogs.command_palette import PALETTE_KEY, CommandPalette, open_palette
from app.gui.dialogs.confirm_dialog import ConfirmDialog
from app.gui.dialogs.modal import await_dialog
from app.gui.models.activity_model import ActivityModel
from app.gui.runtime.worker_threads import Progress
from app.gui.views.activity_panel import ActivityPanel
from app.gui.views.focus_ring import FocusRing
from app.gui.views.timeline_legend import TimelineLegend
from app.gui.window.context import WindowContext
from app.paths import demo_root_path

ACTIVITY_KEY = "Ctrl+Shift+A"
LIST_KEY = "Ctrl+L"  # the list itself (Ctrl+F is its filter, Ctrl+1…4 the content tabs)
PALETTE_TIP = "Every action of the window by name: type to filter, Enter runs it"
STATUS_MS = 15_000
# Session actions as SessionActions.done names them -> as the Activity panel says them.
ACTION_NAMES = {"copy": "copy raw artifact"}
# Results that only reach the status bar, by the start of their message -> the action's name.
RESET_ACTION = "reset demo root"


class KeyboardFeatures(QObject):
    def __init__(self, ctx: WindowContext) -> None:
        window = ctx.qwindow
        super().__init__(window)
        self.w = ctx
        self.win = window
        self.activity: ActivityLog = ctx.activity
        self.activity_model = ActivityModel(self.activity, self)
        self.activity_panel = ActivityPanel(self.activity_model, window)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.activity_panel)
        self.activity_panel.hide()
        self.focus_ring = FocusRing(window)
        self.palette: CommandPalette | None = None
        self.legend: TimelineLegend | None = None
        self.reset_dialog: ConfirmDialog | None = None
        self.error_box: QMessageBox | None = None
        self._build_actions()
        self._connect()

    # ------------------------------------------------------------ construction

    def _action(self, text: str, slot: Any, key: str | None = None, tip: str = "") -> QAction:
        act = QAction(text, self.win)
        if key:
            act.setShortcut(QKeySequence(key))
        if tip:
            act.setToolTip(tip)
        act.triggered.connect(lambda _c=False: slot())
        return self.w.menus.add_shortcut(act)

    def _build_actions(self) -> None:
        w = self.w
        self.palette_action = self._action("Command &palette …", self.open_palette, PALETTE_KEY, PALETTE_TIP)
        self.activity_action = self.activity_panel.toggleViewAction()
        self.activity_action.setText("&Activity")
        self.activity_action.setShortcut(QKeySequence(ACTIVITY_KEY))
        self.activity_action.setToolTip("Every action's result with its time (repair, fork, resume, copy, export …)")
        w.menus.add_shortcut(self.activity_action)
        self.legend_action = self._action(
            "Timeline le&gend …", self.show_legend, tip="What the timeline's colours mean (red, purple, amber …)"
        )
        self.list_action = self._action(
            "Session l&ist", self.focus_list, LIST_KEY, "Move the keyboard focus to the session list (Ctrl+F: its filter)"
        )
        self.reset_demo_action = self._action(
            "Reset the de&mo root …", self.ask_reset_demo, tip="Rebuild the demo root from scratch (changes made in it are lost)"
        )
        view_menu = w.menus.menu("View")
        if view_menu is not None:
            view_menu.addSeparator()
            for a in (self.list_action, self.activity_action, self.legend_action, self.palette_action):
                view_menu.addAction(a)
        file_menu = w.menus.menu("File")
        if file_menu is not None:
            actions = file_menu.actions()
            demo = w.menus.demo
            after = actions[actions.index(demo) + 1] if demo in actions and actions.index(demo) + 1 < len(actions) else None
            if after is not None:
                file_menu.insertAction(after, self.reset_demo_action)
            else:
                file_menu.addAction(self.reset_demo_action)
        tabs = w.content_tabs.widget
        self.legend_button = QToolButton(tabs)
        self.legend_button.setText("Legend")
        self.legend_button.setAutoRaise(True)
        self.legend_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # View > Timeline legend is the keyboard route
        self.legend_button.setToolTip("What the timeline's colours mean")
        self.legend_button.clicked.connect(self.show_legend)
        tabs.setCornerWidget(self.legend_button, Qt.Corner.TopRightCorner)
        self.legend_button.show()
        # Tab leaves a read-only table for the next pane: stepping from cell to cell (QTableView's
        # default) moves nothing a user can act on, and would trap the focus in the 10,000-row list.
        for table in (w.list_pane.table, w.raw_pane.view, w.header_pane.view):
            table.setTabKeyNavigation(False)

    def _connect(self) -> None:
        w = self.w
        ops = w.session_ops
        ops.done.connect(self._session_action_done)
        w.jobs.failed.connect(self._job_failed)
        w.list_pane.ids_copied.connect(lambda message, session: self.record("copy session id", DONE, message, session))

    # ------------------------------------------------------------ activity

    def record(self, action: str, outcome: str, detail: str, session: str | None = None) -> None:
        self.activity.record(action, outcome, detail, session=session)

    def _session_action_done(self, action: str, outcome: str, message: str) -> None:
        name = ACTION_NAMES.get(action, action)
        if action == "resume" and outcome == DONE and message.startswith("Copied to the clipboard"):
            name = "copy command"  # the resume dialog's "Copy command": nothing was launched
        self.record(name, outcome, message, self.w.session_ops.session_id)

    def _job_failed(self, name: str, message: str) -> None:
        """A background job ended in an exception: jobs are named "<what> <session id>" when they have one."""
        what, _sep, last = name.rpartition(" ")
        if what and self.w.session_model.find_id(last) is not None:
            self.record(what, FAILED, message, last)
        else:
            self.record(name, FAILED, message)

    def toggle_activity(self, shown: bool | None = None) -> None:
        self.activity_panel.setVisible(not self.activity_panel.isVisible() if shown is None else shown)

    # ------------------------------------------------------------ palette and legend

    def focus_list(self) -> None:
        w = self.w
        w.left_tabs.setCurrentWidget(w.list_pane)
        table = w.list_pane.table
        # With no rows listed the pane shows a message instead of the table: its filter gets the keys then.
        (table if table.isVisible() else w.list_pane.filter).setFocus(Qt.FocusReason.ShortcutFocusReason)

    def open_palette(self) -> CommandPalette:
        if self.palette is not None and self.palette.isVisible():
            self.palette.field.selectAll()
            self.palette.raise_()
            return self.palette
        dlg = open_palette(self.win)
        dlg.destroyed.connect(lambda _o=None: setattr(self, "palette", None))
        self.palette = dlg
        return dlg

    def show_legend(self) -> TimelineLegend:
        if self.legend is None:
            self.legend = TimelineLegend(self.win)
        self.legend.show()
        self.legend.raise_()
        return self.legend

    # ------------------------------------------------------------ reset the demo root

    def ask_reset_demo(self) -> None:
        if self.w.jobs.running("reset-demo"):
            self.w.show_status("The demo root is being rebuilt already", STATUS_MS)
            return
        self.w.jobs.spawn(self._reset_demo(demo_root_path()), name=RESET_ACTION, key="reset-demo")

    async def _reset_demo(self, path: str) -> None:
        w = self.w
        path = os.path.abspath(path)
        showing = w.controller.root == path
        also = "" if showing else " It is then opened in place of the root shown now."
        dlg = ConfirmDialog(
            "Reset the demo root",
            f"Rebuild the demo root at {path} from scratch? Every change made in it (forks, repairs, restored "
            f"backups, appends) is discarded; nothing outside that folder is touched.{also}",
            "Reset the demo root",
            self.win,
        )
        self.reset_dialog = dlg
        try:
            code = await await_dialog(dlg)
        finally:
            self.reset_dialog = None
            dlg.deleteLater()
        if code != QDialog.DialogCode.Accepted:
            self.record(RESET_ACTION, CANCELLED, "nothing was changed")
            return
        if showing:
            # Stop watching and reading the old tree before it is swapped (its files are deleted after).
            w.loader.close()
            await w.controller.close()
        progress = Progress("Rebuilding the demo root …")
        w.progress.track(progress)
        try:
            await rebuild_demo_root(path)
        except (OSError, ValueError) as err:
            text = f"Could not rebuild the demo root: {type(err).__name__}: {err}"
            self.record(RESET_ACTION, FAILED, text)
            w.show_status(text, STATUS_MS)
            box = QMessageBox(QMessageBox.Icon.Warning, "Reset the demo root", text, QMessageBox.StandardButton.Close, self.win)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            self.error_box = box
            box.open()
            if showing:
                w.open_root(path)  # what is there (the old demo is put back when the swap fails)
            return
        finally:
            w.progress.untrack(progress)
        w.open_root(path)
        text = f"Rebuilt the demo root at {path}"
        w.show_status(text, STATUS_MS)
        self.record(RESET_ACTION, DONE, text)


__all__ = ["ACTIVITY_KEY", "KeyboardFeatures"]
