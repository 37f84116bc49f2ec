"""Keep CPython's cyclic GC (and the GIL's switch interval) from freezing the window.

The engine pauses the collector while it decodes a log (``persistence/gcpause.py``), so when it
re-enables it the youngest generation holds every object of the decoded log, and the next
collection walks all of them while holding the GIL: 0.25 s + 0.5 s pauses were measured after
reading a 200k-event session, in whatever thread happened to allocate next.

Around each engine call we keep the collector off, then move everything that exists to the
permanent generation (``gc.freeze()``): event records are acyclic JSON values, freed by reference
counting when their session is dropped, so they never need a cycle collection.  The cost is that
garbage *cycles* created during the call are not collected; the timeline model breaks its own
parent/child cycles when it drops a tree (``TimelineModel``), the rest is incidental.

``settle()`` does the same after the window builds big containers of its own: a young list that
holds 200k old records makes every young collection walk 200k object headers (measured ~100 ms per
collection, on whichever thread allocates next, with the GIL held).
"""

from __future__ import annotations

import gc
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

_depth = 0


_was_enabled = True


@contextmanager
def engine_call() -> Iterator[None]:
    """Run a (possibly big) engine read without a collection landing on the GUI afterwards.

    Calls may overlap without nesting (a listing holds this across awaits while a session loads), so
    the collector's state is kept per process, taken when the first one starts and restored when the
    last one ends, like ``persistence/gcpause.py`` does.
    """
    global _depth, _was_enabled
    if _depth == 0:
        _was_enabled = gc.isenabled()
    _depth += 1
    gc.disable()
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            gc.freeze()
            if _was_enabled:
                gc.enable()


def scrub_exception(exc: BaseException | None) -> None:
    """Drop the locals of every frame in ``exc``'s traceback chain (``__context__``/``__cause__`` too).

    A cancelled or failed load ends in an exception whose traceback frames still hold what they were
    reading (a whole log).  Tasks, futures and tracebacks reference each other in cycles that only
    the collector can free, and the window freezes the collector's generations after each engine call
    (see above), which would make them permanent: +145 MB per abandoned 200k-event load was measured.
    Clearing the frames frees the data at once by reference counting; the exception object itself
    (type and message) stays usable.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if exc.__traceback__ is not None:
            traceback.clear_frames(exc.__traceback__)
        exc = exc.__cause__ or exc.__context__


# Listing a root builds many acyclic values (rows, headers): same policy as an engine read.  Young
# collections during a 10k-row listing walk every row built so far, in whichever thread allocates
# (the process pool's result thread included), with the GIL held: 20-45 ms pauses were measured.
collector_paused = engine_call


def settle() -> None:
    """Freeze what exists now (call after building big long-lived containers on the GUI thread)."""
    if _depth == 0:
        gc.freeze()


GUI_SWITCH_INTERVAL_S = 0.0002


def share_gil_with_gui() -> None:
    """Let the GUI thread win the GIL back quickly from busy worker threads.

    Painting a view calls into Python once per visible cell; each call must take the GIL from
    whichever worker thread is decoding, and by default a holder keeps it up to 5 ms per request.
    A repaint then took 200+ ms while a log was being read.  The interval only matters while the GUI
    thread actually waits for the GIL, so a short one costs the workers almost nothing.
    """
    if sys.getswitchinterval() > GUI_SWITCH_INTERVAL_S:
        sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
