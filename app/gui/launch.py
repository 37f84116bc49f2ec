"""Entry point the CLI calls: ``run_app(root, demo, session, screenshot, seq=...)`` opens the window
(at event ``seq`` of ``session`` when both are given: a ``--seq`` or a ``sessionscope://`` link);
``run_app(source=PATH)`` opens whatever ``PATH`` is (``sessionscope PATH``: a root, a store, a lone
transcript, a support bundle, a case folder) as File > Open does, received files read-only.

Importing this module imports no Qt (the command line imports it to learn whether the window can
run); Qt, qasync and the window are imported inside ``run_app``, which also applies the process-wide
responsiveness knobs once (``runtime.responsiveness``) and, first of all, catches SIGTERM, SIGHUP and
SIGINT (``runtime.quit_signals``): each closes the window and shuts the worker pool down as a close
does, and the process exits with 128 + the signal's number.  Before any of that it asks
``runtime.display_check`` whether Qt can open a window here (exit 2 with what is missing if not).
Default folders come from ``app.paths``, the demo from ``app.demo``.  It also starts the log file
(``app.logging_setup``) and, for this window only,
the crash reporter (``dialogs.crash_dialog``): here and not in ``MainWindow`` so that tests, which
build windows themselves, keep pytest-qt's hook that fails a test on an exception in a slot.

May import: ``app.paths`` and ``app.logging_setup`` at module level; ``app.demo``, ``app.gui.runtime``,
``app.gui.dialogs`` and ``app.gui.window`` inside ``run_app``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.logging_setup import configure_logging, log_startup
from app.paths import default_root, demo_root_path

if TYPE_CHECKING:  # a type only: importing this module imports no Qt and installs nothing
    from app.gui.runtime.quit_signals import QuitSignals

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
ICON_NAME = "sessionscope.svg"


def resources_dir() -> Path:
    """The icons: a PyInstaller bundle's, else the source tree's, else a wheel install's ``<prefix>/share``."""
    bundled = getattr(sys, "_MEIPASS", None)  # a PyInstaller bundle keeps resources next to the executable
    if bundled:
        return Path(bundled) / "resources"
    if (RESOURCES / ICON_NAME).exists():
        return RESOURCES
    return Path(sys.prefix) / "share" / "sessionscope" / "resources"


def run_app(
    root: str | None = None,
    demo: bool = False,
    session: str | None = None,
    screenshot: str | None = None,
    *,
    tab: str | None = None,
    timeout: float = 60.0,
    seq: int | None = None,
    screenshot_of: str = "window",
    source: str | None = None,
    theme: str | None = None,
    size: tuple[int, int] | None = None,
) -> int:
    """Open the window (on ``source`` when given, else on ``root``); with ``screenshot`` save a PNG of it
    once loaded and return (0 on success).

    Exit 2 without trying when Qt cannot open a window here (no display, missing libraries): Qt itself
    would abort the process (134) with a misleading hint.

    ``tab``: the content tab to show (by key); ``theme``: ``light``, ``dark`` or ``system`` for this run,
    applied before the window exists (View > Theme's saved choice is not changed); ``size``: the
    window's (width, height), for screenshots at a given size.
    """
    from app.gui.runtime.display_check import display_problem
    from app.gui.runtime.quit_signals import QuitSignals

    problem = display_problem(os.environ)
    if problem is not None:
        sys.stderr.write(problem.message())
        return 2

    # First: from here on SIGTERM/SIGHUP/SIGINT wait for the loop instead of killing the process midway.
    signals = QuitSignals()
    try:
        return _open_window(
            signals,
            root,
            demo,
            session,
            screenshot,
            tab=tab,
            timeout=timeout,
            seq=seq,
            screenshot_of=screenshot_of,
            source=source,
            theme=theme,
            size=size,
        )
    finally:
        signals.restore()


def _open_window(
    signals: QuitSignals,
    root: str | None,
    demo: bool,
    session: str | None,
    screenshot: str | None,
    *,
    tab: str | None,
    timeout: float,
    seq: int | None,
    screenshot_of: str,
    source: str | None = None,
    theme: str | None = None,
    size: tuple[int, int] | None = None,
) -> int:
    import qasync
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from app.demo import ensure_demo_root
    from app.gui.dialogs.crash_dialog import CrashReporter
    from app.gui.runtime.quit_signals import exit_code_for
    from app.gui.runtime.responsiveness import apply_responsiveness_knobs
    from app.gui.runtime.worker_processes import shutdown_pool, warm_pool
    from app.gui.window.main_window import MainWindow
    from app.gui.window.screenshot import capture

    configure_logging()  # warnings still reach stderr; INFO and up also go to the rotating log file
    warm_pool()  # worker processes start while Qt sets up the window (PySide6 is imported above: no race)
    apply_responsiveness_knobs()  # GIL switch interval, collector, PySide6 refcount guard: once, here
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("SessionScope")
    app.setOrganizationName("SessionScope")
    app.setDesktopFileName("sessionscope")
    # After the names: the demo root's folder is Qt's answer for this application.
    opened = demo_root_path() if demo else source or root or default_root()
    log_startup("window" if screenshot is None else "window, screenshot", opened)
    icon_path = resources_dir() / ICON_NAME
    icon = QIcon(str(icon_path)) if icon_path.exists() else QIcon()
    app.setWindowIcon(icon)

    if theme is not None:
        from app.gui import theme as themes

        themes.apply(app, theme)  # before the window: it wins over View > Theme's saved choice for this run
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = MainWindow(restore_geometry=screenshot is None and size is None, icon=icon)
    if size is not None:
        window.resize(*size)
    reporter = CrashReporter(lambda: window, lambda m: window.statusBar().showMessage(m, 15_000), parent=app)
    reporter.install()
    window.show()
    result = {"code": 0}
    tasks: list[asyncio.Task[None]] = []

    def quit_on_signal(signum: int) -> None:
        """A quit signal: close every window and stop the loop; the shutdown below then runs as on a close."""
        logging.getLogger(__name__).info("stopping on %s", signal.Signals(signum).name)
        result["code"] = exit_code_for(signum)
        for pending in tasks:
            pending.cancel()  # a screenshot or the demo's build in progress: its result no longer matters
        app.closeAllWindows()
        loop.stop()

    signals.watch(quit_on_signal, parent=app)

    async def start() -> None:
        if demo:
            window.statusBar().showMessage("Preparing the demo root …")
            path = await ensure_demo_root(demo_root_path())
            window.statusBar().clearMessage()
            window.open_root(path, session=session, seq=seq)
        else:  # any source (a root as before, a transcript, a bundle: File > Open's path), opened before the capture waits
            await window.sources.open(source or root or default_root(), session=session or None, seq=seq)
        if tab is not None and not screenshot:
            window.content_tabs.show(tab)
        if screenshot:
            result["code"] = await capture(window, screenshot, tab=tab, timeout=timeout, subject=screenshot_of)
            window.close()
            loop.stop()

    def started(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            logging.getLogger(__name__).error("startup failed", exc_info=task.exception())
            result["code"] = 1
            loop.stop()

    with loop:
        task = loop.create_task(start())
        task.add_done_callback(started)
        tasks.append(task)
        loop.run_forever()
        loop.run_until_complete(window.shutdown())
    reporter.uninstall()
    shutdown_pool()
    return int(result["code"])


__all__ = ["run_app"]
