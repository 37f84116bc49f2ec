"""The Qt-free conversation (app/conversation): turns told as blocks, errors with their text, closers and damage."""

from __future__ import annotations

from typing import Any

from sessionkit import (
    assistant_message,
    ev,
    step_end,
    step_start,
    tool_call,
    tool_result,
    turn_end,
    turn_start,
    user_message,
)

from app.conversation import (
    Block,
    block_for_seq,
    code_blocks,
    conversation_blocks,
    fold_lines,
    is_error_block,
    markdown_with_copy_links,
)
from app.conversation.blocks import format_duration
from app.records.errors import error_line
from app.timeline import derive
from app.timeline.damaged import Stop, stop_node

PYTEST_FAILURE = (
    "F                                                            [100%]\n=== FAILURES ===\n"
    "    def test_total():\n>       assert total() == []\nE       AssertionError: assert None == []\n"
    "FAILED tests/test_cart.py::test_total - AssertionError\n1 failed in 0.05s\n"
)


def _failing_turn(base: int = 0, turn: int = 1) -> list[dict[str, Any]]:
    s = base
    result = tool_result(s + 5, turn, 1, f"c{turn}", PYTEST_FAILURE, is_error=True, time=s + 5 + 1500)
    result["data"]["error"] = {"name": "ToolExecutionError", "code": "EXIT_NONZERO"}
    result["data"]["meta"] = {"exitCode": 1, "durationMs": 1400}
    msg = assistant_message(s + 3, turn, 1, "Running the tests:\n\n```sh\npytest -q\n```\n", calls=[f"c{turn}"])
    msg["data"]["message"]["content"][1]["arguments"] = '{"command": "pytest -q\\nsecond line"}'
    msg["data"]["usage"] = {"inputTokens": 3100, "outputTokens": 210}
    return [
        turn_start(s, turn),
        user_message(s + 1, f"Fix the cart, step {turn}"),
        step_start(s + 2, turn, 1),
        msg,
        tool_call(s + 4, turn, 1, f"c{turn}"),
        result,
        step_end(s + 6, turn, 1, time=s + 6 + 2400),
        turn_end(s + 7, turn, time=s + 7 + 2400),
    ]


def _blocks(records: list[dict[str, Any]], stored: int | None = None) -> list[Block]:
    return conversation_blocks(derive(records, stored_count=stored), records)


def test_a_turn_reads_as_prompt_step_answer_and_tool() -> None:
    blocks = _blocks(_failing_turn())
    assert [b.kind for b in blocks] == ["turn", "prompt", "step", "answer", "tool"]
    turn, prompt, step, answer, tool = blocks
    assert turn.title == "Turn 1"
    assert prompt.title == "You" and prompt.body == "Fix the cart, step 1"
    # The step's duration (step/start at time 3, step/end at 2,407) and its tokens are on its header.
    assert step.meta.startswith(format_duration(2407 - 3)) and "in 3.1k" in step.meta and "out 210" in step.meta
    assert "```sh\npytest -q\n```" in answer.body
    assert tool.title == "bash"
    assert "command: pytest -q\nsecond line" in tool.body  # arguments readable, strings unquoted
    assert tool.result == PYTEST_FAILURE
    # The error says what failed, not only its code.
    assert tool.error == "AssertionError: assert None == [] (EXIT_NONZERO)"
    assert is_error_block(tool) and not is_error_block(step) and not is_error_block(turn)
    assert "exit 1" in tool.meta


def test_error_line_picks_the_explaining_line() -> None:
    assert error_line(PYTEST_FAILURE) == "AssertionError: assert None == []"
    assert error_line("Traceback (most recent call last):\n  File 'x'\nValueError: bad") == "ValueError: bad"
    assert error_line("cc: warning\nerror: no such file\n") == "error: no such file"
    assert error_line("anything", {"message": "boom\nmore"}) == "boom"
    assert error_line("plain first line\nsecond") == "plain first line"
    assert error_line("") == ""


def test_timeline_info_cell_names_the_error_text() -> None:
    nodes = derive(_failing_turn())
    tool = next(n for n in nodes[0].walk() if n.kind == "tool")
    result = tool.children[0]
    assert "AssertionError: assert None == []" in tool.info
    assert "EXIT_NONZERO" in tool.info
    assert "AssertionError: assert None == []" in result.info


def test_synthetic_and_interrupted_closers_are_marked() -> None:
    # An interrupted turn whose closers only inspect() added (records at index >= stored are synthetic).
    records = [
        turn_start(0, 1),
        user_message(1, "go"),
        step_start(2, 1, 1),
        assistant_message(3, 1, 1, None, calls=["cx"]),
        tool_call(4, 1, 1, "cx"),
    ]
    closers = [
        tool_result(5, 1, 1, "cx", "The tool call was interrupted.", is_error=True),
        step_end(6, 1, 1),
        turn_end(7, 1, kind="interrupted"),
    ]
    closers[0]["data"]["error"] = {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    blocks = _blocks(records + closers, stored=len(records))
    tool = next(b for b in blocks if b.kind == "tool")
    assert "synthetic" in tool.flags and "NOT on disk" in tool.note
    last = blocks[-1]
    assert last.kind == "closer" and last.title == "Synthetic closer" and last.seq == 7
    assert "NOT on disk" in last.note
    # The same closers on disk (written by Repair): the turn reads as closed as interrupted.
    on_disk = _blocks(records + closers)
    assert on_disk[-1].kind == "closer" and on_disk[-1].title == "Turn closed as interrupted"
    assert "synthetic" not in on_disk[-1].flags


def test_a_damaged_log_ends_in_a_damage_block() -> None:
    records = _failing_turn()[:5]  # the readable prefix: the turn never closed
    stop = Stop("frame 3 at byte 2,465 failed validation", 2465, 0, raw_line=6)
    nodes = [*derive(records), stop_node(stop)]
    blocks = conversation_blocks(nodes, records)
    assert blocks[-1].kind == "damage"
    assert "readable part" in blocks[-1].note
    assert blocks[-2].kind == "closer" and blocks[-2].title == "Turn not closed"


def test_an_error_turn_end_is_an_error_closer_with_its_message() -> None:
    records = [
        turn_start(0, 1),
        user_message(1, "go"),
        ev(
            "turn/end", 2, {"turn": 1, "reason": {"kind": "error", "error": {"message": "provider said 529\nretry", "code": "X"}}}
        ),
    ]
    last = _blocks(records)[-1]
    assert last.kind == "closer" and last.error == "provider said 529" and is_error_block(last)


def test_block_for_seq_prefers_the_item_over_its_headers() -> None:
    blocks = _blocks(_failing_turn())
    assert blocks[block_for_seq(blocks, 5)].kind == "tool"  # the result event
    assert blocks[block_for_seq(blocks, 3)].kind == "answer"
    assert blocks[block_for_seq(blocks, 6)].kind == "step"  # the step's end: only the step holds it
    assert block_for_seq(blocks, 7) >= 0  # the turn's end: the turn


def test_long_results_fold_to_their_first_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 101)) + "\n"
    shown, total = fold_lines(text, 12)
    assert total == 100
    assert shown.splitlines() == [f"line {i}" for i in range(1, 13)]
    assert fold_lines("a\nb\n", 12) == ("a\nb", 2)


def test_markdown_code_blocks_get_copy_links() -> None:
    md = "Try:\n\n```python\nprint('a')\nprint('b')\n```\n\nthen\n\n~~~\nls -l\n~~~\n"
    assert code_blocks(md) == ["print('a')\nprint('b')", "ls -l"]
    linked, blocks = markdown_with_copy_links(md)
    assert blocks == code_blocks(md)
    assert linked.count("](copy:") == 2
    assert linked.index("(copy:0)") < linked.index("then") < linked.index("(copy:1)")
