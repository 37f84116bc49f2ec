"""Where a checked read of a log stopped, so the next ``view`` can check only what was appended.

Why a module of its own: the read pipeline (``pipeline.prepare_core``) records a ``ResumePoint`` on every
prepared source and ``persistence.incremental`` continues from it; both import this, neither the other.

A resume point is three things: the backend's own mark (JSONL: a ``TailMark`` at the last complete
frame or line; SQLite: the last preserved row), how many stored events precede that mark (a torn zstd
frame's recovered records and the crash closers come after it and are recomputed on every read), and
the surface fold (session-model §2.7) of exactly those events, which is the only validation state that
spans events.  On the 202k-event session the fold holds 1,693 surface nodes (a list and a dict; a copy
costs 0.07 ms); it spares re-validating ~200k events (the whole of a cold view's check) on each append.

May import: ``persistence.model`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from persistence.model.event_table import EventTable
from persistence.model.validate import SurfaceFold, validate_seed_events


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """Where a checked read stopped: the backend's mark, the events before it, their surface fold.

    ``fold`` is never mutated after it is stored: a continuation validates a ``fold.copy()``.
    """

    mark: Any
    committed: int
    fold: SurfaceFold


def check_seed(events: EventTable, committed: int, closers: list[dict[str, Any]], *, shapes_checked: int) -> SurfaceFold:
    """``validate_seed_events(events + closers)`` (same checks, order and messages), returning the fold
    after the first ``committed`` events (those before the backend's mark)."""
    return continue_check(SurfaceFold(), events, committed, closers, shapes_checked=shapes_checked)


def continue_check(
    fold: SurfaceFold,
    events: EventTable,
    committed: int,
    closers: list[dict[str, Any]],
    *,
    shapes_checked: int,
    start: int = 0,
) -> SurfaceFold:
    """Check ``events`` (seqs from ``start``) and then ``closers`` into ``fold``; return the fold as it was
    after seq ``committed - 1`` (``fold`` itself when nothing follows that point, else a copy of it then)."""
    n = start + len(events)
    if committed >= n and not closers:
        return validate_seed_events(events, shapes_checked=shapes_checked, fold=fold, start=start)
    head = events if committed >= n else events.between(0, committed - start)
    validate_seed_events(head, shapes_checked=shapes_checked, fold=fold, start=start)
    kept = fold.copy()
    rest: list[Any] = [] if committed >= n else list(events.segments(committed - start, len(events)))
    validate_seed_events(rest + closers, shapes_checked=shapes_checked, fold=fold, start=committed)
    return kept


__all__ = ["ResumePoint", "check_seed", "continue_check"]
