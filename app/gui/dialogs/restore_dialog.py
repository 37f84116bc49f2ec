"""Choosing a repair backup to put back as a session's log (the current log is backed up first).

Preselected: a backup holding records the log lacks (lost records come first), else the backup the
window's own last repair made (``preferred``: "Restore backup …" in the banner undoes that repair),
else the newest readable one.

May import PySide6, ``app.actions`` (values only) and ``dialogs.parts``.
"""

from __future__ import annotations

import html
import os
import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app.actions.backups import BackupInfo
from app.glossary import plural
from app.gui.dialogs.parts import WARN, note


class RestoreDialog(QDialog):
    """Choose one backup of a session to put back; the current state is backed up first."""

    def __init__(
        self,
        session_id: str,
        backups: list[BackupInfo],
        liveness: str | None,
        parent: QWidget | None = None,
        *,
        preferred: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.backups = backups
        self.liveness = liveness
        self.setWindowTitle(f"Restore a backup of {session_id}")
        self.setMinimumWidth(720)
        layout = QVBoxLayout(self)
        layout.addWidget(
            note(
                f"Put one backup of <b>{html.escape(session_id)}</b> back as its log. The current log is copied to a new "
                "backup first, and the swap is atomic: nothing is lost either way."
            )
        )
        self.choice = QListWidget(self)
        for b in backups:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(b.mtime))
            if b.problem is not None:
                text = f"{os.path.basename(b.path)} — {when} — unreadable: {b.problem}"
            elif b.lacking:
                held = plural(b.records, "record")
                text = f"{os.path.basename(b.path)} — {when} — {held}, {b.lacking:,} of them missing from the log"
            else:
                text = f"{os.path.basename(b.path)} — {when} — {plural(b.records, 'record')}, all still in the log"
            item = QListWidgetItem(text, self.choice)
            if b.problem is not None:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        first = next((i for i, b in enumerate(backups) if b.lacking and b.problem is None), None)
        if first is None and preferred is not None:
            first = next((i for i, b in enumerate(backups) if b.path == preferred and b.problem is None), None)
        if first is None:  # backups are listed oldest first: the newest is the last repair's
            first = next((i for i in range(len(backups) - 1, -1, -1) if backups[i].problem is None), -1)
        self.choice.setCurrentRow(first)
        self.choice.setFixedHeight(min(8, max(2, len(backups))) * self.choice.sizeHintForRow(0) + 8 if backups else 40)
        layout.addWidget(self.choice)
        self.override: QCheckBox | None = None
        if liveness is not None:
            layout.addWidget(note(f"⚠ {html.escape(liveness)}", WARN))
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


__all__ = ["RestoreDialog"]
