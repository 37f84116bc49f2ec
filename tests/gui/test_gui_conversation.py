"""The Conversation tab (issue 24 item 1) and walking errors (item 2): tail-first, selection in step with
the Timeline and Raw tabs, next / previous error in every view, errors only, folding and code copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guikit import make_turn, wait_listed, wait_opened
from PySide6.QtCore import QModelIndex
from PySide6.QtGui import QGuiApplication

from app.conversation.blocks import TOOL, TURN
from app.gui.models.conversation import BLOCK_ROLE, ConversationModel
from app.gui.models.timeline import TimelineModel
from app.gui.views.conversation_html import block_html
from app.gui.views.conversation_pane import ConversationPane
from app.gui.window.conversation_wiring import CONVERSATION, ConversationFeature
from app.gui.window.tabs import RAW, TIMELINE
from app.timeline import derive_tail
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(120)

TURNS = 300
ERROR_TURNS = (3, 150, 296, 299)  # two in older blocks the tail-first view has not loaded
FAILURE = "F [100%]\n=== FAILURES ===\nE   AssertionError: assert None == []\n1 failed in 0.05s\n"


def _records() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(1, TURNS + 1):
        turn = make_turn(len(out), t, f"prompt {t}")
        for ev in turn:
            if ev["type"] == "tool/result":
                block = ev["data"]["message"]["content"][0]
                block["isError"] = t in ERROR_TURNS
                if t in ERROR_TURNS:
                    block["content"][0]["text"] = FAILURE
                    ev["data"]["error"] = {"name": "ToolExecutionError", "code": "EXIT_NONZERO"}
        out += turn
    return out


def _error_seqs(records: list[dict[str, Any]]) -> list[int]:
    """The tool/call seq of each failed call: where an error walk lands."""
    failed = {
        ev["data"]["message"]["source"]["callId"] for ev in records if ev["type"] == "tool/result" and "error" in ev["data"]
    }
    return [ev["seq"] for ev in records if ev["type"] == "tool/call" and ev["data"]["callId"] in failed]


async def _write(root: Path, records: list[dict[str, Any]]) -> None:
    store = JsonlSessionPersistence(root)
    try:
        await store.create({"id": "long", "createdAt": 1767600000000, "cwd": "/proj/p"})
        await store.append("long", records)
    finally:
        await store.close()


def _open(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> tuple[Any, ConversationFeature, list[dict[str, Any]]]:
    root = tmp_path / "root"
    records = _records()
    arun(_write(root, records))
    w = make_window(root, session="long")
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id("long").key)
    conv = w.features.get("conversation", ConversationFeature)
    return w, conv, records


def _selected_in_every_view(w: Any, conv: ConversationFeature) -> tuple[int | None, int | None, tuple[int, int] | None]:
    node = w.timeline_pane.current_node()
    line = w.raw_pane.current_line()
    return (
        conv.pane.current_seq(),
        node.first_seq if node is not None else None,
        w.raw_model.text.seqs_of_line(line) if line >= 0 else None,
    )


def test_conversation_tab_opens_at_the_tail(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w, conv, _ = _open(qtbot, make_window, arun, tmp_path)
    tabs = w.content_tabs
    assert tabs.keys()[:3] == ("header", "timeline", "raw")  # the base tabs keep their places
    conv.tab_action.trigger()  # Ctrl+5
    assert tabs.current() == CONVERSATION
    model = conv.model
    assert model.is_older(0)  # "N older turns": the tail-first view
    assert model.block(0).title == f"▲ {w.timeline_model.older_turns()} older turns"
    turns = [b.title for b in model.blocks if b.kind == TURN]
    assert turns[-1] == f"Turn {TURNS}" and len(turns) < TURNS
    # "Load more" loads older turns in both tabs.
    before = len(turns)
    conv.pane.older_requested.emit(False)
    assert len([b for b in model.blocks if b.kind == TURN]) > before
    assert w.timeline_model.first_loaded_span < w.timeline_model.rowCount() + TURNS


def test_selection_stays_in_step_with_timeline_and_raw(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w, conv, records = _open(qtbot, make_window, arun, tmp_path)
    model = conv.model
    # Conversation -> timeline and raw: the prompt of the last turn.
    prompt = max(i for i in range(model.rowCount()) if model.block(i).kind == "prompt")
    conv.pane.list.setCurrentIndex(model.index(prompt))
    seq = model.block(prompt).seq
    assert records[seq]["type"] == "user/message"
    ours, timeline, raw = _selected_in_every_view(w, conv)
    assert ours == timeline == seq
    assert raw is not None and raw[0] <= seq <= raw[1]
    # Timeline -> conversation: a tool row.
    tool_seq = _error_seqs(records)[-1]
    w.timeline_pane.select_index(w.timeline_model.index_for_seq(tool_seq))
    assert conv.pane.current_block().kind == TOOL and tool_seq in conv.pane.current_block().seqs
    # Raw -> timeline -> conversation: the turn/start line of the last turn.
    start = max(ev["seq"] for ev in records if ev["type"] == "turn/start")
    w.raw_pane.select_line(w.raw_model.text.line_for_seq(start))
    assert conv.pane.current_seq() == start
    assert conv.pane.current_block().kind == TURN


@pytest.mark.parametrize("tab", [TIMELINE, CONVERSATION, RAW])
def test_next_and_previous_error_walk_every_error_in_order(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, tab: str
) -> None:
    w, conv, records = _open(qtbot, make_window, arun, tmp_path)
    expected = _error_seqs(records)
    assert len(expected) == len(ERROR_TURNS)
    w.show_tab(tab)
    landed = []
    while conv.previous_error():  # from the newest turn up: older turns load on the way
        assert w.content_tabs.current() == tab  # the user stays in the view they read
        ours, timeline, raw = _selected_in_every_view(w, conv)
        assert ours == timeline == conv.last_error_seq
        assert raw is not None and raw[0] <= conv.last_error_seq <= raw[1]
        landed.append(conv.last_error_seq)
    assert landed == expected[::-1]
    assert "No earlier error" in w.statusBar().currentMessage()  # it stops at the first: no wrap
    landed = []
    while conv.next_error():
        ours, timeline, raw = _selected_in_every_view(w, conv)
        assert ours == timeline == conv.last_error_seq
        landed.append(conv.last_error_seq)
    assert landed == expected[1:]
    assert "No later error" in w.statusBar().currentMessage()
    # The error's text is in the timeline's Info cell and on the conversation block.
    node = w.timeline_pane.current_node()
    assert node is not None and "AssertionError: assert None == []" in node.info
    assert conv.pane.current_block().error == "AssertionError: assert None == [] (EXIT_NONZERO)"


def test_errors_only_in_timeline_and_conversation(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w, conv, _ = _open(qtbot, make_window, arun, tmp_path)
    conv.errors_only_action.setChecked(True)
    assert conv.pane.errors_only.isChecked()
    model = conv.model
    shown = [model.block(i) for i in range(model.rowCount()) if not model.is_older(i)]
    assert [b.kind for b in shown] == [TURN, TOOL, TURN, TOOL]  # turns 296 and 299, loaded in the tail
    assert [b.title for b in shown if b.kind == TURN] == ["Turn 296", "Turn 299"]
    tl, tree = w.timeline_model, w.timeline_pane.tree
    visible = [tl.node(tl.index(r, 0)).label for r in range(tl.rowCount()) if not tree.isRowHidden(r, QModelIndex())]
    assert visible[1:] == ["Turn 296", "Turn 299"]  # after the "older turns" row
    conv.errors_only_action.setChecked(False)
    assert not any(tree.isRowHidden(r, QModelIndex()) for r in range(tl.rowCount()))
    assert model.rowCount() > 10


def _pane(qtbot: Any, records: list[dict[str, Any]]) -> tuple[ConversationPane, ConversationModel]:
    tl = TimelineModel()
    spans, first, nodes = derive_tail(records, len(records))
    model = ConversationModel(tl)
    tl.load(records, len(records), spans, nodes, first)
    pane = ConversationPane(model)
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    pane.show()
    return pane, model


def test_long_results_fold_and_unfold(qtbot: Any) -> None:
    records = make_turn(0, 1, "list it")
    result = next(ev for ev in records if ev["type"] == "tool/result")
    result["data"]["message"]["content"][0]["content"][0]["text"] = "\n".join(f"file {i}" for i in range(1, 41))
    pane, model = _pane(qtbot, records)
    row = next(i for i in range(model.rowCount()) if model.block(i).kind == TOOL)
    block = model.block(row)
    folded, _md = block_html(block, expanded=False)
    assert "file 12" in folded and "file 13" not in folded and "show all 40 lines" in folded
    idx = model.index(row)
    assert pane.delegate.follow(idx, "toggle:")
    assert block.key in model.expanded
    doc = pane.delegate.document(model.data(idx, BLOCK_ROLE), 600)
    assert "file 40" in doc.toPlainText()
    assert pane.delegate.follow(idx, "toggle:")  # and folds again
    assert "file 40" not in pane.delegate.document(block, 600).toPlainText()


def test_markdown_code_block_copy(qtbot: Any) -> None:
    records = make_turn(0, 1, "show me")
    msg = next(ev for ev in records if ev["type"] == "assistant/message")
    msg["data"]["message"]["content"][0]["text"] = (
        "Run this:\n\n```sh\nmake test\nmake lint\n```\n\nand **then**:\n\n```\nls\n```\n"
    )
    pane, model = _pane(qtbot, records)
    row = next(i for i in range(model.rowCount()) if model.block(i).kind == "answer")
    idx = model.index(row)
    doc = pane.delegate.document(model.block(row), 600)
    text = doc.toPlainText()
    assert "make test" in text and text.count("Copy") == 2 and "**" not in text  # rendered as Markdown
    messages: list[str] = []
    pane.status.connect(messages.append)
    QGuiApplication.clipboard().clear()
    assert pane.delegate.follow(idx, "copy:0")
    assert QGuiApplication.clipboard().text() == "make test\nmake lint"
    assert pane.delegate.follow(idx, "copy:1")
    assert QGuiApplication.clipboard().text() == "ls"
    assert messages == ["Copied a code block (2 lines)", "Copied a code block (1 line)"]


def test_scrolling_to_the_top_loads_older_turns_and_keeps_the_blocks_in_view(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    w, conv, _ = _open(qtbot, make_window, arun, tmp_path)
    w.show_tab(CONVERSATION)
    pane, model = conv.pane, conv.model
    turns_before = sum(1 for b in model.blocks if b.kind == TURN)
    first = model.block(1)  # the first block under the "older turns" row
    assert first is not None and first.kind == TURN
    pane.list.forget_place()  # the user scrolls: nothing is kept in view for them any more
    pane.list.verticalScrollBar().setValue(0)
    qtbot.waitUntil(lambda: sum(1 for b in model.blocks if b.kind == TURN) > turns_before, timeout=10_000)
    # What the user was reading stays where it was: the same block near the top, the new turns above it.
    row = next(i for i in range(model.rowCount()) if model.block(i) == first)
    assert row > 1
    top = pane.list.visualRect(model.index(row)).top()
    assert 0 <= top <= pane.list.viewport().height() // 4
    assert pane.list.verticalScrollBar().value() > 0


def test_a_search_hit_in_an_older_turn_is_selected_in_the_conversation(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    w, conv, records = _open(qtbot, make_window, arun, tmp_path)
    w.show_tab(CONVERSATION)
    target = next(ev["seq"] for ev in records if ev["type"] == "user/message" and ev["data"]["content"][0]["text"] == "prompt 7")
    row = w.session_model.find_id("long")
    assert w.search.navigator.go_to(row.key, "long", target)
    assert w.content_tabs.current() == CONVERSATION  # the reader stays in the view they read
    block = conv.pane.current_block()
    assert block is not None and block.kind == "prompt" and block.body == "prompt 7"
    node = w.timeline_pane.current_node()
    assert node is not None and node.first_seq == target
