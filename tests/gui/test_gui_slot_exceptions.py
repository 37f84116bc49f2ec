"""The ``qt_errors`` fixture (tests/gui/conftest.py) sees exceptions no test frame sees, and fails the test.

Each case provokes one exception where PySide6 or qasync would only print it: a slot connected to a
signal, a ``QTimer`` callback, a virtual override Qt calls from its event loop, a loop callback.  The
tests are marked ``qt_no_exception_capture`` so pytest-qt's own capture is off: what is caught here is
caught by the fixture alone.  ``take()`` consumes the provoked exception (else the test would fail,
which ``check`` proves).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

pytestmark = pytest.mark.qt_no_exception_capture


class _Emitter(QObject):
    fired = Signal()


class _BrokenWidget(QWidget):
    """``event()`` raises on a user event: a virtual override Qt calls from its event loop."""

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.User:
            raise LookupError("broken event()")
        return super().event(e)


def _boom(what: str) -> None:
    raise RuntimeError(what)


def test_a_slot_connected_to_a_signal(qtbot: Any, qt_errors: Any) -> None:
    emitter = _Emitter()
    emitter.fired.connect(lambda: _boom("slot of a signal"))
    emitter.fired.emit()  # PySide6 reports the slot's exception and returns normally
    [caught] = qt_errors.take()
    assert "RuntimeError: slot of a signal" in caught


def test_a_timer_callback(qtbot: Any, qt_errors: Any) -> None:
    QTimer.singleShot(0, lambda: _boom("timer slot"))
    qtbot.waitUntil(lambda: bool(qt_errors.caught), timeout=5000)
    [caught] = qt_errors.take()
    assert "RuntimeError: timer slot" in caught


def test_a_virtual_override_called_by_the_event_loop(qtbot: Any, qt_errors: Any) -> None:
    widget = _BrokenWidget()
    qtbot.addWidget(widget)
    QCoreApplication.postEvent(widget, QEvent(QEvent.Type.User))
    qtbot.waitUntil(lambda: bool(qt_errors.caught), timeout=5000)
    [caught] = qt_errors.take()
    assert "LookupError: broken event()" in caught


def test_a_loop_callback_and_a_task(qtbot: Any, qt_errors: Any, aloop: asyncio.AbstractEventLoop) -> None:
    aloop.call_soon(_boom, "loop callback")
    qtbot.waitUntil(lambda: bool(qt_errors.caught), timeout=5000)
    [caught] = qt_errors.take()
    assert "RuntimeError: loop callback" in caught and "Exception in callback" in caught


def test_an_uncaught_exception_fails_the_test(qtbot: Any, qt_errors: Any) -> None:
    """What the fixture does at teardown when nothing consumed the exception: the test fails, saying where."""
    emitter = _Emitter()
    emitter.fired.connect(lambda: _boom("nobody consumed this"))
    emitter.fired.emit()
    with pytest.raises(pytest.fail.Exception) as failed:
        qt_errors.check("exception in the test")
    assert "1 exception(s) raised in a Qt slot" in str(failed.value) and "nobody consumed this" in str(failed.value)
    assert qt_errors.caught == []  # consumed by the failure: teardown passes
