"""Help > About, the crash dialog and the first launch's empty state (issue 15, "First run and trouble").

The crash reporter is driven by calling its hook directly (the launcher installs it, the window does
not); one test installs it for real and raises inside a Qt slot, to show PySide6 routes that to it.
Set ``SESSIONSCOPE_SHOTS`` to a folder to save about.png, crash.png and first_run.png there.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, wait_listed
from PySide6.QtCore import QTimer, QUrl, qVersion
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel

from app.about import app_version
from app.gui.dialogs import about_dialog
from app.gui.dialogs.crash_dialog import MAX_CRASH_DIALOGS_PER_RUN, CrashDialog, CrashReporter
from app.logging_setup import LOG_DIR_ENV, LOG_FILE_NAME, AppLogFile, configure_logging
from persistence import SESSION_FORMAT_VERSION, SQLITE_SCHEMA_VERSION

SHOTS = os.environ.get("SESSIONSCOPE_SHOTS")


def _shot(widget: Any, qtbot: Any, name: str) -> None:
    if SHOTS:
        qtbot.wait(300)
        widget.grab().save(str(Path(SHOTS) / name))


@pytest.fixture
def log_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private log folder, configured as the launcher does; the root logger is put back afterwards."""
    folder = tmp_path / "logs"
    monkeypatch.setenv(LOG_DIR_ENV, str(folder))
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    configure_logging()
    yield folder
    for h in root.handlers:
        if h not in handlers:
            h.close()
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def opened_urls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    urls: list[str] = []

    def fake_open(url: QUrl) -> bool:
        urls.append(url.toLocalFile())
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(fake_open))
    return urls


def _crash_dialogs() -> list[CrashDialog]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, CrashDialog) and w.isVisible()]


def _fail(kind: type[Exception] = ValueError, message: str = "the row vanished") -> Any:
    try:
        raise kind(message)
    except Exception:
        return sys.exc_info()


# ---------------------------------------------------------------- Help > About


def test_about_shows_versions_formats_and_folders_and_opens_them(
    make_window: Any, qtbot: Any, tmp_path: Path, log_folder: Path, opened_urls: list[str]
) -> None:
    w = make_window()
    w.menus.about.trigger()
    dlg = w.about_dialog
    qtbot.waitUntil(dlg.isVisible, timeout=WAIT_MS)
    text = dlg.text()
    assert f"SessionScope {app_version()}" in text
    assert f"Session log format: {SESSION_FORMAT_VERSION}" in text
    assert f"SQLite store schema: {SQLITE_SCHEMA_VERSION}" in text
    assert f"Qt: {qVersion()}" in text and sys.version.split()[0] in text
    settings_file = w.settings.q.fileName()
    assert f"Settings: {settings_file}" in text  # the window's own settings, not the default QSettings
    assert f"Log: {log_folder / LOG_FILE_NAME}" in text
    assert f"Cache (search index, statistics): {os.environ['SESSIONSCOPE_CACHE_DIR']}" in text
    # What the labels show is what the text says (the dialog is not only a copy button).
    shown = {label.text() for label in dlg.findChildren(QLabel)}
    assert str(log_folder / LOG_FILE_NAME) in shown and settings_file in shown

    for name in ("Settings", "Cache", "Log", "Data"):
        dlg.open_buttons[name].click()
    assert opened_urls[0] == os.path.dirname(settings_file)
    assert opened_urls[2] == str(log_folder)
    # A folder not created yet (no index built) opens its nearest existing parent, never nothing.
    cache = os.environ["SESSIONSCOPE_CACHE_DIR"]
    assert opened_urls[1] == about_dialog.existing_folder(cache) and cache.startswith(opened_urls[1])
    assert all(os.path.isdir(u) for u in opened_urls)

    _shot(dlg, qtbot, "about.png")
    dlg.copy()
    assert QGuiApplication.clipboard().text() == text
    dlg.close()


def test_existing_folder_walks_up_to_a_folder_that_exists(tmp_path: Path) -> None:
    assert about_dialog.existing_folder(str(tmp_path / "a" / "b" / "c")) == str(tmp_path)
    assert about_dialog.existing_folder(str(tmp_path)) == str(tmp_path)


# ---------------------------------------------------------------- the crash dialog


def test_an_unhandled_error_shows_a_dialog_with_copy_details_and_the_log_path(
    make_window: Any, qtbot: Any, log_folder: Path, opened_urls: list[str]
) -> None:
    w = make_window()
    messages: list[str] = []
    reporter = CrashReporter(lambda: w, messages.append)
    reporter.excepthook(*_fail(ValueError, "the row vanished"))
    qtbot.waitUntil(lambda: reporter.dialog is not None and reporter.dialog.isVisible(), timeout=WAIT_MS)
    dlg = reporter.dialog
    assert dlg is not None
    assert dlg.message.text() == "ValueError: the row vanished"
    log_file = log_folder / LOG_FILE_NAME
    assert str(log_file) in dlg.log_label.text()
    _shot(dlg, qtbot, "crash.png")
    logged = log_file.read_text()
    assert "unhandled exception in the window" in logged and "Traceback" in logged and "the row vanished" in logged

    dlg.copy_button.click()
    copied = QGuiApplication.clipboard().text()
    assert copied == dlg.report.details
    assert "Traceback (most recent call last)" in copied and "ValueError: the row vanished" in copied
    assert f"SessionScope {app_version()}" in copied
    dlg.open_log_button.click()
    assert opened_urls == [str(log_folder)]
    assert w.isVisible()  # the window is still there, and still works
    dlg.close()


def test_a_repeating_error_is_shown_once_and_counted(make_window: Any, qtbot: Any, log_folder: Path) -> None:
    w = make_window()
    messages: list[str] = []
    reporter = CrashReporter(lambda: w, messages.append)

    def same_place(i: int) -> Any:
        return _fail(KeyError, f"key {i}")  # one line raises every time: the same failure, other text

    for i in range(50):
        reporter.excepthook(*same_place(i))
    qtbot.wait(50)
    assert len(_crash_dialogs()) == 1
    dlg = reporter.dialog
    assert dlg is not None and dlg.repeats == 50
    assert "50 times" in dlg.counts.text() and dlg.counts.isVisibleTo(dlg)
    reporter.excepthook(*_fail(OSError, "disk full"))  # a different error while the dialog is open
    qtbot.wait(50)
    assert len(_crash_dialogs()) == 1 and dlg.others == 1 and "1 other error" in dlg.counts.text()
    # The log is not flooded: the first in full, repeats one line each up to 10, then at powers of ten.
    logged = (log_folder / LOG_FILE_NAME).read_text()
    assert logged.count("Traceback") == 2  # the KeyError once, the OSError once
    assert logged.count("again (") == len([n for n in range(2, 51) if n <= 10])

    dlg.close()
    qtbot.waitUntil(lambda: reporter.dialog is None, timeout=WAIT_MS)
    reporter.excepthook(*same_place(99))  # shown already: the status bar says so, no second dialog
    qtbot.wait(50)
    assert _crash_dialogs() == [] and messages and "happened again" in messages[-1]


def test_no_more_than_the_cap_of_dialogs_per_run(make_window: Any, qtbot: Any, log_folder: Path) -> None:
    w = make_window()
    messages: list[str] = []
    reporter = CrashReporter(lambda: w, messages.append)
    kinds = [ValueError, KeyError, OSError, TypeError, RuntimeError, LookupError, ArithmeticError]
    assert len(kinds) > MAX_CRASH_DIALOGS_PER_RUN
    for kind in kinds:
        reporter.excepthook(*_fail(kind, kind.__name__))  # another type: another error, though from one line
        qtbot.wait(20)
        if reporter.dialog is not None:
            reporter.dialog.close()
        qtbot.waitUntil(lambda: reporter.dialog is None, timeout=WAIT_MS)
    assert reporter.dialogs_shown == MAX_CRASH_DIALOGS_PER_RUN
    assert len(messages) == len(kinds) - MAX_CRASH_DIALOGS_PER_RUN


@pytest.mark.qt_no_exception_capture
def test_installed_it_catches_an_error_in_a_qt_slot_and_chains(
    make_window: Any, qtbot: Any, log_folder: Path, qt_errors: Any
) -> None:
    """PySide6 hands a slot's exception to sys.excepthook: the installed reporter shows it, the window
    keeps running, and the hook it replaced (here the test suite's) still hears of it."""
    w = make_window()
    before = sys.excepthook, threading.excepthook
    reporter = CrashReporter(lambda: w)
    reporter.install()
    try:
        assert sys.excepthook == reporter.excepthook

        def broken_slot() -> None:
            raise RuntimeError("slot failed")

        QTimer.singleShot(0, broken_slot)
        qtbot.waitUntil(lambda: reporter.dialog is not None, timeout=WAIT_MS)
        assert reporter.dialog is not None and reporter.dialog.message.text() == "RuntimeError: slot failed"
        ran: list[bool] = []
        QTimer.singleShot(0, lambda: ran.append(True))  # the event loop goes on
        qtbot.waitUntil(lambda: ran == [True], timeout=WAIT_MS)
    finally:
        reporter.uninstall()
    assert (sys.excepthook, threading.excepthook) == before
    chained = qt_errors.take()
    assert len(chained) == 1 and "slot failed" in chained[0]
    reporter.dialog.close()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # chained to pytest's hook
def test_a_thread_error_is_logged_and_shown_on_the_gui_thread(make_window: Any, qtbot: Any, log_folder: Path) -> None:
    w = make_window()
    reporter = CrashReporter(lambda: w)
    reporter.install()
    try:

        def work() -> None:
            raise ZeroDivisionError("worker thread")

        t = threading.Thread(target=work, name="ss-test-worker")
        t.start()
        t.join()
        qtbot.waitUntil(lambda: reporter.dialog is not None, timeout=WAIT_MS)
    finally:
        reporter.uninstall()
    dlg = reporter.dialog
    assert dlg is not None and dlg.thread() is QApplication.instance().thread()  # type: ignore[union-attr]
    assert "thread ss-test-worker" in (log_folder / LOG_FILE_NAME).read_text()
    dlg.close()


def test_without_a_log_file_the_dialog_says_so(make_window: Any, qtbot: Any, tmp_path: Path) -> None:
    root = logging.getLogger()
    assert not any(isinstance(h, AppLogFile) for h in root.handlers)
    w = make_window()
    reporter = CrashReporter(lambda: w)
    reporter.excepthook(*_fail())
    qtbot.waitUntil(lambda: reporter.dialog is not None, timeout=WAIT_MS)
    dlg = reporter.dialog
    assert dlg is not None and "no log file" in dlg.log_label.text() and not dlg.open_log_button.isEnabled()
    dlg.close()


# ---------------------------------------------------------------- first launch


def test_first_launch_without_a_root_offers_open_folder_and_open_demo(
    make_window: Any, qtbot: Any, tmp_path: Path, demo_root: str
) -> None:
    missing = tmp_path / "home" / ".dsh" / "sessions"
    w = make_window(missing)
    pane = w.list_pane
    qtbot.waitUntil(lambda: pane.stack.currentWidget() is pane.empty, timeout=WAIT_MS)
    assert str(missing) in pane.empty_label.text()
    assert pane.demo_button.text() == "Open demo" and pane.open_button.text().startswith("Open folder …")
    assert pane.demo_button.isVisible() and pane.open_button.isVisible()
    w.resize(1100, 600)
    _shot(w, qtbot, "first_run.png")

    # Open folder …: the folder chooser opens; choosing a folder opens it as the root.
    pane.open_button.click()
    chooser = [d for d in w.findChildren(QFileDialog) if d.isVisible()]
    assert len(chooser) == 1
    chooser[0].fileSelected.emit(demo_root)  # what choosing a folder in the dialog emits
    chooser[0].reject()
    qtbot.waitUntil(lambda: w.controller.root == os.path.abspath(demo_root), timeout=WAIT_MS)
    wait_listed(qtbot, w, details=False)
    assert w.session_model.total > 0
    assert pane.stack.currentWidget() is pane.table

    # Open demo: from the empty state again, the button opens the demo root.
    w.open_root(str(missing))
    qtbot.waitUntil(lambda: pane.stack.currentWidget() is pane.empty, timeout=WAIT_MS)
    pane.demo_button.click()
    qtbot.waitUntil(lambda: w.controller.root == os.path.abspath(demo_root), timeout=WAIT_MS)
    wait_listed(qtbot, w, details=False)
    assert w.session_model.total > 0 and pane.stack.currentWidget() is pane.table
