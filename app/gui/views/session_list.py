"""The left pane: filter box, project filter and the sortable session table (or the empty-root offer).

Why it looks and behaves this way (issue 16, a 10,000-session root):

- **Filter**: a key never filters inside its own key event, so the typed character is painted at
  once.  A key after a pause (at least ``FILTER_DEBOUNCE_MS`` since the previous one: ordinary typing)
  filters on the next turn of the event loop; keys closer together (a held key, a burst) are
  debounced into one pass ``FILTER_DEBOUNCE_MS`` after the last.  A pass is the model's substring test
  per row over precomputed lower-case texts and one ``layoutChanged`` (never a reset): ~2-7 ms on
  10,000 rows, plus ~8-25 ms to paint the table.  ``benchmarks/bench_filter.py`` on 10,000 sessions:
  the list painted 20 ms (median) / 41 ms (p95) after the last key, each key handled in < 2 ms; before,
  every key blocked the GUI thread ~47 ms (median; 130 ms max, and up to 675 ms while the root was
  still being diagnosed), the list painted 49 / 99 ms after the last key.  Roots of at most
  ``FILTER_INSTANT_ROWS`` sessions filter inside the key event (a pass there costs well under a
  millisecond), and clearing the box always applies at once (``select_key`` relies on that).
- **Empty result**: the table's viewport says "No sessions match 'xyz' — 0 of 10,000"; the window asks
  ``hidden_note`` to say above the right pane that the open session is hidden by the filter (it keeps
  showing that session rather than clearing it: the user's place in a long timeline survives a typo).
- **Columns**: Title stretches; the others are as wide as their longest possible value (measured
  from the font, never by reading 10,000 rows); Origin, Size, Session id and Created start hidden so
  that Modified shows without a horizontal scrollbar at 1400 px (the header's context menu shows them).
  Home / End and Ctrl+Home / Ctrl+End go to the first / last row, never to the first / last column.
- **Copy session id** (Ctrl+C in the table, and the context menu) copies the selected sessions' ids,
  one per line, instead of the current cell's text ("ok"); **Open containing folder** opens the folder
  holding the session's artifact (a SQLite store: the database's folder) in the desktop's file manager.
- **Unseen sessions** (bold title and a dot, from the model): opening a row marks it looked at.

May import: PySide6, ``app.gui.style``, ``models.sessions`` / ``models.session_row`` and ``views.session_table``.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.glossary import SESSION, plural
from app.gui import style, theme
from app.gui.models.session_row import SessionRow
from app.gui.models.sessions import HEADERS, KEY_ROLE, LIVE_LABEL, Col, SessionListModel, project_label
from app.gui.views.session_table import SessionTable
from persistence import containing_folder as artifact_folder

FILTER_DEBOUNCE_MS = 20  # keys closer together than this are filtered once, this long after the last
FILTER_INSTANT_ROWS = 2000  # a root of at most this many sessions filters on every key (a pass: < 1 ms)
HIDDEN_BY_DEFAULT = (Col.ORIGIN, Col.SIZE, Col.ID, Col.CREATED)  # so Modified fits at 1400 px (header menu: show)
CELL_PAD_PX = 14  # a cell's text margins on both sides (Fusion: 2 x 4) plus room to spare
SORT_ARROW_PX = 18  # the header's sort indicator beside the label
PROJECT_MIN_PX = 110
# The Title never gets narrower than this (a title reads as words, not "Ref…"): in a narrow list the Title
# stops stretching and the table scrolls sideways to Modified and Events instead (issue 24 item 7).
TITLE_MIN_PX = 180
EMPTY_TEXT_MAX_PX = 720  # the empty state's paragraphs wrap at this width
EMPTY_TEXT_MARGIN_PX = 16  # on each side of them in a narrow list
TAB_NOTE_GAP_PX = 10  # between the "hidden by the filter" note and the tabs / the corner button
PROJECT_MAX_FRACTION = 0.24  # the Project column never takes more than this share of the table's width (Title: the most)
# The widest value each fixed-format column can hold (what "size to content" measures).
COLUMN_SAMPLES: dict[int, tuple[str, ...]] = {
    Col.STATUS: (*style.STATUS_LABELS.values(), LIVE_LABEL),
    Col.ORIGIN: ("subagent (depth 9)", "fork"),
    Col.MODIFIED: ("2026-12-31 23:59",),
    Col.CREATED: ("2026-12-31 23:59",),
    Col.EVENTS: ("999,999",),
    Col.SIZE: ("1023.9 MB", "1.00 GB"),
    Col.ID: ("a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d",),
}


def containing_folder(row: SessionRow, root_folder: str | None) -> str | None:
    """The folder holding ``row``'s artifact (a JSONL transcript's session folder), or, for a session
    without a file of its own (a SQLite store's rows), ``root_folder`` (the database's folder)."""
    return artifact_folder(row.path, root_folder)  # the engine knows which sessions have a file of their own


class TabBarNote(QLabel):
    """A one-line note in the empty part of a tab widget's tab row (right-aligned, left of its corner widget).

    It sits outside every layout, on top of the tab widget, so showing, changing or hiding it moves no
    pane: putting the "hidden by the filter" line into the right pane's layout made the timeline lay
    out and paint again on the same frame as the filtered list (+20-60 ms; ``bench_filter.py``).
    """

    def __init__(self, tabs: QTabWidget) -> None:
        super().__init__(tabs)
        self._tabs = tabs
        self.note = ""  # the full text (the label shows it elided to the room there is)
        theme.bind(self, lambda: self.setStyleSheet(f"color: {style.STATUS_COLORS['open-turn'][0]}"))
        self.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        tabs.installEventFilter(self)
        self.hide()

    def set_note(self, text: str) -> None:
        self.note = text
        self.setToolTip(text)
        self._place()
        self.setVisible(bool(text))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest) and self.note:
            self._place()
        return False

    def _place(self) -> None:
        bar = self._tabs.tabBar()
        left = bar.geometry().right() + TAB_NOTE_GAP_PX
        corner = self._tabs.cornerWidget(Qt.Corner.TopRightCorner)
        right = corner.geometry().left() if corner is not None and corner.isVisible() else self._tabs.width()
        right -= TAB_NOTE_GAP_PX
        fm = self.fontMetrics()
        text = fm.elidedText(self.note, Qt.TextElideMode.ElideRight, max(0, right - left))
        self.setText(text)
        width = min(max(0, right - left), fm.horizontalAdvance(text) + 4)
        self.setGeometry(right - width, bar.y(), width, bar.height())
        self.raise_()


class SessionListPane(QWidget):
    session_selected = Signal(str)  # row key
    session_activated = Signal(str)  # Enter: go to the session's content
    demo_requested = Signal()
    open_file_requested = Signal()  # the empty state's Open file … (a transcript, a bundle, a store)
    empty_shown = Signal(bool)  # True: the empty state replaced the table (the window gives it the whole width)
    open_root_requested = Signal()
    context_menu_requested = Signal(str, QPoint)  # row key, global position
    shown_changed = Signal()  # the listed rows (filter, project box, refresh) or the current row changed
    message = Signal(str)  # a one-line result for the status bar ("Copied 2 session ids")
    columns_changed = Signal()  # the user showed or hid a column (header menu)
    ids_copied = Signal(str, object)  # that line, and the session id (None when several were copied)

    def __init__(self, model: SessionListModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.filter_instant_rows = FILTER_INSTANT_ROWS
        self._projects_shown: tuple[object, ...] = ()
        self._project_labels: dict[str, str] = {}  # project dir name -> its cwd (the project box's labels)

        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter by title, id, cwd, status …  (Ctrl+F)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter_edited)
        self.filter.returnPressed.connect(self.apply_filter)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_DEBOUNCE_MS)
        self._filter_timer.timeout.connect(self.apply_filter)
        self._last_key = 0.0  # time.monotonic() of the last edit of the filter box
        self._last_current: str | None = None  # the last row made current (the session the window opened)
        self.count_label = QLabel(self)  # "42 of 10,000" while a filter is on
        theme.bind(self.count_label, lambda: self.count_label.setStyleSheet(f"color: {style.MUTED}"))
        self.count_label.hide()
        self.project = QComboBox(self)
        self.project.setMinimumContentsLength(18)
        self.project.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.project.addItem("All projects", None)
        self.project.currentIndexChanged.connect(self._project_changed)

        self.table = SessionTable(self)
        t = self.table
        t.setModel(model)
        t.placeholder = self.empty_result_text
        t.setSortingEnabled(True)
        t.sortByColumn(Col.MODIFIED, Qt.SortOrder.DescendingOrder)
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)  # Ctrl/Shift+click: copy several ids
        t.setAlternatingRowColors(True)
        t.setWordWrap(False)
        t.setShowGrid(False)
        t.setTextElideMode(Qt.TextElideMode.ElideRight)
        t.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        t.verticalHeader().setVisible(False)
        t.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 8)
        h = t.horizontalHeader()
        h.setHighlightSections(False)
        h.setStretchLastSection(False)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setSectionResizeMode(Col.TITLE, QHeaderView.ResizeMode.Stretch)
        h.setMinimumSectionSize(40)
        for col in HIDDEN_BY_DEFAULT:
            t.setColumnHidden(col, True)
        self._project_width_set_by_user = False
        self._sizing = False
        self._fit_columns()
        h.sectionResized.connect(self._section_resized)
        h.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        h.customContextMenuRequested.connect(self._header_menu)
        t.selectionModel().currentRowChanged.connect(self._current_changed)
        t.activated_key.connect(self.session_activated)
        t.copy_requested.connect(self.copy_session_ids)
        t.doubleClicked.connect(lambda idx: self.session_activated.emit(idx.data(KEY_ROLE)))
        t.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        t.customContextMenuRequested.connect(self._context_menu)
        self.last_menu: QMenu | None = None
        self.last_header_menu: QMenu | None = None

        # The list's own row actions (the window adds them to the list's context menu).
        self.copy_id_action = QAction("Copy session id", self)
        self.copy_id_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        self.copy_id_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)  # the table only
        self.copy_id_action.triggered.connect(self.copy_session_ids)
        t.addAction(self.copy_id_action)
        self.open_folder_action = QAction("Open containing folder", self)
        self.open_folder_action.triggered.connect(self.open_containing_folder)

        self.empty = QWidget(self)
        self.empty_label = QLabel(self.empty)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.demo_button = demo = QPushButton("Open demo", self.empty)
        demo.setToolTip("Build (once) and open a demo root of about thirty sessions, damaged ones included")
        demo.clicked.connect(self.demo_requested)
        self.open_button = choose = QPushButton("Open folder …  (Ctrl+O)", self.empty)
        choose.setToolTip("Choose the folder that holds your sessions")
        choose.clicked.connect(self.open_root_requested)
        self.open_file_button = open_file = QPushButton("Open file …  (Ctrl+Shift+O)", self.empty)
        open_file.setToolTip("Open one session's transcript, a support bundle or a SQLite store")
        open_file.clicked.connect(self.open_file_requested)
        # Where the harness keeps its sessions (the window says it: it knows the resolved path).
        self.hint_label = QLabel(self.empty)
        self.hint_label.setWordWrap(True)
        self.hint_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint_label.hide()
        el = self._empty_layout = QVBoxLayout(self.empty)  # its side margins: set in resizeEvent
        el.addStretch(1)
        el.addWidget(self.empty_label)
        el.addWidget(self.hint_label)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(choose)
        row.addWidget(open_file)
        row.addWidget(demo)
        row.addStretch(1)
        el.addLayout(row)
        el.addStretch(2)

        self.stack = QStackedWidget(self)
        self.stack.addWidget(t)
        self.stack.addWidget(self.empty)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.filter, 3)
        top.addWidget(self.count_label)
        top.addWidget(self.project, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack)

        self._projects_timer = QTimer(self)
        self._projects_timer.setSingleShot(True)
        self._projects_timer.setInterval(300)
        self._projects_timer.timeout.connect(self.refresh_projects)
        for sig in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            sig.connect(self._schedule_projects)
        model.modelReset.connect(self._project_labels.clear)
        model.modelReset.connect(self._forget_current)
        for sig in (model.rowsInserted, model.rowsRemoved, model.modelReset, model.layoutChanged):
            sig.connect(self._update_count)

    def _schedule_projects(self, *_args: object) -> None:
        if not self._projects_timer.isActive():  # throttle: a stream of inserts still refreshes
            self._projects_timer.start()

    # ------------------------------------------------------------ state

    def show_empty(self, message: str) -> None:
        self.empty_label.setText(message)
        self.stack.setCurrentWidget(self.empty)
        self.empty_shown.emit(True)

    def show_table(self) -> None:
        self.stack.setCurrentWidget(self.table)
        self.empty_shown.emit(False)

    def set_hint(self, text: str) -> None:
        """A second paragraph of the empty state (rich text; empty hides it)."""
        self.hint_label.setText(text)
        self.hint_label.setVisible(bool(text))

    def current_key(self) -> str | None:
        idx = self.table.currentIndex()
        return idx.data(KEY_ROLE) if idx.isValid() else None

    def selected_keys(self) -> list[str]:
        """The selected rows' keys in display order (the current row when nothing is selected)."""
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        if rows:
            return [self.model.key_at(r) for r in rows]
        key = self.current_key()
        return [key] if key is not None else []

    def select_key(self, key: str) -> bool:
        if self.model.get(key) is None:
            return False
        idx = self.model.index_for_key(key)
        if not idx.isValid():  # filtered out: clear the filters so the asked-for session shows
            self.filter.clear()
            self.project.setCurrentIndex(0)
            idx = self.model.index_for_key(key)
            if not idx.isValid():
                return False
        self.table.selectionModel().setCurrentIndex(
            idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)
        return True

    def select_first(self) -> str | None:
        if self.model.rowCount() == 0:
            return None
        key = self.model.key_at(0)
        self.select_key(key)
        return key

    def focus_filter(self) -> None:
        self.filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter.selectAll()

    # ------------------------------------------------------------ filtering

    def _filter_edited(self, text: str) -> None:
        now = time.monotonic()
        gap_ms, self._last_key = (now - self._last_key) * 1000, now
        if not text.strip() or self.model.total <= self.filter_instant_rows:
            self.apply_filter()  # cheap: show everything / a small root
        elif gap_ms < FILTER_DEBOUNCE_MS or self._filter_timer.isActive():
            self._filter_timer.start(FILTER_DEBOUNCE_MS)  # a burst: one pass once it pauses
        else:
            self._filter_timer.start(0)  # after a pause: on the next loop turn, once the character is painted

    def filter_pending(self) -> bool:
        """Keys were typed whose filter pass has not run yet."""
        return self._filter_timer.isActive()

    def apply_filter(self) -> None:
        """Filter by what the box says now (the debounce timer's end, Enter, or a cleared box)."""
        self._filter_timer.stop()
        self.model.set_filter_text(self.filter.text())
        self._filter_done()

    def _filter_done(self) -> None:
        # (No viewport update of its own: the layout change repaints the table, empty-result text too.)
        self._update_count()
        self._reselect_open()

    def _reselect_open(self) -> None:
        """The row the filter hid is listed again (the filter was widened or cleared): make it current again,
        so the list shows which session the right pane holds (re-selecting it does not reload it)."""
        key = self._last_current
        if key is None or self.table.currentIndex().isValid():
            return
        idx = self.model.index_for_key(key)
        if idx.isValid():
            self.table.selectionModel().setCurrentIndex(
                idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            )
            self.table.scrollTo(idx, QAbstractItemView.ScrollHint.EnsureVisible)

    def _update_count(self, *_args: object) -> None:
        m = self.model
        if m.filtering and m.total:
            self.count_label.setText(f"{m.rowCount():,} of {m.total:,}")
            self.count_label.show()
        else:
            self.count_label.hide()
        self.shown_changed.emit()

    def _filter_words_text(self) -> str:
        return " ".join(self.model.filter_words)

    def _project_text(self) -> str:
        p = self.model.project_filter
        return "" if p is None else self._project_labels.get(p, p)

    def empty_result_text(self) -> str:
        """What the table says when the filter leaves no row ("" while rows are shown or the root is empty)."""
        m = self.model
        if m.rowCount() or not m.total or not m.filtering:
            return ""
        words, project = self._filter_words_text(), self._project_text()
        what = f"No sessions match '{words}'" if words else "No sessions"
        where = f" in {project}" if project else ""
        hint = "Esc in the filter box clears it." if words else "Choose “All projects” to see every session."
        return f"{what}{where} — 0 of {m.total:,}\n\n{hint}"

    def hidden_note(self, key: str | None) -> str:
        """A line for the right pane when the filter hides the session it shows ("" when it is listed)."""
        m = self.model
        if key is None or not m.filtering or m.get(key) is None or m.row_for_key(key) >= 0:
            return ""
        words, project = self._filter_words_text(), self._project_text()
        by = f"the filter '{words}'" if words else f"the project filter ({project})"
        return f"⚠ Not in the list: hidden by {by}"

    # ------------------------------------------------------------ row actions

    def row_actions(self) -> tuple[QAction, ...]:
        """The list's own entries for its context menu (enabled for the current row)."""
        key = self.current_key()
        row = self.model.get(key) if key is not None else None
        self.copy_id_action.setEnabled(bool(self.selected_keys()))
        self.open_folder_action.setEnabled(row is not None and containing_folder(row, self.model.root_folder) is not None)
        return (self.copy_id_action, self.open_folder_action)

    def copy_session_ids(self) -> None:
        rows = [r for r in (self.model.get(k) for k in self.selected_keys()) if r is not None]
        if not rows:
            return
        QGuiApplication.clipboard().setText("\n".join(r.session_id for r in rows))
        text = f"Copied session id {rows[0].session_id}" if len(rows) == 1 else f"Copied {len(rows)} session ids"
        self.message.emit(text)
        self.ids_copied.emit(text, rows[0].session_id if len(rows) == 1 else None)

    def open_containing_folder(self) -> None:
        key = self.current_key()
        row = self.model.get(key) if key is not None else None
        folder = None if row is None else containing_folder(row, self.model.root_folder)
        if folder is None:
            return
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(folder)):
            self.message.emit(f"Could not open {folder} in the file manager")

    # ------------------------------------------------------------ columns

    def _content_width(self, col: int) -> int:
        fm, hfm = self.table.fontMetrics(), self.table.horizontalHeader().fontMetrics()
        text = max((fm.horizontalAdvance(s) for s in COLUMN_SAMPLES.get(col, ())), default=0)
        return max(text, hfm.horizontalAdvance(HEADERS[col]) + SORT_ARROW_PX) + CELL_PAD_PX

    def _fit_columns(self) -> None:
        self._sizing = True
        try:
            for col in COLUMN_SAMPLES:
                self.table.setColumnWidth(col, self._content_width(col))
            self._fit_project()
        finally:
            self._sizing = False

    def _fit_project(self) -> None:
        """Project / cwd: as wide as its longest label, within [PROJECT_MIN_PX, 24% of the table]."""
        if self._project_width_set_by_user:
            self._fit_title()
            return
        fm = self.table.fontMetrics()
        longest = max((fm.horizontalAdvance(s) for s in self._project_labels.values()), default=0) + CELL_PAD_PX
        cap = max(PROJECT_MIN_PX, int(self.table.viewport().width() * PROJECT_MAX_FRACTION))
        width = max(PROJECT_MIN_PX, min(longest, cap), self._content_width_of_header(Col.PROJECT))
        if width != self.table.columnWidth(Col.PROJECT):
            self._sizing = True
            try:
                self.table.setColumnWidth(Col.PROJECT, width)
            finally:
                self._sizing = False
        self._fit_title()

    def _fit_title(self) -> None:
        """Title stretches over the room the other columns leave, but never below ``TITLE_MIN_PX``."""
        t, h = self.table, self.table.horizontalHeader()
        others = sum(t.columnWidth(c) for c in Col if c != Col.TITLE and not t.isColumnHidden(c))
        room = t.viewport().width() - others
        stretch = QHeaderView.ResizeMode.Stretch
        if room >= TITLE_MIN_PX:
            if h.sectionResizeMode(Col.TITLE) != stretch:
                h.setSectionResizeMode(Col.TITLE, stretch)
        elif h.sectionResizeMode(Col.TITLE) == stretch or t.columnWidth(Col.TITLE) < TITLE_MIN_PX:
            h.setSectionResizeMode(Col.TITLE, QHeaderView.ResizeMode.Interactive)
            t.setColumnWidth(Col.TITLE, TITLE_MIN_PX)

    def _content_width_of_header(self, col: int) -> int:
        return self.table.horizontalHeader().fontMetrics().horizontalAdvance(HEADERS[col]) + SORT_ARROW_PX + CELL_PAD_PX

    def _section_resized(self, logical: int, _old: int, _new: int) -> None:
        if (
            logical == Col.PROJECT
            and not self._sizing
            and self.table.horizontalHeader().sectionResizeMode(logical) == (QHeaderView.ResizeMode.Interactive)
        ):
            self._project_width_set_by_user = True

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_project()
        # The empty state's paragraphs: a readable line length, centred by the margins (a word-wrapped label
        # placed with an alignment gets too little height in a box layout and cuts its last lines).
        side = max(EMPTY_TEXT_MARGIN_PX, (self.width() - EMPTY_TEXT_MAX_PX) // 2)
        self._empty_layout.setContentsMargins(side, 0, side, 0)

    def _header_menu(self, pos: QPoint) -> None:
        """Show or hide columns (Title always shows)."""
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        for col in Col:
            if col == Col.TITLE:
                continue
            act = menu.addAction(HEADERS[col])
            act.setCheckable(True)
            act.setChecked(not self.table.isColumnHidden(col))
            act.toggled.connect(lambda on, c=col: self._show_column(c, on))
        self.last_header_menu = menu
        menu.popup(self.table.horizontalHeader().mapToGlobal(pos))

    def _show_column(self, col: Col, on: bool) -> None:
        self.table.setColumnHidden(col, not on)
        self._fit_title()
        self.columns_changed.emit()

    def hidden_columns(self) -> list[str]:
        """The hidden columns by name (what the window keeps in its settings)."""
        return [c.name for c in Col if c != Col.TITLE and self.table.isColumnHidden(c)]

    def set_hidden_columns(self, names: list[str]) -> None:
        """Hide exactly these columns (unknown names are ignored; Title always shows)."""
        wanted = set(names)
        for c in Col:
            if c != Col.TITLE:
                self.table.setColumnHidden(c, c.name in wanted)

    # ------------------------------------------------------------ slots

    def _context_menu(self, pos: QPoint) -> None:
        idx = self.table.indexAt(pos)
        if idx.isValid():
            self.context_menu_requested.emit(idx.data(KEY_ROLE), self.table.viewport().mapToGlobal(pos))

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            key = current.data(KEY_ROLE)
            self._last_current = key
            self.model.mark_seen(key)  # opening a session is looking at it: its unseen mark goes
            self.session_selected.emit(key)
            self.shown_changed.emit()  # the window's "hidden by the filter" note follows the open session

    def _forget_current(self) -> None:
        self._last_current = None

    def _project_changed(self, _i: int) -> None:
        self.model.set_project(self.project.currentData())
        self._filter_done()

    def refresh_projects(self) -> None:
        counts = self.model.project_counts()
        key = (self.model.total, tuple(sorted(counts.items())))
        if key == self._projects_shown:
            return
        self._projects_shown = key
        labels = self._project_labels
        for r in self.model.rows() if len(labels) < len(counts) else ():
            if r.project not in labels or (r.cwd and labels[r.project] == r.project):
                labels[r.project] = project_label(r)
        current = self.project.currentData()
        self.project.blockSignals(True)
        self.project.clear()
        self.project.addItem(f"All projects ({plural(self.model.total, SESSION)})", None)

        def label_of(project: str) -> str:
            return labels.get(project, project)

        for p in sorted(counts, key=lambda k: label_of(k).lower()):
            self.project.addItem(f"{labels.get(p, p)}  ({counts[p]})", p)
        pos = self.project.findData(current) if current is not None else 0
        self.project.setCurrentIndex(max(0, pos))
        self.project.blockSignals(False)
        if pos < 0 and current is not None:
            self.model.set_project(None)
            self._filter_done()
        self._fit_project()
