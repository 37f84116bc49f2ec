"""File > Export…: choose the format and the file an export of the open session goes to.

The file name follows the format (``app.export.suggested_name``) until the user edits it; a target
that exists is said to be replaced (the export itself is atomic: the old file stays until the new one
is complete).  The dialog only collects the choice; ``controllers.session_export`` runs the export.

May import: PySide6 and ``app.export`` (``FORMATS``, ``EXTENSIONS``, ``suggested_name``: values only).
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.export import EXTENSIONS, FORMATS, suggested_name
from app.gui.dialogs.parts import WARN, note

FORMAT_LABELS = {
    "md": "Markdown (.md): turns, messages, tool calls and results",
    "html": "HTML (.html): one self-contained page, collapsible tool calls and reasoning",
    "jsonl": "JSONL (.jsonl): the decoded transcript, as `sessionscope raw` prints it",
    "bundle": "Support bundle (.zip): raw artifact, header, verify diagnosis, versions",
}


class ExportDialog(QDialog):
    def __init__(self, session_id: str, folder: str, fmt: str = "html", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export session")
        self.setMinimumWidth(640)
        self.session_id = session_id
        self.format_box = QComboBox(self)
        for f in FORMATS:
            self.format_box.addItem(FORMAT_LABELS.get(f, f), f)
        self.format_box.setCurrentIndex(max(0, FORMATS.index(fmt) if fmt in FORMATS else 0))
        self.path = QLineEdit(os.path.join(folder, suggested_name(session_id, self.fmt)), self)
        self.browse = QPushButton("Browse …", self)
        self.browse.clicked.connect(self._browse)
        self.file_dialog: QFileDialog | None = None
        self.exists_note = note("", WARN)
        self.exists_note.hide()
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(self.browse)
        form = QFormLayout()
        form.addRow("Session", QLabel(f"<code>{session_id}</code>", self))
        form.addRow("Format", self.format_box)
        form.addRow("File", path_row)
        self.buttons = QDialogButtonBox(self)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.exists_note)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self._auto_name = True  # the file name follows the format until the user types one
        self.format_box.currentIndexChanged.connect(self._format_changed)
        self.path.textEdited.connect(self._edited)
        self.path.textChanged.connect(self._check)
        self._check()

    @property
    def fmt(self) -> str:
        return str(self.format_box.currentData())

    @property
    def target(self) -> str:
        return os.path.abspath(os.path.expanduser(self.path.text().strip())) if self.path.text().strip() else ""

    def set_format(self, fmt: str) -> None:
        self.format_box.setCurrentIndex(FORMATS.index(fmt))

    def _edited(self, _text: str) -> None:
        self._auto_name = False

    def _format_changed(self, _i: int) -> None:
        text = self.path.text().strip()
        folder = os.path.dirname(text) if text else os.path.expanduser("~")
        if self._auto_name:
            self.path.setText(os.path.join(folder, suggested_name(self.session_id, self.fmt)))
            return
        root, ext = os.path.splitext(text)
        if ext.lower() in EXTENSIONS.values():  # the user's name, the format's extension
            self.path.setText(root + EXTENSIONS[self.fmt])

    def _check(self, _text: str = "") -> None:
        target = self.target
        self.export_button.setEnabled(bool(target) and not os.path.isdir(target))
        if target and os.path.isdir(target):
            self.exists_note.setText("That is a folder: add a file name.")
        elif target and os.path.exists(target):
            self.exists_note.setText("The file exists: it is replaced once the export is complete.")
        elif target and not os.path.isdir(os.path.dirname(target)):
            self.exists_note.setText("That folder does not exist.")
            self.export_button.setEnabled(False)
        else:
            self.exists_note.setText("")
        self.exists_note.setVisible(bool(self.exists_note.text()))

    def _browse(self) -> None:
        dlg = QFileDialog(self, "Export to …")
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        ext = EXTENSIONS[self.fmt]
        dlg.setNameFilters([f"{self.format_box.currentText().split(':')[0]} (*{ext})", "All files (*)"])
        dlg.setDefaultSuffix(ext.lstrip("."))
        dlg.selectFile(self.target or suggested_name(self.session_id, self.fmt))
        dlg.fileSelected.connect(self._chosen)
        self.file_dialog = dlg
        dlg.open()

    def _chosen(self, path: str) -> None:
        self._auto_name = False
        self.path.setText(path)


__all__ = ["FORMAT_LABELS", "ExportDialog"]
