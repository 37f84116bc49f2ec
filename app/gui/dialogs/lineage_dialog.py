"""View > Lineage: the root's sessions as a tree by parent (forks, subagents), orphans listed apart.

Selecting a row opens that session in the window (``session_requested``); "Compare with parent" is
offered for a fork whose parent is in the root (``compare_requested``).  The tree comes from the
statistics cache (titles, status and the turn a fork falls after), computed off the GUI thread; the
dialog only shows it, with the cache's progress while it is being computed.

May import: PySide6, ``app.insight`` (values), ``models.lineage_model`` and ``views`` (widgets).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.gui.models.lineage_model import COL_ID, COL_SESSION, LineageModel
from app.gui.views.progress_panel import ProgressPanel
from app.insight import FORK, SUBAGENT, Lineage, LineageNode

EXPAND_ALL_LIMIT = 2000  # sessions up to which the whole tree opens expanded (beyond: the first level)


class LineageDialog(QDialog):
    session_requested = Signal(str)
    compare_requested = Signal(str, str, int, object)  # fork id, parent id, seed length, (fork title, parent title)
    refresh_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Lineage")
        self.resize(1280, 640)
        self.model = LineageModel(self)
        self.summary = QLabel("Computing the lineage …", self)
        self.summary.setWordWrap(True)
        self.tree = QTreeView(self)
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setAllColumnsShowFocus(True)
        h = self.tree.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(COL_SESSION, QHeaderView.ResizeMode.Stretch)
        for col, w in ((1, 150), (2, 280), (3, 90), (4, 130), (COL_ID, 230)):
            self.tree.setColumnWidth(col, w)
        self.tree.selectionModel().currentRowChanged.connect(self._current_changed)
        self.tree.activated.connect(self._activated)
        self.progress = ProgressPanel(self)
        self.progress.button.setToolTip("Stop computing: sessions done so far stay cached")
        self.open_button = QPushButton("&Open session", self)
        self.open_button.clicked.connect(self._open_current)
        self.compare_button = QPushButton("&Compare with parent …", self)
        self.compare_button.setToolTip("The fork beside its parent: the shared prefix collapsed, then each side's turns")
        self.compare_button.clicked.connect(self.compare_current)
        self.refresh_button = QPushButton("&Refresh", self)
        self.refresh_button.clicked.connect(self.refresh_requested)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        for b in (self.open_button, self.compare_button, self.refresh_button):
            row.addWidget(b)
        row.addStretch(1)
        row.addWidget(self.progress)
        row.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)
        self._selecting = False
        self._update_buttons()

    # ------------------------------------------------------------ content

    def show_lineage(self, lineage: Lineage, current: str | None = None) -> None:
        keep = self.current_node()
        self.model.set_lineage(lineage)
        n = len(self.model)
        nodes = list(lineage.nodes())
        forks = sum(1 for x in nodes if x.kind == FORK)
        subs = sum(1 for x in nodes if x.kind == SUBAGENT)
        self.summary.setText(
            f"{n:,} session(s) · {len(lineage.roots):,} root session(s) · {forks:,} fork(s) · {subs:,} subagent(s)"
            + (f" · {len(lineage.orphans):,} orphan(s) whose parent is missing" if lineage.orphans else "")
            + ". Select a session to open it."
        )
        if n <= EXPAND_ALL_LIMIT:
            self.tree.expandAll()
        else:
            self.tree.expandToDepth(0)
        target = current or (keep.session_id if keep is not None else None)
        if target is not None:
            self.select_session(target, open_it=False)
        self._update_buttons()

    def show_message(self, text: str) -> None:
        self.summary.setText(text)

    def select_session(self, session_id: str, *, open_it: bool = True) -> bool:
        idx = self.model.index_of(session_id)
        if not idx.isValid():
            return False
        self._selecting = not open_it
        try:
            self.tree.setCurrentIndex(idx)
            self.tree.scrollTo(idx, QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self._selecting = False
        return True

    def current_node(self) -> LineageNode | None:
        return self.model.node(self.tree.currentIndex())

    def compare_target(self) -> tuple[LineageNode, LineageNode] | None:
        """(fork, parent) of the current row when it can be compared: a fork whose parent is in the tree."""
        idx = self.tree.currentIndex()
        node = self.model.node(idx)
        parent = self.model.tree_parent(idx)
        if node is None or parent is None or node.kind != FORK or node.info.seed_length is None:
            return None
        return node, parent

    # ------------------------------------------------------------ actions

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._update_buttons()
        node = self.model.node(current)
        if node is not None and not self._selecting:
            self.session_requested.emit(node.session_id)

    def _activated(self, index: QModelIndex) -> None:
        node = self.model.node(index)
        if node is not None:
            self.session_requested.emit(node.session_id)

    def _open_current(self) -> None:
        node = self.current_node()
        if node is not None:
            self.session_requested.emit(node.session_id)

    def compare_current(self) -> None:
        target = self.compare_target()
        if target is None:
            return
        fork, parent = target
        seed = fork.info.seed_length
        assert seed is not None
        self.compare_requested.emit(fork.session_id, parent.session_id, seed, (fork.title, parent.title))

    def _update_buttons(self) -> None:
        self.open_button.setEnabled(self.current_node() is not None)
        target = self.compare_target()
        self.compare_button.setEnabled(target is not None)
        node = self.current_node()
        if node is not None and node.kind == FORK and target is None:
            self.compare_button.setToolTip("The parent of this fork is not in this root")
        elif node is not None and node.kind != FORK:
            self.compare_button.setToolTip("Only a fork can be compared with its parent")
        else:
            self.compare_button.setToolTip("The fork beside its parent: the shared prefix collapsed, then each side's turns")


__all__ = ["LineageDialog"]
