"""Off-thread work with cancellation and progress (decoding, indexing, scanning).

Workers are plain functions that take a ``threading.Event`` and check it between units of work;
``in_thread`` runs one on the loop's executor and turns task cancellation into that event, then waits
for the worker to notice so nothing keeps running for a caller that went away.  Progress is a small
thread-safe record the GUI polls with a timer: no Qt object is touched off the GUI thread.

May import: the standard library and ``runtime.collector``; never Qt (workers run off the GUI thread).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from app.gui.runtime.collector import scrub_exception

T = TypeVar("T")


def lower_thread_priority(niceness: int) -> bool:
    """Lower the calling thread's scheduling priority by ``niceness`` (Linux: nice is per thread and the
    threads it starts inherit it, so a background worker's engine executor runs behind the window too)."""
    if not sys.platform.startswith("linux") or niceness <= 0:
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)
    except (AttributeError, OSError):
        return False
    return True


class Progress:
    """Thread-safe progress of one long job: a label, a fraction (None = busy) and a cancel flag."""

    __slots__ = ("_fraction", "_label", "_lock", "cancel")

    def __init__(self, label: str = "") -> None:
        self._lock = threading.Lock()
        self._label = label
        self._fraction: float | None = None
        self.cancel = threading.Event()

    def set(self, fraction: float | None = None, label: str | None = None) -> None:
        with self._lock:
            self._fraction = None if fraction is None else max(0.0, min(1.0, fraction))
            if label is not None:
                self._label = label

    def snapshot(self) -> tuple[str, float | None]:
        with self._lock:
            return self._label, self._fraction


class Cancelled(Exception):
    """Raised inside a worker when its progress was cancelled."""


YIELD_SECONDS = 0.0005


def checkpoint(progress: Progress, total: int, label: str) -> Callable[[int], None]:
    """A worker's periodic call: report progress, stop when cancelled, and hand the GIL to the GUI.

    CPU-bound Python in a worker holds the GIL; every data() call of a painting view has to win it
    back, so a busy worker makes painting crawl.  A short sleep at each checkpoint gives the GUI
    thread a window to run a whole burst of work.
    """

    def call(i: int) -> None:
        if progress.cancel.is_set():
            raise Cancelled()
        progress.set(i / total if total else None, label)
        time.sleep(YIELD_SECONDS)

    return call


async def in_thread(fn: Callable[..., T], *args: object, cancel: threading.Event | None = None) -> T:
    """Run ``fn(*args)`` on the default executor; cancelling the awaiting task sets ``cancel``."""
    loop = asyncio.get_running_loop()
    fut = loop.run_in_executor(None, fn, *args)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        if cancel is not None:
            cancel.set()
        try:
            await fut
        except BaseException as err:
            scrub_exception(err)  # the worker's frames would otherwise keep what they read alive
        raise
