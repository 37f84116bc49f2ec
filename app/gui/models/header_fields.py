"""The Header tab: every header field, where the log lives, its diagnosis, and lineage links.

May import: PySide6, ``app.gui.style``, ``models.one_call_per_cell`` and ``models.session_row``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont

from app.glossary import CLOSER, LIVE_MEANING, OPEN_TURN_LIVE, plural
from app.gui import style, theme
from app.gui.models.one_call_per_cell import OneCallPerCell
from app.gui.models.session_row import SessionRow

Index = QModelIndex | QPersistentModelIndex

LINK_ROLE = Qt.ItemDataRole.UserRole + 1  # the session key a row links to (None when it is no link)

HEADER_FIELDS = ("version", "id", "createdAt", "cwd", "parentSession", "seedLength", "origin", "delegationDepth", "agentPreset")


@dataclass(frozen=True, slots=True)
class FieldRow:
    name: str
    value: str
    link: str | None = None
    section: bool = False
    tone: str | None = None  # a status colour key


class HeaderFieldsModel(OneCallPerCell, QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[FieldRow] = []
        self._bold = QFont()
        self._bold.setBold(True)
        self._underline = QFont()
        self._underline.setUnderline(True)

    def set_rows(self, rows: list[FieldRow]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def rows(self) -> list[FieldRow]:
        return list(self._rows)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 2:
            return ("Field", "Value")[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        r = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return r.name if col == 0 else r.value
        if role == Qt.ItemDataRole.ToolTipRole and col == 1:
            return r.value + ("\n(Enter or double-click opens it)" if r.link else "")
        if role == LINK_ROLE:
            return r.link
        if role == Qt.ItemDataRole.FontRole:
            if r.section:
                return self._bold
            if r.link and col == 1:
                return self._underline
            return None
        if role == Qt.ItemDataRole.ForegroundRole:
            if r.link and col == 1:
                return style.brush(style.LINK_COLOR)
            if r.tone and col == 1:
                return style.brush(style.STATUS_COLORS.get(r.tone, (style.MUTED, None))[0])
            if col == 0 and not r.section:
                return style.brush(style.MUTED)
            return None
        if role == Qt.ItemDataRole.BackgroundRole and r.section:
            return theme.brush("header.section.bg")
        return None


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def header_rows(
    row: SessionRow, parent: SessionRow | None, children: list[SessionRow], location: str | None, *, live: bool = False
) -> list[FieldRow]:
    """The rows of the Header tab for one session (``live``: its open turn is being written)."""
    out = [FieldRow("Header", "", section=True)]
    meta = row.meta or {}
    for name in HEADER_FIELDS:
        value = meta.get(name)
        text = _fmt(value)
        if name == "createdAt" and value is not None:
            text = f"{value}  ({style.format_ms(value)})"
        link = parent.key if (name == "parentSession" and parent is not None) else None
        out.append(FieldRow(name, text, link))
    extra = [k for k in meta if k not in HEADER_FIELDS]
    for name in extra:
        out.append(FieldRow(name, _fmt(meta[name])))
    if row.meta is None:
        out.append(FieldRow("(header)", "unreadable — see the diagnosis below", tone="corrupt"))

    out.append(FieldRow("Storage", "", section=True))
    out.append(FieldRow("artifact", location or row.path or "—"))
    encodings = {"zstd": "JSONL, zstd frames", "none": "JSONL, plain"}
    out.append(FieldRow("encoding", encodings.get(row.compression or "", "SQLite rows")))
    in_store = row.compression is None
    if row.size is not None:
        what = "of event data" if in_store else "on disk"
        out.append(FieldRow("size", f"{style.format_size(row.size)}  ({row.size:,} bytes {what})"))
    if row.modified_ns is not None:
        out.append(FieldRow("newest event" if in_store else "modified", style.format_ns(row.modified_ns)))
    out.append(FieldRow("revision", row.revision or "—"))

    out.append(FieldRow("Diagnosis", "", section=True))
    status = style.STATUS_LABELS.get(row.status, row.status)
    if live and row.status == "open-turn":
        status = f"{OPEN_TURN_LIVE}: {LIVE_MEANING} (not crashed)"
    out.append(FieldRow("status", status, tone=row.status))
    out.append(FieldRow("reason", row.reason, tone=row.status if row.status not in ("ok", "pending") else None))
    if row.details is not None:
        if row.details.event_count is not None:
            out.append(
                FieldRow(
                    "events",
                    f"{row.details.event_count:,} stored"
                    + (f" + {plural(row.details.closers, CLOSER)} in memory" if row.details.closers else ""),
                )
            )
        if row.details.title:
            out.append(FieldRow("title", row.details.title))
        if row.details.error_class:
            out.append(FieldRow("error class", row.details.error_class))

    out.append(FieldRow("Lineage", "", section=True))
    pid = row.parent_id
    if pid is not None:
        seed = meta.get("seedLength")
        how = row.lineage or "child"
        text = f"{pid}  ({how}" + (f", first {seed} events inherited" if seed is not None else "") + ")"
        if parent is None:
            text += "  — not found in this root"
        out.append(FieldRow("parent", text, parent.key if parent is not None else None))
    else:
        out.append(FieldRow("parent", "— (a root session)"))
    if children:
        for c in children:
            kind = c.lineage or "child"
            title = f" · {c.title}" if c.title else ""
            out.append(FieldRow(f"child · {kind}", f"{c.session_id}{title}", c.key))
    else:
        out.append(FieldRow("children", "— (no forks or subagents in this root)"))
    return out
