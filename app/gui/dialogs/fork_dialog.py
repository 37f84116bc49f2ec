"""The fork confirmation with a name field: the new session's title, default "<parent title> (fork after turn N)".

The name is written into the new session only (``app.actions.fork.execute_fork(title=)``), so the
fork is told apart from its parent in the list, the lineage and the harness.  A name that is blank
once whitespace is folded cannot be chosen (the Fork button is off and says why).

May import PySide6, ``app.actions.fork`` (values and ``normalize_title``) and ``dialogs.confirm_dialog``.
"""

from __future__ import annotations

import html

from PySide6.QtWidgets import QFormLayout, QLineEdit, QVBoxLayout, QWidget

from app.actions.fork import ForkPlan, normalize_title
from app.gui.dialogs.confirm_dialog import ConfirmDialog
from app.gui.dialogs.parts import WARN, note

MAX_TITLE_CHARS = 500  # a title is one line in the list and the harness: longer is a mistake, not a name


class ForkDialog(ConfirmDialog):
    """Fork ``plan`` (its parent, its turn) under the name in ``name`` (``title`` reads it back, normalized)."""

    def __init__(self, plan: ForkPlan, *, last_turn: bool, parent: QWidget | None = None) -> None:
        where = f"its last completed turn (turn {plan.turn})" if last_turn else f"turn {plan.turn}"
        super().__init__(
            "Fork session",
            f"Create a new session in this root that starts with the log of <b>{html.escape(plan.session_id)}</b> up to "
            f"the end of {where}. The new session records its parent and how many events it inherited; the parent's "
            "log is only read, never changed.",
            "Fork",
            parent,
        )
        self.plan = plan
        self.name = QLineEdit(plan.default_title, self)
        self.name.setMaxLength(MAX_TITLE_CHARS)
        self.name.setClearButtonEnabled(True)
        self.name.selectAll()
        self.name.setToolTip("Written as the new session's title (a session/title event in the new session only)")
        self.blank_note = note("A fork needs a name.", WARN)
        self.blank_note.hide()
        form = QFormLayout()
        form.addRow("Name", self.name)
        layout = self.layout()
        assert isinstance(layout, QVBoxLayout)
        # Under the explanation, above the stretch and the buttons.
        layout.insertLayout(1, form)
        layout.insertWidget(2, self.blank_note)
        self.name.textChanged.connect(self._check)
        self.name.setFocus()

    @property
    def title(self) -> str:
        """The chosen name as it will be stored (whitespace runs folded, ends trimmed)."""
        return normalize_title(self.name.text())

    def _check(self, _text: str = "") -> None:
        blank = not self.title
        self.accept_button.setEnabled(not blank)
        self.blank_note.setVisible(blank)


__all__ = ["ForkDialog"]
