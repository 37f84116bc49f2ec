"""Back / forward between visited events (Alt+Left / Alt+Right), as a browser does between pages.

What is a visit: a jump, not every row the arrow keys pass over.  A jump (activating a search hit,
opening a link, the next or previous find match) first records where the user was, then where
the jump lands; going back returns to the place before the jump.  A new jump after going back drops
the forward entries.  Consecutive equal places are one entry.  At most ``MAX_ENTRIES`` are kept.

May import: the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_ENTRIES = 200  # visited places remembered (the oldest are dropped)


@dataclass(frozen=True, slots=True)
class Place:
    """One visited place: a session (its list key and id) and an event seq in it (None: the session)."""

    key: str
    session_id: str
    seq: int | None = None


class EventHistory:
    """The visited places and where in them the user is."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._places: list[Place] = []
        self._at = -1
        self._max = max_entries

    @property
    def current(self) -> Place | None:
        return self._places[self._at] if 0 <= self._at < len(self._places) else None

    @property
    def can_go_back(self) -> bool:
        return self._at > 0

    @property
    def can_go_forward(self) -> bool:
        return self._at + 1 < len(self._places)

    def places(self) -> list[Place]:
        return list(self._places)

    def visit(self, place: Place) -> None:
        """The user is now at ``place`` (forward entries are dropped unless it is the next one)."""
        if self.current == place:
            return
        if self.can_go_forward and self._places[self._at + 1] == place:
            self._at += 1
            return
        del self._places[self._at + 1 :]
        self._places.append(place)
        if len(self._places) > self._max:
            del self._places[: len(self._places) - self._max]
        self._at = len(self._places) - 1

    def jump(self, here: Place | None, to: Place) -> None:
        """A jump from ``here`` (where the user is now, None when nowhere) to ``to``."""
        if here is not None:
            self.visit(here)
        self.visit(to)

    def back(self, here: Place | None = None) -> Place | None:
        """The place before the current one (None at the start).  ``here``: where the user moved since
        the last jump (recorded first, so forward returns there)."""
        if here is not None and here != self.current:
            self.visit(here)
        if not self.can_go_back:
            return None
        self._at -= 1
        return self._places[self._at]

    def forward(self) -> Place | None:
        """The place after the current one (None at the end)."""
        if not self.can_go_forward:
            return None
        self._at += 1
        return self._places[self._at]

    def clear(self) -> None:
        self._places.clear()
        self._at = -1


__all__ = ["MAX_ENTRIES", "EventHistory", "Place"]
