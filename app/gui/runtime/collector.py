"""The window process's one owner of CPython's cyclic collector: paused around big reads, then frozen.

Why a policy at all: a decoded log is hundreds of thousands of young objects.  When the collector
comes back on after a read, the next young collections walk all of them with the GIL held, on
whichever thread allocates next (the GUI thread too).  Measured on a 200k-event log (this machine,
``inspect`` 0.40 s): with the collector simply re-enabled afterwards, the next generation-1
collection took 70-83 ms and a full one 106-113 ms; after ``gc.freeze()`` both took 0.0 ms (freezing
is a list splice: 0.0 ms).  Event records are acyclic JSON values, freed by reference counting when
their session is dropped, so they never need a cycle collection.  The cost: garbage *cycles* made
during a pause are never collected (the timeline model breaks its own parent/child cycles when it
drops a tree, ``scrub_exception`` frees what failed jobs' tracebacks held; the rest is incidental).

Why one owner: the pauses overlap (a listing holds one across awaits while a session loads, on the
GUI thread and on worker threads), and two counters over one global switch, each with its own "was
it on?" flag, let either side turn the collector back on in the middle of the other's pause.  So in
this process this module is the *only* code that switches the collector: it is the pause around every
engine call the window makes (``ViewerStore`` wraps each read, the session actions wrap each plan and
execute, the backup check its scan).  The engine itself no longer pauses it (issue 12: with chunk runs
packed a 202k read allocates ~30k containers, and a pause made the engine's read slower), so the
window's pause now guards what the window builds from a read rather than the read itself.

``settle()`` freezes after the window builds big containers of its own: a young list that holds 200k
old records makes every young collection walk 200k object headers (~100 ms each, measured).

May import: the standard library only.
"""

from __future__ import annotations

import gc
import threading
import traceback
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


class CollectorPolicy:
    """Pauses nest and may overlap across tasks and threads; the last one to end freezes and resumes."""

    __slots__ = ("_depth", "_lock", "_resume_enabled")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._resume_enabled = True

    @property
    def depth(self) -> int:
        """Pauses in progress (0: the collector is in the state the first pause found it in)."""
        return self._depth

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Run a (possibly big) read or listing without a collection landing on the GUI afterwards.

        Overlapping pauses need not nest (a listing holds one across awaits while a session loads):
        the collector's state is taken when the first begins and restored, after a freeze, when the
        last ends.  Every entry switches the collector off, so one that something else switched back
        on meanwhile is paused again.
        """
        with self._lock:
            if self._depth == 0:
                self._resume_enabled = gc.isenabled()
            self._depth += 1
            gc.disable()
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    gc.freeze()
                    if self._resume_enabled:
                        gc.enable()

    def settle(self) -> None:
        """Freeze what exists now (after building big long-lived containers); a running pause freezes anyway."""
        with self._lock:
            if self._depth == 0:
                gc.freeze()


COLLECTOR = CollectorPolicy()  # the one instance: the collector is one per process


def collector_paused() -> AbstractContextManager[None]:
    """``COLLECTOR.paused()``: the pause every engine call and listing of the window runs under."""
    return COLLECTOR.paused()


def settle() -> None:
    """``COLLECTOR.settle()``."""
    COLLECTOR.settle()


def scrub_exception(exc: BaseException | None) -> None:
    """Drop the locals of every frame in ``exc``'s traceback chain (``__context__``/``__cause__`` too).

    A cancelled or failed load ends in an exception whose traceback frames still hold what they were
    reading (a whole log).  Tasks, futures and tracebacks reference each other in cycles that only
    the collector can free, and the policy above freezes the collector's generations after each
    engine call, which would make them permanent: +145 MB per abandoned 200k-event load was measured.
    Clearing the frames frees the data at once by reference counting; the exception object itself
    (type and message) stays usable.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__


__all__ = ["COLLECTOR", "CollectorPolicy", "collector_paused", "scrub_exception", "settle"]
