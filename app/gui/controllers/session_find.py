"""Find inside the open session: runs the find over the raw text off the GUI thread and walks its matches.

The raw text is the one the Raw tab shows (``RawLinesModel.text``); a match is a raw line, and the
timeline follows through the selection sync.  One find runs at a time (a newer text cancels it);
``next``/``previous`` asked while it runs are done when it ends.  ``refresh`` runs the same text
again when the raw text is replaced or grows (another session, a live append).

May import: PySide6 (QObject, signals), ``runtime``, the models and their values.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from app.gui.models.raw_lines import RawLinesModel
from app.gui.runtime.jobs import Jobs
from app.gui.runtime.worker_threads import in_thread
from app.rawview.find_matches import FindMatches, find_in_raw

NEXT, PREVIOUS = "next", "previous"


class SessionFind(QObject):
    changed = Signal(object)  # FindMatches, or None when cleared
    current_changed = Signal(object)  # index into matches.lines of the current match (None: none chosen)
    go_to_line = Signal(int)  # a raw line to select (next / previous)

    def __init__(self, jobs: Jobs, raw: RawLinesModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.raw = raw
        self.query = ""
        self.matches: FindMatches | None = None
        self.current: int | None = None
        self._after: str | None = None  # a step asked for while the find ran
        self._from_line = -1

    @property
    def running(self) -> bool:
        return self.jobs.running("find")

    def find(self, query: str) -> None:
        """Find ``query`` in the open session's raw text ("" clears)."""
        self.query = query
        self.current = None
        if not query:
            self.jobs.cancel("find")
            self._after = None
            self.matches = None
            self.changed.emit(None)
            return
        self.jobs.spawn(self._find(query), name="find in session", key="find")

    def refresh(self) -> None:
        """The raw text changed: find the same text again (the current match is kept by line)."""
        if self.query:
            self.jobs.spawn(self._find(self.query, keep=True), name="find in session", key="find")

    def clear(self) -> None:
        self.find("")

    async def _find(self, query: str, *, keep: bool = False) -> None:
        cancel = threading.Event()
        text = self.raw.text
        kept_line = self.current_line() if keep else None
        matches = await in_thread(find_in_raw, text, query, cancel, cancel=cancel)
        if query != self.query or text is not self.raw.text:
            return  # superseded while it ran
        self.matches = matches
        self.current = None if kept_line is None else matches.index_of(kept_line)
        self.changed.emit(matches)
        self.current_changed.emit(self.current)
        after, self._after = self._after, None
        if after is not None:
            self.step(after, self._from_line)

    def current_line(self) -> int | None:
        m = self.matches
        if m is None or self.current is None or not 0 <= self.current < len(m.lines):
            return None
        return m.lines[self.current]

    def step(self, direction: str, from_line: int) -> int | None:
        """Go to the next (or previous) match after (before) ``from_line``, wrapping; returns its line.

        When the current match is ``from_line`` the walk simply moves one on, so F3 F3 F3 visits every
        match even when several lines carry one event.
        """
        if self.running:
            self._after, self._from_line = direction, from_line
            return None
        m = self.matches
        if m is None or not len(m.lines):
            return None
        if self.current is not None and self.current_line() == from_line:
            i = (self.current + (1 if direction == NEXT else -1)) % len(m.lines)
        else:
            found = m.next_after(from_line) if direction == NEXT else m.previous_before(from_line)
            if found is None:
                return None
            i = found
        self.current = i
        line = m.lines[i]
        self.current_changed.emit(i)
        self.go_to_line.emit(line)
        return line


__all__ = ["NEXT", "PREVIOUS", "SessionFind"]
