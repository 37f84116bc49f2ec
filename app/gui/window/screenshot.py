"""``--screenshot FILE``: wait until the list and the selected session are loaded, save the window, quit.

``--screenshot-of about`` saves Help > About instead, and ``--screenshot-of crash`` raises a deliberate
error in a Qt slot and saves the crash dialog the reporter shows for it: the installer check
(``packaging/ci_check.sh``) looks at both in the frozen app, where a missing module or resource would
only show up there.

May import: PySide6 (QTimer, QApplication), ``window.main_window`` and the standard library.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget

from app.gui.window.main_window import MainWindow

log = logging.getLogger(__name__)

SUBJECTS = ("window", "about", "crash")  # what ``--screenshot-of`` can save
DIALOG_WAIT_S = 10.0  # how long a dialog may take to appear


class ScreenshotCrash(RuntimeError):
    """The deliberate error of ``--screenshot-of crash`` (a name nobody mistakes for a real failure)."""


async def wait_until_loaded(window: MainWindow, timeout: float) -> bool:
    """True when the listing, the visible diagnoses and the selected session's first view are in."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout

    async def step(aw: object) -> bool:
        remaining = deadline - loop.time()
        try:
            await asyncio.wait_for(aw, max(0.01, remaining))  # type: ignore[arg-type]
            return True
        except TimeoutError:
            return False

    ok = await step(window.controller.listed.wait())
    ok = ok and await step(window.diagnosis_pass.wait_idle())
    if ok and window.session_model.rowCount() > 0:
        ok = await step(window.first_view.wait())
    window.diagnosis_pass.flush()
    return ok


async def capture(
    window: MainWindow, path: str, *, tab: str | None = None, timeout: float = 60.0, subject: str = "window"
) -> int:
    ok = await wait_until_loaded(window, timeout)
    if not ok:
        log.warning("screenshot: not everything loaded within %.0f s; saving what is shown", timeout)
    if tab is not None:
        if window.content_tabs.index(tab) < 0:
            log.error("screenshot: no tab %r (there are: %s)", tab, ", ".join(window.content_tabs.keys()))
            ok = False
        window.content_tabs.show(tab)  # by key: header, timeline, conversation, raw, stats
        log.info("screenshot: tab %s, %dx%d", window.content_tabs.current(), window.width(), window.height())
    target: QWidget | None = window
    if subject == "about":
        target = window.show_about()
    elif subject == "crash":
        target = await _crash_dialog()
    await asyncio.sleep(0.4)  # let pending layout and paint events run
    saved = target is not None and target.grab().save(path, "PNG")
    if not saved:
        log.error("screenshot: could not write %s (%s)", path, "no dialog appeared" if target is None else "save failed")
    return 0 if ok and saved else 1


async def _crash_dialog() -> QWidget | None:
    """Raise ``ScreenshotCrash`` in a timer slot (PySide6 hands it to ``sys.excepthook``, where the launch
    path's reporter is) and return the dialog it shows."""
    from app.gui.dialogs.crash_dialog import CrashDialog

    def boom() -> None:
        raise ScreenshotCrash("a deliberate error raised by --screenshot-of crash (nothing is wrong)")

    QTimer.singleShot(0, boom)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DIALOG_WAIT_S
    while loop.time() < deadline:
        await asyncio.sleep(0.05)
        for w in QApplication.topLevelWidgets():
            if isinstance(w, CrashDialog) and w.isVisible():
                return w
    return None
