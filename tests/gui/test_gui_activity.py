"""View > Activity: every action's result with its time (issue 16), and File > Reset the demo root.

The actions are driven through the window as a user would (menus, dialogs); the Activity panel's
model is checked with Qt's own model tester while it is bounded and rows drop off the end.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel

from app.activity import ActivityLog
from app.demo import DEMO_DIR_NAME, build_demo_root
from app.gui.dialogs import ConfirmDialog, ResumeDialog
from app.gui.models.activity_model import COL_ACTION, COL_OUTCOME, COL_SESSION, OUTCOME_COLORS, ActivityModel
from app.gui.window import keyboard_wiring
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(120)

CWD = "/proj/app"
HOUR = 3600.0


async def _write_root(target: Path) -> None:
    store = JsonlSessionPersistence(target, compression="zstd")
    try:
        await store.create({"id": "calm", "createdAt": 1767600000000, "cwd": CWD})
        seq = 0
        for t in (1, 2):
            evs = make_turn(seq, t, f"prompt {t}")
            await store.append("calm", evs)
            seq += len(evs)
    finally:
        await store.close()


def make_root(arun: Any, tmp: Path) -> Path:
    target = tmp / "root"
    arun(_write_root(target))
    stamp = time.time() - HOUR  # an hour old: the liveness guard stays quiet
    for dirpath, _dirs, names in os.walk(target):
        for name in names:
            os.utime(os.path.join(dirpath, name), (stamp, stamp))
    return target


def open_calm(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> Any:
    w = make_window(make_root(arun, tmp_path), session="calm")
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id("calm").key)
    return w


def newest(w: Any) -> Any:
    entries = w.keyboard.activity.newest(1)
    return entries[0] if entries else None


def wait_entry(qtbot: Any, w: Any, action: str) -> Any:
    qtbot.waitUntil(lambda: newest(w) is not None and newest(w).action == action, timeout=WAIT_MS)
    return newest(w)


def wait_action_dialog(qtbot: Any, w: Any, kind: type) -> Any:
    qtbot.waitUntil(lambda: isinstance(w.session_ops.dialog, kind) and w.session_ops.dialog.isVisible(), timeout=WAIT_MS)
    return w.session_ops.dialog


# ---------------------------------------------------------------- the model


def test_activity_model_is_newest_first_bounded_and_passes_the_model_tester(qtbot: Any, qtmodeltester: Any) -> None:
    log = ActivityLog(3)
    model = ActivityModel(log)
    qtmodeltester.check(model, force_py=True)  # the Python tester asserts; it stays attached for every change below
    inserted: list[tuple[int, int]] = []
    removed: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    model.rowsRemoved.connect(lambda _p, a, b: removed.append((a, b)))
    for i in range(5):
        log.record("fork" if i % 2 else "repair", "done" if i != 3 else "failed", f"#{i}", session=f"s{i}")
    assert model.rowCount() == 3
    assert [model.index(r, COL_SESSION).data() for r in range(3)] == ["s4", "s3", "s2"]
    assert inserted == [(0, 0)] * 5 and removed == [(2, 2), (2, 2)]  # the oldest goes off the end, one row at a time
    assert model.index(1, COL_OUTCOME).data() == "failed"
    fg = model.index(1, COL_OUTCOME).data(Qt.ItemDataRole.ForegroundRole)
    assert fg.color().name() == OUTCOME_COLORS["failed"]
    assert "#3" in model.index(1, COL_ACTION).data(Qt.ItemDataRole.ToolTipRole)
    log.clear()
    assert model.rowCount() == 0


# ---------------------------------------------------------------- the window records every action


def test_fork_copy_link_copy_command_and_export_are_recorded_with_their_session(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    w = open_calm(qtbot, make_window, arun, tmp_path)
    panel = w.keyboard.activity_panel
    assert not panel.isVisible()
    w.activateWindow()
    qtbot.keyClick(w, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(panel.isVisible, timeout=WAIT_MS)
    assert w.keyboard.activity_action.isChecked()

    # Fork after the last completed turn: recorded on the parent, with the message the user saw.
    w.menus.fork_last.trigger()
    wait_action_dialog(qtbot, w, ConfirmDialog).accept_button.click()
    fork = wait_entry(qtbot, w, "fork")
    assert (fork.outcome, fork.session) == ("done", "calm") and fork.detail.startswith("Forked calm after turn 2 into ")
    assert abs(fork.time - time.time()) < 60
    assert panel.model.index(0, COL_ACTION).data() == "fork"
    child = w.current_row()
    assert child is not None and child.parent_id == "calm"
    wait_opened(qtbot, w, child.key)

    # Copy link (only the status bar reported it before): recorded once, on the open session.
    w.menus.copy_link.trigger()
    link = wait_entry(qtbot, w, "copy link")
    assert (link.outcome, link.session) == ("done", child.session_id)
    assert "sessionscope://open?" in link.detail
    assert QGuiApplication.clipboard().text().startswith("sessionscope://open?")

    # Resume's "Copy command" is a copy, not a launch: named so, and recorded once, not twice.
    assert w.select_session("calm")
    wait_opened(qtbot, w, w.session_model.find_id("calm").key)
    before = len(w.keyboard.activity)
    w.menus.resume.trigger()
    wait_action_dialog(qtbot, w, ResumeDialog).copy_button.click()
    cmd = wait_entry(qtbot, w, "copy command")
    assert (cmd.outcome, cmd.session) == ("done", "calm") and "--resume calm" in cmd.detail
    qtbot.wait(50)  # the status bar's copy of the message is looked at on the next loop turn
    assert len(w.keyboard.activity) == before + 1

    # A cancelled action is a result too.
    w.menus.resume.trigger()
    wait_action_dialog(qtbot, w, ResumeDialog).reject()
    cancelled = wait_entry(qtbot, w, "resume")
    assert (cancelled.outcome, cancelled.session) == ("cancelled", "calm")

    # Export (File > Export's job): recorded with its session and the file written.
    out = tmp_path / "calm.md"
    w.insight.exporter.export(str(w.controller.root), "calm", "md", str(out))
    export = wait_entry(qtbot, w, "export")
    assert (export.outcome, export.session) == ("done", "calm") and str(out) in export.detail
    assert out.exists()
    assert panel.model.rowCount() == len(w.keyboard.activity) == before + 3
    assert [panel.model.index(r, COL_ACTION).data() for r in range(4)] == ["export", "resume", "copy command", "copy link"]


def test_a_failed_job_is_recorded_on_its_session(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w = open_calm(qtbot, make_window, arun, tmp_path)

    async def boom() -> None:
        raise RuntimeError("disk on fire")

    w.jobs.spawn(boom(), name="open calm")
    entry = wait_entry(qtbot, w, "open")
    assert (entry.outcome, entry.session) == ("failed", "calm") and "disk on fire" in entry.detail


# ---------------------------------------------------------------- reset the demo root


def test_reset_demo_root_asks_rebuilds_reopens_and_is_recorded(
    qtbot: Any, make_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = tmp_path / "data" / DEMO_DIR_NAME
    with ThreadPoolExecutor(1) as pool:  # the builder runs its own event loop: not on the test's thread
        pool.submit(build_demo_root, str(demo)).result(timeout=120)
    monkeypatch.setattr(keyboard_wiring, "demo_root_path", lambda: str(demo))
    w = make_window(demo)
    wait_listed(qtbot, w, details=False)
    count = w.session_model.total
    # A change made in the demo (a stray session folder, as a fork would add).
    project = next(p for p in demo.iterdir() if p.is_dir())
    stray = project / "0190ffff-0000-7000-8000-000000000000"
    stray.mkdir()
    (stray / "session.jsonl").write_text('{"type":"session","version":0,"id":"0190ffff-0000-7000-8000-000000000000"}\n')

    # Cancelled first: nothing changes, and that is recorded.
    w.keyboard.reset_demo_action.trigger()
    qtbot.waitUntil(lambda: w.keyboard.reset_dialog is not None and w.keyboard.reset_dialog.isVisible(), timeout=WAIT_MS)
    assert any(str(demo) in label.text() for label in w.keyboard.reset_dialog.findChildren(QLabel))
    w.keyboard.reset_dialog.reject()
    assert wait_entry(qtbot, w, "reset demo root").outcome == "cancelled"
    assert stray.exists()

    w.keyboard.reset_demo_action.trigger()
    qtbot.waitUntil(lambda: w.keyboard.reset_dialog is not None and w.keyboard.reset_dialog.isVisible(), timeout=WAIT_MS)
    w.keyboard.reset_dialog.accept_button.click()
    qtbot.waitUntil(lambda: newest(w).outcome == "done", timeout=WAIT_MS)
    assert newest(w).action == "reset demo root" and str(demo) in newest(w).detail
    assert not stray.exists()
    wait_listed(qtbot, w, details=False)
    assert w.controller.root == str(demo) and w.session_model.total == count
    assert w.session_model.find_id("0190ffff-0000-7000-8000-000000000000") is None
