"""``multiData``: answer every role a delegate asks for in one call into Python.

A view paints a cell by asking ~7 roles (display, font, colours, alignment …).  With the default
implementation each is a separate call from C++ into Python, and each call has to take the GIL
back from whatever worker thread is decoding a log, so a repaint during a load cost one GIL
hand-over per role.  Answering all roles in one call cuts those hand-overs sevenfold.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QModelRoleDataSpan, QPersistentModelIndex


class OneCallPerCell:
    """Mixin for a ``QAbstractItemModel`` subclass that implements ``data``."""

    def data(self, index: Any, role: int = ...) -> Any:  # pragma: no cover - provided by the model
        raise NotImplementedError

    def multiData(self, index: QModelIndex | QPersistentModelIndex, roleDataSpan: QModelRoleDataSpan) -> None:
        data = self.data
        for item in roleDataSpan:
            value = data(index, item.role())
            if value is None:
                item.clearData()  # delegates reuse their role buffer: a stale value would leak into this cell
            else:
                item.setData(value)
