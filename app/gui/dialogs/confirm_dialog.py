"""A short yes/no question with a named accept button (the fork confirmation).

May import PySide6 and ``dialogs.parts``.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from app.gui.dialogs.parts import note


class ConfirmDialog(QDialog):
    """A short yes/no question with a named accept button (fork)."""

    def __init__(self, title: str, text: str, accept_text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        layout.addWidget(note(text))
        self.buttons = QDialogButtonBox(self)
        self.accept_button = self.buttons.addButton(accept_text, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addStretch(1)  # spare height goes here, not into the wrapped labels
        layout.addWidget(self.buttons)


__all__ = ["ConfirmDialog"]
