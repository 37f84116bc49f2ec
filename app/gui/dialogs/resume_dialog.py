"""Resuming a session in the harness: the editable command, a pending repair, the liveness objection.

The objection is judged again every ``RECHECK_MS`` while the dialog is open (``recheck_requested``;
the controller runs the guard and hands back ``set_plan``): "changed 8.0 s ago" counts up and the
buttons enable once the quiet period has passed, without closing and reopening (issue 16 bug 5).
The guard blocks what writes (the terminal, a confirmed repair); "Copy command" alone writes
nothing and is never blocked by it.

May import PySide6, ``app.actions`` (values only), ``app.gui.style`` and the other dialog modules.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from app.actions.resume import ResumeCommand, ResumePlan
from app.gui import style
from app.gui.dialogs.parts import WARN, heading, note, plain_text
from app.gui.dialogs.repair_dialog import preview_text

RECHECK_MS = 1000  # the liveness guard is judged again this often while the dialog is open


class ResumeDialog(QDialog):
    """Resume command (editable template), pending-repair confirmation, then Open in terminal or Copy."""

    TERMINAL, COPY = 10, 11
    recheck_requested = Signal()  # time to judge the guard again (the controller answers with ``set_plan``)

    def __init__(self, plan: ResumePlan, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan = plan
        self.preview = preview = plan.preview
        self.liveness: str | None = plan.objection
        session_id, cwd, template = plan.session_id, plan.cwd, plan.template
        self.command: ResumeCommand | None = None
        self.setWindowTitle(f"Resume session {session_id}")
        self.setMinimumWidth(720)
        layout = QVBoxLayout(self)
        layout.addWidget(
            note(
                f"Resume <b>{html.escape(session_id)}</b> in the harness, in "
                f"<tt>{html.escape(cwd or '(no working directory recorded)')}</tt>."
            )
        )
        layout.addWidget(note("Command template (placeholders <tt>{id}</tt>, <tt>{cwd}</tt>, <tt>{root}</tt>):"))
        self.template = QLineEdit(template, self)
        self.template.setFont(style.mono_font())
        layout.addWidget(self.template)
        self.command_label = QLabel(self)
        self.command_label.setFont(style.mono_font())
        self.command_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.command_label.setWordWrap(True)
        layout.addWidget(self.command_label)
        self.confirm_repair: QCheckBox | None = None
        self.override: QCheckBox | None = None
        if preview.repairable:
            status = style.STATUS_LABELS.get(preview.status, preview.status)
            layout.addWidget(
                heading(
                    f"<b>This session needs repair first</b> ({html.escape(status)}: {html.escape(preview.reason)})",
                    preview.status,
                )
            )
            layout.addWidget(plain_text(preview_text(preview), 8))
            self.confirm_repair = QCheckBox("Repair it first (the artifact is backed up before anything is written)", self)
            self.confirm_repair.toggled.connect(self._update)
            layout.addWidget(self.confirm_repair)
        # Always built: an objection may appear or go away while the dialog is open.
        self.liveness_note = note("", WARN)
        layout.addWidget(self.liveness_note)
        self.override = QCheckBox("No agent is running this session: go on anyway", self)
        self.override.toggled.connect(self._update)
        layout.addWidget(self.override)
        self._show_liveness()
        self.buttons = QDialogButtonBox(self)
        self.terminal_button = self.buttons.addButton("Open in terminal", QDialogButtonBox.ButtonRole.AcceptRole)
        self.copy_button = self.buttons.addButton("Copy command", QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.terminal_button.clicked.connect(lambda: self.done(self.TERMINAL))
        self.copy_button.clicked.connect(lambda: self.done(self.COPY))
        self.buttons.rejected.connect(self.reject)
        layout.addStretch(1)  # spare height goes here, not into the wrapped labels
        layout.addWidget(self.buttons)
        self.template.textChanged.connect(self._update)
        self._update()
        self.recheck = QTimer(self)
        self.recheck.setInterval(RECHECK_MS)
        self.recheck.timeout.connect(self.recheck_requested)
        self.finished.connect(lambda _code: self.recheck.stop())
        self.recheck.start()

    def set_plan(self, plan: ResumePlan) -> None:
        """A fresh guard verdict for the same session (the template field keeps what the user typed)."""
        self.plan = plan
        self.liveness = plan.objection
        self._show_liveness()
        self._update()

    def _show_liveness(self) -> None:
        self.liveness_note.setText("" if self.liveness is None else f"⚠ {html.escape(self.liveness)}")
        self.liveness_note.setVisible(self.liveness is not None)
        if self.override is not None:
            self.override.setVisible(self.liveness is not None)

    @property
    def force(self) -> bool:
        return self.liveness is not None and self.override is not None and self.override.isChecked()

    @property
    def repair_confirmed(self) -> bool:
        return self.confirm_repair is not None and self.confirm_repair.isChecked()

    def _update(self) -> None:
        planned = self.plan.with_template(self.template.text())
        self.command = planned.command
        if self.command is None:
            self.command_label.setText(
                f"<span style='color:{style.STATUS_COLORS['corrupt'][0]}'>{html.escape(planned.template_error or '')}</span>"
            )
            self.command_label.setTextFormat(Qt.TextFormat.RichText)
        else:
            self.command_label.setTextFormat(Qt.TextFormat.PlainText)
            self.command_label.setText(self.command.text)
        repair_ok = self.confirm_repair is None or self.repair_confirmed
        guard_ok = self.liveness is None or self.force
        self.terminal_button.setEnabled(self.command is not None and repair_ok and guard_ok)
        # Copying writes nothing unless it commits a confirmed repair: the guard never blocks it, and
        # while the guard objects (not overridden) it copies without repairing.
        self.copy_button.setEnabled(self.command is not None and (repair_ok or not guard_ok))
        self.copy_button.setToolTip(
            "Copy the command to the clipboard; nothing is written while an agent may still be running this session"
            if not guard_ok
            else (
                "Repair first (with a backup), then copy the command"
                if self.repair_confirmed
                else "Copy the command to the clipboard"
            )
        )


__all__ = ["ResumeDialog"]
