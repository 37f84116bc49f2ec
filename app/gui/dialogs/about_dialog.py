"""Help > About: the version, the file formats this build reads, what it runs on and where it keeps
its files, with a button to open each folder and one to copy it all into a bug report.

Why the license: SessionScope is MIT-licensed and ships Qt and PySide6 (LGPL-3.0) and other
components under their own licenses, whose texts its installers must carry; the Licenses button
shows each of them (``app.about.license_documents``), the notices first.

Why the formats: a log written by a newer harness is refused by version number; the About box is
where a user learns which numbers this build reads.  Why the folders: "delete the cache" or "attach
the log" is advice a user can only follow when the app says where those live.

May import: PySide6, ``app.about`` (the Qt-free facts), ``app.paths`` and ``app.logging_setup``
(the folders), ``app.gui.dialogs.parts``, ``app.gui.style`` and ``app.gui.settings``.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass

import PySide6
from PySide6.QtCore import QSettings, Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.about import DISPLAY_NAME, AboutFacts, LicenseDocument, about_facts, license_documents
from app.gui import style
from app.gui.dialogs.parts import note
from app.logging_setup import current_log_file, log_dir
from app.paths import cache_dir, data_dir

ABOUT_MIN_WIDTH_PX = 760
LICENSE_LINE = "MIT License; Qt and PySide6 under the LGPL-3.0 (Licenses shows every text)"


@dataclass(frozen=True, slots=True)
class Folder:
    """One row of the Folders section: what lives there, the path shown, the folder Open opens."""

    label: str
    shown: str
    folder: str


def existing_folder(path: str) -> str:
    """``path``, or its nearest existing parent (a folder not created yet still opens somewhere useful)."""
    path = os.path.abspath(path)
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def open_folder(path: str) -> bool:
    """Show ``path`` (or its nearest existing parent) in the desktop's file manager."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(existing_folder(path)))


def default_settings_file() -> str:
    """Where ``AppSettings()`` keeps the window's settings when no other QSettings is given."""
    return QSettings(DISPLAY_NAME, DISPLAY_NAME).fileName()


def app_folders(settings_file: str | None = None) -> tuple[Folder, ...]:
    """Settings, cache, log and data: the folders the About box lists (and opens)."""
    settings = settings_file or default_settings_file()
    log_file = current_log_file()
    logs = os.path.dirname(log_file) if log_file else log_dir()
    return (
        Folder("Settings", settings, os.path.dirname(settings)),
        Folder("Cache (search index, statistics)", cache_dir(), cache_dir()),
        Folder("Log", log_file or logs, logs),
        Folder("Data (demo root, model prices)", data_dir(), data_dir()),
    )


def versions_text(values: tuple[int, ...]) -> str:
    return ", ".join(str(v) for v in values)


def about_text(facts: AboutFacts, folders: tuple[Folder, ...]) -> str:
    """Everything the box shows, as plain text for a bug report ("Copy")."""
    lines = [
        f"{DISPLAY_NAME} {facts.version}",
        f"Session log format: {versions_text(facts.session_formats)}",
        f"SQLite store schema: {versions_text(facts.sqlite_schemas)}",
        f"Python: {facts.python} ({facts.executable})",
        f"Qt: {qVersion()}, PySide6: {PySide6.__version__}",
        f"Platform: {facts.platform}",
        f"License: {LICENSE_LINE}",
    ]
    lines += [f"{f.label}: {f.shown}" for f in folders]
    return "\n".join(lines) + "\n"


class AboutDialog(QDialog):
    """The About box; ``settings_file`` is the window's QSettings file (the default one when None)."""

    def __init__(self, parent: QWidget | None = None, *, settings_file: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"About {DISPLAY_NAME}")
        self.facts = about_facts()
        self.folders = app_folders(settings_file)
        facts = self.facts

        title = QLabel(f"<h2 style='margin:0'>{DISPLAY_NAME} {html.escape(facts.version)}</h2>")
        tagline = note("Browse, inspect and repair coding-agent session logs (JSONL roots and SQLite stores).")

        # One grid for both sections, so their names and values line up in the same columns.
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        grid.addWidget(QLabel("<b>Reads and runs on</b>"), 0, 0, 1, 3)
        rows = (
            ("Session logs", f"format version {versions_text(facts.session_formats)} (JSONL, plain or zstd-framed)"),
            ("SQLite stores", f"schema version {versions_text(facts.sqlite_schemas)}"),
            ("Python", f"{facts.python}"),
            ("Qt", f"{qVersion()} (PySide6 {PySide6.__version__})"),
            ("Platform", facts.platform),
            ("License", LICENSE_LINE),
        )
        for name, value in rows:
            at = grid.rowCount()
            grid.addWidget(QLabel(html.escape(name)), at, 0)
            grid.addWidget(self._selectable(value), at, 1, 1, 2)
        grid.setRowMinimumHeight(grid.rowCount(), 8)
        grid.addWidget(QLabel("<b>Where its files live</b>"), grid.rowCount(), 0, 1, 3)
        self.open_buttons: dict[str, QPushButton] = {}
        for f in self.folders:
            at = grid.rowCount()
            grid.addWidget(QLabel(html.escape(f.label)), at, 0)
            grid.addWidget(self._selectable(f.shown), at, 1)
            button = QPushButton("Open", self)
            button.setAutoDefault(False)  # Enter closes the box; it never opens a file manager by surprise
            button.setToolTip(f"Show {f.folder} in the file manager")
            button.clicked.connect(lambda _c=False, path=f.folder: open_folder(path))
            grid.addWidget(button, at, 2)
            self.open_buttons[f.label.split(" ")[0]] = button

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.setToolTip("Copy these facts for a bug report")
        self.copy_button.clicked.connect(self.copy)
        self.licenses_button = buttons.addButton("Licenses", QDialogButtonBox.ButtonRole.ActionRole)
        self.licenses_button.setToolTip("SessionScope's license and those of the components it ships")
        self.licenses_button.setAutoDefault(False)
        self.licenses_button.clicked.connect(self.show_licenses)
        self.licenses_dialog: LicensesDialog | None = None
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(tagline)
        layout.addSpacing(6)
        layout.addLayout(grid)
        layout.addStretch(1)
        layout.addWidget(buttons)
        # Wide enough for a typical home-folder path on one line; then as tall as the content at that width.
        # (The size hint is computed at its own, narrower width, where the wrapped labels are taller.)
        self.setMinimumWidth(ABOUT_MIN_WIDTH_PX)
        height = layout.totalHeightForWidth(ABOUT_MIN_WIDTH_PX) if layout.hasHeightForWidth() else -1
        self.resize(ABOUT_MIN_WIDTH_PX, max(height, self.minimumSizeHint().height()))

    def _selectable(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setWordWrap(True)
        return label

    def text(self) -> str:
        return about_text(self.facts, self.folders)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
        self.copy_button.setText("Copied")

    def show_licenses(self) -> None:
        if self.licenses_dialog is None:
            self.licenses_dialog = LicensesDialog(license_documents(), self)
        self.licenses_dialog.show()
        self.licenses_dialog.raise_()


class LicensesDialog(QDialog):
    """Each license text SessionScope ships: a list of titles, the chosen text beside it (read-only)."""

    def __init__(self, documents: tuple[LicenseDocument, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{DISPLAY_NAME}: licenses")
        self.documents = documents
        self.list = QListWidget(self)
        self.list.addItems([d.title for d in documents])
        self.list.setMaximumWidth(220)
        self.view = QPlainTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setFont(style.mono_font())
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.list.currentRowChanged.connect(self.show_document)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.list)
        row.addWidget(self.view, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(row, 1)
        layout.addWidget(buttons)
        self.resize(980, 640)
        if documents:
            self.list.setCurrentRow(0)
        else:  # a build packaged without its license files: say so rather than show nothing
            self.view.setPlainText("The license files are missing from this installation; SessionScope is under the MIT License.")

    def titles(self) -> list[str]:
        return [d.title for d in self.documents]

    def show_document(self, row: int) -> None:
        if not 0 <= row < len(self.documents):
            return
        if self.list.currentRow() != row:
            self.list.setCurrentRow(row)  # shows it through currentRowChanged
            return
        doc = self.documents[row]
        try:
            text = doc.path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            text = f"Cannot read {doc.path}: {err.strerror or err}"
        self.view.setPlainText(text)

    def shown_text(self) -> str:
        return self.view.toPlainText()


__all__ = [
    "AboutDialog",
    "Folder",
    "LicensesDialog",
    "about_text",
    "app_folders",
    "default_settings_file",
    "existing_folder",
    "open_folder",
]
