"""The content tabs (Header / Timeline / Raw and the features' own) by key, never by position.

Why: a tab's position depends on which features added theirs and in what order; code that wrote
``tabs.setCurrentIndex(3)`` broke when one was added before it.  Every tab is added under a key and
looked up by it.

May import: PySide6 only.
"""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QWidget

# The window's own content tabs, in the order it adds them; a feature adds its own under its own key.
HEADER, TIMELINE, RAW = "header", "timeline", "raw"
BASE_TABS = (HEADER, TIMELINE, RAW)
CONVERSATION = "conversation"  # the Conversation feature's tab (window.conversation_wiring): going to an event keeps it


class ContentTabs:
    """The content tabs (Header / Timeline / Raw and the features' tabs) by key."""

    def __init__(self, widget: QTabWidget) -> None:
        self.widget = widget
        self._keys: list[str] = []

    def add(self, key: str, page: QWidget, title: str) -> int:
        """Add ``page`` as tab ``key`` (after the others); returns its position."""
        if key in self._keys:
            raise ValueError(f"a content tab {key!r} is already there")
        index = self.widget.addTab(page, title)
        self._keys.insert(index, key)
        return index

    def index(self, key: str) -> int:
        """The tab's position now (-1 when no tab has this key)."""
        return self._keys.index(key) if key in self._keys else -1

    def key_at(self, index: int) -> str | None:
        return self._keys[index] if 0 <= index < len(self._keys) else None

    def current(self) -> str | None:
        return self.key_at(self.widget.currentIndex())

    def show(self, key: str) -> None:
        """Make tab ``key`` the current one (the focus stays where it is)."""
        index = self.index(key)
        if index >= 0:
            self.widget.setCurrentIndex(index)

    def keys(self) -> tuple[str, ...]:
        return tuple(self._keys)


__all__ = ["BASE_TABS", "CONVERSATION", "HEADER", "RAW", "TIMELINE", "ContentTabs"]
