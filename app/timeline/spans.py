"""Block spans: where each top-level block of a log starts and ends, and the tail-first view built on them.

A span is ``(start, end)`` record indices of one block (a turn, or a run of events between turns);
spans are contiguous and sorted.  Because every block folds on its own (see ``app.timeline.fold``),
a viewer derives the newest blocks first (``derive_tail``), older ones later or on demand
(``older_start`` picks how many), and, when the log grows, re-derives only from the last block on
(``derive_growth``) and merges the result by node key.

Stdlib and ``app.timeline`` only.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.records.walk import item_type, walk
from app.timeline.fold import derive
from app.timeline.nodes import TimelineNode
from persistence import EventType

log = logging.getLogger(__name__)

Span = tuple[int, int]  # (first record index, one past the last) of one block

TAIL_MIN_EVENTS = 2000  # events the first (tail) view holds at least, unless that takes more blocks than:
TAIL_MAX_BLOCKS = 25  # blocks of the first view at most
OLDER_EVENT_BUDGET = 4000  # events derived per "load older" step (at least one block)
OLDER_BLOCK_BUDGET = 40  # blocks per "load older" step at most


def block_starts(records: Sequence[dict[str, Any]], start: int = 0) -> list[int]:
    """Record indices where a top-level block starts (one cheap pass over ``type`` only).

    ``start`` must itself be a block start (the fold state is empty there).
    """
    starts: list[int] = []
    in_turn = False
    expecting = True  # the next event starts a block
    # A packed run is one item: its members share one type, so only its first index can start a block.
    for i, item in walk(records, start):
        t = item_type(item)
        if t == EventType.TURN_START:
            starts.append(i)
            in_turn = True
            expecting = False
            continue
        if expecting:
            starts.append(i)
            expecting = False
        if t == EventType.TURN_END and in_turn:
            in_turn = False
            expecting = True
    return starts


def block_spans(records: Sequence[dict[str, Any]], start: int = 0) -> list[Span]:
    """The spans of the blocks from ``start`` (a block start) to the end of ``records``."""
    starts = block_starts(records, start)
    if not starts:
        return []
    ends = [*starts[1:], len(records)]
    return list(zip(starts, ends, strict=True))


def tail_first_span(spans: Sequence[Span], min_events: int = TAIL_MIN_EVENTS, max_blocks: int = TAIL_MAX_BLOCKS) -> int:
    """Where a tail-first view starts: the newest blocks holding about ``min_events`` events."""
    if not spans:
        return 0
    first = len(spans) - 1
    end = spans[-1][1]
    while first > 0 and len(spans) - first < max_blocks and end - spans[first][0] < min_events:
        first -= 1
    return first


def span_containing(spans: Sequence[Span], index: int) -> int:
    """Position of the span holding record ``index`` (spans are contiguous and sorted)."""
    pos = bisect.bisect_right([s for s, _e in spans], index) - 1
    return max(0, pos)


def older_start(
    spans: Sequence[Span],
    first: int,
    until_span: int | None = None,
    *,
    event_budget: int = OLDER_EVENT_BUDGET,
    block_budget: int = OLDER_BLOCK_BUDGET,
) -> int:
    """The first span of the next "load older" step above ``spans[first:]`` (``first`` > 0).

    Down to ``until_span`` when given; otherwise at least one block, then more while they stay within
    ``event_budget`` events and ``block_budget`` blocks.
    """
    end = first
    start = end - 1
    if until_span is not None:
        return max(0, min(start, until_span))
    budget_start = spans[end - 1][1] - event_budget
    while start > 0 and end - start < block_budget and spans[start - 1][0] >= budget_start:
        start -= 1
    return start


def page_start(
    spans: Sequence[Span],
    first: int,
    rows: int,
    derived: Sequence[object | None] = (),
    *,
    event_budget: int = OLDER_EVENT_BUDGET,
) -> int:
    """The first span of a "load older" page: ``rows`` blocks above ``spans[first:]`` (a screenful of
    top-level rows), fewer when the blocks not ``derived`` yet would fold more than ``event_budget``
    events on the caller's thread; always at least one block.  Blocks already derived (the background
    index) cost nothing, so a page of them is always whole.
    """
    start = first - 1
    cost = 0 if start < len(derived) and derived[start] is not None else spans[start][1] - spans[start][0]
    while start > 0 and first - start < rows:
        prev = start - 1
        more = 0 if prev < len(derived) and derived[prev] is not None else spans[prev][1] - spans[prev][0]
        if cost + more > event_budget:
            break
        cost += more
        start = prev
    return max(0, start)


def older_turns(records: Sequence[dict[str, Any]], spans: Sequence[Span], first: int) -> int:
    """Turns among the blocks above ``spans[first:]`` (each turn is one block, opened by ``turn/start``)."""
    return sum(1 for s, _e in spans[:first] if item_type(records[s]) == EventType.TURN_START)


def older_label(turns: int) -> str:
    """The first row of a tail-first view: what is above, in turns (a user's unit), never in blocks."""
    if turns <= 0:
        return "▲ Older events"  # only events between turns are above
    return f"▲ {turns:,} older turn" + ("" if turns == 1 else "s")


# ---------------------------------------------------------------- tail-first derivation


def derive_tail(records: Sequence[dict[str, Any]], stored: int) -> tuple[list[Span], int, list[TimelineNode]]:
    """The first view of a log: ``(spans, first, nodes)`` where ``nodes`` are the blocks ``spans[first:]``."""
    spans = block_spans(records)
    if not spans:
        return [], 0, []
    first = tail_first_span(spans)
    nodes = derive(records, spans[first][0], len(records), stored_count=stored)
    if len(nodes) != len(spans) - first:  # one node per block is an invariant of the fold; stay safe anyway
        log.warning("timeline fold gave %d nodes for %d blocks", len(nodes), len(spans) - first)
        nodes = derive(records, 0, len(records), stored_count=stored)
        return [(0, len(records))] * len(nodes), 0, nodes
    return spans, first, nodes


def derive_older(
    records: Sequence[dict[str, Any]], spans: Sequence[Span], first: int, *, checkpoint: Callable[[int], None] | None = None
) -> list[TimelineNode]:
    """The blocks above a tail-first view (``spans[:first]``): the background full index."""
    return derive(records, 0, spans[first][0], checkpoint=checkpoint)


@dataclass(frozen=True, slots=True)
class Growth:
    """A grown log re-derived from its last block on: ``nodes`` are the blocks ``spans[from_span:]``."""

    spans: list[Span]
    from_span: int
    nodes: list[TimelineNode]


def derive_growth(records: Sequence[dict[str, Any]], stored: int, old_spans: Sequence[Span]) -> Growth:
    """The log grew past ``old_spans``: re-segment and re-derive from its last block on.

    The last block may have been open (a running turn), so it is derived again with the new events;
    every block before it is unchanged and keeps its span.  A viewer merges ``nodes`` into what it
    shows by node key.
    """
    from_span = max(0, len(old_spans) - 1)
    start = old_spans[from_span][0] if old_spans else 0
    spans = list(old_spans[:from_span]) + block_spans(records, start)
    nodes = derive(records, start, len(records), stored_count=stored)
    return Growth(spans, from_span, nodes)
