"""The repair preview: what a repair would write, the liveness objection, the refusal of corrupt logs.

Shows what the action controller computed (``app.actions.repair``'s plan) and collects the user's
choice; it never touches the engine.  It leads with what the repair does to the conversation (the events
lost, the turn closed: ``RepairPreview.story``), then the bytes or rows.  May import PySide6, ``app.actions``
(values only), ``app.glossary`` and ``dialogs.parts``.
"""

from __future__ import annotations

import html

import orjson
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QPushButton, QVBoxLayout, QWidget

from app.actions.repair import RepairPreview
from app.glossary import BYTE, at_byte, noun, plural, status_name
from app.gui.dialogs.parts import WARN, heading, note, plain_text


def preview_text(p: RepairPreview, *, with_story: bool = True) -> str:
    """The change a repair commits: first what it does to the conversation (the events lost, the turn closed),
    then the exact bytes or rows and the synthetic events' JSON.  The dialog shows the story as a wrapped
    line of its own (``with_story=False`` here); the file's path is in the backup note, not in this box."""
    if not (p.cut_bytes or p.cut_rows or p.closers):
        return "Nothing would change: the log is balanced."
    lines: list[str] = [p.story, ""] if with_story else []
    if p.lost:
        lines.append(f"{noun(len(p.lost), 'The event', 'The events')} lost:")
        lines.extend("  " + line for line in p.lost_lines)
        lines.append("")
    if p.cut_bytes:
        lines.append(f"In bytes: cut {plural(p.cut_bytes, BYTE)} from {at_byte(p.cut_from)} on.")
    elif p.cut_rows:
        lines.append(f"In rows: delete {plural(p.cut_rows, 'event row')} from seq {p.cut_from} on.")
    if p.recovered_count and (p.cut_bytes or p.cut_rows):
        lines.append(f"Re-append {plural(p.recovered_count, 'record')} still readable in the damaged tail.")
    if p.closers:
        lines.append(f"Append {plural(len(p.closers), 'synthetic event')} that close the interrupted turn:")
        lines.extend("  " + orjson.dumps(c).decode("utf-8") for c in p.closers)
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
        status = status_name(preview.status)
        # A repairable log is explained by the story below in the user's words; the engine's reason (bytes and
        # rows: "damaged tail after byte/row 4893") stays for the logs no repair touches.
        head = f"<b>{html.escape(status)}</b>" + ("" if preview.repairable else f" — {html.escape(preview.reason)}")
        layout.addWidget(heading(head, preview.status))
        self.buttons = QDialogButtonBox(self)
        self.override: QCheckBox | None = None
        self.accept_loss: QCheckBox | None = None
        self.repair_button: QPushButton | None = None
        self.copy_button: QPushButton | None = None
        if preview.repairable:
            self.story = note(f"<b>{html.escape(preview.story, quote=False)}</b>")
            layout.addWidget(self.story)
            layout.addWidget(
                note("<b>What the repair writes</b> (the same change the harness commits when it loads the session):")
            )
            self.details = plain_text(preview_text(preview, with_story=False))
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
                        f"⚠ <b>{plural(preview.intact_after_damage, 'intact record')} after the damage will be cut.</b> The "
                        "damage is followed by valid data, so this is not a torn write; cutting it loses those records "
                        "(they stay in the backup). Copy the raw artifact first if you are unsure.",
                        WARN,
                    )
                )
                self.accept_loss = QCheckBox(f"Cut the {plural(preview.intact_after_damage, 'intact record')} anyway", self)
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
