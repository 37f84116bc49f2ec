"""The left pane: filter box, project filter and the sortable session table (or the empty-root offer).

May import: PySide6 and ``models.sessions``.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
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
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.gui.models.sessions import KEY_ROLE, Col, SessionListModel, project_label


class SessionTable(QTableView):
    activated_key = Signal(str)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            idx = self.currentIndex()
            if idx.isValid():
                self.activated_key.emit(idx.data(KEY_ROLE))
                return
        super().keyPressEvent(event)


class SessionListPane(QWidget):
    session_selected = Signal(str)  # row key
    session_activated = Signal(str)  # Enter: go to the session's content
    demo_requested = Signal()
    open_root_requested = Signal()
    context_menu_requested = Signal(str, QPoint)  # row key, global position

    def __init__(self, model: SessionListModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model

        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter by title, id, cwd, status …  (Ctrl+F)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(model.set_filter_text)
        self.project = QComboBox(self)
        self.project.setMinimumContentsLength(18)
        self.project.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.project.addItem("All projects", None)
        self.project.currentIndexChanged.connect(self._project_changed)

        self.table = SessionTable(self)
        t = self.table
        t.setModel(model)
        t.setSortingEnabled(True)
        t.sortByColumn(Col.MODIFIED, Qt.SortOrder.DescendingOrder)
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        t.setAlternatingRowColors(True)
        t.setWordWrap(False)
        t.setShowGrid(False)
        t.setTextElideMode(Qt.TextElideMode.ElideRight)
        t.verticalHeader().setVisible(False)
        t.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 8)
        h = t.horizontalHeader()
        h.setHighlightSections(False)
        h.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        h.setStretchLastSection(True)
        widths = {
            Col.STATUS: 92,
            Col.TITLE: 250,
            Col.PROJECT: 170,
            Col.ORIGIN: 132,
            Col.MODIFIED: 118,
            Col.EVENTS: 62,
            Col.SIZE: 70,
            Col.ID: 150,
            Col.CREATED: 118,
        }
        for col, w in widths.items():
            t.setColumnWidth(col, w)
        t.selectionModel().currentRowChanged.connect(self._current_changed)
        t.activated_key.connect(self.session_activated)
        t.doubleClicked.connect(lambda idx: self.session_activated.emit(idx.data(KEY_ROLE)))
        t.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        t.customContextMenuRequested.connect(self._context_menu)
        self.last_menu: QMenu | None = None

        self.empty = QWidget(self)
        self.empty_label = QLabel(self.empty)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        demo = QPushButton("Open the demo root", self.empty)
        demo.clicked.connect(self.demo_requested)
        choose = QPushButton("Choose a root folder …  (Ctrl+O)", self.empty)
        choose.clicked.connect(self.open_root_requested)
        el = QVBoxLayout(self.empty)
        el.addStretch(1)
        el.addWidget(self.empty_label)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(demo)
        row.addWidget(choose)
        row.addStretch(1)
        el.addLayout(row)
        el.addStretch(2)

        self.stack = QStackedWidget(self)
        self.stack.addWidget(t)
        self.stack.addWidget(self.empty)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.filter, 3)
        top.addWidget(self.project, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack)

        self._projects_shown: tuple[object, ...] = ()
        self._project_labels: dict[str, str] = {}
        self._projects_timer = QTimer(self)
        self._projects_timer.setSingleShot(True)
        self._projects_timer.setInterval(300)
        self._projects_timer.timeout.connect(self.refresh_projects)
        for sig in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            sig.connect(self._schedule_projects)
        model.modelReset.connect(self._project_labels.clear)

    def _schedule_projects(self, *_args: object) -> None:
        if not self._projects_timer.isActive():  # throttle: a stream of inserts still refreshes
            self._projects_timer.start()

    # ------------------------------------------------------------ state

    def show_empty(self, message: str) -> None:
        self.empty_label.setText(message)
        self.stack.setCurrentWidget(self.empty)

    def show_table(self) -> None:
        self.stack.setCurrentWidget(self.table)

    def current_key(self) -> str | None:
        idx = self.table.currentIndex()
        return idx.data(KEY_ROLE) if idx.isValid() else None

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

    def _context_menu(self, pos: QPoint) -> None:
        idx = self.table.indexAt(pos)
        if idx.isValid():
            self.context_menu_requested.emit(idx.data(KEY_ROLE), self.table.viewport().mapToGlobal(pos))

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.session_selected.emit(current.data(KEY_ROLE))

    def _project_changed(self, _i: int) -> None:
        self.model.set_project(self.project.currentData())

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
        self.project.addItem(f"All projects ({self.model.total})", None)

        def label_of(project: str) -> str:
            return labels.get(project, project)

        for p in sorted(counts, key=lambda k: label_of(k).lower()):
            self.project.addItem(f"{labels.get(p, p)}  ({counts[p]})", p)
        pos = self.project.findData(current) if current is not None else 0
        self.project.setCurrentIndex(max(0, pos))
        self.project.blockSignals(False)
        if pos < 0 and current is not None:
            self.model.set_project(None)
