"""Fixtures for the window tests: offscreen Qt, one qasync loop on pytest-qt's QApplication, temp roots.

The qasync loop is created with ``already_running=True``: it never runs ``exec()`` itself, its timers
and cross-thread callbacks fire whenever Qt processes events, so ``qtbot.waitUntil`` drives asyncio
as well.  ``arun`` runs one coroutine to completion that way (with a timeout, so nothing hangs).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_ISOLATED = tempfile.mkdtemp(prefix="sessionscope-gui-tests-")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_ISOLATED, "config")
os.environ["XDG_DATA_HOME"] = os.path.join(_ISOLATED, "data")
os.environ["SESSIONSCOPE_DATA_DIR"] = os.path.join(_ISOLATED, "data", "SessionScope")
os.environ["SESSIONSCOPE_CACHE_DIR"] = os.path.join(_ISOLATED, "cache")  # search index and insight cache

import pytest  # noqa: E402
import qasync  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402

from app.gui.runtime.pyside_refcount_guard import guard_bool_refcounts  # noqa: E402

guard_bool_refcounts()  # before any Qt object exists; the other knobs come with the first window

from guikit import UPSTREAM, WAIT_MS, copy_private, need_upstream  # noqa: E402

from app.demo import build_demo_root  # noqa: E402
from app.gui.runtime.responsiveness import apply_responsiveness_knobs  # noqa: E402
from app.gui.runtime.worker_processes import shutdown_pool  # noqa: E402
from app.gui.settings import AppSettings  # noqa: E402
from app.gui.window.main_window import MainWindow  # noqa: E402

Runner = Callable[..., Any]


@pytest.fixture(scope="session")
def _session_loop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.events._set_running_loop(None)  # registered per test by ``aloop`` only
    yield loop
    shutdown_pool()
    loop.stop()
    try:
        loop.close()
    except RuntimeError:
        pass


@pytest.fixture(autouse=True)
def aloop(_session_loop: asyncio.AbstractEventLoop) -> Iterator[asyncio.AbstractEventLoop]:
    """The qasync loop is the running loop during each window test, and only then.

    (Other suites call ``asyncio.run``, which refuses to start while a loop is registered as running.)
    """
    asyncio.set_event_loop(_session_loop)
    asyncio.events._set_running_loop(_session_loop)
    try:
        yield _session_loop
    finally:
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(None)


@pytest.fixture
def arun(qtbot: Any, aloop: asyncio.AbstractEventLoop) -> Runner:
    """Run a coroutine on the qasync loop until it finishes; returns its result."""

    def run(coro: Coroutine[Any, Any, Any], timeout_ms: int = WAIT_MS) -> Any:
        task = asyncio.ensure_future(coro)
        try:
            qtbot.waitUntil(task.done, timeout=timeout_ms)
        except BaseException:
            task.cancel()
            raise
        return task.result()

    return run


@pytest.fixture
def make_window(
    qtbot: Any, aloop: asyncio.AbstractEventLoop, arun: Runner, tmp_path: Path
) -> Iterator[Callable[..., MainWindow]]:
    windows: list[MainWindow] = []

    def make(root: str | Path | None = None, *, session: str | None = None, poll_ms: int = 60_000) -> MainWindow:
        settings = AppSettings(QSettings(str(tmp_path / f"settings-{len(windows)}.ini"), QSettings.Format.IniFormat))
        apply_responsiveness_knobs()  # as the launcher does before its window (once per process)
        w = MainWindow(settings, poll_ms=poll_ms, restore_geometry=False)
        w.show()
        windows.append(w)
        if root is not None:
            w.open_root(str(root), session=session)
        return w

    yield make
    for w in windows:
        arun(w.shutdown())
        w.close()
        w.deleteLater()


@pytest.fixture(scope="session")
def demo_root() -> str:
    """The demo root, built once per test session into the isolated data folder.

    Built on a plain thread, as the app does: the builder runs its own event loop.
    """
    path = os.path.join(os.environ["SESSIONSCOPE_DATA_DIR"], "demo-root")
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(build_demo_root, path).result(timeout=120)


@pytest.fixture
def zoo_root(tmp_path: Path) -> Path:
    """Several upstream zstd fixture roots merged into one (balanced, crashed, torn, fork, versions, unknown)."""
    need_upstream()
    root = tmp_path / "zoo"
    for scenario in (
        "balanced/root",
        "interrupted/before/root",
        "torn-tail/cut-multiblock-frame/before/root",
        "fork/root",
        "future-version/root",
        "unknown-event/root",
    ):
        copy_private(UPSTREAM / "jsonl-zstd" / scenario, root)
    return root


# ---------------------------------------------------------------- exceptions inside Qt and the loop


class QtErrors:
    """Exceptions raised where no test frame sees them: Qt slots, PySide6 virtual overrides, loop callbacks.

    PySide6 hands an exception raised in a slot (a signal's Python receiver, a ``QTimer`` callback) or
    in a virtual override Qt calls from its event loop (``data()``, ``paintEvent``) to ``sys.excepthook``
    and carries on; qasync hands one raised in a loop callback (or a task nobody awaits) to the loop's
    exception handler, which only logs it.  Either way the test would pass with a traceback on stderr
    (issue 16 bug 4 was found that way).  ``take()`` consumes what a test provoked on purpose.
    """

    def __init__(self) -> None:
        self.caught: list[str] = []

    def hook(self, exc_type: type[BaseException], value: BaseException, tb: Any) -> None:
        self.caught.append("".join(traceback.format_exception(exc_type, value, tb)))

    def loop_handler(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if exc is None or isinstance(exc, asyncio.CancelledError):
            loop.default_exception_handler(context)  # a warning without an exception is not a failure
            return
        self.caught.append(f"{context.get('message', 'loop callback failed')}\n" + "".join(traceback.format_exception(exc)))

    def take(self) -> list[str]:
        out, self.caught = self.caught, []
        return out

    def check(self, when: str) -> None:
        if self.caught:
            found = self.take()
            head = f"{when}: {len(found)} exception(s) raised in a Qt slot, virtual method or loop callback:\n"
            pytest.fail(head + "\n".join(found), pytrace=False)


@pytest.fixture(autouse=True)
def qt_errors(qapp: Any, aloop: asyncio.AbstractEventLoop) -> Iterator[QtErrors]:
    """Fail any window test on an exception raised in a Qt slot, a virtual method or a loop callback.

    Independent of pytest-qt's own capture (which a ``qt_no_exception_capture`` mark turns off): the hook
    records, then chains to whatever hook was installed before it (pytest-qt's, or the default).  A hook
    installed later (the launcher's crash dialog, ``app.gui.launch``) must chain to the previous one, as
    it does; whatever a test leaves installed is put back afterwards so nothing leaks into the next test.
    """
    errors = QtErrors()
    previous = sys.excepthook

    def hook(exc_type: type[BaseException], value: BaseException, tb: Any) -> None:
        errors.hook(exc_type, value, tb)
        previous(exc_type, value, tb)

    sys.excepthook = hook
    old_handler = aloop.get_exception_handler()
    aloop.set_exception_handler(errors.loop_handler)
    try:
        yield errors
        qapp.processEvents()  # a slot queued by the test's last step runs now, inside the check
        errors.check("exception in the test")
    finally:
        aloop.set_exception_handler(old_handler)
        sys.excepthook = previous
