"""The Header tab: header fields, storage facts, diagnosis and lineage links (Enter follows a link).

May import: PySide6 and ``models.header_fields``.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QVBoxLayout, QWidget

from app.gui.models.header_fields import LINK_ROLE, HeaderFieldsModel


class _FieldTable(QTableView):
    link_activated = Signal(str)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            link = self.currentIndex().data(LINK_ROLE)
            if link:
                self.link_activated.emit(link)
                return
        super().keyPressEvent(event)


class HeaderPane(QWidget):
    link_activated = Signal(str)  # session key

    def __init__(self, model: HeaderFieldsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.view = _FieldTable(self)
        v = self.view
        v.setModel(model)
        v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        v.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        v.setShowGrid(False)
        v.setWordWrap(True)
        v.verticalHeader().setVisible(False)
        v.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        v.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        v.setColumnWidth(0, 170)
        v.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        v.link_activated.connect(self.link_activated)
        v.doubleClicked.connect(self._double_clicked)
        v.clicked.connect(self._double_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(v)

    def _double_clicked(self, idx: QModelIndex) -> None:
        link = idx.data(LINK_ROLE)
        if link and idx.column() == 1:
            self.link_activated.emit(link)
