"""What the window remembers between runs (QSettings): geometry, splitters, last root, recent roots,
the recent sources (File > Open Recent: roots, stores, transcripts, bundles, case folders; the path
the user opened, never a bundle's extraction), the action settings (liveness quiet time, resume
template) and View > Theme.

The defaults of the action settings are the actions' own (``app.actions``), so the window and the
command line start from the same values.  May import PySide6 and ``app.actions``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from app.actions.liveness import DEFAULT_QUIET_SECONDS
from app.actions.resume import DEFAULT_TEMPLATE
from app.gui import theme as theme_module

MAX_RECENT = 8
MAX_RECENT_SOURCES = 10


class AppSettings:
    def __init__(self, settings: QSettings | None = None) -> None:
        self.q = settings if settings is not None else QSettings("SessionScope", "SessionScope")

    def _bytes(self, key: str) -> QByteArray | None:
        v: Any = self.q.value(key)
        return v if isinstance(v, QByteArray) and not v.isEmpty() else None

    def geometry(self) -> QByteArray | None:
        return self._bytes("window/geometry")

    def splitter(self, name: str) -> QByteArray | None:
        return self._bytes(f"window/splitter/{name}")

    def save_window(self, geometry: QByteArray, splitters: dict[str, QByteArray]) -> None:
        self.q.setValue("window/geometry", geometry)
        for name, state in splitters.items():
            self.q.setValue(f"window/splitter/{name}", state)
        self.q.sync()

    def list_hidden_columns(self) -> list[str] | None:
        """The session list's hidden columns by name (None: never chosen, the defaults apply)."""
        v: Any = self.q.value("list/hiddenColumns")
        if v is None:
            return None
        if isinstance(v, str):
            return [v] if v else []
        return [x for x in v if isinstance(x, str)] if isinstance(v, list) else None

    def set_list_hidden_columns(self, names: list[str]) -> None:
        # An empty list is stored as "" (QSettings' INI format drops empty lists): "none hidden".
        self.q.setValue("list/hiddenColumns", names if names else "")
        self.q.sync()

    @property
    def last_root(self) -> str | None:
        v = self.q.value("roots/last")
        return v if isinstance(v, str) and v else None

    def recent_roots(self) -> list[str]:
        v = self.q.value("roots/recent")
        if isinstance(v, str):
            return [v]
        return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []

    def remember_root(self, root: str) -> None:
        recent = [root] + [r for r in self.recent_roots() if r != root]
        self.q.setValue("roots/recent", recent[:MAX_RECENT])
        self.q.setValue("roots/last", root)
        self.q.sync()

    def recent_sources(self) -> list[str]:
        """File > Open Recent, most recent first (before the first source: the recent roots)."""
        v = self.q.value("sources/recent")
        if v is None:
            return self.recent_roots()[:MAX_RECENT_SOURCES]
        if isinstance(v, str):
            return [v] if v else []
        return [x for x in v if isinstance(x, str)][:MAX_RECENT_SOURCES] if isinstance(v, list) else []

    def remember_source(self, path: str) -> None:
        recent = [path] + [r for r in self.recent_sources() if r != path]
        # A one-entry list is stored as a plain string (QSettings' INI format): read back above.
        self.q.setValue("sources/recent", recent[:MAX_RECENT_SOURCES])
        self.q.sync()

    def quiet_seconds(self) -> float:
        """The repair liveness guard: refuse when the artifact changed more recently than this."""
        v: Any = self.q.value("actions/quietSeconds")
        try:
            return max(0.0, float(v)) if v is not None else DEFAULT_QUIET_SECONDS
        except (TypeError, ValueError):
            return DEFAULT_QUIET_SECONDS

    def resume_template(self) -> str:
        v = self.q.value("actions/resumeTemplate")
        return v if isinstance(v, str) and v.strip() else DEFAULT_TEMPLATE

    def set_resume_template(self, template: str) -> None:
        self.q.setValue("actions/resumeTemplate", template)
        self.q.sync()

    def theme(self) -> str:
        """View > Theme: ``"system"`` (the default: follow the platform), ``"light"`` or ``"dark"``."""
        v = self.q.value("view/theme")
        return v if isinstance(v, str) and v in theme_module.CHOICES else theme_module.SYSTEM

    def set_theme(self, name: str) -> None:
        self.q.setValue("view/theme", name)
        self.q.sync()
