"""The offer to restore a backup that holds records its log lacks (an interrupted repair by an older tool).

Why its own module: it is the one question the window itself asks after listing a root (the
controllers' questions go through ``window.prompts``), window-modal and never a nested event loop, so
tests can answer it through ``MainWindow.restore_offer``.  Split out of the main window, which had
passed the 600-line limit.

May import: PySide6 and ``app.glossary``; never ``window.main_window``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from app.glossary import plural


def offer_restore(parent: QWidget, found: Sequence[Any], restore: Callable[[str], None]) -> QMessageBox:
    """Ask whether to restore the first of ``found`` ((session id, backup info) pairs); ``restore(sid)`` if so."""
    sid, info = found[0]
    more = f" ({plural(len(found) - 1, 'more session')} too)" if len(found) > 1 else ""
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "A backup holds records the log lacks",
        f"The backup {info.path} holds {info.lacking:,} record(s) that session {sid} no longer "
        f"has{more}. Restore it? The current log is backed up first.",
        QMessageBox.StandardButton.NoButton,
        parent,
    )
    chosen_button = box.addButton("Restore …", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def chosen(_code: int) -> None:
        if box.clickedButton() is chosen_button:
            restore(sid)

    box.finished.connect(chosen)
    box.open()
    return box


__all__ = ["offer_restore"]
