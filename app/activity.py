"""What the user did and what came of it: the Activity panel's log, kept Qt-free.

Why: a result shown only in the status bar is gone after 15 s (or after the next message), so a user
who looked away cannot tell whether the repair went through or which session the fork created.  Every
action (repair, restore, fork, resume, copying a command or a link, export, resetting the demo root)
appends one ``ActivityEntry`` here; the window shows the log in View > Activity.

The log is bounded (``MAX_ENTRIES``): a long session of work must not grow memory without end, and
nobody scrolls back further than a few hundred results.  Listeners are plain callables, so the Qt
model (``app.gui.models.activity_model``) and tests observe the same log.

May import: the standard library only (an import-linter contract keeps Qt out).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

MAX_ENTRIES = 500  # entries kept; the oldest goes first (a day of heavy use is well under this)

DONE, CANCELLED, REFUSED, FAILED = "done", "cancelled", "refused", "failed"
OUTCOMES = (DONE, CANCELLED, REFUSED, FAILED)


@dataclass(frozen=True, slots=True)
class ActivityEntry:
    """One action's result: when it ended, what it was, on which session, how it went, the message."""

    time: float  # seconds since the epoch (time.time()), when the result was known
    action: str  # "repair", "fork", "copy command", "export", "reset demo root", ...
    session: str | None  # the session id acted on; None for root-wide actions
    outcome: str  # one of OUTCOMES (an unknown word is kept as given)
    detail: str  # the message the user was shown

    def clock(self) -> str:
        """Local wall-clock time, as the panel shows it (HH:MM:SS)."""
        return time.strftime("%H:%M:%S", time.localtime(self.time))


# (the new entry, whether the oldest one was dropped); (None, True) after ``clear()``.
Listener = Callable[[ActivityEntry | None, bool], object]


class ActivityLog:
    """A bounded, append-only list of ``ActivityEntry``, oldest first, with change listeners."""

    def __init__(self, max_entries: int = MAX_ENTRIES, *, clock: Callable[[], float] = time.time) -> None:
        if max_entries < 1:
            raise ValueError("an activity log keeps at least one entry")
        self._entries: deque[ActivityEntry] = deque(maxlen=max_entries)
        self._listeners: list[Listener] = []
        self._clock = clock

    @property
    def max_entries(self) -> int:
        maxlen = self._entries.maxlen
        assert maxlen is not None
        return maxlen

    def record(self, action: str, outcome: str, detail: str, *, session: str | None = None) -> ActivityEntry:
        """Append one result now; listeners are told after it is in the log."""
        entry = ActivityEntry(self._clock(), action, session, outcome, detail)
        dropped = len(self._entries) == self.max_entries
        self._entries.append(entry)
        for listener in list(self._listeners):
            listener(entry, dropped)
        return entry

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def clear(self) -> None:
        self._entries.clear()
        for listener in list(self._listeners):
            listener(None, True)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[ActivityEntry]:
        return iter(self._entries)

    def __getitem__(self, i: int) -> ActivityEntry:
        return self._entries[i]

    def newest(self, n: int = 1) -> list[ActivityEntry]:
        """The ``n`` newest entries, newest first."""
        out: list[ActivityEntry] = []
        for entry in reversed(self._entries):
            if len(out) >= n:
                break
            out.append(entry)
        return out


__all__ = ["CANCELLED", "DONE", "FAILED", "MAX_ENTRIES", "OUTCOMES", "REFUSED", "ActivityEntry", "ActivityLog", "Listener"]
