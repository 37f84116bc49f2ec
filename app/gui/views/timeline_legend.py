"""View > Timeline legend: what the timeline's colours and fonts mean, painted by the timeline's own model.

Why a ``TimelineModel`` subclass: every sample row goes through the very ``data()`` the timeline
uses (its colours in ``app.gui.style`` and ``models.timeline``, its fonts and tooltips), so the
legend cannot show a colour the timeline no longer uses.  Only the rows differ: a flat list of
sample nodes, each labelled like a real row, with the explanation in the Summary column.

May import: PySide6, ``models.timeline`` and ``app.timeline`` (node values and flag names).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QTreeView, QVBoxLayout, QWidget

from app.glossary import OPEN_TURN_INFO
from app.gui.models.timeline import TimelineModel
from app.timeline import CANCELLED, ERROR, HUMAN, INTERRUPTED, OPEN, PRUNED, REPAIRED, SEED, SYNTHETIC, TimelineNode
from app.timeline.damaged import DAMAGE

Index = QModelIndex | QPersistentModelIndex

COL_ITEM, COL_MEANING, COL_INFO = 0, 1, 2
SHOWN_COLUMNS = (COL_ITEM, COL_MEANING, COL_INFO)  # Seq and Time say nothing about colours

OPEN_FLAGS = frozenset({OPEN})
DAMAGE_FLAGS = frozenset({ERROR, DAMAGE})

# (kind, label, what it means, info as the row shows it, flags): one sample row per look the timeline has.
SAMPLES: tuple[tuple[str, str, str, str, frozenset[str]], ...] = (
    ("turn", "Turn 3", "a completed turn: bold, on a grey band", "ended · 2 steps", frozenset()),
    (
        "turn",
        "Turn 4",
        "red: something in it failed (a tool error, a failed model attempt, or the turn ended in an error)",
        "error: rate limited · 1 step",
        frozenset({ERROR}),
    ),
    ("tool", "Tool · bash", "red: this tool call failed", "error 1", frozenset({ERROR})),
    (
        "turn",
        "Turn 5",
        "purple, italic: a synthetic crash closer, added in memory to read a crashed log (NOT on disk)",
        "interrupted (crash) · synthetic",
        frozenset({SYNTHETIC, INTERRUPTED, REPAIRED}),
    ),
    ("result", "Result", "purple, italic: a synthetic result for a call the crash cut off", "synthetic", frozenset({SYNTHETIC})),
    (
        "turn",
        "Turn 6",
        "amber: written by crash repair (the harness recorded no outcome for it)",
        "interrupted (crash) · 1 step",
        frozenset({INTERRUPTED, REPAIRED}),
    ),
    ("turn", "Turn 7", "amber: no end event yet: still running, or crashed", OPEN_TURN_INFO, OPEN_FLAGS),
    ("seed", "End of seed", "teal: the events above were inherited from the parent (fork / resume)", "", frozenset({SEED})),
    ("user", "User", "blue: a direct human prompt", "", frozenset({HUMAN})),
    ("step", "Step 2", "grey: cancelled mid-stream", "cancelled", frozenset({CANCELLED})),
    ("context", "Context", "grey: a model-only replacement; the human transcript keeps the original", "", frozenset({PRUNED})),
    ("sentinel", "▲ 12 older turns", "older turns not loaded yet: Enter or scrolling to the top loads them", "", frozenset()),
    (DAMAGE, "■ Stopped here", "solid red: a damaged log stops here; the rows above are what could be decoded", "", DAMAGE_FLAGS),
)


def sample_nodes() -> list[TimelineNode]:
    return [
        TimelineNode(kind, ("legend", i), label, summary=meaning, info=info, flags=flags)
        for i, (kind, label, meaning, info, flags) in enumerate(SAMPLES)
    ]


class LegendModel(TimelineModel):
    """A flat list of sample nodes, answered by ``TimelineModel.data`` (so the colours are the timeline's)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.samples = sample_nodes()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.samples)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 - Qt's signature
        return not parent.isValid() and bool(self.samples)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if parent.isValid() or not 0 <= row < len(self.samples) or not 0 <= column < self.columnCount():
            return QModelIndex()
        return self.createIndex(row, column, self.samples[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        return QModelIndex()

    def canFetchMore(self, parent: Index) -> bool:
        return False

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = index.internalPointer() if index.isValid() else None
        if role == Qt.ItemDataRole.DisplayRole and index.column() == COL_ITEM and isinstance(node, TimelineNode):
            # The timeline spans a damage row's text over the whole row; here the meaning has its column.
            return node.label
        return super().data(index, role)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and section == COL_MEANING:
            return "What it means"
        return super().headerData(section, orientation, role)


class TimelineLegend(QDialog):
    """Non-modal: it can stay open beside the timeline while reading it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Timeline legend")
        self.setObjectName("timelineLegend")
        layout = QVBoxLayout(self)
        intro = QLabel("How the timeline paints its rows (hover a row in the timeline for the same words):", self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.model = LegendModel(self)
        self.view = QTreeView(self)
        self.view.setModel(self.model)
        self.view.setRootIsDecorated(False)
        self.view.setUniformRowHeights(True)
        self.view.setWordWrap(False)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for col in range(self.model.columnCount()):
            self.view.setColumnHidden(col, col not in SHOWN_COLUMNS)
        h = self.view.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(COL_ITEM, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(COL_MEANING, QHeaderView.ResizeMode.Stretch)
        h.setSectionResizeMode(COL_INFO, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.view)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        rows_h = self.view.sizeHintForRow(0) * (len(self.model.samples) + 2) if self.model.samples else 200
        self.resize(1040, rows_h + 140)


__all__ = ["SAMPLES", "LegendModel", "TimelineLegend", "sample_nodes"]
