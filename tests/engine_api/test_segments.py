"""``decode_segment`` is the exact inverse of upstream's ``encode_segment`` over the names it writes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from persistence import decode_segment
from persistence.jsonl.paths import encode_segment

ODD_IDS = [
    "a",
    "plain-ID_1.2",
    ".",
    "..",
    "...",
    "a/b",
    "/etc/passwd",
    "a\\b",
    "a:b",
    "a\0b",
    "a~b",
    "~002F",
    "~",
    "x.jsonl",
    "x.jsonl.zstd",
    "😀",
    "é",
    "日本",
    "\ud800",
    "\udc00",
    "a\ud800b",
    " ",
    "\n",
    "~0041",
]


@pytest.mark.parametrize("raw", ODD_IDS)
def test_round_trip_of_odd_ids(raw: str) -> None:
    assert decode_segment(encode_segment(raw)) == raw


@given(st.text(st.characters(exclude_categories=()), min_size=1, max_size=40))  # lone surrogates included
def test_round_trip_of_any_id(raw: str) -> None:
    assert decode_segment(encode_segment(raw)) == raw


@pytest.mark.parametrize(
    "name",
    [
        "",  # no id encodes to an empty name (encode_segment refuses "")
        "~0041",  # "A" is written literally
        "~002e",  # escapes use uppercase hex
        "a~00",  # a cut escape
        "é",  # non-ASCII is always escaped
        ".",  # "." is written as ~002E
        "a/b",  # "/" is written as ~002F
    ],
)
def test_names_no_id_encodes_to_are_refused(name: str) -> None:
    assert decode_segment(name) is None
