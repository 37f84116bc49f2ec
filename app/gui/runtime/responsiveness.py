"""Every process-wide responsiveness knob of the window, applied once, by the launcher.

Each knob changes the whole interpreter, so none is set from a widget or a controller (a window
built twice, as the tests do, must not depend on which one came first):

- **GIL switch interval: 0.2 ms** (``GUI_SWITCH_INTERVAL_S``; CPython's default is 5 ms).  Painting a
  view calls into Python once per visible cell, and each call must win the GIL back from whichever
  worker thread is decoding; with the default a holder keeps it up to 5 ms per request and a repaint
  took 200+ ms while a log was read.  The interval only matters while the GUI thread actually waits
  for the GIL, so a short one costs the workers almost nothing.  Only ever lowered, never raised.
- **The collector**: ``runtime.collector.COLLECTOR`` owns it (paused around engine calls, then
  frozen; see that module).  At start-up the objects that exist (modules, the Qt bindings: 40.6k
  with the window built) are long-lived, so they are frozen once: a full collection that walked them
  in ~7 ms then takes 0.0 ms (measured).
- **The PySide6 6.12 refcount guard** (``runtime.pyside_refcount_guard``): a reserve of references
  to ``None``/``True``/``False`` where this PySide6/CPython pair leaks them.

May import: the other ``runtime`` modules and the standard library (Qt only through the guard).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from app.gui.runtime.collector import COLLECTOR
from app.gui.runtime.pyside_refcount_guard import guard_bool_refcounts

GUI_SWITCH_INTERVAL_S = 0.0002  # 0.2 ms


@dataclass(frozen=True, slots=True)
class AppliedKnobs:
    """What ``apply_responsiveness_knobs`` set (for logs and tests)."""

    switch_interval_s: float  # sys.getswitchinterval() afterwards, in seconds
    refcount_guard: bool  # whether the PySide6 refcount reserve was needed and applied


_applied: AppliedKnobs | None = None


def share_gil_with_gui() -> float:
    """Lower the GIL switch interval to ``GUI_SWITCH_INTERVAL_S`` (never raise it); returns the interval."""
    if sys.getswitchinterval() > GUI_SWITCH_INTERVAL_S:
        sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
    return sys.getswitchinterval()


def apply_responsiveness_knobs() -> AppliedKnobs:
    """Apply every knob once per process (later calls return what the first one applied)."""
    global _applied
    if _applied is None:
        interval = share_gil_with_gui()
        guarded = guard_bool_refcounts()
        COLLECTOR.settle()
        _applied = AppliedKnobs(interval, guarded)
    return _applied


__all__ = ["GUI_SWITCH_INTERVAL_S", "AppliedKnobs", "apply_responsiveness_knobs", "share_gil_with_gui"]
