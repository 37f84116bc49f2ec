"""View > Activity: a dock listing every action's result with its time (widgets only).

Why a dock and not the status bar: a status message is replaced by the next one within seconds;
the dock keeps the last ``app.activity.MAX_ENTRIES`` results (newest on top) for as long as the
window is open, and can sit under the content or float.  Hidden until asked for (View > Activity).

May import: PySide6, ``app.gui.style`` and ``models.activity_model``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.glossary import plural
from app.gui import style, theme
from app.gui.models.activity_model import COL_ACTION, COL_DETAIL, COL_OUTCOME, COL_SESSION, COL_TIME, ActivityModel

ROW_PADDING_PX = 6  # above and below a row's text line
DOCK_OBJECT_NAME = "activityDock"  # saveState()/restoreState() find a dock by this name


class ActivityPanel(QDockWidget):
    def __init__(self, model: ActivityModel, parent: QWidget | None = None) -> None:
        super().__init__("Activity", parent)
        self.setObjectName(DOCK_OBJECT_NAME)
        self.model = model
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.setSpacing(2)
        top = QHBoxLayout()
        self.count = QLabel(body)
        theme.bind(self.count, lambda: self.count.setStyleSheet(f"color: {style.MUTED};"))
        self.clear_button = QPushButton("C&lear", body)
        self.clear_button.setToolTip("Forget the results listed here (nothing on disk changes)")
        self.clear_button.clicked.connect(model.log.clear)
        top.addWidget(self.count, 1)
        top.addWidget(self.clear_button)
        layout.addLayout(top)
        self.table = QTableView(body)
        self.table.setModel(model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        # One text line per result (the default section height fits two-line cells; these are single-line).
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + ROW_PADDING_PX)
        h = self.table.horizontalHeader()
        for col in (COL_TIME, COL_ACTION, COL_SESSION, COL_OUTCOME):
            h.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(COL_DETAIL, QHeaderView.ResizeMode.Stretch)
        self.table.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout.addWidget(self.table)
        self.setWidget(body)
        self.empty_text = "No actions yet: repairs, forks, resumes, copies and exports are listed here with their time."
        for sig in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            sig.connect(self._update_count)
        self._update_count()

    def _update_count(self, *_args: object) -> None:
        n = self.model.rowCount()
        self.count.setText(self.empty_text if n == 0 else f"{plural(n, 'result')}, newest first")


__all__ = ["DOCK_OBJECT_NAME", "ActivityPanel"]
