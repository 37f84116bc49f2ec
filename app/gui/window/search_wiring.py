"""The window's search features, wired in one place: search every session, find in the open session,
going to events (back / forward, links) and the background index.

Built from the window's ``WindowContext`` (registered in ``window.features``): it places its three
widgets itself (the Search tab, the find bar under the content tabs, the index progress in the status
bar); the window's Search menu forwards to it.  What each part does lives in its own module:
``controllers.search`` (index and queries), ``controllers.session_find`` (find in the raw text),
``window.event_navigation`` (going to an event), ``views.search_pane`` / ``views.find_bar``
(widgets), ``models.search_results`` (hits).

May import: every ``app.gui`` package (it wires controllers to views, as the window does) and
``app.activity``; never ``window.main_window`` (it is handed a ``WindowContext``).
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer

from app.activity import DONE
from app.gui.controllers.search import IndexState, SearchController, SearchRequest
from app.gui.controllers.session_find import NEXT, PREVIOUS, SessionFind
from app.gui.models.search_results import SearchResultsModel
from app.gui.views.find_bar import FindBar, MatchDelegate, mark_text
from app.gui.views.progress_panel import ProgressPanel
from app.gui.views.search_pane import SearchPane
from app.gui.window.context import WindowContext
from app.gui.window.event_navigation import EventNavigator
from app.gui.window.tabs import HEADER, TIMELINE
from app.rawview.find_matches import FindMatches
from app.search import Hit, SearchFilters, SearchResult, SessionHits
from app.timeline import TimelineNode

Index = QModelIndex | QPersistentModelIndex
STATUS_MS = 15_000
REFRESH_MS = 500  # a watched session's appends re-run the shown query at most this often


class SearchFeatures(QObject):
    def __init__(self, ctx: WindowContext) -> None:
        window = ctx.qwindow
        super().__init__(window)
        self.w = ctx
        self.model = SearchResultsModel(self)
        self.pane = SearchPane(self.model, window)
        # The index waits until every visible row of the list has its status (diagnosis goes first).
        self.controller = SearchController(ctx.jobs, self, may_start=ctx.controller.details.visible_settled)
        self.navigator = EventNavigator(ctx)
        self.find_bar = FindBar(window)
        self.finder = SessionFind(ctx.jobs, ctx.raw_model, self)
        self.index_progress = ProgressPanel(window)
        self.index_progress.button.setToolTip("Stop indexing: what is indexed stays searchable (Search ▸ Update goes on)")
        # Installed only while a find has matches: a delegate in Python costs one more call into Python
        # per painted cell, which the timeline and raw views otherwise avoid (models.one_call_per_cell).
        self.timeline_marks = MatchDelegate(ctx.timeline_pane.tree)
        self.raw_marks = MatchDelegate(ctx.raw_pane.view)
        self._plain_delegates = (ctx.timeline_pane.tree.itemDelegate(), ctx.raw_pane.view.itemDelegate())
        self._node_cache: dict[int, tuple[TimelineNode, bool]] = {}
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self.controller.search_again)
        self._connect()
        ctx.left_tabs.addTab(self.pane, "Search")
        ctx.add_below_content(self.find_bar)
        ctx.add_status_widget(self.index_progress)

    def _connect(self) -> None:
        w, c, pane = self.w, self.controller, self.pane
        pane.search_requested.connect(self._search_requested)
        pane.hit_activated.connect(self.open_hit)
        pane.session_activated.connect(self._open_group)
        c.results_ready.connect(self._show_result)
        c.counts_ready.connect(lambda result, _r: pane.show_counts(result))
        c.query_failed.connect(lambda message, _r: pane.show_error(message))
        c.state_changed.connect(self._state_changed)
        c.indexed.connect(self._index_changed)
        c.message.connect(lambda m: w.show_status(m, STATUS_MS))
        c.progress_started.connect(self.index_progress.track)
        c.progress_finished.connect(self.index_progress.untrack)
        self.index_progress.cancel_requested.connect(c.cancel_indexing)
        lc = w.controller
        lc.listing_finished.connect(self._listed)
        # The diagnosis cache is the index's sibling (both rebuilt, never repaired): its notes read alike.
        lc.details.messages.connect(lambda ms: w.show_status("; ".join(f"Status cache: {m}" for m in ms), STATUS_MS))
        lc.watcher.changed.connect(c.index_paths)
        lc.session_changed.connect(self._row_changed)
        fb, f = self.find_bar, self.finder
        fb.find_requested.connect(f.find)
        fb.next_requested.connect(lambda: self.find_step(NEXT))
        fb.previous_requested.connect(lambda: self.find_step(PREVIOUS))
        fb.closed.connect(self._find_closed)
        f.changed.connect(self._matches_changed)
        f.current_changed.connect(lambda _i: self._show_count())
        f.go_to_line.connect(self.navigator.go_to_raw_line)
        w.loader.raw_ready.connect(lambda _k: f.refresh())
        w.loader.grew.connect(lambda _k: f.refresh())
        w.timeline_model.modelReset.connect(self._node_cache.clear)
        w.timeline_pane.node_selected.connect(lambda _n: self._mark_details(scroll=True))
        w.raw_pane.line_selected.connect(lambda _l: self._mark_details(scroll=True))
        self.navigator.link_copied.connect(
            lambda message, session: w.activity.record("copy link", DONE, message, session=session)
        )

    # ------------------------------------------------------------ the root and its index

    def root_closing(self) -> None:
        """Another root is being opened: stop indexing this one now."""
        self.controller.set_root(None)
        self.model.clear()
        self.pane.show_hint()
        self.navigator.history.clear()

    def _listed(self, _count: int) -> None:
        opened = self.w.controller.opened
        self.controller.set_root(opened.path if opened is not None else None)

    def _row_changed(self, key: str) -> None:
        # A changed row (the poll or the watcher saw its artifact change): its folder, or the store.
        opened = self.w.controller.opened
        if opened is None:
            return
        self.controller.index_paths([os.path.dirname(key)] if opened.is_jsonl else [opened.path])

    def _index_changed(self, full: bool) -> None:
        """The index changed under the shown query: run it again (a live session's appends are coalesced)."""
        if full:
            self._refresh_timer.stop()
            self.controller.search_again()
        elif not self._refresh_timer.isActive():
            self._refresh_timer.start()

    def _state_changed(self, state: IndexState) -> None:
        self.pane.set_index_state(state.text())

    # ------------------------------------------------------------ search every session

    def focus_search(self) -> None:
        self.w.left_tabs.setCurrentWidget(self.pane)
        self.pane.focus_field()

    def _search_requested(self, query: str, filters: SearchFilters) -> None:
        if not query:
            self.controller.search("", filters)
            self.pane.show_hint()
            return
        self.controller.search(query, filters)

    def _show_result(self, result: SearchResult, request: SearchRequest) -> None:
        self.pane.show_result(result, request.filters, self.controller.state.text())

    def open_hit(self, hit: Hit) -> bool:
        return self.navigator.go_to(hit.key, hit.session_id, hit.seq)

    def _open_group(self, group: SessionHits) -> None:
        first = group.hits[0] if group.hits else None
        self.navigator.go_to(group.key, group.session_id, first.seq if first is not None else None)

    # ------------------------------------------------------------ find in the open session

    def open_find(self) -> None:
        if self.w.content_tabs.current() == HEADER:
            self.w.show_tab(TIMELINE)
        self.find_bar.open_bar()

    def find_step(self, direction: str) -> None:
        """F3 / Shift+F3: the next / previous match (opens the bar when it is closed or empty)."""
        if not self.find_bar.isVisible() or not self.find_bar.text:
            self.open_find()
            return
        if self.finder.query != self.find_bar.text:
            self.find_bar.request_now()
        self.finder.step(direction, self.w.raw_pane.current_line())

    def _find_closed(self) -> None:
        self.finder.clear()
        self.w.show_tab(self.w.content_tabs.widget.currentIndex())  # focus back to the content

    def _matches_changed(self, matches: FindMatches | None) -> None:
        self._node_cache.clear()
        tree, raw = self.w.timeline_pane.tree, self.w.raw_pane.view
        if matches is None or not len(matches):
            self.timeline_marks.set_matcher(None)
            self.raw_marks.set_matcher(None)
            tree.setItemDelegate(self._plain_delegates[0])
            raw.setItemDelegate(self._plain_delegates[1])
        else:
            self.raw_marks.set_matcher(lambda idx: matches.has_line(idx.row()))
            self.timeline_marks.set_matcher(lambda idx: self._node_matches(matches, idx))
            tree.setItemDelegate(self.timeline_marks)
            raw.setItemDelegate(self.raw_marks)
        self._show_count()
        self._mark_details(scroll=False)

    def _node_matches(self, matches: FindMatches, idx: Index) -> bool:
        node: Any = idx.internalPointer() if idx.isValid() else None
        if not isinstance(node, TimelineNode):
            return False
        cached = self._node_cache.get(id(node))
        if cached is not None and cached[0] is node:
            return cached[1]
        if node.children or not node.seqs:
            # A turn or step row matches on its own event only (not on every event it folds).
            hit = node.seq >= 0 and matches.seq_matches(node.seq, node.seq)
        else:
            seqs = node.seqs
            lo, hi = min(seqs), max(seqs)
            if node.seq >= 0:
                lo, hi = min(lo, node.seq), max(hi, node.seq)
            hit = matches.seq_matches(lo, hi)
        self._node_cache[id(node)] = (node, hit)  # the node is kept: its id cannot be reused meanwhile
        return hit

    def _show_count(self) -> None:
        m = self.finder.matches
        if m is None:
            self.find_bar.set_count("")
            return
        self.find_bar.set_count(m.count_text(self.finder.current), none=not len(m))

    def _mark_details(self, *, scroll: bool) -> None:
        text = self.finder.query if self.find_bar.isVisible() else ""
        for detail in (self.w.timeline_pane.detail, self.w.raw_pane.detail):
            mark_text(detail, text, scroll=scroll)

    # ------------------------------------------------------------ keys

    def handle_escape(self) -> bool:
        """Esc in the find bar closes it; in the search field it clears the query.  True when handled."""
        if self.find_bar.isVisible() and self.find_bar.field.hasFocus():
            self.find_bar.close_bar()
            return True
        if self.pane.field.hasFocus() and self.pane.field.text():
            self.pane.field.clear()
            return True
        return False

    def select_hit_row(self, row: int, group: int = 0) -> None:
        """Make hit ``row`` of session group ``group`` current in the results (tests, keyboard)."""
        idx = self.model.index(row, 0, self.model.index(group, 0))
        self.pane.tree.setCurrentIndex(idx)
        self.pane.tree.scrollTo(idx)
        self.pane.tree.setFocus(Qt.FocusReason.OtherFocusReason)

    async def close(self) -> None:
        await self.controller.close()


__all__ = ["SearchFeatures"]
