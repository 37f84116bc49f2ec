"""What an indexing run reports: how a step dealt with a session (the action names), where the run is
(``IndexProgress``), what it did (``IndexReport``), and the key and revision each listing row is indexed
under (the window's row key, so a hit finds its row).

May import: the standard library, the public ``persistence`` package and ``app.search``'s own modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.search.db import clean_text
from persistence import ListedEntry

# How a step dealt with a session (``IndexProgress.action``).
FULL = "full"  # read whole and (re)indexed
TAIL = "tail"  # only the appended events indexed
DAMAGED = "damaged"  # the decodable part of a refused log or bad row
HEADER_ONLY = "header-only"  # nothing readable: the id (and cwd) only
REMOVED = "removed"  # gone from the root
SKIPPED = "skipped"  # busy or failed now: retried by the next run
CANCELLED = "cancelled"


class IndexCancelled(Exception):
    """Raised inside a step when ``cancel()`` was called; the session's transaction is rolled back."""


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """Where a run is: ``done`` of ``total`` planned sessions, and what the last step did."""

    done: int
    total: int
    session_id: str | None = None
    action: str | None = None

    @property
    def label(self) -> str:
        """The status-bar text: ``Indexing 3,412 / 10,000 sessions``."""
        return f"Indexing {self.done:,} / {self.total:,} sessions"


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one run did."""

    listed: int  # entries in the listing (or handed to ``start``)
    planned: int  # sessions that needed work
    done: int
    actions: dict[str, int]  # action -> sessions
    events: int  # events walked
    rows: int  # index rows written
    text_chars: int  # characters of text indexed
    seconds: float
    cancelled: bool
    messages: tuple[str, ...]  # rebuilds, fallbacks, sessions that failed


def entry_key(entry: ListedEntry) -> str:
    """The row key the window also uses: a JSONL transcript's path, else ``id:<session id>`` (as stored:
    ``clean_text`` turns a lone surrogate of a non-UTF-8 file name into U+FFFD)."""
    return clean_text(entry.path if entry.path else f"id:{entry.session_id}")


def entry_revision(entry: ListedEntry) -> str | None:
    """What tells that an entry changed: its revision, else (a bad row) its size, mtime and verdict."""
    if entry.revision is not None:
        return entry.revision
    return f"{entry.kind}:{entry.status}:{entry.size}:{entry.mtime_ns}:{entry.problem}"
