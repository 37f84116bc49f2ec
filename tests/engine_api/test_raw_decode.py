"""``persistence.raw_decode``: lenient decoding of an artifact into lines and damage markers.

The expected lines, markers, ``consumed`` offsets and first provisional lines below are what the
window's own decoder (``app/gui/models/raw_text.py`` before the engine took this over) produced for the same
bytes; the engine must keep producing them so the raw tab shows exactly what it showed before.
"""

from __future__ import annotations

from typing import Any

import pytest
from rawkit import LOGS, user_event, user_lines

from persistence import LazyRows, RawChunk, RawDamage, RawDecodeCancelled, decode_raw, iter_raw, js_dumps, render_rows
from persistence.jsonl.frames import compress_frame
from persistence.raw_decode import FRAMES_PER_PROGRESS

HEADER_TEXT = '{"type":"session","version":0,"id":"raw-1","createdAt":1,"cwd":"/work"}'


def event_text(seq: int) -> str:
    return js_dumps(user_event(seq)).decode()


# name -> (lines, {line: marker message}, consumed, first provisional line) as rawtext.py gave them
GOLDEN: dict[str, tuple[list[str], dict[int, str], int, int]] = {
    "zstd-torn": (
        [
            HEADER_TEXT,
            *map(event_text, range(5)),
            "torn tail: an incomplete zstd frame of 101 byte(s) at file offset 268 (not committed; repair would cut it)",
        ],
        {6: "torn tail: an incomplete zstd frame of 101 byte(s) at file offset 268 (not committed; repair would cut it)"},
        268,
        4,
    ),
    "zstd-damaged": (
        [
            HEADER_TEXT,
            "frame at file offset 79 (102 bytes) failed to decode: corrupt Zstandard session log: frame at byte 79 failed "
            "validation",
            event_text(2),
            "undecodable bytes from file offset 268: corrupt Zstandard session log: invalid frame magic at byte 0",
        ],
        {
            1: "frame at file offset 79 (102 bytes) failed to decode: corrupt Zstandard session log: frame at byte 79 failed "
            "validation",
            3: "undecodable bytes from file offset 268: corrupt Zstandard session log: invalid frame magic at byte 0",
        },
        268,
        3,
    ),
    "raw-torn": (
        [
            HEADER_TEXT,
            event_text(0),
            event_text(1),
            '{"type":"user/message","s',
            "torn tail: the last 25 byte(s) have no newline (not committed; repair would cut them)",
        ],
        {4: "torn tail: the last 25 byte(s) have no newline (not committed; repair would cut them)"},
        236,
        3,
    ),
    "raw-damaged": (
        [
            HEADER_TEXT,
            event_text(0),
            "\ufffd\ufffd not json",
            "",
            event_text(1),
            '{"type":"us',
            "torn tail: the last 11 byte(s) have no newline (not committed; repair would cut them)",
        ],
        {6: "torn tail: the last 11 byte(s) have no newline (not committed; repair would cut them)"},
        249,
        5,
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_lines_and_markers_are_what_the_window_showed(name: str) -> None:
    data, compression = LOGS[name]
    lines, markers, consumed, tail_from = GOLDEN[name]
    got = decode_raw(data, compression)
    assert [got.text(i) for i in range(len(got))] == lines
    assert {i: d.message for i, d in got.markers.items()} == markers
    assert got.consumed == consumed and got.tail_from == tail_from
    for i in range(len(got)):  # offsets index the decoded text; marker lines are empty there
        assert got.ends[i] >= got.starts[i]
        if i in got.markers:
            assert got.line(i) == b""
        else:
            assert got.line(i).decode("utf-8", "replace") == lines[i]


def test_damage_kinds_and_provisional_tail() -> None:
    kinds = {name: [(type(p).__name__, getattr(p, "kind", None), p.provisional) for p in iter_raw(*LOGS[name])] for name in LOGS}
    assert kinds["zstd-torn"] == [("RawChunk", None, False)] * 3 + [("RawChunk", None, True), ("RawDamage", "torn-frame", True)]
    assert kinds["zstd-damaged"] == [
        ("RawChunk", None, False),
        ("RawDamage", "bad-frame", False),
        ("RawChunk", None, False),
        ("RawDamage", "undecodable", True),
    ]
    assert kinds["raw-torn"] == [("RawChunk", None, False), ("RawChunk", None, True), ("RawDamage", "torn-line", True)]
    assert kinds["raw-damaged"] == kinds["raw-torn"]


@pytest.mark.parametrize("name", ["zstd-torn", "raw-torn"])
def test_appended_bytes_decode_from_consumed(name: str) -> None:
    """A torn tail that a writer completes: decoding the new bytes from ``consumed`` continues the text."""
    data, compression = LOGS[name]
    first = decode_raw(data, compression)
    if compression == "none":
        grown = data[: first.consumed] + user_lines(2, 3)
    else:
        grown = data[: first.consumed] + compress_frame(user_lines(3, 4)) + compress_frame(user_lines(5))
    delta = decode_raw(grown[first.consumed :], compression, offset=first.consumed)
    whole = decode_raw(grown, compression)
    kept = [first.text(i) for i in range(first.tail_from)]
    assert kept + [delta.text(i) for i in range(len(delta))] == [whole.text(i) for i in range(len(whole))]
    assert delta.consumed == whole.consumed == len(grown) and delta.tail_from == whole.tail_from == -1
    assert all(
        p.file_start >= first.consumed
        for p in iter_raw(grown[first.consumed :], compression, offset=first.consumed)
        if isinstance(p, RawChunk)
    )


def test_pieces_cover_the_file_in_order() -> None:
    for data, compression in LOGS.values():
        pos = 0
        for piece in iter_raw(data, compression):
            start = piece.file_start if isinstance(piece, RawChunk) else piece.file_offset
            end = piece.file_end
            assert start >= pos or isinstance(piece, RawDamage)  # a torn tail's marker covers its own chunk
            assert end <= len(data)
            pos = max(pos, end)


def test_cancellation_and_progress() -> None:
    data = b"".join(compress_frame(user_lines(i)) for i in range(200))
    seen: list[float] = []
    got = decode_raw(data, "zstd", progress=seen.append)
    assert len(got) == 200
    assert len(seen) == 200 // FRAMES_PER_PROGRESS and seen == sorted(seen) and 0 < seen[0] and seen[-1] < 1
    calls = {"n": 0}

    def cancelled() -> bool:
        calls["n"] += 1
        return calls["n"] > 10

    with pytest.raises(RawDecodeCancelled):
        decode_raw(data, "zstd", cancelled=cancelled)
    with pytest.raises(RawDecodeCancelled):
        render_rows([user_event(i) for i in range(10)], cancelled=lambda: True)


def test_rows_render_as_json_lines() -> None:
    records: list[dict[str, Any]] = [user_event(i) for i in range(5)]
    text = render_rows(records)
    assert text == b"\n".join(js_dumps(r) for r in records)
    lazy = LazyRows(records)
    assert len(lazy) == 5 and lazy[2] == js_dumps(records[2]) and lazy[-1] == js_dumps(records[-1])
    assert lazy[1:3] == [js_dumps(records[1]), js_dumps(records[2])]
    lines = decode_raw(text + b"\n", "none")
    assert [lines.text(i) for i in range(len(lines))] == [js_dumps(r).decode() for r in records]
