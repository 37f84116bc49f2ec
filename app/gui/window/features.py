"""The window's features, registered in one list: each is built from the window's ``WindowContext``.

Why: a feature (search, the statistics, the keyboard features and Activity) adds its own tabs, menu
entries, shortcuts and panes from its own module, through the context; the window only builds what
this list names, in this order (a later feature may add to what an earlier one added: the keyboard
features list the search and statistics entries in the command palette), and closes them in the same
order when it shuts down.  Adding a feature is its module plus one line in ``FEATURES``.

May import: ``window.context`` and the feature modules; never ``window.main_window``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from app.gui.window.compare_wiring import CompareFeature
from app.gui.window.context import WindowContext
from app.gui.window.conversation_wiring import ConversationFeature
from app.gui.window.insight_wiring import InsightFeatures
from app.gui.window.keyboard_wiring import KeyboardFeatures
from app.gui.window.raw_wiring import RawFeature
from app.gui.window.search_wiring import SearchFeatures
from app.gui.window.theme_wiring import ThemeFeature

F = TypeVar("F")

# name -> how it is built (a class or function taking the context).  Order matters: built (and placed:
# status-bar widgets, menu entries) top to bottom.
FEATURES: tuple[tuple[str, Callable[[WindowContext], object]], ...] = (
    ("search", SearchFeatures),  # Search tab, find bar, going to events, the index (issue 13)
    ("insight", InsightFeatures),  # Stats tab, dashboard, lineage, export, model prices (issue 14)
    ("conversation", ConversationFeature),  # Conversation tab (after Stats), next/previous error, errors only (issue 24)
    ("compare", CompareFeature),  # Session > Compare with …: any two sessions aligned by prompt (issue 23)
    ("raw", RawFeature),  # Raw tab: View > Go to line / seq / byte (Ctrl+J), wrap, line breaks (issue 24)
    ("theme", ThemeFeature),  # View > Theme: System, Light or Dark, remembered (issue 24)
    ("keyboard", KeyboardFeatures),  # palette, shortcuts, focus ring, Activity, legend, reset demo (issue 16)
)


class Features:
    """The features built for one window, by name."""

    def __init__(self, built: dict[str, object]) -> None:
        self._built = built

    def get(self, name: str, kind: type[F]) -> F:
        """Feature ``name``, checked to be a ``kind``."""
        feature = self._built[name]
        if not isinstance(feature, kind):
            raise TypeError(f"feature {name!r} is a {type(feature).__name__}, not a {kind.__name__}")
        return feature

    def names(self) -> tuple[str, ...]:
        return tuple(self._built)

    async def close(self) -> None:
        """Close every feature that has an ``async close()``, in the order they were built."""
        for feature in self._built.values():
            close = getattr(feature, "close", None)
            if close is not None:
                await close()


Registry = tuple[tuple[str, Callable[[WindowContext], object]], ...]


def install_features(ctx: WindowContext, registry: Registry | None = None) -> Features:
    """Build every registered feature (``FEATURES``, read when called) for ``ctx``."""
    return Features({name: make(ctx) for name, make in (FEATURES if registry is None else registry)})


__all__ = ["FEATURES", "Features", "install_features"]
