"""The Raw tab's window entries: View > Go to line / seq / byte … (Ctrl+J), Wrap raw lines, Show line breaks.

Why a feature of its own: the Raw tab's tools (``views.raw_pane``) are plain widget methods; this puts
them in the View menu, the command palette and Help > Keyboard shortcuts through the ``WindowContext``
as every feature does, without touching the window's own menus.  Ctrl+J ("jump") because Ctrl+G is
Find in this session and Ctrl+L the session list.

May import: PySide6, ``window.context`` and ``views.raw_pane``; never ``window.main_window``.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence

from app.gui.views.raw_pane import GO_TO_KEY
from app.gui.window.context import RAW, WindowContext


class RawFeature:
    """Go to (Ctrl+J), Wrap and line breaks for the Raw tab, as window actions."""

    def __init__(self, ctx: WindowContext) -> None:
        self.ctx = ctx
        win, pane = ctx.qwindow, ctx.raw_pane
        self.go_to_action = QAction("Go to line / seq / byte …", win)  # Ctrl+J; its letter G is the legend's
        self.go_to_action.setShortcut(QKeySequence(GO_TO_KEY))
        self.go_to_action.setToolTip("In the Raw tab: select a line by its number, an event seq or a file byte offset")
        self.go_to_action.triggered.connect(lambda _c=False: self.open_go_to())
        self.wrap_action = QAction("&Wrap raw lines", win, checkable=True)
        self.wrap_action.setToolTip("Raw tab: wrap the selected line and the record below it")
        self.wrap_action.toggled.connect(pane.set_wrap)
        pane.wrap_button.toggled.connect(self.wrap_action.setChecked)
        self.newlines_action = QAction("Show line &breaks in raw strings", win, checkable=True)
        self.newlines_action.setToolTip("Raw tab: show \\n inside strings as line breaks in the record below")
        self.newlines_action.toggled.connect(pane.set_show_newlines)
        pane.newlines_button.toggled.connect(self.newlines_action.setChecked)
        view = ctx.menus.menu("View")
        for act in (self.go_to_action, self.wrap_action, self.newlines_action):
            ctx.menus.add_shortcut(act)
            if view is not None:
                view.addAction(act)

    def open_go_to(self) -> None:
        self.ctx.content_tabs.show(RAW)
        self.ctx.raw_pane.open_go_to()


__all__ = ["RawFeature"]
