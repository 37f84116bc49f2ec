"""A guard against reference-count bugs of PySide6 6.12.0 on CPython < 3.12.

With that pair, PySide6 returns the singletons without taking a new reference: every
``SignalInstance.emit()`` steals a reference to ``True`` and every void method
(``beginInsertRows``, ``setObjectName``, ``QTimer.start`` …) steals one to ``None``.  Before CPython
3.12 these singletons are not immortal, so after enough calls the interpreter aborts with
"bool_dealloc: deallocating True or False" or "none_dealloc: deallocating None" (at exit, or mid-run
after a long session: a 10k-session root reached it within minutes).

We measure whether the leak happens, and if it does give ``None``/``True``/``False`` a large
reference reserve.  Over-counting these singletons is harmless (they are static objects that are
never freed); under-counting is fatal.  On CPython 3.12+ they are immortal, and with a fixed PySide6
the probe comes back clean, so the guard then does nothing.

May import: the standard library (ctypes); PySide6.QtCore only inside the probe.
"""

from __future__ import annotations

import ctypes
import sys

RESERVE = 1 << 40  # ~10^12 leaked references before the reserve could run out
PROBES = 64
_applied = False


def _probe() -> tuple[int, int]:
    """References to (True, None) lost by PROBES emits and PROBES void calls (paid back at once)."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    probe = _Probe()
    true_before, none_before = sys.getrefcount(True), sys.getrefcount(None)
    for _ in range(PROBES):
        probe.ping.emit()
    for _ in range(PROBES):
        probe.setObjectName("probe")
    lost_true = max(0, true_before - sys.getrefcount(True))
    lost_none = max(0, none_before - sys.getrefcount(None))
    for obj, lost in ((True, lost_true), (None, lost_none)):
        for _ in range(lost):
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    return lost_true, lost_none


def pyside_leaks_singleton_refs() -> bool:
    lost_true, lost_none = _probe()
    return lost_true >= PROBES // 2 or lost_none >= PROBES // 2


def guard_bool_refcounts() -> bool:
    """Apply the reserve when this PySide6/CPython pair needs it; returns whether it was applied."""
    global _applied
    if _applied:
        return True
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    if not pyside_leaks_singleton_refs():
        return False
    for obj in (None, True, False):
        if hasattr(sys, "gettotalrefcount"):  # a debug build: the count is not the first field; top up slowly
            for _ in range(1_000_000):
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
        else:
            ctypes.c_ssize_t.from_address(id(obj)).value += RESERVE
    _applied = True
    return True
