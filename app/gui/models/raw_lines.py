"""Raw artifact lines as a table model over a ``RawText`` (only the lines a view asks for are decoded or rendered).

A live append replaces the provisional tail and appends lines (``apply_growth``), then ``grown`` says
how many events arrived (by seq, so a packed chunk row counts every event it holds), for a view
that follows the tail or offers to jump to it.

Where the log is damaged: the first marker line (bytes that do not decode), or else the line the
timeline's decodable prefix stopped at (``set_damage_hint``: a line that decodes but breaks the log,
such as a line of invalid JSON in a plain log), painted like a marker.

Columns: Line and Text keep their numbers (0 and 1: the views, the find marks and the selection sync
address the text as column 1); Byte (the line's file offset) and, in a zstd log, Frame come after them
and the view shows them beside Line.  A SQLite session has no bytes: no Byte column.

May import: PySide6, ``app.gui.style``, ``app.gui.theme``, ``app.glossary``, ``models.one_call_per_cell`` and
``app.rawview.raw_text``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from app import glossary
from app.gui import style, theme
from app.gui.models.one_call_per_cell import OneCallPerCell
from app.rawview.raw_text import K_CHUNK, K_HEADER, K_REQUEST, K_STEP, K_TOOL, K_TURN, K_USER, RawText

Index = QModelIndex | QPersistentModelIndex

# Boundaries stand out, streamed chunks recede: the eye finds turns and tool calls in a long log.
# Theme roles (a light and a dark variant each).
KIND_COLORS = {
    K_HEADER: "raw.header",
    K_TURN: "raw.turn",
    K_STEP: "raw.step",
    K_USER: "raw.user",
    K_CHUNK: "raw.chunk",
    K_TOOL: "raw.tool",
    K_REQUEST: "raw.request",
}

LINE_COL, TEXT_COL, BYTE_COL, FRAME_COL = range(4)
LINE_ROLE = Qt.ItemDataRole.UserRole + 1
FULL_TEXT_ROLE = Qt.ItemDataRole.UserRole + 2
LAST_SEQ_SCAN_LINES = 64  # lines looked at backwards for the last event seq (markers and a torn tail sit there)


class RawLinesModel(OneCallPerCell, QAbstractTableModel):
    COLUMNS = ("Line", "Text", "Byte", "Frame")
    grown = Signal(int)  # events a live append added (after its lines are in)
    damage_changed = Signal()  # ``damage_line()`` may have changed

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._text = RawText()
        self._mono = style.mono_font()
        self._highlight: tuple[int, int] = (-1, -1)
        self._damage_hint = -1

    @property
    def text(self) -> RawText:
        return self._text

    def set_text(self, text: RawText) -> None:
        self.beginResetModel()
        self._text = text
        self.endResetModel()
        self.damage_changed.emit()

    def clear(self) -> None:
        self._damage_hint = -1  # a hint belongs to one session's text (it may be set before its text arrives)
        self.set_text(RawText())

    def set_damage_hint(self, line: int) -> None:
        """The line the timeline's decodable prefix stopped at (-1: none), for a log whose damage has no marker."""
        old, self._damage_hint = self._damage_hint, line
        for row in {old, line}:
            if 0 <= row < len(self._text):
                self.dataChanged.emit(self.index(row, 0), self.index(row, 1))
        self.damage_changed.emit()

    def damage_line(self) -> int:
        """Where the log is first damaged: its first marker line, else the hinted line; -1 when neither."""
        first = self.first_marker()
        if first >= 0:
            return first
        return self._damage_hint if 0 <= self._damage_hint < len(self._text) else -1

    def first_marker(self) -> int:
        """The first damage marker line (where decoding first stopped), -1 when the text has none."""
        return min(self._text.markers, default=-1)

    def last_seq(self) -> int:
        """The highest event seq of the committed lines near the end (-1: none found)."""
        t = self._text
        end = len(t) if t.tail_from < 0 else t.tail_from
        for i in range(end - 1, max(-1, end - 1 - LAST_SEQ_SCAN_LINES), -1):
            seqs = t.seqs_of_line(i)
            if seqs is not None:
                return seqs[1]
        return -1

    def apply_growth(self, delta: RawText) -> None:
        """Replace the provisional tail (torn bytes, markers) and append ``delta``'s lines."""
        before_lines, before_seq = len(self._text), self.last_seq()
        self._apply_growth(delta)
        after_seq = self.last_seq()
        new = after_seq - before_seq if before_seq >= 0 and after_seq >= 0 else len(self._text) - before_lines
        if new > 0:
            self.grown.emit(new)

    def _apply_growth(self, delta: RawText) -> None:
        t = self._text
        if t.tail_from >= 0:
            self.beginRemoveRows(QModelIndex(), t.tail_from, len(t) - 1)
            t.drop_provisional()
            self.endRemoveRows()
        if len(delta) == 0:
            t.consumed = delta.consumed or t.consumed
            self.damage_changed.emit()
            return
        first = len(t)
        self.beginInsertRows(QModelIndex(), first, first + len(delta) - 1)
        t.extend(delta)
        self.endInsertRows()
        self.damage_changed.emit()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._text)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            return 0
        t = self._text
        if t.source == "rows" or t.rows.count:
            return 2
        return 4 if t.compression == "zstd" else 3

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < self.columnCount():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and section == BYTE_COL:
            return "Where the line starts in the file (byte offset from 0; in a zstd log, where its frame starts)"
        if role == Qt.ItemDataRole.ToolTipRole and section == FRAME_COL:
            return "The zstd frame the line was decoded from (frames count from 1)"
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = index.row()
        t = self._text
        if not 0 <= row < len(t):
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == TEXT_COL:
                return t.line_text(row)
            if col == LINE_COL:
                return str(row + 1)
            value = t.file_offset(row) if col == BYTE_COL else t.frame_of(row)
            return glossary.number(value) if value >= 0 else ""
        if role == LINE_ROLE:
            return row
        if role == FULL_TEXT_ROLE:
            return t.line_text(row, limit=None)
        if role == Qt.ItemDataRole.FontRole:
            return self._mono
        if role == Qt.ItemDataRole.ForegroundRole:
            if row in t.markers or row == self._damage_hint:
                return style.brush(style.STATUS_COLORS["corrupt"][0])
            if col != TEXT_COL or t.is_provisional(row):
                return style.brush(style.MUTED)
            color = KIND_COLORS.get(t.kind(row))
            return theme.brush(color) if color else None
        if role == Qt.ItemDataRole.BackgroundRole:
            if row in t.markers or row == self._damage_hint:
                return theme.brush("raw.damage.bg")
            if t.is_provisional(row):
                return theme.brush("raw.torn.bg")
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and col != TEXT_COL:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col == 1:
            seqs = t.seqs_of_line(row)
            n = t.line_size(row)  # a SQLite row is rendered here (and cached for the repaint that follows)
            where = "" if seqs is None else (f"event seq {seqs[0]}" if seqs[0] == seqs[1] else f"events seq {seqs[0]}–{seqs[1]}")
            return f"line {row + 1} · {n:,} bytes" + (f" · {where}" if where else "")
        return None
