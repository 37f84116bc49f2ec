"""View > Theme: System (follow the platform's colour scheme), Light or Dark, remembered in the settings.

Why a feature: the choice is the user's, kept between runs, while the colours themselves live in
``app.gui.theme`` (which the models and views read).  A theme the launch line chose (``--theme``) is
applied before the window exists and wins over the remembered one for that run.

May import: ``window.context``, ``app.gui.theme`` and PySide6.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QApplication, QMenu

from app.gui import theme
from app.gui.window.context import WindowContext

LABELS = {theme.SYSTEM: "&System", theme.LIGHT: "&Light", theme.DARK: "&Dark"}


class ThemeFeature:
    def __init__(self, ctx: WindowContext) -> None:
        self.ctx = ctx
        self.menu = QMenu("Th&eme", ctx.qwindow)
        self.group = QActionGroup(self.menu)
        self.group.setExclusive(True)
        self.actions: dict[str, QAction] = {}
        for name, label in LABELS.items():
            act = QAction(label, self.menu, checkable=True)
            act.setData(name)
            act.triggered.connect(lambda _checked=False, n=name: self.choose(n))
            self.group.addAction(act)
            self.menu.addAction(act)
            self.actions[name] = act
        view = ctx.menus.menu("View")
        if view is not None:
            view.addSeparator()
            view.addMenu(self.menu)
        app = QApplication.instance()
        if isinstance(app, QApplication) and not theme.applied():
            theme.apply(app, ctx.settings.theme())
        theme.bind(self.menu, self._show_choice)  # the menu shows what is applied (also after --theme)

    def choose(self, name: str) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply(app, name)
        self.ctx.settings.set_theme(name)
        self._show_choice()

    def _show_choice(self) -> None:
        act = self.actions.get(theme.choice())
        if act is not None:
            act.setChecked(True)


__all__ = ["LABELS", "ThemeFeature"]
