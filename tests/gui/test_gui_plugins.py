"""The window's seams (issue 22 items 1-2): features plug in through ``WindowContext`` and the registry,
tabs are found by key, and the session actions ask the user only through ``ActionPrompts``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel
from test_gui_actions import make_root, open_on, record_done, wait_done

from app.actions.backups import BackupInfo
from app.actions.fork import ForkPlan
from app.actions.repair import RepairPreview
from app.actions.resume import ResumePlan
from app.gui.controllers.prompts import RepairAnswer, RestoreAnswer, ResumeAnswer, ResumeQuestion
from app.gui.dialogs import ConfirmDialog
from app.gui.window import features as features_module
from app.gui.window.context import WindowContext
from app.gui.window.insight_wiring import STATS

pytestmark = pytest.mark.timeout(120)


class NotesFeature:
    """A feature as a contributor would add one: a tab and a View entry with a shortcut, nothing else."""

    def __init__(self, ctx: WindowContext) -> None:
        self.ctx = ctx
        self.page = QLabel("notes", ctx.qwindow)
        ctx.content_tabs.add("notes", self.page, "Notes")
        self.action = ctx.menus.add_shortcut(QAction("&Notes", ctx.qwindow, shortcut=QKeySequence("Ctrl+9")))
        self.action.triggered.connect(lambda _c=False: ctx.show_tab("notes"))
        view = ctx.menus.menu("View")
        assert view is not None
        view.addAction(self.action)
        self.closed = False

    async def close(self) -> None:
        self.closed = True


def test_a_registered_feature_adds_its_tab_and_action(make_window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(features_module, "FEATURES", (*features_module.FEATURES, ("notes", NotesFeature)))
    w = make_window()
    notes = w.features.get("notes", NotesFeature)
    # Every registered feature, in the registry's order, then the plugged-in one.
    assert w.features.names() == (*(name for name, _make in features_module.FEATURES[:-1]), "notes")
    assert {"search", "insight", "compare", "keyboard", "theme"} <= set(w.features.names())
    assert w.content_tabs.keys() == ("header", "timeline", "raw", "stats", "conversation", "notes")
    assert notes.action in w.actions() and notes.action in notes.ctx.menus.menu("View").actions()
    notes.action.trigger()
    assert w.tabs.currentWidget() is notes.page and w.content_tabs.current() == "notes"
    # The palette is built from the window's actions: the new entry is in it without touching it.
    palette = w.keyboard.open_palette()
    assert any(e.name == "Notes" and e.menu == "View" for e in palette.model.entries)
    palette.close()


def test_a_tab_added_before_stats_moves_it_and_nothing_breaks(make_window: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = list(features_module.FEATURES)
    registry.insert(1, ("notes", NotesFeature))  # before the statistics feature adds its Stats tab
    monkeypatch.setattr(features_module, "FEATURES", tuple(registry))
    w = make_window()
    assert w.content_tabs.keys() == ("header", "timeline", "raw", "notes", "stats", "conversation")
    assert w.insight.tab_index == 4 == w.content_tabs.index(STATS)
    w.insight.stats_action.trigger()  # Ctrl+4: the Stats tab, wherever it is
    assert w.tabs.currentWidget() is w.insight.pane


def test_features_are_closed_with_the_window(make_window: Any, arun: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(features_module, "FEATURES", (*features_module.FEATURES, ("notes", NotesFeature)))
    w = make_window()
    arun(w.shutdown())
    assert w.features.get("notes", NotesFeature).closed


class FakePrompts:
    """Answers every question at once, as a test double for the window's dialogs."""

    def __init__(self, *, fork_title: str | None = None, save_to: str | None = None) -> None:
        self.fork_title = fork_title
        self.save_to = save_to
        self.asked: list[str] = []
        self.reports: list[tuple[str, str]] = []
        self.dialog = self.error_box = self.file_dialog = None

    async def ask_repair(self, preview: RepairPreview, objection: str | None) -> RepairAnswer:
        self.asked.append("repair")
        return RepairAnswer(False)

    async def ask_restore(
        self, session_id: str, backups: list[BackupInfo], objection: str | None, *, preferred: str | None
    ) -> RestoreAnswer:
        self.asked.append("restore")
        return RestoreAnswer(None)

    async def ask_fork_title(self, plan: ForkPlan, *, last_turn: bool) -> str | None:
        self.asked.append(f"fork last_turn={last_turn}")
        return self.fork_title

    async def ask_resume(self, plan: ResumePlan, on_recheck: Callable[[ResumeQuestion], object]) -> ResumeAnswer:
        self.asked.append("resume")
        return ResumeAnswer(None, None, False, False, plan.template, plan)

    async def confirm(self, title: str, text: str, accept_text: str) -> bool:
        self.asked.append(f"confirm {title}")
        return False

    def ask_save_path(self, title: str, suggested: str, then: Callable[[str], object]) -> None:
        self.asked.append(f"save {Path(suggested).name}")
        if self.save_to is not None:
            then(self.save_to)

    def report(self, title: str, text: str) -> None:
        self.reports.append((title, text))


def test_session_actions_ask_only_through_their_prompts(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, _folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    fake = FakePrompts(fork_title="Forked by a fake", save_to=str(tmp_path / "copy.jsonl.zstd"))
    w.session_ops.prompts = fake
    seen = record_done(w)

    w.menus.fork_last.trigger()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("fork", "done") and "Forked by a fake" in message
    assert fake.asked == ["fork last_turn=True"] and w.prompts.dialog is None

    qtbot.waitUntil(lambda: w.current_row() is not None, timeout=WAIT_MS)
    w.menus.copy_raw.trigger()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("copy", "done") and (tmp_path / "copy.jsonl.zstd").stat().st_size > 0
    assert fake.asked[-1].startswith("save ") and w.prompts.file_dialog is None

    w.menus.resume.trigger()  # the question is asked, the fake declines: nothing is launched or copied
    assert wait_done(qtbot, seen, w)[:2] == ("resume", "cancelled")
    assert fake.asked[-1] == "resume" and w.prompts.dialog is None and not fake.reports


@pytest.mark.parametrize("accept", [True, False])
def test_window_prompts_confirm_is_a_window_modal_question(qtbot: Any, make_window: Any, arun: Any, accept: bool) -> None:
    w = make_window()
    task = w.jobs.spawn(w.prompts.confirm("Overwrite?", "The file exists.", "Overwrite"), name="confirm", key="confirm")
    qtbot.waitUntil(lambda: isinstance(w.prompts.dialog, ConfirmDialog) and w.prompts.dialog.isVisible(), timeout=WAIT_MS)
    dlg = w.prompts.dialog
    assert dlg.windowTitle() == "Overwrite?" and dlg.accept_button.text() == "Overwrite" and dlg.isModal()
    dlg.accept_button.click() if accept else dlg.reject()
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    assert task.result() is accept and w.prompts.dialog is None
