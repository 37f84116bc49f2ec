""" "Load older" in pages of a screenful, and the first row saying "N older turns" (issue 16, small things)."""

from __future__ import annotations

from typing import Any

from guikit import make_turn

from app.timeline import block_spans, derive, older_label, older_turns, page_start, tail_first_span


def _log(turns: int, *, loose_every: int = 0) -> list[dict[str, Any]]:
    """``turns`` small turns; with ``loose_every``, a standalone title event before every n-th turn."""
    records: list[dict[str, Any]] = []
    for t in range(1, turns + 1):
        if loose_every and t % loose_every == 0:
            records.append({"type": "session/title", "seq": len(records), "time": 1, "data": {"title": f"t{t}"}})
        records += make_turn(len(records), t, f"prompt {t}")
    return records


def test_a_page_is_a_screenful_of_blocks_when_they_are_derived_already() -> None:
    spans = [(i * 10, i * 10 + 10) for i in range(100)]  # 100 blocks of 10 events
    derived = [object()] * 100
    assert page_start(spans, 100, 30, derived) == 70  # 30 rows: one screenful
    assert page_start(spans, 20, 30, derived) == 0  # fewer blocks left than a page
    assert page_start(spans, 1, 30, derived) == 0
    assert page_start(spans, 50, 0, derived) == 49  # always at least one block


def test_a_page_of_blocks_not_derived_yet_stays_within_the_event_budget() -> None:
    spans = [(i * 1000, i * 1000 + 1000) for i in range(100)]  # 100 blocks of 1,000 events
    assert page_start(spans, 100, 30, [], event_budget=4000) == 96  # 4 blocks: 4,000 events to fold here
    derived: list[object | None] = [None] * 100
    derived[90:96] = [object()] * 6  # the background index has these already: they cost nothing
    assert page_start(spans, 100, 30, derived, event_budget=4000) == 90
    huge = [(0, 10), (10, 500_000)]
    assert page_start(huge, 2, 30, [], event_budget=4000) == 1  # one block even when it alone is over budget


def test_the_first_row_counts_older_turns_not_blocks() -> None:
    records = _log(300, loose_every=7)  # 300 turns plus 42 runs of events between turns: 342 blocks
    spans = block_spans(records)
    first = tail_first_span(spans)
    assert len(spans) == 342 and 0 < first < len(spans)
    turns_above = sum(1 for n in derive(records, 0, spans[first][0]) if n.kind == "turn")
    assert older_turns(records, spans, first) == turns_above
    label = older_label(turns_above)
    assert label == f"▲ {turns_above:,} older turns"
    assert "block" not in label


def test_older_label_wording() -> None:
    assert older_label(1) == "▲ 1 older turn"
    assert older_label(1234) == "▲ 1,234 older turns"
    assert older_label(0) == "▲ Older events"  # only events between turns are above
