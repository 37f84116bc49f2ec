"""The Activity panel's table: a QAbstractTableModel over the Qt-free ``app.activity.ActivityLog``.

Newest first (row 0 is the latest result: that is what a user opening the panel looks for).  A new
entry is one ``beginInsertRows`` at row 0, and a full log drops its oldest entry (the last row) with
one ``beginRemoveRows`` first, so a view keeps its selection and scroll position; only ``clear()``
resets the model.

May import: PySide6, ``app.activity``, ``app.gui.style`` and ``models.columns``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from app.activity import CANCELLED, DONE, FAILED, REFUSED, ActivityEntry, ActivityLog
from app.gui import style, theme
from app.gui.models.columns import column_header, read_only_flags

Index = QModelIndex | QPersistentModelIndex

COLUMNS = ("Time", "Action", "Session", "Outcome", "Detail")
COL_TIME, COL_ACTION, COL_SESSION, COL_OUTCOME, COL_DETAIL = range(len(COLUMNS))
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1

# Outcome colours reuse the status palette: done reads like "ok", failed like "corrupt".
# Refreshed in place on each theme change (read at paint time).
OUTCOME_COLORS: dict[str, str] = {}
_OUTCOME_ROLES = {DONE: "status.ok", CANCELLED: "text.muted", REFUSED: "status.open-turn", FAILED: "status.corrupt"}


def _refresh_outcomes(name: str) -> None:
    OUTCOME_COLORS.update({outcome: theme.hex_of(role, name) for outcome, role in _OUTCOME_ROLES.items()})


_refresh_outcomes(theme.current())
theme.on_apply(_refresh_outcomes)


class ActivityModel(QAbstractTableModel):
    def __init__(self, log: ActivityLog, parent: Any = None) -> None:
        super().__init__(parent)
        self.log = log
        # The log changes before it tells us, so the model keeps what the views were told: ``_rows``
        # rows, the newest ``_unannounced`` log entries not among them yet (0 outside ``_recorded``).
        self._rows = len(log)
        self._unannounced = 0
        log.add_listener(self._recorded)
        self.destroyed.connect(lambda _o=None, lg=log, fn=self._recorded: lg.remove_listener(fn))

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else self._rows

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(COLUMNS)

    def entry(self, row: int) -> ActivityEntry | None:
        """The entry shown at ``row`` (row 0 is the newest); None outside the rows."""
        i = len(self.log) - 1 - self._unannounced - row
        return self.log[i] if 0 <= row < self._rows and 0 <= i < len(self.log) else None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_header(COLUMNS, section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        return read_only_flags(index)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        e = self.entry(index.row()) if index.isValid() else None
        if e is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == COL_TIME:
                return e.clock()
            if col == COL_ACTION:
                return e.action
            if col == COL_SESSION:
                return e.session or ""
            if col == COL_OUTCOME:
                return e.outcome
            return e.detail
        if role == Qt.ItemDataRole.ToolTipRole:
            when = style.format_ms(e.time * 1000)
            on = f" on {e.session}" if e.session else ""
            return f"{when} · {e.action}{on}: {e.outcome}\n{e.detail}"
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_OUTCOME:
            fg = OUTCOME_COLORS.get(e.outcome)
            return style.brush(fg) if fg else None
        if role == ENTRY_ROLE:
            return e
        return None

    def _recorded(self, entry: ActivityEntry | None, dropped: bool) -> None:
        if entry is None:  # the log was cleared
            self.beginResetModel()
            self._rows = self._unannounced = 0
            self.endResetModel()
            return
        self._unannounced = 1
        if dropped and self._rows > 0:
            # A full log dropped its oldest entry: that was the last row.
            last = self._rows - 1
            self.beginRemoveRows(QModelIndex(), last, last)
            self._rows -= 1
            self.endRemoveRows()
        self.beginInsertRows(QModelIndex(), 0, 0)
        self._unannounced = 0
        self._rows += 1
        self.endInsertRows()


__all__ = ["COLUMNS", "ENTRY_ROLE", "OUTCOME_COLORS", "ActivityModel"]
