"""Any two sessions compared: turns aligned by prompt, the first divergence, tools and tokens (issue 23)."""

from __future__ import annotations

import json

import comparekit as ck

from app.compare import (
    CHANGED,
    ONLY_A,
    ONLY_B,
    REPLACED,
    SAME,
    compare_sessions,
    comparison_json,
    comparison_text,
)

A = ck.log(
    ("set up the project", "done", ("bash",), 100),
    ("add a login page", "added login.tsx", ("write_file", "bash"), 200),
    ("run the tests", "3 passed", ("bash",), 300),
)
B = ck.log(
    ("set up the project", "done", ("bash",), 100),
    ("add a login page", "added login.tsx and a test", ("write_file", "write_file", "bash"), 250),
    ("also add a logout button", "added", ("write_file",), 50),
    ("run the tests", "3 passed", ("bash", "bash"), 300),
)


def test_turns_align_by_prompt_and_the_first_difference_is_named() -> None:
    c = compare_sessions(A, B, a_id="a", b_id="b")
    statuses = [r.status for r in c.rows]
    assert statuses == [SAME, CHANGED, ONLY_B, CHANGED]
    assert c.first_difference == 1
    assert [r.a.prompt if r.a else None for r in c.rows] == ["set up the project", "add a login page", None, "run the tests"]
    assert [r.b.prompt if r.b else None for r in c.rows] == [
        "set up the project",
        "add a login page",
        "also add a logout button",
        "run the tests",
    ]
    login = c.rows[1]
    assert login.same_prompt and not login.same_answer
    assert [(t.name, t.a, t.b) for t in login.tools] == [("write_file", 1, 2)]
    tests = c.rows[3]
    assert tests.same_answer and [(t.name, t.a, t.b) for t in tests.tools] == [("bash", 1, 2)]
    assert c.counts() == {SAME: 1, CHANGED: 2, REPLACED: 0, ONLY_A: 0, ONLY_B: 1}


def test_token_totals_side_by_side() -> None:
    c = compare_sessions(A, B)
    assert c.a.tokens.input == 600 and c.b.tokens.input == 700
    assert (c.a.turns, c.b.turns) == (3, 4)
    assert (c.a.tool_calls, c.b.tool_calls) == (4, 7)
    assert c.rows[1].a is not None and c.rows[1].b is not None
    assert (c.rows[1].a.tokens.input, c.rows[1].b.tokens.input) == (200, 250)


def test_a_session_beside_itself_is_identical() -> None:
    c = compare_sessions(A, list(A))
    assert c.identical and c.first_difference is None and c.shared_events == len(A)
    assert all(r.status == SAME for r in c.rows)
    assert "identical" in comparison_text(c)


def test_different_prompts_at_one_place_pair_up_and_leftovers_stand_alone() -> None:
    x = ck.log(("one", "a", (), 1), ("two", "b", (), 1), ("three", "c", (), 1))
    y = ck.log(("one", "a", (), 1), ("deux", "b", (), 1), ("three", "c", (), 1), ("four", "d", (), 1))
    c = compare_sessions(x, y)
    assert [r.status for r in c.rows] == [SAME, REPLACED, SAME, ONLY_B]
    assert c.first_difference == 1
    assert c.shared_events > 0  # the first turn is byte-identical in both logs
    y2 = ck.log(("one", "a", (), 1))
    assert [r.status for r in compare_sessions(x, y2).rows] == [SAME, ONLY_A, ONLY_A]


def test_prompts_match_whatever_their_case_and_spacing() -> None:
    x = ck.log(("Run  the tests", "ok", (), 1))
    y = ck.log(("run the TESTS", "ok", (), 1))
    assert [r.status for r in compare_sessions(x, y).rows] == [SAME]


def test_json_and_text_say_the_same() -> None:
    c = compare_sessions(A, B, a_id="a", b_id="b", a_label="root#a", b_label="root#b")
    value = json.loads(json.dumps(comparison_json(c)))
    assert value["firstDifference"] == 1
    assert [r["status"] for r in value["rows"]] == [SAME, CHANGED, ONLY_B, CHANGED]
    assert value["a"]["tokens"]["input"] == 600 and value["b"]["tokens"]["input"] == 700
    assert value["rows"][1]["toolsDiffer"] == [{"tool": "write_file", "a": 1, "b": 2}]
    assert value["rows"][2]["a"] is None and value["rows"][2]["b"]["prompt"] == "also add a logout button"
    text = comparison_text(c)
    assert "A: root#a" in text and "B: root#b" in text
    assert "First difference: row 2" in text
    assert "tool write_file: 1 call(s) in A, 2 in B" in text
    assert "also add a logout button" in text
