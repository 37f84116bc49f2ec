"""The resume dialog's liveness guard is judged again while the dialog is open (issue 16 bug 5).

"changed 0.4 s ago" counts up and the buttons enable once the quiet period has passed, without
reopening the dialog; a fork the window wrote a moment ago is the window's own write, not an agent's;
and "Copy command" writes nothing, so the guard never blocks it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS
from PySide6.QtGui import QGuiApplication
from test_gui_actions import backups, digest, fake_tools, make_root, open_on, record_done, wait_dialog, wait_done

from app.gui.dialogs import ForkDialog, ResumeDialog

pytestmark = pytest.mark.timeout(120)
QUIET_S = 3.0  # the guard's quiet period here: the dialog must see it pass while it is open

__all__ = ["fake_tools"]  # a fixture, imported for pytest


def test_the_guard_is_judged_again_while_the_dialog_is_open(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, fake_tools: Path
) -> None:
    target, _folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    w.settings.q.setValue("actions/quietSeconds", QUIET_S)
    seen = record_done(w)
    os.utime(w.current_row().path)  # an agent wrote it just now
    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    first = dlg.liveness_note.text()
    assert dlg.liveness is not None and "changed" in first and not dlg.terminal_button.isEnabled()
    assert dlg.copy_button.isEnabled()  # copying writes nothing: never blocked
    # The age counts up while the dialog is open ...
    qtbot.waitUntil(lambda: dlg.liveness is None or dlg.liveness_note.text() != first, timeout=WAIT_MS)
    # ... and once the quiet period has passed, the objection goes and the terminal button enables.
    qtbot.waitUntil(lambda: dlg.liveness is None and dlg.terminal_button.isEnabled(), timeout=WAIT_MS)
    assert not dlg.liveness_note.isVisible() and not dlg.override.isVisible()
    dlg.terminal_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("resume", "done"), message  # the fresh verdict is what execute_resume used
    qtbot.waitUntil(lambda: fake_tools.exists() and fake_tools.read_text().strip() != "", timeout=WAIT_MS)


def test_copy_command_is_never_blocked_and_writes_nothing(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, folder = make_root(arun, tmp_path, age=None)  # crashed and just written: needs repair, guard objects
    w = open_on(qtbot, make_window, target, "crashed")
    w.settings.q.setValue("actions/quietSeconds", 600.0)  # the objection stands for the whole test
    before = digest(folder)
    seen = record_done(w)
    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    assert dlg.liveness is not None and dlg.confirm_repair is not None
    assert not dlg.terminal_button.isEnabled()
    assert dlg.copy_button.isEnabled()
    dlg.copy_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("resume", "done"), message
    assert QGuiApplication.clipboard().text() == "dsh --profile tui --resume crashed"
    assert "nothing was written" in message
    assert digest(folder) == before and not backups(folder)


@pytest.mark.parametrize("backend", ["jsonl-zstd", "sqlite"])
def test_a_fork_the_window_just_wrote_is_not_an_agent_at_work(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, backend: str
) -> None:
    target, _folder = make_root(arun, tmp_path, backend)  # an hour old: quiet
    w = open_on(qtbot, make_window, target, "calm")
    w.settings.q.setValue("actions/quietSeconds", 600.0)  # any change by anyone else within 10 min would count
    seen = record_done(w)
    w.menus.fork_last.trigger()
    fork = wait_dialog(qtbot, w, ForkDialog)
    fork.accept()
    assert wait_done(qtbot, seen, w)[:2] == ("fork", "done")
    qtbot.waitUntil(lambda: w.current_row() is not None and w.current_row().parent_id == "calm", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.loaded, timeout=WAIT_MS)
    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    assert dlg.liveness is None, dlg.liveness  # our own write a second ago
    assert dlg.terminal_button.isEnabled() and dlg.copy_button.isEnabled()
    dlg.reject()
    assert wait_done(qtbot, seen, w)[:2] == ("resume", "cancelled")
