"""The window calls a quiet open turn "possibly crashed", never "crashed" by silence alone (issue 21 item 2).

Before: the timeline banner said "interrupted (no change for 10 s: crashed)" and the live one "it
counts as crashed after 10 s without a change", while a long model call is often silent for minutes.
The repair dialog now shows what the guard saw when it found nothing ("idle for 40 s — no harness
process found; possibly crashed"), and clicking Repair is the user's confirmation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.actions.artifacts import ArtifactRef
from app.actions.repair import RepairPreview
from app.gui.dialogs.repair_dialog import RepairDialog
from app.gui.models.session_snapshot import RawFacts, SessionSnapshot
from app.gui.views.session_banner import snapshot_banner

pytestmark = pytest.mark.timeout(60)

IDLE = "idle for 40 s — no harness process found; possibly crashed"


def _snapshot(**kw: Any) -> SessionSnapshot:
    raw = RawFacts(10, "none", "session.jsonl", 100, 0)
    fields: dict[str, Any] = dict(
        key="k", session_id="s", revision="r", status="open-turn", reason="turn 2 is open", event_count=8, closers=2
    )
    fields.update(kw)
    return SessionSnapshot(title=None, error_class=None, raw=raw, **fields)


def test_the_banner_of_a_quiet_open_turn_says_possibly_crashed() -> None:
    text, _status = snapshot_banner(_snapshot(quiet_seconds=10.0))
    assert "open turn: interrupted" in text  # the existing wording's head is kept
    assert "possibly crashed" in text
    assert ": crashed)" not in text and "counts as crashed" not in text
    live, _ = snapshot_banner(_snapshot(live=True, changed_at=1.0, closers_shown=False), now=4.0)
    assert "counts as crashed" not in live and "possibly crashed" in live


def _preview(tmp_path: Path, idle: str | None) -> RepairPreview:
    closers = ({"type": "step/end", "seq": 8}, {"type": "turn/end", "seq": 9})
    ref = ArtifactRef("jsonl", str(tmp_path / "session.jsonl"))
    return RepairPreview("s", "open-turn", "turn 2 is open", ref, None, None, 0, closers, "rev", idle_note=idle)


def _texts(dialog: RepairDialog) -> str:
    from PySide6.QtWidgets import QLabel

    return "\n".join(label.text() for label in dialog.findChildren(QLabel))


def test_the_repair_dialog_shows_the_idle_facts_and_repair_is_the_confirmation(qtbot: Any, tmp_path: Path) -> None:
    dialog = RepairDialog(_preview(tmp_path, IDLE), None)
    qtbot.addWidget(dialog)
    shown = _texts(dialog)
    assert IDLE in shown and "repairing confirms that it crashed" in shown
    assert dialog.repair_button is not None and dialog.repair_button.isEnabled()  # no override box: a click confirms
    assert dialog.override is None
    # A live objection is shown as before (and the idle facts, which only a quiet verdict has, are not).
    objecting = RepairDialog(_preview(tmp_path, None), "looks live: a SessionScope writer holds it")
    qtbot.addWidget(objecting)
    assert IDLE not in _texts(objecting)
    assert objecting.repair_button is not None and not objecting.repair_button.isEnabled()
