"""The open session's banners: its title and status above the tabs, and the diagnosis above the timeline.

``SessionBanner`` renders a list row into the title label; ``diagnosis_banner`` words what the engine
said of the session (and the notes about synthetic closers and undecodable bytes).  Both only format:
the window decides when to show what.

May import: PySide6, ``app.gui.style`` and the models' values; never a controller.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from app.gui import style
from app.gui.models.session_row import SessionRow

if TYPE_CHECKING:
    from persistence import SessionDiagnosis

BANNERS = {
    "ok": "✓ balanced log",
    "open-turn": "⚠ open turn: crashed or still running",
    "torn-tail": "⚠ torn tail: the end of the log is damaged",
    "corrupt": "✖ corrupt log",
    "unsupported": "✖ unsupported log",
    "missing": "✖ not found by the engine",
}
NO_SESSION = f"<span style='color:{style.MUTED}'>No session selected</span>"
LOADING = "Loading …"
STOPPED_EARLY = (
    "<b>Reading stopped</b> — only the newest turns of this log are shown and nothing was checked yet; F5 reads the whole log."
)
REMOVED = "<b>This session's log was removed from the root.</b>"


class SessionBanner:
    """The title line above the tabs: title, status badge, id, cwd and lineage of the open session."""

    def __init__(self, parent: QWidget) -> None:
        self.label = QLabel(parent)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        # Long titles must not widen the right pane (the splitter would squeeze the list).
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setContentsMargins(6, 6, 6, 2)
        self.show_none()

    def show_none(self) -> None:
        self.label.setText(NO_SESSION)

    def show_row(self, row: SessionRow) -> None:
        fg, bg = style.STATUS_COLORS.get(row.status, ("#000", None))
        status = style.STATUS_LABELS.get(row.status, row.status)
        if row.title or row.status == "pending":
            title = html.escape(row.title or "")
        else:
            title = "(untitled)" if row.status in ("ok", "open-turn", "torn-tail") else f"({html.escape(row.status)} log)"
        where = html.escape(row.cwd or row.project)
        lineage = f" · {html.escape(row.lineage)}" if row.lineage else ""
        self.label.setText(
            f"<span style='font-size:13pt; font-weight:600'>{title}</span>&nbsp;&nbsp;"
            f"<span style='color:{fg}; background:{bg or '#eef7f0'}'>&nbsp;{status}&nbsp;</span>"
            f"<br><span style='color:{style.MUTED}'>{html.escape(row.session_id)} · {where}{lineage}</span>"
        )


def diagnosis_banner(row: SessionRow, diagnosis: SessionDiagnosis | None) -> tuple[str, str]:
    """(rich text, status) of the timeline's banner once the session's diagnosis is known."""
    d = diagnosis
    status = d.status if d is not None else row.status
    reason = d.reason if d is not None else row.reason
    head = BANNERS.get(status, status)
    text = f"<b>{html.escape(head)}</b>"
    if status == "ok" and d is not None:
        text += f" · {d.event_count:,} events"
    else:
        text += f" — {html.escape(reason)}"
    if d is not None and d.closers:
        text += (
            f"<br>{len(d.closers)} synthetic closer(s) are shown in <i>italics</i> on a purple background: "
            "they exist in memory only; loading or resuming the session in the harness would write them."
        )
    if status in ("corrupt", "unsupported", "missing"):
        text += "<br>The Raw tab shows every byte that can still be decoded."
    return text, status


__all__ = ["BANNERS", "LOADING", "NO_SESSION", "REMOVED", "STOPPED_EARLY", "SessionBanner", "diagnosis_banner"]
