"""Entry point the CLI calls: ``run_app(root, demo, session, screenshot)`` opens the window."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
ICON_NAME = "sessionscope.svg"


def default_root() -> str:
    """``$DSH_HOME/sessions``, else ``~/.dsh/sessions`` (the harness's own default)."""
    home = os.environ.get("DSH_HOME")
    if home:
        return os.path.join(home, "sessions")
    return os.path.join(os.path.expanduser("~"), ".dsh", "sessions")


def resources_dir() -> Path:
    """The icons: a PyInstaller bundle's, else the source tree's, else a wheel install's ``<prefix>/share``."""
    bundled = getattr(sys, "_MEIPASS", None)  # a PyInstaller bundle keeps resources next to the executable
    if bundled:
        return Path(bundled) / "resources"
    if (RESOURCES / ICON_NAME).exists():
        return RESOURCES
    return Path(sys.prefix) / "share" / "sessionscope" / "resources"


def run_app(root: str | None = None, demo: bool = False, session: str | None = None, screenshot: str | None = None,
            *, tab: str | None = None, timeout: float = 60.0) -> int:
    """Open the window; with ``screenshot`` save a PNG of it once loaded and return (0 on success)."""
    import qasync
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from app.gui.demo import demo_root_path, ensure_demo_root
    from app.gui.diagnose_worker import shutdown_pool, warm_pool
    from app.gui.qtfix import guard_bool_refcounts
    from app.gui.screenshot import capture
    from app.gui.views.main_window import MainWindow

    logging.basicConfig(level=logging.WARNING, format="sessionscope: %(levelname)s: %(message)s")
    warm_pool()  # worker processes start while Qt sets up the window
    guard_bool_refcounts()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("SessionScope")
    app.setOrganizationName("SessionScope")
    app.setDesktopFileName("sessionscope")
    icon_path = resources_dir() / ICON_NAME
    icon = QIcon(str(icon_path)) if icon_path.exists() else QIcon()
    app.setWindowIcon(icon)

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = MainWindow(restore_geometry=screenshot is None, icon=icon)
    window.show()
    result = {"code": 0}

    async def start() -> None:
        if demo:
            window.statusBar().showMessage("Preparing the demo root …")
            path = await ensure_demo_root(demo_root_path())
            window.statusBar().clearMessage()
            window.open_root(path, session=session)
        else:
            window.open_root(root or default_root(), session=session)
        if screenshot:
            result["code"] = await capture(window, screenshot, tab=tab, timeout=timeout)
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
        loop.run_forever()
        loop.run_until_complete(window.shutdown())
    shutdown_pool()
    return int(result["code"])


__all__ = ["default_root", "run_app"]
