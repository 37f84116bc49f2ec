"""``one_line`` reads only the head of a long text; it must summarise exactly as a whole-text pass does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.records.summaries import _one_line_whole, one_line

PIECES = st.sampled_from(["a", "b", " ", "\n", "\r\n", "\t", "x" * 50, "\u2028", "  \n\n", "word " * 30, "\x0c", "é"])


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=80), st.sampled_from([3, 20, 200]))
def test_head_only_summary_equals_whole_text_summary(pieces: list[str], limit: int) -> None:
    text = "".join(pieces)
    assert one_line(text, limit) == _one_line_whole(text, limit)
