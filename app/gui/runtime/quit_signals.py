"""SIGTERM, SIGHUP and SIGINT stop the window the way closing it does (issue 21 item 10).

Why: without handlers, SIGTERM (a logout, ``kill``) and SIGHUP (a closed terminal) end the process at
once, skipping the launcher's shutdown, and SIGINT raises ``KeyboardInterrupt`` wherever Python happens
to run.  Python also runs a handler only between bytecodes of the main thread, and the main thread
sits in Qt's event loop (C++) for as long as nothing happens: a handler alone would wait for the next
mouse move.  So the C-level handler's wake-up byte (``signal.set_wakeup_fd``) goes into one end of a
socket pair, a ``QSocketNotifier`` on the other end wakes Qt's loop, and its slot calls the launcher's
``on_quit(signum)`` on the GUI thread, once.

``QuitSignals()`` catches the signals from the start (before ``QApplication`` exists: a signal that
arrives then waits in the socket); ``watch()`` connects the notifier once Qt runs; ``restore()`` puts
the previous handlers and wake-up fd back.

May import: the standard library; Qt (``QSocketNotifier``) inside ``watch`` only.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

# The signals that ask the app to stop; SIGHUP does not exist on Windows.
QUIT_SIGNAL_NAMES = ("SIGTERM", "SIGHUP", "SIGINT")


def quit_signals() -> tuple[signal.Signals, ...]:
    return tuple(getattr(signal, name) for name in QUIT_SIGNAL_NAMES if hasattr(signal, name))


def exit_code_for(signum: int) -> int:
    """128 + the signal's number, as a shell reports a process that a signal stopped."""
    return 128 + int(signum)


class QuitSignals:
    """Catches the quit signals until ``restore()``; ``received`` is the first one (None before)."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._notifier: Any = None
        self._on_quit: Callable[[int], None] | None = None
        self._delivered = False
        # Only the main thread may install handlers; the launcher runs there.
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._previous = {s: signal.signal(s, self._handle) for s in quit_signals()}

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        # Runs in Python on the main thread, possibly much later than the wake-up byte: only records.
        if self.received is None:
            self.received = signum

    def watch(self, on_quit: Callable[[int], None], parent: Any = None) -> None:
        """Call ``on_quit(signum)`` on Qt's thread when a quit signal arrives (or already has)."""
        from PySide6.QtCore import QSocketNotifier

        self._on_quit = on_quit
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, parent)
        self._notifier.activated.connect(self._woken)

    def _woken(self, *_args: object) -> None:
        try:
            data = self._reader.recv(256)
        except (BlockingIOError, InterruptedError):
            data = b""
        except OSError:
            data = b""
        # The Python-level handler has run by now (a slot is Python code on the main thread); the
        # wake-up bytes carry the numbers too, for a handler that some library replaced meanwhile.
        wanted = {int(s) for s in quit_signals()}
        signum = self.received if self.received is not None else next((b for b in data if b in wanted), None)
        if signum is None or self._delivered or self._on_quit is None:
            return
        self._delivered = True
        self._on_quit(signum)

    def restore(self) -> None:
        """Put the previous handlers and wake-up fd back and close the socket pair."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        signal.set_wakeup_fd(self._previous_fd)
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        self._reader.close()
        self._writer.close()


__all__ = ["QUIT_SIGNAL_NAMES", "QuitSignals", "exit_code_for", "quit_signals"]
