"""The window's side of the controllers' questions: ``ActionPrompts`` answered with dialogs.

Why here: the dialogs, file choosers and message boxes sit above the controllers in the window's
layers (``lint-imports``: controllers never import a dialog or QtWidgets), so the controllers ask
through ``controllers.prompts.ActionPrompts`` and this class opens the widgets.  Every dialog is
opened window-modal with ``open()`` (never a nested ``exec()`` loop) and awaited with ``await_dialog``;
what the user chose is read before the dialog is deleted at the next loop turn.

May import: PySide6, ``app.gui.dialogs`` and ``controllers.prompts`` (the questions and answers).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox, QWidget

from app.actions.backups import BackupInfo
from app.actions.fork import ForkPlan
from app.actions.repair import RepairPreview
from app.actions.resume import ResumePlan
from app.gui.controllers.prompts import COPY, TERMINAL, RepairAnswer, RestoreAnswer, ResumeAnswer, ResumeQuestion
from app.gui.dialogs import ConfirmDialog, ForkDialog, RepairDialog, RestoreDialog, ResumeDialog, await_dialog


class WindowPrompts:
    """``ActionPrompts`` for one window: each question a dialog parented to ``parent``."""

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent
        self.dialog: QDialog | None = None  # the question on screen (tests drive it)
        self.error_box: QMessageBox | None = None
        self.file_dialog: QFileDialog | None = None

    async def _ask(self, dlg: QDialog) -> int:
        self.dialog = dlg
        try:
            return await await_dialog(dlg)
        finally:
            self.dialog = None
            dlg.deleteLater()

    async def ask_repair(self, preview: RepairPreview, objection: str | None) -> RepairAnswer:
        dlg = RepairDialog(preview, objection, self.parent)
        code = await self._ask(dlg)
        return RepairAnswer(code == QDialog.DialogCode.Accepted, dlg.copy_requested, dlg.force, dlg.loss_accepted)

    async def ask_restore(
        self, session_id: str, backups: list[BackupInfo], objection: str | None, *, preferred: str | None
    ) -> RestoreAnswer:
        dlg = RestoreDialog(session_id, backups, objection, self.parent, preferred=preferred)
        code = await self._ask(dlg)
        return RestoreAnswer(dlg.chosen if code == QDialog.DialogCode.Accepted else None, dlg.force)

    async def ask_fork_title(self, plan: ForkPlan, *, last_turn: bool) -> str | None:
        dlg = ForkDialog(plan, last_turn=last_turn, parent=self.parent)
        code = await self._ask(dlg)
        title = dlg.title
        return title if code == QDialog.DialogCode.Accepted and title else None

    async def ask_resume(self, plan: ResumePlan, on_recheck: Callable[[ResumeQuestion], object]) -> ResumeAnswer:
        dlg = ResumeDialog(plan, parent=self.parent)
        dlg.recheck_requested.connect(lambda: on_recheck(dlg))
        code = await self._ask(dlg)
        template = dlg.template.text()
        choice = {ResumeDialog.TERMINAL: TERMINAL, ResumeDialog.COPY: COPY}.get(code)
        return ResumeAnswer(choice, dlg.command, dlg.force, dlg.repair_confirmed, template, dlg.plan.with_template(template))

    async def confirm(self, title: str, text: str, accept_text: str) -> bool:
        dlg = ConfirmDialog(title, text, accept_text, self.parent)
        return await self._ask(dlg) == QDialog.DialogCode.Accepted

    def ask_save_path(self, title: str, suggested: str, then: Callable[[str], object]) -> None:
        dlg = QFileDialog(self.parent, title)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dlg.selectFile(suggested)
        dlg.fileSelected.connect(then)
        self.file_dialog = dlg
        dlg.open()

    async def ask_folder(self, title: str, start: str) -> str | None:
        dlg = QFileDialog(self.parent, title, start)
        dlg.setFileMode(QFileDialog.FileMode.Directory)
        dlg.setOption(QFileDialog.Option.ShowDirsOnly, True)
        self.file_dialog = dlg
        try:
            code = await self._ask(dlg)
            chosen = dlg.selectedFiles()
        finally:
            self.file_dialog = None
        return chosen[0] if code == QDialog.DialogCode.Accepted and chosen else None

    def report(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Close, self.parent)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.error_box = box
        box.open()


__all__ = ["WindowPrompts"]
