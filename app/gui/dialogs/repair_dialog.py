"""The dialogs of the session actions: repair preview, restore a backup, resume, fork confirmation.

Each dialog only shows what the action controller computed and collects the user's choice; none of
them touches the engine.  They are opened with ``open()`` (window-modal, never a nested ``exec()``
loop), and ``await_dialog`` turns their ``finished`` signal into an awaitable result.
"""

from __future__ import annotations

import asyncio
import html
import os
import time

import orjson
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.actions.backups import BackupInfo
from app.actions.repair import RepairPreview
from app.actions.resume import ResumeCommand, ResumeLaunchError, build_command
from app.gui import style

WARN = "#9a5b00"


async def await_dialog(dialog: QDialog) -> int:
    """Show ``dialog`` window-modally and wait for its result; cancelling the awaiting task rejects it."""
    fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def done(code: int) -> None:
        if not fut.done():
            fut.set_result(code)

    dialog.finished.connect(done)
    dialog.open()
    try:
        return await fut
    except asyncio.CancelledError:
        dialog.reject()
        raise
    finally:
        dialog.finished.disconnect(done)


def preview_text(p: RepairPreview) -> str:
    """The exact change a repair commits, in words and as the synthetic events' JSON."""
    lines: list[str] = []
    where = p.artifact.path if p.artifact is not None else "(no artifact)"
    if p.cut_bytes:
        lines.append(f"Cut {p.cut_bytes:,} damaged byte(s) from offset {p.cut_from:,} of {where}.")
    elif p.cut_rows:
        lines.append(f"Delete {p.cut_rows:,} damaged event row(s) from seq {p.cut_from} in {where}.")
    if p.recovered_count and (p.cut_bytes or p.cut_rows):
        lines.append(f"Re-append {p.recovered_count:,} record(s) still readable in the damaged tail.")
    if p.closers:
        lines.append(f"Append {len(p.closers)} synthetic event(s) that close the interrupted turn:")
        lines.extend("  " + orjson.dumps(c).decode("utf-8") for c in p.closers)
    if not lines:
        lines.append("Nothing would change: the log is balanced.")
    return "\n".join(lines)


def _heading(text: str, status: str) -> QLabel:
    fg, bg = style.STATUS_COLORS.get(status, ("#000", None))
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setStyleSheet(f"QLabel {{ color: {fg}; background: {bg or '#eef7f0'}; padding: 6px; border-radius: 3px; }}")
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    return label


def _plain(text: str, max_rows: int = 12) -> QPlainTextEdit:
    """Read-only monospace text sized to its content (up to ``max_rows`` lines, then it scrolls)."""
    box = QPlainTextEdit()
    box.setReadOnly(True)
    box.setFont(style.mono_font())
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    box.setPlainText(text)
    rows = min(max_rows, text.count("\n") + 1)
    scrollbar = box.horizontalScrollBar().sizeHint().height()
    box.setFixedHeight(box.fontMetrics().lineSpacing() * rows + 2 * box.frameWidth() + 12 + scrollbar)
    return box


def _note(text: str, color: str | None = None) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    if color:
        label.setStyleSheet(f"QLabel {{ color: {color}; }}")
    return label


class RepairDialog(QDialog):
    """Preview of one repair; Repair stays disabled while the liveness guard objects and is not overridden.

    For a corrupt or unsupported log it only explains and offers to copy the raw artifact.
    """

    def __init__(self, preview: RepairPreview, liveness: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.preview = preview
        self.liveness = liveness
        self.copy_requested = False
        self.setWindowTitle(f"Repair session {preview.session_id}")
        self.setMinimumWidth(720)
        layout = QVBoxLayout(self)
        status = style.STATUS_LABELS.get(preview.status, preview.status)
        layout.addWidget(_heading(f"<b>{html.escape(status)}</b> — {html.escape(preview.reason)}", preview.status))
        self.buttons = QDialogButtonBox(self)
        self.override: QCheckBox | None = None
        self.accept_loss: QCheckBox | None = None
        self.repair_button: QPushButton | None = None
        self.copy_button: QPushButton | None = None
        if preview.repairable:
            layout.addWidget(_note("<b>What the repair writes</b> (the same change the harness commits when it loads "
                                   "the session):"))
            self.details = _plain(preview_text(preview))
            layout.addWidget(self.details)
            target = preview.artifact.path if preview.artifact is not None else "the artifact"
            layout.addWidget(_note(f"Before anything is written, {html.escape(target)} is copied to "
                                   f"<tt>{html.escape(target)}.bak-&lt;UTC time&gt;</tt> and the copy is flushed to disk."))
            if preview.intact_after_damage:
                layout.addWidget(_note(
                    f"⚠ <b>{preview.intact_after_damage:,} intact record(s) after the damage will be cut.</b> The "
                    "damage is followed by valid data, so this is not a torn write; cutting it loses those records "
                    "(they stay in the backup). Copy the raw artifact first if you are unsure.", WARN))
                self.accept_loss = QCheckBox(f"Cut the {preview.intact_after_damage:,} intact record(s) anyway", self)
                self.accept_loss.toggled.connect(self._update)
                layout.addWidget(self.accept_loss)
            if liveness is not None:
                layout.addWidget(_note(f"⚠ {html.escape(liveness)}", WARN))
                self.override = QCheckBox("No agent is running this session: repair anyway", self)
                self.override.toggled.connect(self._update)
                layout.addWidget(self.override)
            self.repair_button = self.buttons.addButton("Repair", QDialogButtonBox.ButtonRole.AcceptRole)
            self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        elif preview.status in ("corrupt", "unsupported"):
            why = ("its bytes cannot be decoded as a session log" if preview.status == "corrupt"
                   else "it was written by a newer harness (or in a format this version does not know)")
            layout.addWidget(_note(
                f"This log is not repaired: {why}. Cutting or rewriting it could destroy the only copy of data a newer "
                "tool (or a person) can still recover. Nothing was changed.<br><br>Copy the raw artifact to analyse "
                "it or to send it to whoever supports the harness."))
            self.copy_button = self.buttons.addButton("Copy raw artifact …", QDialogButtonBox.ButtonRole.ActionRole)
            self.copy_button.clicked.connect(self._copy)
            self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        else:
            layout.addWidget(_note("Nothing to repair: the log is balanced."))
            self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addStretch(1)  # spare height goes here, not into the wrapped labels
        layout.addWidget(self.buttons)
        self._update()

    @property
    def force(self) -> bool:
        """The user overrode the liveness guard."""
        return self.override is not None and self.override.isChecked()

    @property
    def loss_accepted(self) -> bool:
        """The user agreed to cut intact records that follow the damage."""
        return self.accept_loss is not None and self.accept_loss.isChecked()

    def _update(self) -> None:
        if self.repair_button is not None:
            self.repair_button.setEnabled((self.liveness is None or self.force)
                                          and (not self.preview.intact_after_damage or self.loss_accepted))

    def _copy(self) -> None:
        self.copy_requested = True
        self.done(QDialog.DialogCode.Rejected)


class RestoreDialog(QDialog):
    """Choose one backup of a session to put back; the current state is backed up first."""

    def __init__(self, session_id: str, backups: list[BackupInfo], liveness: str | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backups = backups
        self.liveness = liveness
        self.setWindowTitle(f"Restore a backup of {session_id}")
        self.setMinimumWidth(720)
        layout = QVBoxLayout(self)
        layout.addWidget(_note(
            f"Put one backup of <b>{html.escape(session_id)}</b> back as its log. The current log is copied to a new "
            "backup first, and the swap is atomic: nothing is lost either way."))
        self.choice = QListWidget(self)
        for b in backups:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(b.mtime))
            if b.problem is not None:
                text = f"{os.path.basename(b.path)} — {when} — unreadable: {b.problem}"
            elif b.lacking:
                text = (f"{os.path.basename(b.path)} — {when} — {b.records:,} records, "
                        f"{b.lacking:,} of them missing from the log")
            else:
                text = f"{os.path.basename(b.path)} — {when} — {b.records:,} records, all still in the log"
            item = QListWidgetItem(text, self.choice)
            if b.problem is not None:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        first = next((i for i, b in enumerate(backups) if b.lacking and b.problem is None), None)
        if first is None:
            first = next((i for i, b in enumerate(backups) if b.problem is None), -1)
        self.choice.setCurrentRow(first)
        self.choice.setFixedHeight(min(8, max(2, len(backups))) * self.choice.sizeHintForRow(0) + 8 if backups else 40)
        layout.addWidget(self.choice)
        self.override: QCheckBox | None = None
        if liveness is not None:
            layout.addWidget(_note(f"⚠ {html.escape(liveness)}", WARN))
            self.override = QCheckBox("No agent is running this session: restore anyway", self)
            self.override.toggled.connect(self._update)
            layout.addWidget(self.override)
        self.buttons = QDialogButtonBox(self)
        self.restore_button = self.buttons.addButton("Restore", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.choice.currentRowChanged.connect(lambda _r: self._update())
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self._update()

    @property
    def force(self) -> bool:
        return self.override is not None and self.override.isChecked()

    @property
    def chosen(self) -> BackupInfo | None:
        row = self.choice.currentRow()
        return self.backups[row] if 0 <= row < len(self.backups) and self.backups[row].problem is None else None

    def _update(self) -> None:
        self.restore_button.setEnabled(self.chosen is not None and (self.liveness is None or self.force))


class ResumeDialog(QDialog):
    """Resume command (editable template), pending-repair confirmation, then Open in terminal or Copy."""

    TERMINAL, COPY = 10, 11

    def __init__(self, *, session_id: str, cwd: str | None, root: str, template: str, preview: RepairPreview,
                 liveness: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session_id, self.cwd, self.root = session_id, cwd, root
        self.preview = preview
        self.liveness = liveness
        self.command: ResumeCommand | None = None
        self.setWindowTitle(f"Resume session {session_id}")
        self.setMinimumWidth(720)
        layout = QVBoxLayout(self)
        layout.addWidget(_note(f"Resume <b>{html.escape(session_id)}</b> in the harness, in "
                               f"<tt>{html.escape(cwd or '(no working directory recorded)')}</tt>."))
        layout.addWidget(_note("Command template (placeholders <tt>{id}</tt>, <tt>{cwd}</tt>, <tt>{root}</tt>):"))
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
            layout.addWidget(_heading(f"<b>This session needs repair first</b> ({html.escape(status)}: "
                                      f"{html.escape(preview.reason)})", preview.status))
            layout.addWidget(_plain(preview_text(preview), 8))
            self.confirm_repair = QCheckBox("Repair it first (the artifact is backed up before anything is written)", self)
            self.confirm_repair.toggled.connect(self._update)
            layout.addWidget(self.confirm_repair)
        if liveness is not None:
            layout.addWidget(_note(f"⚠ {html.escape(liveness)}", WARN))
            self.override = QCheckBox("No agent is running this session: go on anyway", self)
            self.override.toggled.connect(self._update)
            layout.addWidget(self.override)
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

    @property
    def force(self) -> bool:
        return self.override is not None and self.override.isChecked()

    @property
    def repair_confirmed(self) -> bool:
        return self.confirm_repair is not None and self.confirm_repair.isChecked()

    def _update(self) -> None:
        try:
            self.command = build_command(self.template.text(), session_id=self.session_id, cwd=self.cwd, root=self.root)
        except ResumeLaunchError as err:
            self.command = None
            self.command_label.setText(f"<span style='color:{style.STATUS_COLORS['corrupt'][0]}'>"
                                       f"{html.escape(str(err))}</span>")
            self.command_label.setTextFormat(Qt.TextFormat.RichText)
        else:
            self.command_label.setTextFormat(Qt.TextFormat.PlainText)
            self.command_label.setText(self.command.text)
        ready = (self.command is not None and (self.confirm_repair is None or self.repair_confirmed)
                 and (self.liveness is None or self.force))
        self.terminal_button.setEnabled(ready)
        self.copy_button.setEnabled(ready)


class ConfirmDialog(QDialog):
    """A short yes/no question with a named accept button (fork)."""

    def __init__(self, title: str, text: str, accept_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        layout.addWidget(_note(text))
        self.buttons = QDialogButtonBox(self)
        self.accept_button = self.buttons.addButton(accept_text, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addStretch(1)  # spare height goes here, not into the wrapped labels
        layout.addWidget(self.buttons)
