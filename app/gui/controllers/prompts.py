"""What a controller asks the user, as questions and typed answers; the window shows them.

Why: a controller decides *when* to ask and what to do with the answer, but the widgets that ask
(dialogs, file choosers, message boxes) belong to the window's side of the layers.  So a controller
holds an ``ActionPrompts`` (implemented by ``app.gui.window.prompts.WindowPrompts``, which opens the
dialogs) and awaits plain answers; a test can hand it a fake that answers at once.  Adding a question
is one method here, one in ``WindowPrompts`` and the dialog it opens.

May import: the standard library and ``app.actions`` (plan values only); no Qt, no dialog, no view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from app.actions.backups import BackupInfo
from app.actions.fork import ForkPlan
from app.actions.repair import RepairPreview
from app.actions.resume import ResumeCommand, ResumePlan

TERMINAL, COPY = "terminal", "copy"  # the resume dialog's two ways to go on


@dataclass(frozen=True, slots=True)
class RepairAnswer:
    accepted: bool  # the user confirmed the repair
    copy_requested: bool = False  # "Copy the raw artifact instead": nothing is repaired
    force: bool = False  # past the liveness guard's objection
    accept_loss: bool = False  # records after the damage are dropped


@dataclass(frozen=True, slots=True)
class RestoreAnswer:
    chosen: BackupInfo | None  # None: cancelled
    force: bool = False


@dataclass(frozen=True, slots=True)
class ResumeAnswer:
    choice: str | None  # TERMINAL, COPY, or None (cancelled)
    command: ResumeCommand | None
    force: bool
    repair_confirmed: bool
    template: str
    plan: ResumePlan  # with the guard's latest verdict and the template as edited


class ResumeQuestion(Protocol):
    """The open resume question: its plan, which a fresh liveness verdict replaces."""

    @property
    def plan(self) -> ResumePlan: ...

    def set_plan(self, plan: ResumePlan) -> None: ...


class ActionPrompts(Protocol):
    """The questions the session actions ask; each ``ask_*`` is window-modal and never a nested loop."""

    async def ask_repair(self, preview: RepairPreview, objection: str | None) -> RepairAnswer: ...

    async def ask_restore(
        self, session_id: str, backups: list[BackupInfo], objection: str | None, *, preferred: str | None
    ) -> RestoreAnswer: ...

    async def ask_fork_title(self, plan: ForkPlan, *, last_turn: bool) -> str | None:
        """The new session's title, or None when cancelled."""
        ...

    async def ask_resume(self, plan: ResumePlan, on_recheck: Callable[[ResumeQuestion], object]) -> ResumeAnswer:
        """``on_recheck(question)`` is called whenever the question wants the guard judged again."""
        ...

    async def confirm(self, title: str, text: str, accept_text: str) -> bool:
        """A yes/no question (an overwrite, a reset): True when the user accepted."""
        ...

    def ask_save_path(self, title: str, suggested: str, then: Callable[[str], object]) -> None:
        """Choose a file to write (non-blocking): ``then(path)`` runs once one is chosen."""
        ...

    async def ask_folder(self, title: str, start: str) -> str | None:
        """A folder to write into (a received source's copy goes there), or None when cancelled."""
        ...

    def report(self, title: str, text: str) -> None:
        """Tell the user something went wrong (non-blocking)."""
        ...

    # What is on screen now (tests drive it): the open question, the last report, the file chooser.
    @property
    def dialog(self) -> Any: ...

    @property
    def error_box(self) -> Any: ...

    @property
    def file_dialog(self) -> Any: ...


__all__ = ["COPY", "TERMINAL", "ActionPrompts", "RepairAnswer", "RestoreAnswer", "ResumeAnswer", "ResumeQuestion"]
