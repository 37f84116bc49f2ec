"""File > Export…: choose the format and the file an export of the open session goes to.

The file name follows the format (``app.export.suggested_name``) until the user edits it.  An export
never clobbers (``app.export.exporter``): a target that is a symbolic link, a FIFO, a device or a
folder disables Export and says why; an existing regular file is replaced only after the user says
so in a confirmation asked when Export is pressed (``force``; the export itself is atomic: the old
file stays until the new one is complete).  The dialog only collects the choice;
``controllers.session_export`` runs the export.

A support bundle leaves the machine, so for bundles "Replace secrets with placeholders" is on by
default (``export --redact``), with "Also hide my home folder" beside it (off: a folder name is rarely
a secret and support often needs the paths).  While it is on, the dialog shows a preview of what the
redaction will replace: it asks for one with ``preview_wanted(home)`` (the window computes it off the
GUI thread) and shows the answer given to ``show_preview``: counts per kind and the first few
replacements in context, masked.

May import: PySide6, ``app.export`` (``FORMATS``, ``EXTENSIONS``, ``suggested_name``, ``describe``:
values and a pure look at the target only) and ``app.redact`` (the report it shows).
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.export import EXTENSIONS, FORMATS, suggested_name
from app.export.atomic import describe
from app.gui.dialogs.parts import WARN, note
from app.redact import RedactionReport

FORMAT_LABELS = {
    "md": "Markdown (.md): turns, messages, tool calls and results",
    "html": "HTML (.html): one self-contained page, collapsible tool calls and reasoning",
    "jsonl": "JSONL (.jsonl): the decoded transcript, as `sessionscope raw` prints it",
    "bundle": "Support bundle (.zip): raw artifact, header, verify diagnosis, versions",
}


PREVIEW_WAIT = "Looking for secrets in this session …"
REDACT_TEXT = "Replace secrets with placeholders (API keys, tokens, passwords, private keys, e-mail addresses)"
HOME_TEXT = "Also hide my home folder's name in paths"


def preview_text(report: RedactionReport) -> str:
    """The preview: what will be replaced, per kind, and the first replacements in context (masked)."""
    summary = report.summary()
    lines = [summary[:1].upper() + summary[1:] + "."]
    if report.samples:
        lines.append("")
        lines.append("First replacements:")
        lines.extend(f"  {s.where}: {s.context}" for s in report.samples)
    lines.append("")
    lines.append("Not caught: secrets without a known prefix or key name, secrets split across events, encoded secrets.")
    return "\n".join(lines)


class ExportDialog(QDialog):
    preview_wanted = Signal(bool)  # a redaction preview is needed (True: with the home folder hidden)

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
        self.redact_box = QCheckBox(REDACT_TEXT, self)
        self.redact_box.setChecked(True)  # a bundle leaves the machine: redacted unless the user says otherwise
        self.home_box = QCheckBox(HOME_TEXT, self)
        self.preview = QPlainTextEdit(self)
        self.preview.setReadOnly(True)
        self.preview.setMinimumHeight(140)
        self.preview.setAccessibleName("Redaction preview")
        self._preview_home: bool | None = None  # the option the shown (or awaited) preview is for
        self.buttons = QDialogButtonBox(self)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.redact_box)
        layout.addWidget(self.home_box)
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.exists_note)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self.force = False  # the user agreed to replace the existing file at ``target``
        self.confirm_box: QMessageBox | None = None
        self._auto_name = True  # the file name follows the format until the user types one
        self.format_box.currentIndexChanged.connect(self._format_changed)
        self.path.textEdited.connect(self._edited)
        self.path.textChanged.connect(self._check)
        self.redact_box.toggled.connect(self._redaction_changed)
        self.home_box.toggled.connect(self._redaction_changed)
        self._check()
        self._show_redaction()

    @property
    def fmt(self) -> str:
        return str(self.format_box.currentData())

    @property
    def target(self) -> str:
        return os.path.abspath(os.path.expanduser(self.path.text().strip())) if self.path.text().strip() else ""

    def set_format(self, fmt: str) -> None:
        self.format_box.setCurrentIndex(FORMATS.index(fmt))

    @property
    def redact(self) -> bool:
        """Export a redacted bundle (the checkbox counts for bundles only)."""
        return self.fmt == "bundle" and self.redact_box.isChecked()

    @property
    def redact_home(self) -> bool:
        return self.redact and self.home_box.isChecked()

    def _show_redaction(self) -> None:
        bundle = self.fmt == "bundle"
        self.redact_box.setVisible(bundle)
        self.home_box.setVisible(bundle)
        self.home_box.setEnabled(self.redact_box.isChecked())
        self.preview.setVisible(self.redact)

    def _redaction_changed(self, _on: bool = False) -> None:
        self._show_redaction()
        self.request_preview()

    def request_preview(self) -> None:
        """Ask for a preview (``preview_wanted``) when a redacted bundle is chosen and none is shown or awaited
        for the current options."""
        if not self.redact or self._preview_home == self.redact_home:
            return
        self._preview_home = self.redact_home
        self.preview.setPlainText(PREVIEW_WAIT)
        self.preview_wanted.emit(self.redact_home)

    def show_preview(self, home: bool, report: RedactionReport | str) -> None:
        """The preview for ``home`` (a report, or why it could not be made); one for other options is stale."""
        if home != self._preview_home:
            return
        if isinstance(report, str):
            self.preview.setPlainText(f"The preview could not be made: {report}")
        else:
            self.preview.setPlainText(preview_text(report))

    def _edited(self, _text: str) -> None:
        self._auto_name = False

    def _format_changed(self, _i: int) -> None:
        self._show_redaction()
        self.request_preview()
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
        what = describe(target) if target else None
        self.force = False  # a new name: any earlier "Replace" was for another file
        self.export_button.setEnabled(bool(target) and what is None)
        if what == "a folder":
            self.exists_note.setText("That is a folder: add a file name.")
        elif what == "a symbolic link":
            self.exists_note.setText(
                "That is a symbolic link: an export never writes through or replaces one. "
                "Choose the file it points to, or another name."
            )
        elif what is not None:
            self.exists_note.setText(f"That is {what}: an export only writes a new file or replaces a regular one.")
        elif target and os.path.lexists(target):
            self.exists_note.setText(
                "The file exists: you are asked before it is replaced (the old file stays until the new one is complete)."
            )
        elif target and not os.path.isdir(os.path.dirname(target)):
            self.exists_note.setText("That folder does not exist.")
            self.export_button.setEnabled(False)
        else:
            self.exists_note.setText("")
        self.exists_note.setVisible(bool(self.exists_note.text()))

    def accept(self) -> None:
        """Export: an existing regular file is replaced only once the user said so (``force``)."""
        target = self.target
        if target and not self.force and os.path.lexists(target) and describe(target) is None:
            self._ask_replace(target)
            return
        super().accept()

    def _ask_replace(self, target: str) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Replace the file?",
            f"{target} already exists.\n\nReplace it with this export? The old file stays until the new one is complete.",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        replace = box.addButton("Replace", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)  # Enter twice never replaces a file by accident
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda _code: self._replace_answered(box.clickedButton() is replace, target))
        self.confirm_box = box
        box.open()

    def _replace_answered(self, agreed: bool, target: str) -> None:
        self.confirm_box = None
        if agreed and target == self.target:
            self.force = True
            super().accept()

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


__all__ = ["FORMAT_LABELS", "HOME_TEXT", "PREVIEW_WAIT", "REDACT_TEXT", "ExportDialog", "preview_text"]
