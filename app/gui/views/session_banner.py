"""The open session's banners: its title and status above the tabs, and the diagnosis above the timeline.

``SessionBanner`` renders the open session into the title line, with the actions its state calls
for inline: "Repair …" for a crashed or torn log, "Restore backup …" once a repair made a backup,
and "Show would-be closers" for a live turn.  ``snapshot_banner`` words the timeline's banner and
``raw_summary`` the Raw tab's line from the same ``SessionSnapshot`` (one read of the log), so the
banners, the counts and the list row cannot tell different stories (issue 16).  ``diagnosis_banner``
words a bare diagnosis.  All of it only formats and shows: the window decides when.

May import: PySide6, ``app.gui.style`` and the models' values; never a controller.
"""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from app.glossary import CLOSER, LIVE_MEANING, OPEN_TURN_LIVE, noun, plural
from app.gui import style, theme
from app.gui.models.session_row import SessionRow
from app.gui.models.session_snapshot import SessionSnapshot

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
NO_SESSION = "<span style='color:{muted}'>No session selected</span>"  # in the theme's muted colour
LOADING = "Loading …"
STOPPED_EARLY = (
    "<b>Reading stopped</b> — only the newest turns of this log are shown and nothing was checked yet; F5 reads the whole log."
)
REMOVED = "<b>This session's log was removed from the root.</b>"
LIVE_BADGE = OPEN_TURN_LIVE
LIVE_STATUS = "busy"  # the colours of a live turn's banner: in progress, not damaged (blue)


class SessionBanner:
    """The title line above the tabs: title, status badge, id, cwd and lineage of the open session,
    and the inline actions (``repair_button``, ``restore_button``, ``closers_box``; the window connects them)."""

    def __init__(self, parent: QWidget) -> None:
        self.widget = QWidget(parent)
        self.label = QLabel(self.widget)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        # Long titles must not widen the right pane (the splitter would squeeze the list).
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setContentsMargins(6, 6, 6, 2)
        self.closers_box = QCheckBox("Show would-be closers", self.widget)
        self.closers_box.setToolTip(
            "A live turn is still being written: the closers a crash repair would append are hidden unless asked for"
        )
        self.repair_button = QPushButton("Repair …", self.widget)
        self.repair_button.setToolTip("Preview the repair of this log (nothing is written before you confirm)")
        self.restore_button = QPushButton("Restore backup …", self.widget)
        self.restore_button.setToolTip("Put the bytes a repair backed up back as this session's log (undo the repair)")
        row = QHBoxLayout(self.widget)
        row.setContentsMargins(0, 0, 6, 0)
        row.setSpacing(6)
        row.addWidget(self.label, 1)
        for w in (self.closers_box, self.repair_button, self.restore_button):
            row.addWidget(w, 0, Qt.AlignmentFlag.AlignVCenter)
            w.hide()
        self.show_none()
        theme.bind(self.label, self._restyle)

    def show_none(self) -> None:
        self._shown: tuple[SessionRow, bool] | None = None
        self.label.setText(NO_SESSION.format(muted=style.MUTED))
        self.show_actions(None, restorable=False)

    def show_actions(self, snap: SessionSnapshot | None, *, restorable: bool) -> None:
        """The inline actions ``snap`` calls for: repair a crashed (not a live) turn or a torn tail, undo a
        repair, reveal a live turn's would-be closers."""
        self.repair_button.setVisible(snap is not None and snap.repairable and not snap.live)
        self.restore_button.setVisible(snap is not None and restorable)
        self.closers_box.setVisible(snap is not None and snap.live)

    def show_snapshot(self, row: SessionRow, snap: SessionSnapshot, *, restorable: bool = False) -> None:
        """The title line of the open session as ``snap`` (one read of its log) has it."""
        self.show_row(row, live=snap.live)
        self.show_actions(snap, restorable=restorable)

    def _restyle(self) -> None:
        """A theme change: the title line again, in the new theme's colours."""
        if self._shown is None:
            self.label.setText(NO_SESSION.format(muted=style.MUTED))
        else:
            self.show_row(self._shown[0], live=self._shown[1])

    def show_row(self, row: SessionRow, *, live: bool = False) -> None:
        self._shown = (row, live)
        fg, bg = style.STATUS_COLORS.get(LIVE_STATUS if live else row.status, (style.MUTED, None))
        status = LIVE_BADGE if live else style.STATUS_LABELS.get(row.status, row.status)
        if row.title or row.status == "pending":
            title = html.escape(row.title or "")
        else:
            title = "(untitled)" if row.status in ("ok", "open-turn", "torn-tail") else f"({html.escape(row.status)} log)"
        where = html.escape(row.cwd or row.project)
        banner_bg = theme.hex_of("banner.bg")
        lineage = f" · {html.escape(row.lineage)}" if row.lineage else ""
        self.label.setText(
            f"<span style='font-size:13pt; font-weight:600'>{title}</span>&nbsp;&nbsp;"
            f"<span style='color:{fg}; background:{bg or banner_bg}'>&nbsp;{status}&nbsp;</span>"
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
            f"<br>{plural(len(d.closers), CLOSER)} {noun(len(d.closers), 'is')} shown in <i>italics</i> on a purple background: "
            "they exist in memory only; loading or resuming the session in the harness would write them."
        )
    if status in ("corrupt", "unsupported", "missing"):
        text += "<br>The Raw tab shows every byte that can still be decoded."
    return text, status


def snapshot_banner(snap: SessionSnapshot, now: float | None = None) -> tuple[str, str]:
    """(rich text, status colour key) of the timeline's banner for one read of the open session."""
    count = f" · {snap.event_count:,} events" if snap.event_count is not None else ""
    if snap.live:
        age = snap.age(now)
        when = "" if age is None else f"last change {age:.0f} s ago; "
        text = (
            f"<b>● {OPEN_TURN_LIVE} — {LIVE_MEANING}</b>{count}<br>The open turn is being written ({when}after "
            f"{snap.quiet_seconds:g} s without a change it is shown as idle: possibly crashed, or a long silent call)."
        )
        if snap.closers_shown:
            text += (
                f" Its {snap.closers} would-be closer(s) are shown in <i>italics</i> on purple: a crash repair would "
                "write them, and only if the turn never finishes."
            )
        else:
            text += " The closers a crash repair would append are hidden (<i>Show would-be closers</i>)."
        return text, LIVE_STATUS
    head = BANNERS.get(snap.status, snap.status)
    if snap.status == "open-turn":
        # Silence is not a crash (issue 21 item 2): a long model call writes nothing for minutes.  The repair
        # dialog adds what the guard finds (a harness process or none) before anything is written.
        head = (
            f"⚠ open turn: interrupted or idle (no change for at least {snap.quiet_seconds:g} s): possibly crashed — "
            "Repair … looks for a running agent first"
        )
    text = f"<b>{html.escape(head)}</b>{count}"
    if snap.status != "ok":
        text += f" — {html.escape(snap.reason)}"
    if snap.closers and snap.closers_shown:
        text += (
            f"<br>{plural(snap.closers, CLOSER)} {noun(snap.closers, 'is')} shown in <i>italics</i> on a purple background: "
            "they exist in memory only; loading or resuming the session in the harness would write them."
        )
    if snap.status in ("corrupt", "unreadable"):
        text += "<br>The timeline shows the part before the damage; the Raw tab shows everything that still decodes."
    elif snap.status == "unsupported":
        text += "<br>The timeline shows the events as far as they can be read, unchecked; the Raw tab shows every byte."
    elif snap.status == "missing":
        text += "<br>The Raw tab shows every byte that can still be decoded."
    return text, snap.status


def raw_summary(snap: SessionSnapshot) -> str:
    """The Raw tab's line: what is shown and how many lines, for the same read as the banners."""
    r = snap.raw
    if r.source == "rows":
        what = "event rows (SQLite)"
    elif r.file_name:
        what = f"{r.file_name} · " + ("zstd frames, decoded" if r.source == "zstd" else "plain JSONL")
    else:
        what = ""
    decoded = "" if r.decoded_size is None else f" · {style.format_size(r.decoded_size)} decoded"
    torn = f" · {plural(r.markers, 'marker line')} for bytes that could not be decoded" if r.markers else ""
    return f"{what} · {r.lines:,} lines{decoded}{torn}"


def seconds_until_stale(snap: SessionSnapshot, now: float | None = None) -> float | None:
    """When a live snapshot must be judged again (the quiet period ends); None when it is not live."""
    until = snap.live_until
    if until is None:
        return None
    return max(0.0, until - (time.time() if now is None else now))


__all__ = [
    "BANNERS",
    "LIVE_BADGE",
    "LOADING",
    "NO_SESSION",
    "REMOVED",
    "STOPPED_EARLY",
    "SessionBanner",
    "diagnosis_banner",
    "raw_summary",
    "seconds_until_stale",
    "snapshot_banner",
]
