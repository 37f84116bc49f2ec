"""An error nobody caught: logged, then shown in a dialog with "Copy details" and the log's path, and
the window keeps running.

Why: PySide6 hands an exception raised in a Qt slot to ``sys.excepthook`` and carries on; the
default hook prints it to a stderr that a desktop launch does not have, so the user saw nothing and
had nothing to report.  ``CrashReporter.install`` (called by the launcher only, never by the window:
tests keep their own hook, which fails the test) replaces that hook and ``threading.excepthook``, and
chains to the hooks it replaced (except Python's defaults, which would print the traceback twice).

Storms: a broken paint or timer slot raises the same exception many times a second.  An exception
is "the same" when its type and the file:line of every frame match; it is shown once, and repeats
only update the counts (in the open dialog, else in the status bar).  While one dialog is open a
different error is counted in it, not stacked on top; after ``MAX_CRASH_DIALOGS_PER_RUN`` dialogs
only the log and the status bar hear of new ones.

May import: PySide6, ``app.about``, ``app.logging_setup``, ``app.gui.dialogs.about_dialog``
(``open_folder``) and ``app.gui.dialogs.parts``.
"""

from __future__ import annotations

import html
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

import PySide6
from PySide6.QtCore import QObject, Qt, Signal, qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QStyle, QVBoxLayout, QWidget

from app.about import DISPLAY_NAME, app_version
from app.glossary import noun, plural
from app.gui.dialogs.about_dialog import open_folder
from app.gui.dialogs.parts import WARN, note, plain_text
from app.logging_setup import ExcInfo, current_log_file, log_dir, log_unhandled

MAX_CRASH_DIALOGS_PER_RUN = 5  # count: past this many, a run that keeps failing only logs
MESSAGE_SHOWN_CHARS = 600  # a longer exception message is cut in the dialog (the details keep it whole)
STATUS_MESSAGE_MS = 15_000
# Repeats of one error are logged one line each up to this count, then only at 100, 1000, ... (a
# failing paint slot repeats at the frame rate; the rotating log would otherwise lose everything else).
REPEATS_LOGGED_IN_FULL = 10

log = logging.getLogger("sessionscope.crash")

Signature = tuple[str, tuple[tuple[str, int], ...]]
ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], object]
ThreadHook = Callable[[threading.ExceptHookArgs], object]


def signature_of(exc_type: type[BaseException], tb: TracebackType | None) -> Signature:
    """The exception's type and the file:line of every frame: equal for a repeat of the same failure."""
    frames = tuple((frame.filename, frame.lineno or 0) for frame in traceback.extract_tb(tb))
    return (f"{exc_type.__module__}.{exc_type.__qualname__}", frames)


@dataclass(frozen=True, slots=True)
class CrashReport:
    """One unhandled exception, as text: what the dialog shows and what "Copy details" copies."""

    signature: Signature
    summary: str  # ``TypeName: message``
    details: str  # versions, where, and the full traceback
    where: str


def crash_report(exc_info: ExcInfo, where: str) -> CrashReport:
    exc_type, exc, tb = exc_info
    message = str(exc)
    summary = f"{exc_type.__name__}: {message}" if message else exc_type.__name__
    trace = "".join(traceback.format_exception(exc_type, exc, tb))
    head = (
        f"{DISPLAY_NAME} {app_version()} · Python {sys.version.split()[0]} · Qt {qVersion()} "
        f"(PySide6 {PySide6.__version__}) · {sys.platform}\nUnhandled exception in {where}\n\n"
    )
    return CrashReport(signature_of(exc_type, tb), summary, head + trace, where)


def worth_logging(count: int) -> bool:
    """Log the ``count``-th repeat? The first ``REPEATS_LOGGED_IN_FULL``, then each power of ten."""
    if count <= REPEATS_LOGGED_IN_FULL:
        return True
    while count % 10 == 0:
        count //= 10
    return count == 1


class CrashDialog(QDialog):
    """The dialog for one report; ``note_repeat``/``note_other`` update its counts while it is open."""

    def __init__(self, report: CrashReport, log_file: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report = report
        self.setWindowTitle(f"{DISPLAY_NAME}: something went wrong")
        self.setWindowModality(Qt.WindowModality.NonModal)  # never blocks the window it reports on
        self.repeats = 1
        self.others = 0

        icon = QLabel(self)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(40, 40))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        intro = note(
            f"<b>{DISPLAY_NAME} ran into an error it did not expect.</b><br>"
            "The window keeps running, but what you were doing when it happened may not have finished."
        )
        summary = report.summary
        if len(summary) > MESSAGE_SHOWN_CHARS:
            summary = summary[:MESSAGE_SHOWN_CHARS] + " …"
        self.message = QLabel(summary, self)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setStyleSheet("QLabel { font-weight: bold; }")
        self.counts = note("", WARN)
        self.counts.hide()
        self.details = plain_text(report.details, max_rows=10)
        if log_file:
            where = f"Details were written to the log:<br><code>{html.escape(log_file)}</code>"
        else:
            where = "There is no log file (its folder could not be written): use <i>Copy details</i> to keep them."
        self.log_label = note(where)
        self.log_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = buttons.addButton("Copy details", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self.copy_details)
        folder = os.path.dirname(log_file) if log_file else log_dir()
        self.open_log_button = buttons.addButton("Open log folder", QDialogButtonBox.ButtonRole.ActionRole)
        self.open_log_button.clicked.connect(lambda: open_folder(folder))
        self.open_log_button.setEnabled(log_file is not None)
        buttons.rejected.connect(self.reject)

        top = QVBoxLayout()
        top.addWidget(intro)
        top.addWidget(self.message)
        top.addWidget(self.counts)
        head = QHBoxLayout()
        head.addWidget(icon)
        head.addLayout(top, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.details)
        layout.addWidget(self.log_label)
        layout.addWidget(buttons)
        self.resize(720, self.sizeHint().height())

    def copy_details(self) -> None:
        QGuiApplication.clipboard().setText(self.report.details)
        self.copy_button.setText("Copied")

    def note_repeat(self, count: int) -> None:
        self.repeats = count
        self._show_counts()

    def note_other(self) -> None:
        self.others += 1
        self._show_counts()

    def _show_counts(self) -> None:
        parts = []
        if self.repeats > 1:
            parts.append(f"It happened {self.repeats:,} times so far.")
        if self.others:
            parts.append(f"{plural(self.others, 'other error')} since then {noun(self.others, 'is')} in the log.")
        self.counts.setText(" ".join(parts))
        self.counts.setVisible(bool(parts))


class CrashReporter(QObject):
    """Logs every unhandled exception and shows it (once per kind) in a ``CrashDialog``.

    ``handle`` may be called from any thread: it logs at once and hands the report to the GUI thread
    through a queued signal.  ``status`` (the window's status bar) hears of what is not shown.
    """

    reported = Signal(object)  # CrashReport (emitted from any thread, shown on the GUI thread)

    def __init__(
        self,
        parent_widget: Callable[[], QWidget | None] = lambda: None,
        status: Callable[[str], object] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._parent_widget = parent_widget
        self._status = status
        self._lock = threading.Lock()  # ``counts`` is written from whichever thread failed
        self.counts: dict[Signature, int] = {}
        self.shown: set[Signature] = set()
        self.dialogs_shown = 0
        self.dialog: CrashDialog | None = None
        self._showing = False
        self._previous_hooks: tuple[ExceptHook, ThreadHook] | None = None
        self.reported.connect(self._show)

    # ------------------------------------------------------------ hooks

    def install(self) -> None:
        """Become ``sys.excepthook`` and ``threading.excepthook`` (the launcher's window only).

        Each chains to the hook it replaced unless that is Python's default, which would print the
        traceback to stderr a second time (the log's stderr handler already did).
        """
        if self._previous_hooks is None:
            self._previous_hooks = (sys.excepthook, threading.excepthook)
            sys.excepthook = self.excepthook
            threading.excepthook = self.thread_excepthook

    def uninstall(self) -> None:
        if self._previous_hooks is not None:
            sys.excepthook, threading.excepthook = self._previous_hooks
            self._previous_hooks = None

    def excepthook(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        previous = self._previous_hooks[0] if self._previous_hooks is not None else sys.__excepthook__
        if issubclass(exc_type, KeyboardInterrupt | SystemExit):  # Ctrl+C in the terminal: not a crash
            previous(exc_type, exc, tb)
            return
        self.handle((exc_type, exc, tb), "the window")
        if previous is not sys.__excepthook__:
            previous(exc_type, exc, tb)

    def thread_excepthook(self, args: threading.ExceptHookArgs) -> None:
        previous = self._previous_hooks[1] if self._previous_hooks is not None else threading.__excepthook__
        if args.exc_value is not None and not issubclass(args.exc_type, SystemExit):
            name = args.thread.name if args.thread is not None else "?"
            self.handle((args.exc_type, args.exc_value, args.exc_traceback), f"thread {name}")
        if previous is not threading.__excepthook__:
            previous(args)

    # ------------------------------------------------------------ reporting

    def handle(self, exc_info: ExcInfo, where: str) -> CrashReport:
        """Log ``exc_info`` and queue it for the dialog; never raises (it runs inside the hook)."""
        report = crash_report(exc_info, where)
        with self._lock:
            count = self.counts.get(report.signature, 0) + 1
            self.counts[report.signature] = count
        try:
            if count == 1:
                log_unhandled(exc_info, where)
            elif worth_logging(count):
                log.error("unhandled exception in %s again (%d times so far): %s", where, count, report.summary)
        except Exception:  # a broken log must not turn one error into a recursion
            pass
        self.reported.emit(report)
        return report

    def _show(self, report: CrashReport) -> None:
        if self._showing:  # the dialog itself failed while being built: the log has it, stop here
            return
        self._showing = True
        try:
            self._present(report)
        except Exception:  # showing must never raise back into the hook
            log.exception("could not show the error dialog")
        finally:
            self._showing = False

    def _present(self, report: CrashReport) -> None:
        count = self.counts.get(report.signature, 1)
        dialog = self.dialog
        if dialog is not None:
            if dialog.report.signature == report.signature:
                dialog.note_repeat(count)
            else:
                dialog.note_other()
            return
        if report.signature in self.shown or self.dialogs_shown >= MAX_CRASH_DIALOGS_PER_RUN:
            self._tell(f"An error happened again ({report.summary}); it is in the log")
            return
        self.shown.add(report.signature)
        self.dialogs_shown += 1
        dialog = CrashDialog(report, current_log_file(), self._parent_widget())
        if count > 1:
            dialog.note_repeat(count)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(self._closed)
        self.dialog = dialog
        dialog.show()
        dialog.raise_()

    def _closed(self, _code: int) -> None:
        self.dialog = None

    def _tell(self, message: str) -> None:
        if self._status is not None:
            self._status(message[: MESSAGE_SHOWN_CHARS // 3])


__all__ = [
    "MAX_CRASH_DIALOGS_PER_RUN",
    "CrashDialog",
    "CrashReport",
    "CrashReporter",
    "crash_report",
    "signature_of",
    "worth_logging",
]
