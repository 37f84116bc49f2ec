"""What becomes an index row (a packed run is one step), the query translation and snippets."""

from __future__ import annotations

from typing import Any

import pytest
import searchkit as k
import sessionkit as sk

from app.search.damaged import decode_damaged, packed_row
from app.search.extract import MAX_BODY_CHARS, TailState, arguments_text, extract, header_row
from app.search.language import SearchQueryError, Term, exact_in_index, highlight_pattern, parse_query, skeleton, trigrams
from app.search.results import snippet_of
from persistence import EventLog, PackedRun, js_dumps
from persistence.jsonl.frames import compress_frame


def run_of(kind: str, seq0: int, texts: list[str], *, step: int = 1, index: int = 0, **kw: str) -> PackedRun:
    return PackedRun(kind, seq0, 100 + seq0, tuple([1] * (len(texts) - 1)), 1, step, index, tuple(texts), **kw)


def rows_of(items: list[Any], state: TailState | None = None) -> list[tuple[object, ...]]:
    return [r[:3] + r[3:4] + r[6:] for r in extract(items, state).rows]  # (seq, kind, type, tool, body)


def test_rows_of_the_rich_log_walked_from_the_engines_table() -> None:
    log = EventLog(k.rich_log())
    batch = extract(log.segments())
    got = {(r[0], r[1], r[3]) for r in batch.rows}
    assert got == {
        (1, "user", None),
        (2, "title", None),
        (10, "reasoning", None),
        (10, "assistant", None),
        (11, "tool-call", "bash"),
        (12, "tool-result", "bash"),
        (13, "tool-call", "read_file"),
        (14, "error", "read_file"),
    }
    assert batch.state.last_seq == 16 and batch.state.event_count == 17
    assert batch.state.title == "Fix the Order Service" and not batch.state.open_turn
    assert batch.cited == [(4, 9)]


def test_uncited_deltas_are_joined_across_runs_and_scalars_at_their_first_seq() -> None:
    items = [
        run_of("text-delta", 3, ["alpha ", "beta "]),
        sk.text_delta(5, 1, 1, "gamma "),  # a verbatim delta (a run of fewer than 3 members)
        run_of("text-delta", 6, ["delta", "!"]),
        run_of("reasoning-delta", 8, ["why ", "not"]),  # another kind: another row
        run_of("tool-call-delta", 10, ['{"pa', 'th":"a.ts"}'], call_id="c1", name="read_file"),
    ]
    assert rows_of(items) == [
        (3, "assistant", "assistant/chunk", None, "alpha beta gamma delta!"),
        (8, "reasoning", "assistant/chunk", None, "why not"),
        (10, "tool-call", "assistant/chunk", "read_file", "read_file\npath: a.ts"),
    ]


def test_deltas_cited_by_a_message_are_not_indexed_again() -> None:
    retry = {"retryId": "r", "turn": 1, "step": 1, "provider": "p", "mode": "normal", "policyKey": "k", "retry": 1, "delayMs": 5}
    items = [
        run_of("text-delta", 3, ["failed ", "attempt"]),  # before a retry: no message cites it
        sk.ev("llm/retry", 5, {**retry, "failure": {"message": "reset", "code": "NET"}}),
        run_of("text-delta", 6, ["final ", "answer"]),
        k.assistant(8, 1, 1, [{"type": "text", "text": "final answer"}], [6, 7]),
    ]
    assert rows_of(items) == [
        (5, "error", "llm/retry", None, "reset NET"),
        (8, "assistant", "assistant/message", None, "final answer"),
        (3, "assistant", "assistant/chunk", None, "failed attempt"),
    ]


def test_a_tail_continues_the_turn_and_names_results_by_earlier_calls() -> None:
    state = TailState(last_seq=11, turn=4, open_turn=True, event_count=12)
    result = sk.tool_result(12, 4, 1, "c1", "late output", sourceEventSeqs=[11])
    batch = extract([sk.user_message(13, "more"), result], state, tool_of=lambda seq: {11: "grep"}.get(seq))
    assert [(r[0], r[1], r[3], r[4]) for r in batch.rows] == [(13, "user", None, 4), (12, "tool-result", "grep", 4)]
    assert batch.state.event_count == 14 and batch.state.open_turn


def test_failures_and_log_only_texts() -> None:
    items = [
        sk.ev(
            "turn/end", 0, {"turn": 1, "reason": {"kind": "error", "error": {"message": "provider overloaded", "code": "SERVER"}}}
        ),
        sk.ev("llm/retry", 1, {"turn": 1, "step": 1, "failure": {"message": "rate limited", "code": "RATE"}}),
        sk.ev("command/run", 2, {"commandId": "x", "name": "compact", "args": "now", "source": {"kind": "user"}}),
        sk.ev("command/done", 3, {"commandId": "x", "kind": "error", "text": "compaction failed"}),
        sk.ev("todo/write", 4, {"todos": [{"content": "write the tests", "status": "pending"}]}),
        sk.ev("request/header", 5, {"header": {"system": "a long system prompt"}, "reason": "initial"}),
    ]
    assert [(r[1], r[6]) for r in extract(items).rows] == [
        ("error", "provider overloaded SERVER"),
        ("error", "rate limited RATE"),
        ("user", "/compact now"),
        ("error", "compaction failed"),
        ("meta", "write the tests"),
    ]


def test_bodies_are_storable_and_bounded() -> None:
    huge = "x" * (MAX_BODY_CHARS + 10)
    texts = ["bad \ud800 surrogate and a \x00 nul", huge, "a JS pair \ud83d\ude00 joined"]
    rows = extract([sk.user_message(i, t) for i, t in enumerate(texts)]).rows
    assert rows[0][6] == "bad \ufffd surrogate and a   nul"
    assert rows[2][6] == "a JS pair \U0001f600 joined"
    assert len(rows[1][6]) == MAX_BODY_CHARS
    assert header_row({"id": "s", "cwd": "/w/\udcff"}, "s")[6] == "s\n/w/\ufffd"


def test_arguments_are_indexed_as_a_person_reads_them() -> None:
    assert arguments_text('{"command":"grep -n \\"x\\" a.ts\\nls"}') == 'command: grep -n "x" a.ts\nls'
    assert arguments_text('{"n": 3, "ok": true}') == "n: 3\nok: true"
    assert arguments_text("not json {") == "not json {"
    assert arguments_text('"just a string"') == "just a string"


def test_damaged_artifacts_decode_line_by_line() -> None:
    row = {
        "type": "text-chunks",
        "seq0": 4,
        "time0": 10,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]},
    }
    assert packed_row(row) == PackedRun("text-delta", 4, 10, (1,), 1, 1, 0, ("a", "b"))
    assert packed_row({**row, "seq0": "x"}) is None
    plain = b"\n".join([js_dumps({"id": "s1", "cwd": "/w"}), b"{broken", js_dumps(sk.user_message(1, "hello")), js_dumps(row)])
    for data, compression in ((plain + b"\n", "none"), (compress_frame(plain + b"\n"), "zstd")):
        meta, items = decode_damaged(data, compression)
        assert meta == {"id": "s1", "cwd": "/w"}
        assert [type(i).__name__ for i in items] == ["dict", "PackedRun"]


@pytest.mark.parametrize(
    ("query", "fts"),
    [
        ("order.ts", '("ord" AND "rde" AND "der" AND "er." AND "r.t" AND ".ts")'),
        ("abc", '"abc"'),
        ("ab", None),  # no trigram: the tree cannot be narrowed
        ("abc ab", '"abc"'),  # an AND drops what cannot narrow
        ("abc OR ab", None),  # an OR with such a branch cannot narrow at all
        ("abcd NOT xyz", '("abc" AND "bcd")'),  # NOT narrows by its left side only
        ('"a""bc"', '("a""b" AND """bc")'),  # quotes inside a phrase stay quoted
    ],
)
def test_the_index_expression_is_a_superset_of_the_matches(query: str, fts: str | None) -> None:
    assert skeleton(parse_query(query)) == fts


def test_long_terms_send_at_most_a_dozen_trigrams() -> None:
    grams = trigrams("a" * 3 + "".join(chr(0x4E00 + i) for i in range(60)))
    assert len(grams) == 12 and grams[-1] == "".join(chr(0x4E00 + i) for i in range(57, 60))


def test_three_character_terms_are_answered_by_the_index_alone() -> None:
    assert exact_in_index(parse_query("abc OR xyz"))
    assert not exact_in_index(parse_query("abcd"))
    assert not exact_in_index(parse_query("abc NOT xyz"))
    assert not exact_in_index(parse_query("abc*"))


def test_query_parsing() -> None:
    assert parse_query("build*") == Term("build", word_start=True)
    assert parse_query('"npm run"*') == Term("npm run", word_start=True, phrase=True)
    with pytest.raises(SearchQueryError, match="unclosed quote at character 5"):
        parse_query('abc "def')
    with pytest.raises(SearchQueryError, match="unclosed parenthesis"):
        parse_query("(abc")
    with pytest.raises(SearchQueryError, match="NOT needs a term on its left"):
        parse_query("NOT abc")
    assert parse_query("and or not") == parse_query("and AND or AND not")  # lower case: plain words


def test_snippets_carry_every_match_offset() -> None:
    body = "line one\n\n" + "x " * 80 + "here is Order.ts and order.ts again " + "y " * 200
    text, spans = snippet_of(body, highlight_pattern(parse_query("order.ts")))
    assert text.startswith("…") and text.endswith("…") and "\n" not in text
    assert [text[a:b] for a, b in spans] == ["Order.ts", "order.ts"]
    text, spans = snippet_of("no match here", highlight_pattern(parse_query("zzz")))
    assert (text, spans) == ("no match here", ())
    word = highlight_pattern(parse_query("bui*"))
    assert word is not None and [m.start() for m in word.finditer("rebuild build Builder")] == [8, 14]
