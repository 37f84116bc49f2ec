"""Which sessions changed since the user last looked (issue 16): the list's "unseen" marks, without Qt.

A row is unseen when its revision moved since the user last opened it, or, never opened, when it was
modified after the previous visit to the root (the visit baseline).  This module only keeps that state
(``seen``: key -> revision looked at, oldest first, and the baseline) and answers for a row; the list
controller loads and saves it per root, and ``session_list.SessionList`` reports the rows whose mark
changed.

May import: the standard library only.
"""

from __future__ import annotations

from typing import Any, Protocol

# Sessions remembered as looked at, per root (the oldest forgotten first): ~150 bytes each in the settings file.
SEEN_MAX_PER_ROOT = 1000
_NEVER: Any = object()  # a key the user never opened (``None`` is a real revision: a row without one)


class SeenRow(Protocol):
    """What the unseen mark reads of a row."""

    @property
    def key(self) -> str: ...
    @property
    def revision(self) -> str | None: ...
    @property
    def modified_ns(self) -> int | None: ...


class SeenState:
    """The looked-at revisions of one root and its visit baseline."""

    __slots__ = ("baseline_ns", "seen")

    def __init__(self, seen: dict[str, str | None] | None = None, baseline_ns: int | None = None) -> None:
        self.seen: dict[str, str | None] = dict(seen or {})  # key -> revision when last opened (oldest first)
        self.baseline_ns = baseline_ns  # never-opened rows modified after this are unseen (None: none are)

    def is_unseen(self, r: SeenRow) -> bool:
        """Changed since the user last opened it (or, never opened, modified after the previous visit)."""
        seen = self.seen.get(r.key, _NEVER)
        if seen is not _NEVER:
            return seen != r.revision
        b = self.baseline_ns
        return b is not None and (r.modified_ns or 0) > b

    def is_current(self, r: SeenRow) -> bool:
        """The user has looked at ``r``'s current revision already."""
        return r.key in self.seen and self.seen[r.key] == r.revision

    def look(self, r: SeenRow) -> None:
        """``r``'s current revision counts as looked at (the most recent; the oldest beyond the cap go)."""
        self.seen.pop(r.key, None)  # re-inserted last: the dict's order is oldest-looked-at first
        self.seen[r.key] = r.revision
        while len(self.seen) > SEEN_MAX_PER_ROOT:
            del self.seen[next(iter(self.seen))]


__all__ = ["SEEN_MAX_PER_ROOT", "SeenRow", "SeenState"]
