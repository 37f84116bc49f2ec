"""The Conversation tab and walking errors: a feature plugged in through ``WindowContext`` (issue 24 items 1-2).

Why one feature for both: the conversation keeps its selection on the same event as the Timeline
(and through ``SelectionSync`` the Raw tab), and "next / previous error" lands on an event in
whichever of the three the user reads, so both need the same seq-to-row mapping and the same guard
against selections echoing between views.

- View > Conversation (Ctrl+5): the tab, a reading view beside the Timeline (after Stats).
- View > Next error (F9) / Previous error (Shift+F9): from the selected event to the next or previous
  failed tool call, failed attempt or error turn end, in event order; the walk stops at the last
  (first) error and says so rather than wrapping, so a user knows they have seen them all.  Earlier
  turns not loaded yet are loaded on the way up.
- View > Errors only (Ctrl+Shift+E): the Timeline shows the turns and steps holding errors and the
  failed items; the Conversation the error blocks under their turns.

May import: PySide6, ``window.context``/``tabs``, the conversation model and pane, and ``app.timeline``.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence

from app.gui.models.conversation import ConversationModel
from app.gui.views.conversation_pane import ConversationPane
from app.gui.window.context import WindowContext
from app.gui.window.tabs import CONVERSATION, RAW, TIMELINE
from app.timeline import ERROR, TimelineNode

CONVERSATION_KEY = "Ctrl+5"
NEXT_ERROR_KEY = "F9"  # F8 is "Go to damage": the next problem of another kind
PREVIOUS_ERROR_KEY = "Shift+F9"
ERRORS_ONLY_KEY = "Ctrl+Shift+E"
ERROR_MESSAGE_MS = 8000
OLDER_PAGE_ROWS = 20  # turns the conversation's "Load more" adds


class ConversationFeature(QObject):
    def __init__(self, ctx: WindowContext) -> None:
        super().__init__(ctx.qwindow)
        self.ctx = ctx
        self.model = ConversationModel(ctx.timeline_model, ctx.qwindow)
        self.pane = ConversationPane(self.model, ctx.qwindow)
        # Appended (after Stats, Ctrl+4 -> Ctrl+5): the tabs' positions other code and tests rely on stay.
        ctx.content_tabs.add(CONVERSATION, self.pane, "Conversation")
        self._syncing = False
        self._kept_seq: int | None = None
        self.last_error_seq: int | None = None  # where the last error walk landed (tests, status)

        self.tab_action = self._action("Con&versation", lambda: ctx.show_tab(CONVERSATION), CONVERSATION_KEY)
        self.next_error_action = self._action("Ne&xt error", self.next_error, NEXT_ERROR_KEY)
        self.previous_error_action = self._action("Previo&us error", self.previous_error, PREVIOUS_ERROR_KEY)
        self.errors_only_action = self._action("Errors o&nly", lambda: None, ERRORS_ONLY_KEY)
        self.errors_only_action.setCheckable(True)
        self.errors_only_action.toggled.connect(self.set_errors_only)
        self.pane.errors_only.toggled.connect(self.errors_only_action.setChecked)
        view = ctx.menus.menu("View")
        if view is not None:
            view.addSeparator()
            for act in (self.tab_action, self.next_error_action, self.previous_error_action, self.errors_only_action):
                view.addAction(act)

        ctx.timeline_pane.node_selected.connect(self._timeline_selected)
        self.pane.seq_selected.connect(self._conversation_selected)
        self.pane.older_requested.connect(self._load_older)
        self.pane.status.connect(lambda text: ctx.show_status(text, ERROR_MESSAGE_MS))
        self.model.modelAboutToBeReset.connect(self._before_reset)
        self.model.modelReset.connect(self._after_reset)
        tl = ctx.timeline_model
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(0)
        self._filter_timer.timeout.connect(self._filter_timeline)
        for sig in (tl.modelReset, tl.rowsInserted, tl.layoutChanged):
            sig.connect(self._refilter)

    def _action(self, text: str, slot: object, key: str) -> QAction:
        act = QAction(text, self.ctx.qwindow)
        act.setShortcut(QKeySequence(key))
        act.triggered.connect(lambda _c=False: slot())  # type: ignore[operator]  # a callable
        return self.ctx.menus.add_shortcut(act)

    # ------------------------------------------------------------ selection in step with the timeline

    def _timeline_selected(self, node: TimelineNode) -> None:
        if self._syncing or node.first_seq < 0:
            return
        self._syncing = True
        try:
            if not self.pane.select_seq(node.first_seq) and self.model.stale():
                self.model.rebuild()  # the timeline just loaded the older turn this row is in (a search hit)
                self.pane.select_seq(node.first_seq)
        finally:
            self._syncing = False

    def _conversation_selected(self, seq: int) -> None:
        if self._syncing:
            return
        idx = self.ctx.timeline_model.index_for_seq(seq)
        if not idx.isValid():
            return
        self._syncing = True
        try:
            self.ctx.timeline_pane.select_index(idx)  # the timeline then selects the raw line (SelectionSync)
        finally:
            self._syncing = False

    def _before_reset(self) -> None:
        self._kept_seq = self.pane.current_seq()

    def _after_reset(self) -> None:
        """The blocks were rebuilt (a session opened, older turns loaded, a live append): keep the place."""
        seq = self._kept_seq
        if seq is None:
            node = self.ctx.timeline_pane.current_node()
            seq = node.first_seq if node is not None and node.first_seq >= 0 else None
        self.pane.restore_place(seq)

    def _load_older(self, load_all: bool) -> None:
        tree = self.ctx.timeline_pane.tree
        if load_all:
            tree.load_all()
        else:
            tree.fetch_older(OLDER_PAGE_ROWS)
        self.model.rebuild()

    # ------------------------------------------------------------ errors

    def current_seq(self) -> int | None:
        """The selected event of the view the user reads (Conversation, Raw, else Timeline)."""
        ctx = self.ctx
        tab = ctx.content_tabs.current()
        if tab == CONVERSATION:
            return self.pane.current_seq()
        if tab == RAW:
            line = ctx.raw_pane.current_line()
            seqs = ctx.raw_model.text.seqs_of_line(line) if line >= 0 else None
            if seqs is not None:
                return seqs[0]
        node = ctx.timeline_pane.current_node()
        return node.first_seq if node is not None and node.first_seq >= 0 else None

    def next_error(self) -> bool:
        return self._walk(+1)

    def previous_error(self) -> bool:
        return self._walk(-1)

    def _walk(self, direction: int) -> bool:
        ctx = self.ctx
        if ctx.loader.current is None:
            ctx.show_status("Open a session first: the error walk goes through its events", ERROR_MESSAGE_MS)
            return False
        self.model.rebuild()  # a live append may be waiting for its turn
        here = self.current_seq()
        target = self._find(here, direction)
        while target is None and direction < 0 and ctx.timeline_model.first_loaded_span > 0:
            ctx.timeline_pane.tree.fetch_older(OLDER_PAGE_ROWS)  # earlier turns: loaded on the way up
            self.model.rebuild()
            target = self._find(here, direction)
        errors = self.model.error_seqs()
        if target is None:
            if not errors:
                ctx.show_status("No errors in this session", ERROR_MESSAGE_MS)
            else:
                which = "later" if direction > 0 else "earlier"
                ctx.show_status(f"No {which} error: the walk stops here ({len(errors):,} errors)", ERROR_MESSAGE_MS)
            return False
        self._land(target)
        pos = errors.index(target) + 1 if target in errors else 0
        ctx.show_status(f"Error {pos:,} of {len(errors):,} in the loaded turns: seq {target}", ERROR_MESSAGE_MS)
        return True

    def _find(self, here: int | None, direction: int) -> int | None:
        errors = self.model.error_seqs()
        if direction > 0:
            return next((s for s in errors if here is None or s > here), None)
        return next((s for s in reversed(errors) if here is None or s < here), None)

    def _land(self, seq: int) -> None:
        """Select error ``seq`` in every view; the user stays on the tab they read (Header: the Timeline)."""
        ctx = self.ctx
        self.last_error_seq = seq
        tab = ctx.content_tabs.current()
        if tab not in (TIMELINE, RAW, CONVERSATION):
            ctx.content_tabs.show(TIMELINE)  # Header, Stats: the error is shown where its row is
        idx = ctx.timeline_model.index_for_seq(seq)
        if idx.isValid():
            ctx.timeline_pane.select_index(idx)  # syncs the raw line and the conversation
        line = ctx.raw_model.text.line_for_seq(seq)
        if line >= 0 and ctx.raw_pane.current_line() != line:
            ctx.raw_pane.select_line(line)
        if self.pane.current_seq() is None or self.model.row_for_seq(seq) != self.pane.list.currentIndex().row():
            self._syncing = True
            try:
                self.pane.select_seq(seq)
            finally:
                self._syncing = False
        focus = {CONVERSATION: self.pane.list, RAW: ctx.raw_pane.view}.get(
            ctx.content_tabs.current() or "", ctx.timeline_pane.tree
        )
        focus.setFocus(Qt.FocusReason.OtherFocusReason)

    # ------------------------------------------------------------ errors only

    def set_errors_only(self, on: bool) -> None:
        if self.pane.errors_only.isChecked() != on:
            self.pane.errors_only.setChecked(on)
        self.model.set_errors_only(on)
        self._filter_timeline()

    def _refilter(self, *_args: object) -> None:
        if self.model.errors_only:
            self._filter_timer.start()

    def _filter_timeline(self) -> None:
        """Hide the timeline rows with no error under them (the "older turns" and "Stopped here" rows stay)."""
        tl = self.ctx.timeline_model
        tree = self.ctx.timeline_pane.tree
        on = self.model.errors_only
        for row in range(tl.rowCount()):
            idx = tl.index(row, 0)
            if tl.is_sentinel(idx) or tl.is_stop(idx):
                continue
            self._filter_rows(idx, on)
            node = tl.node(idx)
            tree.setRowHidden(row, QModelIndex(), on and (node is None or ERROR not in node.flags))

    def _filter_rows(self, parent: QModelIndex, on: bool) -> None:
        tl = self.ctx.timeline_model
        node = tl.node(parent)
        if node is None or node.kind == "tool":
            return  # a failed tool's result rows stay under it
        tree = self.ctx.timeline_pane.tree
        for row in range(tl.rowCount(parent)):
            child = tl.index(row, 0, parent)
            kid = tl.node(child)
            hide = on and (kid is None or ERROR not in kid.flags)
            tree.setRowHidden(row, parent, hide)
            if not hide:
                self._filter_rows(child, on)


__all__ = ["CONVERSATION", "ConversationFeature"]
