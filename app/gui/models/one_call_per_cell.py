"""``multiData``: answer every role a delegate asks for in one call into Python.

A view paints a cell by asking ~7 roles (display, font, colours, alignment …).  With the default
implementation each is a separate call from C++ into Python, and each call has to take the GIL
back from whatever worker thread is decoding a log, so a repaint during a load cost one GIL
hand-over per role.  Answering all roles in one call cuts those hand-overs sevenfold.

May import: PySide6.QtCore only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QModelRoleData, QModelRoleDataSpan, QPersistentModelIndex


def _one_role(role: QModelRoleData) -> QModelRoleDataSpan:
    """A span over one role (Qt always passes a span; the signature also admits a single role)."""
    return QModelRoleDataSpan(role)


class OneCallPerCell:
    """Mixin for a ``QAbstractItemModel`` subclass that implements ``data``."""

    def data(self, index: Any, role: int = ...) -> Any:  # pragma: no cover - provided by the model
        raise NotImplementedError

    def multiData(self, index: QModelIndex | QPersistentModelIndex, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """Fill every requested role of ``index`` (Qt passes a span; its signature also admits one role)."""
        data = self.data
        if isinstance(roleDataSpan, QModelRoleData):
            roleDataSpan = _one_role(roleDataSpan)
        for item in roleDataSpan:  # a span is iterable at run time (its stub says not: see pyproject.toml)
            value = data(index, item.role())
            if value is None:
                item.clearData()  # delegates reuse their role buffer: a stale value would leak into this cell
            else:
                item.setData(value)
