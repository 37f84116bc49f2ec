"""One revision of the open session, as every view shows it: the list row's badge, the title banner,
the Header tab, the timeline's banner and the Raw tab's count.

Why one value: each view used to read its own source (the list row from the background diagnosis,
the banner from the first load, the raw count from the first decode), so after an append they told
different stories ("open turn" in the list, "balanced log · 128 events" in the banner, "51 lines"
over 54).  The loader now builds a ``SessionSnapshot`` from one engine read after the timeline and
raw models hold that same read, and the window renders every view from it; the list row of the open
session takes its ``details`` (``SessionListModel.pin_details``), so it cannot drift either.

``live``: an open turn whose log changed within the quiet period (the liveness guard's own rule,
``app.actions.liveness.writer_active``) is being written, not crashed; ``live_until`` is when that
stops being true unless the log changes again (the window re-evaluates then).

A plain value module (no Qt, no I/O); may import the standard library and ``models.session_row``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from app.gui.models.session_row import READABLE, Details


@dataclass(frozen=True, slots=True)
class RawFacts:
    """What the Raw tab holds for the snapshot's revision."""

    lines: int
    source: str  # "zstd" | "none" (JSONL bytes) | "rows" (SQLite) | "" (no text)
    file_name: str  # the transcript's base name ("" for SQLite rows)
    decoded_size: int | None  # bytes decoded (None for SQLite rows: rendered when shown)
    markers: int  # marker lines for bytes that could not be decoded


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    key: str
    session_id: str
    revision: str | None  # the stored revision the one read saw
    status: str
    reason: str
    event_count: int | None  # stored events (synthetic closers not counted); None when unreadable
    closers: int  # synthetic closers a load would append (open turn)
    title: str | None
    error_class: str | None
    raw: RawFacts
    changed_at: float | None = None  # wall-clock seconds of the artifact's newest change
    quiet_seconds: float = 10.0  # the liveness guard's quiet period (settings ``actions/quietSeconds``)
    live: bool = False  # an open turn written within the quiet period: a writer is active
    closers_shown: bool = True  # the timeline holds the would-be closers (always, unless live)

    @property
    def readable(self) -> bool:
        return self.status in READABLE

    @property
    def repairable(self) -> bool:
        """A repair would change the log (and no writer is active: a live turn is not crashed)."""
        return self.status in ("open-turn", "torn-tail")

    @property
    def live_until(self) -> float | None:
        """Wall-clock seconds when ``live`` stops being true if nothing is written meanwhile."""
        if not self.live or self.changed_at is None:
            return None
        return self.changed_at + self.quiet_seconds

    def age(self, now: float | None = None) -> float | None:
        if self.changed_at is None:
            return None
        return max(0.0, (time.time() if now is None else now) - self.changed_at)

    @property
    def details(self) -> Details:
        """The list row's details for this revision (the same fields the background pass fills in)."""
        return Details(self.revision, self.status, self.reason, self.event_count, self.closers, self.title, self.error_class)


__all__ = ["RawFacts", "SessionSnapshot"]
