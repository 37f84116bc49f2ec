"""The repair preview: what a repair would write, the liveness objection, the refusal of corrupt logs.

Shows what the action controller computed (``app.actions.repair``'s plan) and collects the user's
choice; it never touches the engine.  May import PySide6, ``app.actions`` (values only),
``app.gui.style`` and ``dialogs.parts``.
"""

from __future__ import annotations

import html

import orjson
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QPushButton, QVBoxLayout, QWidget

from app.actions.repair import RepairPreview
from app.gui import style
from app.gui.dialogs.parts import WARN, heading, note, plain_text


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
        layout.addWidget(heading(f"<b>{html.escape(status)}</b> — {html.escape(preview.reason)}", preview.status))
        self.buttons = QDialogButtonBox(self)
        self.override: QCheckBox | None = None
        self.accept_loss: QCheckBox | None = None
        self.repair_button: QPushButton | None = None
        self.copy_button: QPushButton | None = None
        if preview.repairable:
            layout.addWidget(
                note("<b>What the repair writes</b> (the same change the harness commits when it loads the session):")
            )
            self.details = plain_text(preview_text(preview))
            layout.addWidget(self.details)
            target = preview.artifact.path if preview.artifact is not None else "the artifact"
            layout.addWidget(
                note(
                    f"Before anything is written, {html.escape(target)} is copied to "
                    f"<tt>{html.escape(target)}.bak-&lt;UTC time&gt;</tt> and the copy is flushed to disk."
                )
            )
            if preview.intact_after_damage:
                layout.addWidget(
                    note(
                        f"⚠ <b>{preview.intact_after_damage:,} intact record(s) after the damage will be cut.</b> The "
                        "damage is followed by valid data, so this is not a torn write; cutting it loses those records "
                        "(they stay in the backup). Copy the raw artifact first if you are unsure.",
                        WARN,
                    )
                )
                self.accept_loss = QCheckBox(f"Cut the {preview.intact_after_damage:,} intact record(s) anyway", self)
                self.accept_loss.toggled.connect(self._update)
                layout.addWidget(self.accept_loss)
            if liveness is None and preview.idle_note is not None:
                # Quiet is not crashed (issue 21 item 2): the facts, and that clicking Repair is the confirmation.
                layout.addWidget(
                    note(
                        f"{html.escape(preview.idle_note)}. A long model call can be silent for minutes: repair only if "
                        "no agent is still working on this session (repairing confirms that it crashed)."
                    )
                )
            if liveness is not None:
                layout.addWidget(note(f"⚠ {html.escape(liveness)}", WARN))
                self.override = QCheckBox("No agent is running this session: repair anyway", self)
                self.override.toggled.connect(self._update)
                layout.addWidget(self.override)
            self.repair_button = self.buttons.addButton("Repair", QDialogButtonBox.ButtonRole.AcceptRole)
            self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        elif preview.status in ("corrupt", "unsupported"):
            why = (
                "its bytes cannot be decoded as a session log"
                if preview.status == "corrupt"
                else "it was written by a newer harness (or in a format this version does not know)"
            )
            layout.addWidget(
                note(
                    f"This log is not repaired: {why}. Cutting or rewriting it could destroy the only copy of data a newer "
                    "tool (or a person) can still recover. Nothing was changed.<br><br>Copy the raw artifact to analyse "
                    "it or to send it to whoever supports the harness."
                )
            )
            self.copy_button = self.buttons.addButton("Copy raw artifact …", QDialogButtonBox.ButtonRole.ActionRole)
            self.copy_button.clicked.connect(self._copy)
            self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        else:
            layout.addWidget(note("Nothing to repair: the log is balanced."))
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
            self.repair_button.setEnabled(
                (self.liveness is None or self.force) and (not self.preview.intact_after_damage or self.loss_accepted)
            )

    def _copy(self) -> None:
        self.copy_requested = True
        self.done(QDialog.DialogCode.Rejected)


__all__ = ["RepairDialog", "preview_text"]
