"""What a window feature may use of the window: ``WindowContext``, and the content tabs by key.

Why: the features (search, statistics, keyboard and Activity, ...) used to reach into ``MainWindow``
itself (about a hundred attribute reaches through ``TYPE_CHECKING`` imports, a five-module import
circle), so adding one action touched many files.  Now each feature is built from a
``WindowContext`` (``app.gui.window.features`` lists them) and names only what it uses: the jobs, the
session controllers, the models and panes, the menus, the content tabs (looked up by key, never by a
position) and the places a feature adds its widgets.  ``MainWindow`` is one implementation; mypy checks
that it keeps satisfying the protocol, and ``lint-imports`` that no feature imports it.

May import: PySide6, the window's controllers, models, views, runtime and ``window.menus``; never
``window.main_window`` or a feature module.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QMainWindow, QTabWidget, QWidget

from app.activity import ActivityLog
from app.gui.controllers.session_actions import SessionActions
from app.gui.controllers.session_list import SessionListController
from app.gui.controllers.session_loader import SessionLoader
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.session_row import SessionRow
from app.gui.models.sessions import SessionListModel
from app.gui.models.timeline import TimelineModel
from app.gui.runtime.jobs import Jobs
from app.gui.settings import AppSettings
from app.gui.views.header_pane import HeaderPane
from app.gui.views.progress_panel import ProgressPanel
from app.gui.views.raw_pane import RawPane
from app.gui.views.session_list import SessionListPane
from app.gui.views.timeline_pane import TimelinePane
from app.gui.window.menus import WindowMenus
from app.gui.window.tabs import BASE_TABS, HEADER, RAW, TIMELINE, ContentTabs


class WindowContext(Protocol):
    """What a feature is handed: the window's parts it may use and the places it adds its own."""

    # The window as a Qt widget: the parent of a feature's widgets, dialogs and shortcuts.
    @property
    def qwindow(self) -> QMainWindow: ...

    # Work and the session controllers.
    @property
    def jobs(self) -> Jobs: ...
    @property
    def controller(self) -> SessionListController: ...  # the session list in step with the root
    @property
    def loader(self) -> SessionLoader: ...  # the open session
    @property
    def session_ops(self) -> SessionActions: ...  # repair, restore, fork, resume, copy
    @property
    def activity(self) -> ActivityLog: ...  # every action's result (View > Activity shows it)

    # Models and panes.
    @property
    def session_model(self) -> SessionListModel: ...
    @property
    def timeline_model(self) -> TimelineModel: ...
    @property
    def raw_model(self) -> RawLinesModel: ...
    @property
    def list_pane(self) -> SessionListPane: ...
    @property
    def header_pane(self) -> HeaderPane: ...
    @property
    def timeline_pane(self) -> TimelinePane: ...
    @property
    def raw_pane(self) -> RawPane: ...
    @property
    def progress(self) -> ProgressPanel: ...  # the status bar's progress of the open session's load

    # Menus and tabs.
    @property
    def menus(self) -> WindowMenus: ...
    @property
    def content_tabs(self) -> ContentTabs: ...
    @property
    def left_tabs(self) -> QTabWidget: ...  # Sessions, and the features' side tabs (Search)
    @property
    def session_opened(self) -> SignalInstance: ...  # (key) once a session's first view is complete

    def current_row(self) -> SessionRow | None: ...

    def select_session(self, session_id: str) -> bool:
        """Select (and so open) the listed session ``session_id``; False when it is not listed."""
        ...

    def show_tab(self, tab: str | int) -> None:
        """Show content tab ``tab`` (a key) and put the keyboard focus in it."""
        ...

    def show_status(self, text: str, ms: int = 0) -> None: ...

    def add_status_widget(self, widget: QWidget) -> None:
        """A permanent widget at the right of the status bar (after the ones added before)."""
        ...

    def add_below_content(self, widget: QWidget) -> None:
        """A widget under the content tabs (the find bar)."""
        ...

    def open_root(self, root: str) -> object: ...

    # What the window remembers between runs (a feature's own choices: View > Theme).
    @property
    def settings(self) -> AppSettings: ...


__all__ = ["BASE_TABS", "HEADER", "RAW", "TIMELINE", "ContentTabs", "WindowContext"]
