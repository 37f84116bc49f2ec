"""The window's panes and where they sit: the session list left, the banner and content tabs right, the status bar.

Why its own module: placing about twenty widgets is one concept (what is where, and the splitter's
5:6 stretch and 760/840 px start) that changes for other reasons than the wiring between them; it
was 55 of the main window's lines when that file passed the 600-line limit.  ``build_panes`` only
builds and places: no signal is connected here (the window and its features do that), so the panes
carry no behaviour they would not have anyway.

May import: PySide6, the window's models and views, and ``window.tabs``; never ``window.main_window``.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QSplitter, QTabWidget, QVBoxLayout, QWidget

from app.gui.models.header_fields import HeaderFieldsModel
from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.sessions import SessionListModel
from app.gui.models.timeline import TimelineModel
from app.gui.views.header_pane import HeaderPane
from app.gui.views.progress_panel import ProgressPanel
from app.gui.views.raw_pane import RawPane
from app.gui.views.selection_sync import SelectionSync
from app.gui.views.session_banner import SessionBanner
from app.gui.views.session_list import SessionListPane, TabBarNote
from app.gui.views.status_bar import ElidedLabel, MessageStatusBar
from app.gui.views.timeline_pane import TimelinePane
from app.gui.window.tabs import HEADER, RAW, TIMELINE, ContentTabs

SPLITTER_STRETCH = (5, 6)  # list : content, as the window grows
SPLITTER_START_PX = (760, 840)  # at the first start (later the user's sizes are restored)


@dataclass(frozen=True, slots=True)
class WindowPanes:
    """Every pane of the window, built and placed; the window keeps each as an attribute of its own."""

    list_pane: SessionListPane
    left_tabs: QTabWidget  # Sessions, and the features' side tabs (Search)
    banner: SessionBanner
    header_pane: HeaderPane
    timeline_pane: TimelinePane
    raw_pane: RawPane
    tabs: QTabWidget
    content_tabs: ContentTabs
    hidden_note: TabBarNote  # "the filter hides the open session", in the tabs' row (issue 16)
    content_area: QWidget  # the right side: banner, content tabs, and what features add below them
    content_layout: QVBoxLayout
    splitter: QSplitter
    message_label: QLabel  # transient messages, in their own eliding label (issue 24 item 7)
    root_label: ElidedLabel
    counts_label: QLabel
    progress: ProgressPanel
    selection_sync: SelectionSync  # the Timeline's selection and the Raw tab's, kept in step


def build_panes(
    window: QMainWindow,
    session_model: SessionListModel,
    header_model: HeaderFieldsModel,
    timeline_model: TimelineModel,
    raw_model: RawLinesModel,
) -> WindowPanes:
    """Build the panes into ``window`` (its central widget and status bar); the Timeline tab is shown."""
    list_pane = SessionListPane(session_model, window)
    header_pane = HeaderPane(header_model, window)
    timeline_pane = TimelinePane(timeline_model, window)
    raw_pane = RawPane(raw_model, window)
    tabs = QTabWidget(window)
    content_tabs = ContentTabs(tabs)
    content_tabs.add(HEADER, header_pane, "Header")
    content_tabs.add(TIMELINE, timeline_pane, "Timeline")
    content_tabs.add(RAW, raw_pane, "Raw")
    content_tabs.show(TIMELINE)
    banner = SessionBanner(window)
    right = QWidget(window)
    rl = QVBoxLayout(right)
    rl.setContentsMargins(0, 0, 4, 0)
    rl.setSpacing(2)
    rl.addWidget(banner.widget)
    hidden_note = TabBarNote(tabs)
    rl.addWidget(tabs)
    left_tabs = QTabWidget(window)
    left_tabs.setDocumentMode(True)
    left_tabs.addTab(list_pane, "Sessions")
    splitter = QSplitter(Qt.Orientation.Horizontal, window)
    splitter.addWidget(left_tabs)
    splitter.addWidget(right)
    for i, stretch in enumerate(SPLITTER_STRETCH):
        splitter.setStretchFactor(i, stretch)
    splitter.setSizes(list(SPLITTER_START_PX))
    window.setCentralWidget(splitter)
    sb = MessageStatusBar(window)
    window.setStatusBar(sb)
    root_label = ElidedLabel(window, elide=Qt.TextElideMode.ElideMiddle)
    counts_label = QLabel(window)
    progress = ProgressPanel(window)
    sb.addWidget(root_label, 1)
    sb.addPermanentWidget(progress)
    sb.addPermanentWidget(counts_label)
    return WindowPanes(
        list_pane=list_pane,
        left_tabs=left_tabs,
        banner=banner,
        header_pane=header_pane,
        timeline_pane=timeline_pane,
        raw_pane=raw_pane,
        tabs=tabs,
        content_tabs=content_tabs,
        hidden_note=hidden_note,
        content_area=right,
        content_layout=rl,
        splitter=splitter,
        message_label=sb.message_label,
        root_label=root_label,
        counts_label=counts_label,
        progress=progress,
        selection_sync=SelectionSync(timeline_pane, raw_pane, timeline_model, raw_model),
    )


__all__ = ["WindowPanes", "build_panes"]
