"""Keeps the timeline's and the raw tab's selections on the same event.

Selecting a timeline row selects the raw line holding its first event; selecting a raw line selects
the timeline row of the first event that line holds (a packed chunk row holds many).  One guard stops
the echo: the selection a sync makes does not sync back.

May import: the views and models it connects; never a controller.
"""

from __future__ import annotations

from app.gui.models.raw_lines import RawLinesModel
from app.gui.models.timeline import TimelineModel
from app.gui.views.raw_pane import RawPane
from app.gui.views.timeline_pane import TimelinePane
from app.timeline import TimelineNode


class SelectionSync:
    """Connects ``TimelinePane.node_selected`` and ``RawPane.line_selected`` to each other."""

    def __init__(self, timeline_pane: TimelinePane, raw_pane: RawPane, timeline: TimelineModel, raw: RawLinesModel) -> None:
        self._timeline_pane = timeline_pane
        self._raw_pane = raw_pane
        self._timeline = timeline
        self._raw = raw
        self._syncing = False
        timeline_pane.node_selected.connect(self.timeline_selected)
        raw_pane.line_selected.connect(self.raw_selected)

    def timeline_selected(self, node: TimelineNode) -> None:
        if self._syncing:
            return
        seq = node.first_seq
        line = self._raw.text.line_for_seq(seq) if seq >= 0 else -1
        if line < 0:
            return
        self._syncing = True
        try:
            self._raw_pane.select_line(line)
        finally:
            self._syncing = False

    def raw_selected(self, line: int) -> None:
        if self._syncing:
            return
        seqs = self._raw.text.seqs_of_line(line)
        if seqs is None:
            return
        idx = self._timeline.index_for_seq(seqs[0])
        if not idx.isValid():
            return
        self._syncing = True
        try:
            self._timeline_pane.select_index(idx)
        finally:
            self._syncing = False

    def raw_text_ready(self) -> None:
        """The raw text arrived: the timeline may have chosen its row before there was a line to select."""
        node = self._timeline_pane.current_node()
        if node is not None:
            self.timeline_selected(node)


__all__ = ["SelectionSync"]
