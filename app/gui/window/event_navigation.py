"""Going to one event: a search hit, a link, a find match, back and forward, and copying a link to it.

``go_to(place)`` selects the session in the list (the loader opens it, as a click would), waits for
its first view (the context's ``session_opened``), then expands the timeline to the event, selects it,
and lets the timeline<->raw sync select the event's raw line.  An event the timeline does not show
(a log the engine refuses has no timeline) is selected in the Raw tab instead.  A session already
open and loaded is navigated at once.

Back / forward (``controllers.event_history``) record jumps, not every row the arrow keys pass.

"Copy link to this event" is added to the timeline's context menu (after the pane has built it:
the pane's own handler runs first, as it was connected first) and is the raw lines' context menu;
it copies the ``sessionscope://`` URL and the command line (``app.links``).

May import: PySide6, the window's views and models (through its ``WindowContext``),
``controllers.event_history`` and ``app.links``; never ``window.main_window``.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractItemView, QMenu

from app.gui.controllers.event_history import EventHistory, Place
from app.gui.window.context import WindowContext
from app.gui.window.tabs import CONVERSATION, HEADER, RAW, TIMELINE
from app.links import EventLink

LINK_MESSAGE_MS = 8000


class EventNavigator(QObject):
    link_copied = Signal(str, str)  # the status line ("Copied a link to event seq 41: …"), the session id

    def __init__(self, window: WindowContext) -> None:
        super().__init__(window.qwindow)
        self.w = window
        self.history = EventHistory()
        self.pending: Place | None = None  # where to go once the session's first view is in
        self.last_menu: QMenu | None = None
        self.last_landed: Place | None = None  # the last place a go_to selected (tests, status)
        window.session_opened.connect(self._session_opened)
        # The timeline pane builds its own menu first (connected first), then this adds to it.
        window.timeline_pane.tree.customContextMenuRequested.connect(self._timeline_menu)
        raw_view = window.raw_pane.view
        raw_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        raw_view.customContextMenuRequested.connect(self._raw_menu)

    # ------------------------------------------------------------ where the user is

    def here(self) -> Place | None:
        """The open session and the event selected in it.

        When the selected raw line is the one the last visited place landed on, that place is returned
        as it is: a hit inside a packed chunk row (seq 1054 of a row holding 1050-1090) is still "here",
        so one Alt+Left goes back past it, not to seq 1050 of the same line.
        """
        cur = self.w.loader.current
        if cur is None:
            return None
        line = self.w.raw_pane.current_line()
        top = self.history.current
        if top is not None and top.key == cur.key and top.seq is not None and line >= 0:
            if self.w.raw_model.text.line_for_seq(top.seq) == line:
                return top
        return Place(cur.key, cur.row.session_id, self.selected_seq())

    def selected_seq(self) -> int | None:
        """The selected event: the first seq of the selected raw line (the timeline row's raw line, as
        the two are kept in step), else the timeline row's first seq."""
        line = self.w.raw_pane.current_line()
        seqs = self.w.raw_model.text.seqs_of_line(line) if line >= 0 else None
        if seqs is not None:
            return seqs[0]
        node = self.w.timeline_pane.current_node()
        return node.first_seq if node is not None and node.first_seq >= 0 else None

    # ------------------------------------------------------------ going

    def go_to(self, key: str, session_id: str, seq: int | None, *, record: bool = True) -> bool:
        """Open ``session_id`` (row ``key``) at event ``seq``; False (and a status message) when it is not listed."""
        to = Place(key, session_id, seq)
        if record:
            self.history.jump(self.here(), to)
        return self._show(to)

    def expect(self, session_id: str, seq: int | None) -> None:
        """The window was opened at this event (``--seq``, a link): go there once the session is loaded."""
        self.pending = Place("", session_id, seq)
        self.history.visit(self.pending)

    def back(self) -> bool:
        place = self.history.back(self.here())
        return place is not None and self._show(place)

    def forward(self) -> bool:
        place = self.history.forward()
        return place is not None and self._show(place)

    def _show(self, place: Place) -> bool:
        w = self.w
        row = w.session_model.get(place.key) if place.key else None
        if row is None:
            row = w.session_model.find_id(place.session_id)
        if row is None:
            self.pending = None
            w.show_status(f"Session {place.session_id} is not in this root (any more)", 10_000)
            return False
        self.pending = Place(row.key, row.session_id, place.seq)
        cur = w.loader.current
        if cur is not None and cur.key == row.key and cur.loaded:
            if w.list_pane.current_key() != row.key:
                w.list_pane.select_key(row.key)
            self._apply()
        elif not w.list_pane.select_key(row.key):
            self.pending = None
            return False
        return True

    def _session_opened(self, key: str) -> None:
        p = self.pending
        if p is None:
            return
        row = self.w.session_model.get(key)
        if p.key == key or (not p.key and row is not None and row.session_id == p.session_id):
            self._apply()

    def _apply(self) -> None:
        p, self.pending = self.pending, None
        if p is None:
            return
        w = self.w
        if p.seq is None:
            w.show_tab(HEADER)
            self.last_landed = p
            return
        idx = w.timeline_model.index_for_seq(p.seq)  # loads older blocks when the event is above them
        line = w.raw_model.text.line_for_seq(p.seq)
        if idx.isValid():
            if w.content_tabs.current() != CONVERSATION:  # a reader of the conversation stays in it (issue 24)
                w.content_tabs.show(TIMELINE)
            self._select_timeline(idx)
            if line >= 0 and w.raw_pane.current_line() != line:
                w.raw_pane.select_line(line)  # the sync did not run (the row was already current)
            if line >= 0:
                w.raw_pane.show_line(line)  # scrolled again when the Raw tab is next shown
        elif line >= 0:
            w.content_tabs.show(RAW)
            w.raw_pane.select_line(line)
        else:
            w.show_status(f"Event seq {p.seq} is not in session {p.session_id}'s timeline or raw text", 10_000)
            return
        self.last_landed = p

    def _select_timeline(self, idx: QModelIndex) -> None:
        tree = self.w.timeline_pane.tree
        self.w.timeline_pane.select_index(idx)
        tree.setFocus(Qt.FocusReason.OtherFocusReason)

        # Loading older blocks may have queued the pane's "follow the tail" scroll: scroll back after it.
        def again() -> None:
            if idx.isValid():
                tree.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)

        QTimer.singleShot(0, again)

    def go_to_raw_line(self, line: int, *, record: bool = True) -> None:
        """Select raw ``line`` (a find match): the timeline follows through the selection sync."""
        w = self.w
        cur = w.loader.current
        seqs = w.raw_model.text.seqs_of_line(line)
        if record and cur is not None:
            self.history.jump(self.here(), Place(cur.key, cur.row.session_id, None if seqs is None else seqs[0]))
        if w.content_tabs.current() == HEADER:
            w.content_tabs.show(TIMELINE)
        w.raw_pane.select_line(line)
        if w.content_tabs.current() != RAW:
            w.raw_pane.show_line(line)
            node = w.timeline_pane.current_node()
            if node is not None:
                idx = w.timeline_model.index_of_node(node)
                if idx.isValid():
                    w.timeline_pane.tree.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)

    # ------------------------------------------------------------ links

    def link_for(self, seq: int | None) -> EventLink | None:
        w = self.w
        cur = w.loader.current
        root = w.controller.opened.path if w.controller.opened is not None else w.controller.root
        if cur is None or not root:
            return None
        return EventLink(root, cur.row.session_id, seq)

    def copy_link(self, seq: int | None = None, *, use_selection: bool = True) -> str | None:
        """Put the link to ``seq`` (default: the selected event) on the clipboard; returns the text copied."""
        if seq is None and use_selection:
            seq = self.selected_seq()
        link = self.link_for(seq)
        if link is None:
            self.w.show_status("Open a session first: a link points at one of its events", LINK_MESSAGE_MS)
            return None
        text = link.clipboard_text()
        QGuiApplication.clipboard().setText(text)
        what = f"event seq {seq}" if seq is not None else "the session"
        message = f"Copied a link to {what}: {link.url()}"
        self.w.show_status(message, LINK_MESSAGE_MS)
        self.link_copied.emit(message, link.session)
        return text

    def _timeline_menu(self, _pos: QPoint) -> None:
        menu = self.w.timeline_pane.last_menu
        if menu is None:
            return
        node = self.w.timeline_pane.current_node()
        seq = node.first_seq if node is not None and node.first_seq >= 0 else None
        menu.addSeparator()
        act = menu.addAction("Copy link to this event")
        act.setEnabled(seq is not None)
        act.triggered.connect(lambda _c=False, s=seq: self.copy_link(s, use_selection=False))

    def _raw_menu(self, pos: QPoint) -> None:
        view = self.w.raw_pane.view
        idx = view.indexAt(pos)
        if idx.isValid():
            self.w.raw_pane.select_line(idx.row())
        line = self.w.raw_pane.current_line()
        seqs = self.w.raw_model.text.seqs_of_line(line) if line >= 0 else None
        menu = QMenu(view)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        act = menu.addAction("Copy link to this event")
        act.setEnabled(seqs is not None)
        if seqs is not None:
            act.triggered.connect(lambda _c=False, s=seqs[0]: self.copy_link(s, use_selection=False))
        self.last_menu = menu
        menu.popup(view.viewport().mapToGlobal(pos))


__all__ = ["EventNavigator"]
