"""The repair dialog says what a repair does to the conversation before any byte count (issue 24 item 8).

Before: its box began "Cut 1,177 damaged byte(s) from offset 4,893 of /a/long/path…" (scrolled sideways), and
nothing said which events or turns were lost or closed."""

from __future__ import annotations

from typing import Any

import pytest

from app.actions.artifacts import ArtifactRef
from app.actions.repair import RepairPreview
from app.actions.repair_words import LostEvent
from app.gui.dialogs.repair_dialog import RepairDialog

pytestmark = pytest.mark.timeout(60)

PATH = "/home/ana/.dsh/sessions/--home-ana-projects-webshop--/0b6c4f3e/session.jsonl.zstd"


def _preview() -> RepairPreview:
    closers = (
        {"type": "step/end", "seq": 211, "time": 9, "data": {"turn": 7, "step": 3}},
        {"type": "turn/end", "seq": 212, "time": 9, "data": {"turn": 7, "reason": {"kind": "interrupted"}}},
    )
    lost = (
        LostEvent(211, "tool/result", 7, "FAILED tests/test_cart.py::test_total", True),
        LostEvent(212, "step/end", 7, "", True),
        LostEvent(213, "assistant/chunk", 7, "", False),
    )
    return RepairPreview("s", "torn-tail", "damaged tail", ArtifactRef("jsonl", PATH), 4893, 1177, 0, closers, "rev", lost=lost)


def test_the_dialog_leads_with_the_lost_events_and_the_closed_turn(qtbot: Any) -> None:
    dialog = RepairDialog(_preview(), None)
    qtbot.addWidget(dialog)
    story = dialog.story.text()
    assert (
        "Cuts the last 1,177 bytes: events 211–213 of turn 7 (a tool result, the step's end and a piece of a streamed " in story
    )
    assert "turn 7 is closed as interrupted" in story
    box = dialog.details.toPlainText()
    assert box.startswith("The events lost:\n  seq 211 · a tool result · FAILED tests/test_cart.py::test_total\n"), box
    assert "  seq 213 · a piece of a streamed answer · cut off mid-write" in box
    assert box.index("seq 213") < box.index("In bytes: cut 1,177 bytes from byte 4,893 on.")
    assert PATH not in box  # the path is in the wrapped backup note, not a line to scroll sideways
    assert "(s)" not in box
