"""``decode_seqs``'s +1-run fast path (issue 12) equals the one-value-at-a-time decoder, output and errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from persistence.model.jsontext import MAX_SAFE_INTEGER as M
from persistence.sqlite import varint
from persistence.sqlite.errors import RowDecodeError
from persistence.sqlite.varint import decode_seqs, decode_seqs_plain, encode_seqs


def outcome(decode: Any, blob: bytes) -> tuple[str, Any]:
    try:
        return "ok", decode(blob)
    except RowDecodeError as err:
        return "error", str(err)


# Sequences as packed rows make them: runs of consecutive seqs, with jumps, repeats and steps back.
RUN = st.tuples(st.integers(1, 1100), st.integers(-300, 300))  # (run length, jump before it)


@st.composite
def seq_lists(draw: st.DrawFn) -> list[int]:
    start = draw(st.one_of(st.integers(0, 10**6), st.integers(M - 2000, M)))
    out: list[int] = []
    for length, jump in draw(st.lists(RUN, max_size=6)):
        first = start if not out else out[-1] + jump
        first = min(max(first, 0), M)
        out.extend(v for v in range(first, first + length) if v <= M)
    return out


@settings(max_examples=examples(300))
@given(seq_lists())
def test_fast_path_equals_plain_decoder_on_encoded_sequences(seqs: list[int]) -> None:
    blob = encode_seqs(seqs)
    assert decode_seqs(blob) == decode_seqs_plain(blob) == seqs


# Arbitrary blobs, rich in 0x02 runs, around a first value near the limits.
BYTE = st.one_of(st.just(2), st.just(2), st.integers(0, 255))


@settings(max_examples=examples(500))
@given(st.one_of(st.binary(max_size=40), st.lists(BYTE, max_size=60).map(bytes)), st.sampled_from([b"", b"\x02", b"\x05"]))
def test_fast_path_equals_plain_decoder_on_any_blob(body: bytes, head: bytes) -> None:
    blob = head + body
    assert outcome(decode_seqs, blob) == outcome(decode_seqs_plain, blob)


@pytest.mark.parametrize("first", [M - 3, M - 1, M])
@pytest.mark.parametrize("run", [1, 2, 3, 4, 10])
def test_a_run_past_the_limit_fails_like_the_plain_decoder(first: int, run: int) -> None:
    blob = encode_seqs([first]) + b"\x02" * run
    assert outcome(decode_seqs, blob) == outcome(decode_seqs_plain, blob)
    expected_ok = first + run <= M
    assert outcome(decode_seqs, blob)[0] == ("ok" if expected_ok else "error")


def test_a_run_is_one_regex_match_not_a_loop_per_value(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = varint._PLUS_ONE_RUN

    class Spy:
        def match(self, blob: bytes, pos: int) -> Any:
            calls.append(pos)
            return real.match(blob, pos)

    monkeypatch.setattr(varint, "_PLUS_ONE_RUN", Spy())
    seqs = [*range(40, 1040), 7, *range(8, 508)]
    assert decode_seqs(encode_seqs(seqs)) == seqs
    assert len(calls) == 2  # one match per run of +1 deltas
