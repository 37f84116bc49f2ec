"""What the window remembers between runs (QSettings): geometry, splitters, last root, recent roots."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 8


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
