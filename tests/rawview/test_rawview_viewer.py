"""The Raw tab's log-viewer logic without Qt: token spans, JSON paths, lazy trees, byte offsets, go to."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.rawview.goto import BYTE, LINE, SEQ, GoTarget, parse_target, resolve
from app.rawview.json_tokens import (
    KEY,
    LITERAL,
    NUMBER,
    PUNCTUATION,
    STRING,
    ends_in_string,
    fold_long_lines,
    render_newlines,
    tokenize_line,
)
from app.rawview.json_tree import JsonTree, json_path
from app.rawview.raw_text import RawText, decode_jsonl, decode_records
from persistence import JsonlSessionPersistence


def _roles(line: str, in_string: bool = False) -> list[tuple[str, str]]:
    spans, _open = tokenize_line(line, in_string)
    return [(line[s.start : s.start + s.length], s.role) for s in spans]


def test_a_pretty_line_splits_into_keys_strings_numbers_literals_and_punctuation() -> None:
    assert _roles('  "seq": 12,') == [('"seq"', KEY), (":", PUNCTUATION), ("12", NUMBER), (",", PUNCTUATION)]
    assert _roles('  "text": "a \\"q\\": 1",') == [
        ('"text"', KEY),
        (":", PUNCTUATION),
        ('"a \\"q\\": 1"', STRING),
        (",", PUNCTUATION),
    ]
    assert _roles("[true, false, null, -1.5e3]") == [
        ("[", PUNCTUATION),
        ("true", LITERAL),
        (",", PUNCTUATION),
        ("false", LITERAL),
        (",", PUNCTUATION),
        ("null", LITERAL),
        (",", PUNCTUATION),
        ("-1.5e3", NUMBER),
        ("]", PUNCTUATION),
    ]


def test_a_string_with_rendered_newlines_stays_a_string_across_lines() -> None:
    pretty = orjson.dumps({"out": "line one\nline two\nend", "n": 1}, option=orjson.OPT_INDENT_2).decode()
    shown = render_newlines(pretty)
    lines = shown.split("\n")
    assert "line one" in lines[1] and lines[2] == "line two" and lines[3].startswith('end"')
    state = False
    roles: list[list[tuple[str, str]]] = []
    for line in lines:
        spans, state = tokenize_line(line, state)
        roles.append([(line[s.start : s.start + s.length], s.role) for s in spans])
    assert roles[1][-1] == ('"line one', STRING)
    assert roles[2] == [("line two", STRING)]
    assert roles[3] == [('end"', STRING), (",", PUNCTUATION)]
    assert roles[4] == [('"n"', KEY), (":", PUNCTUATION), ("1", NUMBER)]
    assert state is False


def test_render_newlines_keeps_other_escapes_and_an_escaped_backslash() -> None:
    assert render_newlines('"a\\nb\\tc\\\\n"') == '"a\nb\\tc\\\\n"'
    assert render_newlines('{"k": 1}') == '{"k": 1}'


def test_json_paths() -> None:
    assert json_path([]) == "$"
    assert json_path(["data", "content", 0, "text"]) == "$.data.content[0].text"
    assert json_path(["a b", "it's"]) == "$['a b']['it\\'s']"


def test_the_tree_builds_children_only_when_asked() -> None:
    record = {"type": "tool/result", "data": {"content": [{"text": "x" * 200_000}, {"text": "y"}], "n": list(range(5000))}}
    tree = JsonTree.parse(orjson.dumps(record))
    assert tree is not None
    assert tree.nodes_built == 1 and not tree.root.children_built
    assert tree.root.child_count() == 2 and tree.nodes_built == 1
    data = tree.root.child(1)
    assert tree.nodes_built == 3  # the root's two members, nothing below them
    assert data.child_count() == 2 and not data.children_built
    text = tree.find(["data", "content", 0, "text"])
    assert text is not None and text.path() == "$.data.content[0].text"
    assert text.copy_text() == "x" * 200_000
    assert "200,000 characters" in text.preview() and len(text.preview()) < 300
    assert tree.nodes_built == 1 + 2 + 2 + 2 + 1  # root, its members, data's, content's, the first item's
    n = tree.find(["data", "n"])
    assert n is not None and n.preview() == "[5,000 items]" and not n.children_built
    assert orjson.loads(tree.find(["data", "content", 1]).copy_text()) == {"text": "y"}  # type: ignore[union-attr]
    assert JsonTree.parse("⚠ not json") is None


@pytest.mark.parametrize(
    ("typed", "kind", "expected"),
    [
        ("12", LINE, GoTarget(LINE, 12)),
        ("12", SEQ, GoTarget(SEQ, 12)),
        ("line 7", BYTE, GoTarget(LINE, 7)),
        ("seq 40", LINE, GoTarget(SEQ, 40)),
        ("#40", LINE, GoTarget(SEQ, 40)),
        ("byte 2,465", LINE, GoTarget(BYTE, 2465)),
        ("@2465", LINE, GoTarget(BYTE, 2465)),
        ("0x9a1", LINE, GoTarget(BYTE, 0x9A1)),
        ("b: 10_000", LINE, GoTarget(BYTE, 10000)),
        ("hello", LINE, None),
        ("", LINE, None),
        ("-3", LINE, None),
    ],
)
def test_parse_target(typed: str, kind: str, expected: GoTarget | None) -> None:
    assert parse_target(typed, kind) == expected


def _events(n: int) -> list[dict[str, object]]:
    return [{"type": "user/message", "seq": i, "data": {"text": f"event {i} " + "z" * (i * 37 % 300)}} for i in range(n)]


def _write(tmp_path: Path, compression: str, events: list[dict[str, object]]) -> Path:
    async def go() -> Path:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        try:
            await store.create({"id": "s", "createdAt": 1, "cwd": "/w"})
            for i in range(0, len(events), 7):  # several appends: several zstd frames
                await store.append("s", events[i : i + 7])
        finally:
            await store.close()
        return next(p for p in tmp_path.rglob("*") if p.is_file() and p.name.startswith("s"))

    return asyncio.run(go())


def test_byte_offsets_of_a_plain_log_are_where_each_line_starts_in_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "none", _events(30))
    data = path.read_bytes()
    text = decode_jsonl(data, "none")
    assert len(text) == data.count(b"\n")
    for i in range(len(text)):
        at = text.file_offset(i)
        assert data[at : at + text.line_size(i)] == text.line_bytes(i)
        assert at == 0 or data[at - 1 : at] == b"\n"
        assert text.frame_of(i) == -1
    # Go to byte: a byte inside a line goes to that line; the line's first byte goes there exactly.
    mid = text.file_offset(10) + 5
    assert resolve(text, GoTarget(BYTE, mid)).line == 10 and "inside line 11" in resolve(text, GoTarget(BYTE, mid)).note
    assert resolve(text, GoTarget(BYTE, text.file_offset(10))).line == 10
    assert resolve(text, GoTarget(LINE, 11)).line == 10
    assert resolve(text, GoTarget(LINE, len(text) + 1)).line == -1
    seq_line = resolve(text, GoTarget(SEQ, 20)).line
    assert seq_line >= 0 and text.seqs_of_line(seq_line) == (20, 20)
    assert resolve(text, GoTarget(SEQ, 999)).line == -1


def test_growth_keeps_file_offsets(tmp_path: Path) -> None:
    path = _write(tmp_path, "none", _events(30))
    data = path.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    text = decode_jsonl(data[: cut + 10], "none")  # a torn tail: 10 bytes of the next line
    text.drop_provisional()
    text.extend(decode_jsonl(data[text.consumed :], "none", offset=text.consumed))
    whole = decode_jsonl(data, "none")
    assert list(text.file_offs) == list(whole.file_offs)


def test_zstd_lines_carry_their_frame_offset_and_number(tmp_path: Path) -> None:
    path = _write(tmp_path, "zstd", _events(40))
    data = path.read_bytes()
    text = decode_jsonl(data, "zstd")
    frames = sorted({text.frame_of(i) for i in range(len(text))})
    assert frames == list(range(1, len(frames) + 1)) and len(frames) >= 5
    starts = list(text.frame_starts)
    assert starts[0] == 0 and starts == sorted(starts)
    for i in range(len(text)):
        f = text.frame_of(i)
        assert text.file_offset(i) == starts[f - 1]
        assert data[starts[f - 1] : starts[f - 1] + 4] == b"\x28\xb5\x2f\xfd"  # a zstd frame starts there
    # A byte inside frame 3 goes to frame 3's first line.
    third = starts[2]
    got = resolve(text, GoTarget(BYTE, third + 3))
    assert text.frame_of(got.line) == 3 and (got.line == 0 or text.frame_of(got.line - 1) == 2)
    assert "frame 3" in got.note
    # Growth numbers the new frames after the old ones.
    half = starts[len(starts) // 2]
    grown = decode_jsonl(data[:half], "zstd")
    grown.extend(decode_jsonl(data[half:], "zstd", offset=half))
    assert list(grown.frames) == list(text.frames) and list(grown.file_offs) == list(text.file_offs)


def test_a_sqlite_session_has_no_bytes_to_go_to() -> None:
    text = decode_records(_events(5))
    assert text.file_offset(2) == -1 and text.frame_of(2) == -1
    got = resolve(text, GoTarget(BYTE, 10))
    assert got.line == -1 and "no file bytes" in got.note
    assert resolve(text, GoTarget(SEQ, 3)).line == 3


def test_an_empty_text_goes_nowhere() -> None:
    assert resolve(RawText(), GoTarget(LINE, 1)).line == -1


def test_long_lines_fold_into_pieces_that_keep_escapes_whole() -> None:
    text = '{"a": "' + "x" * 12 + '\\"' + "y" * 20 + '"}\nshort'  # the escape \" would straddle a cut at 20
    folded, did = fold_long_lines(text, 10)
    assert did and folded.replace("\n", "") == text.replace("\n", "")
    pieces = folded.split("\n")
    assert all(len(p) <= 10 for p in pieces) and pieces[-1] == "short"
    assert not any(p.endswith("\\") for p in pieces[:-1]) and len(pieces[1]) == 9
    # Colouring across the pieces: the string stays a string until its quote.
    state = False
    roles = []
    for p in pieces[:-1]:
        spans, state = tokenize_line(p, state)
        roles += [s.role for s in spans]
    assert roles[:3] == [PUNCTUATION, KEY, PUNCTUATION] and roles[-1] == PUNCTUATION and state is False
    assert fold_long_lines("short\nlines", 10) == ("short\nlines", False)


@given(st.text(alphabet='"\\ab:{}[],0 tn', max_size=30), st.booleans())
def test_counting_quotes_says_what_tokenizing_says(line: str, in_string: bool) -> None:
    """Lines off screen are only counted: the count must agree with the tokenizer about an open string."""
    assert ends_in_string(line, in_string) == tokenize_line(line, in_string)[1]
