"""Progress of a long verb on stderr, as one updating line, only when a person is watching.

``verify`` of a big root, a first ``search`` (it builds the index) and ``export`` of a large session
can take seconds to minutes; without a sign of life they look hung.  When stderr is a terminal
(``isatty()``) a single line is redrawn in place (``\\r``, padded over the previous text) a few times
a second: what the verb is doing, ``done / total`` when it knows them, and the time so far; the line is
erased when the verb ends, so the verb's own output follows on a clean screen.  When stderr is piped or
redirected nothing is written at all: logs and scripts see exactly the output they saw before.

The line is drawn by a daemon thread, so it keeps moving while the verb computes in the event loop's
thread (an export's rendering is synchronous); updates only store the text (cheap, thread-safe).

May import the standard library only.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO

REDRAW_SECONDS = 0.2  # how often the line is redrawn
SHOW_AFTER_SECONDS = 0.5  # a verb that ends sooner never draws a line (no flicker for small roots)
MAX_WIDTH = 100  # characters of the line (a narrow terminal wraps, which \r cannot undo)


class ProgressLine:
    """``with ProgressLine("verify") as p: p.update(3, 10, "s1")``: one line on a terminal's stderr, else nothing."""

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        *,
        detail: str = "starting",
        show_after: float | None = None,
        interval: float | None = None,
    ) -> None:
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        try:
            self.enabled = bool(self.stream.isatty())
        except (AttributeError, ValueError, OSError):  # a closed or odd stream: never a failure of the verb
            self.enabled = False
        # Read when built, not when defined: a test sets the module's constants to draw at once.
        self.show_after = SHOW_AFTER_SECONDS if show_after is None else show_after
        self.interval = REDRAW_SECONDS if interval is None else interval
        self._text = detail  # what it does before the first update
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()
        self._width = 0  # characters of the line drawn last (what the next draw must cover)
        self.draws = 0

    def update(self, done: int | None = None, total: int | None = None, detail: str = "") -> None:
        """The state to show next: ``done / total`` (either may be None) and a word on the current item."""
        if done is not None and total:
            count = f"{done:,} / {total:,}"
        elif done is not None:
            count = f"{done:,}"
        else:
            count = ""
        text = " ".join(p for p in (count, detail) if p)
        with self._lock:
            self._text = text

    def start(self) -> ProgressLine:
        if self.enabled and self._thread is None:
            self._t0 = time.monotonic()
            self._thread = threading.Thread(target=self._run, name=f"progress {self.label}", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop drawing and erase the line (when one was drawn)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._width:
            self._write("\r" + " " * self._width + "\r")
            self._width = 0

    def line(self) -> str:
        """The text drawn now: ``verify: 3,412 / 10,000 s1 · 12 s``."""
        with self._lock:
            text = self._text
        elapsed = time.monotonic() - self._t0
        line = f"{self.label}: {text} · {elapsed:.0f} s" if text else f"{self.label} · {elapsed:.0f} s"
        return line if len(line) <= MAX_WIDTH else line[: MAX_WIDTH - 1] + "…"

    def _run(self) -> None:
        if self.show_after > 0 and self._stop.wait(self.show_after):
            return
        while True:
            self.draw()
            if self._stop.wait(self.interval):
                return

    def draw(self) -> None:
        line = self.line()
        pad = max(0, self._width - len(line))
        self._write("\r" + line + " " * pad)
        self._width = len(line)
        self.draws += 1

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError, UnicodeError):  # a closed terminal: the verb goes on
            self.enabled = False

    def __enter__(self) -> ProgressLine:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


__all__ = ["ProgressLine"]
