"""The viewer's timeline of a session: turn → step → items, folded from the engine's event records.

What it holds, one concept per module:

- ``nodes``         ``TimelineNode`` (one row of the tree), its flags
- ``fold``          the fold: one handler per event type (a dispatch table), ``derive``
- ``event_rows``    how a standalone event (request, title, retry, unknown type …) reads as a row
- ``spans``         block spans, the tail-first view, "load older" steps and pages, re-deriving a grown log
- ``damaged``       the decodable prefix of a log the engine refuses, and the row saying what stopped it
                    (imported as ``app.timeline.damaged``: it reads packed rows with ``app.search.damaged``)
- ``detail_text``   the full text of a row for the detail pane

The record helpers it reads with (field reads, summaries, the title, the packed-run walk, ``Tokens``)
are ``app.records``, shared with insight, search and the exports; the timeline is not their library.

It is a viewer concept, so it lives in ``app`` rather than the engine; it is pure so the window's
item model (``app.gui.models.timeline``, a thin Qt adapter), the benchmarks and the tests all use the
same code.  Import rule: the stdlib, ``app.records`` and the public ``persistence`` package only —
never Qt, never ``app.gui``, never an engine sub-module (one exception: ``damaged`` reads packed chunk rows with
``app.search.damaged.packed_row``, so search and the timeline read a damaged log's rows alike; it
is not imported here, so importing the timeline never imports search).
"""

from __future__ import annotations

from app.timeline.detail_text import node_detail, node_detail_text_only
from app.timeline.fold import derive
from app.timeline.nodes import (
    CANCELLED,
    ERROR,
    HUMAN,
    INTERRUPTED,
    OPEN,
    PRUNED,
    REPAIRED,
    SEED,
    SYNTHETIC,
    TimelineNode,
)
from app.timeline.spans import (
    OLDER_EVENT_BUDGET,
    Growth,
    Span,
    block_spans,
    block_starts,
    derive_growth,
    derive_older,
    derive_tail,
    older_label,
    older_start,
    older_turns,
    page_start,
    span_containing,
    tail_first_span,
)

__all__ = [
    "CANCELLED",
    "ERROR",
    "HUMAN",
    "INTERRUPTED",
    "OLDER_EVENT_BUDGET",
    "OPEN",
    "PRUNED",
    "REPAIRED",
    "SEED",
    "SYNTHETIC",
    "Growth",
    "Span",
    "TimelineNode",
    "block_spans",
    "block_starts",
    "derive",
    "derive_growth",
    "derive_older",
    "derive_tail",
    "node_detail",
    "node_detail_text_only",
    "older_label",
    "older_start",
    "older_turns",
    "page_start",
    "span_containing",
    "tail_first_span",
]
