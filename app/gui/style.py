"""Colours, fonts and labels shared by the models (one palette, readable on light and dark themes).

The colours are the current theme's (``app.gui.theme``): the tables here are refreshed in place when
a theme is applied, so read them at paint time (``style.STATUS_COLORS[...]``), never copy them at import.

May import: PySide6.QtGui, ``app.gui.theme``, ``app.glossary`` and the standard library.
"""

from __future__ import annotations

import datetime as _dt
import functools

from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QPalette

from app.glossary import STATUS_NAMES, size
from app.gui import theme

# The display name of each status is the glossary's (one name per status across window, CLI and exports).
STATUS_LABELS: dict[str, str] = STATUS_NAMES

# Foreground / background per status (theme roles "status.<name>" and "status.<name>.bg"): strong
# enough to scan a long list, soft enough to read text on.  Refreshed in place on every theme change.
STATUS_COLORS: dict[str, tuple[str, str | None]] = {}

STATUS_ORDER = {
    "corrupt": 0,
    "unreadable": 0,
    "symlink": 1,
    "unsupported": 1,
    "torn-tail": 2,
    "open-turn": 3,
    "busy": 4,
    "missing": 4,
    "ok": 5,
    "pending": 6,
}

FLAG_COLORS: dict[str, tuple[str, str | None]] = {}  # theme roles "flag.<name>" (+ ".bg")
KIND_COLORS: dict[str, str] = {}  # theme roles "kind.<name>"
_FLAGS = ("error", "synthetic", "repaired", "cancelled", "human", "seed", "pruned", "open")
_KINDS = ("turn", "step", "reasoning", "tool", "result", "usage", "request", "context", "sentinel")

LINK_COLOR = theme.hex_of("link")
MUTED = theme.hex_of("text.muted")


def _pair(role: str, name: str) -> tuple[str, str | None]:
    bg = f"{role}.bg"
    return theme.hex_of(role, name), theme.hex_of(bg, name) if theme.has(bg) else None


def _refresh(name: str) -> None:
    """Point the derived tables at ``name``'s colours (models read them at paint time)."""
    global LINK_COLOR, MUTED
    STATUS_COLORS.clear()
    STATUS_COLORS.update({s: _pair(f"status.{s}", name) for s in STATUS_LABELS})
    FLAG_COLORS.clear()
    FLAG_COLORS.update({f: _pair(f"flag.{f}", name) for f in _FLAGS})
    KIND_COLORS.clear()
    KIND_COLORS.update({k: theme.hex_of(f"kind.{k}", name) for k in _KINDS})
    LINK_COLOR = theme.hex_of("link", name)
    MUTED = theme.hex_of("text.muted", name)


_refresh(theme.current())
theme.on_apply(_refresh)

# The focused pane's ring (views.focus_ring): the palette's highlight when it stands out enough
# against the pane's base colour, else one of these (a blue that reads on light, a light blue on dark).
FOCUS_RING_WIDTH_PX = 2
FOCUS_FALLBACK_LIGHT = theme.hex_of("focus.fallback", theme.LIGHT)
FOCUS_FALLBACK_DARK = theme.hex_of("focus.fallback", theme.DARK)
MIN_FOCUS_CONTRAST = 3.0  # WCAG 2.1 SC 1.4.11: a focus indicator needs 3:1 against what is next to it
DARK_LIGHTNESS = 128  # a window colour with HSL lightness below this (0-255) is a dark theme


def color(hex_text: str | None) -> QColor | None:
    return None if hex_text is None else QColor(hex_text)


@functools.cache
def brush(hex_text: str) -> QBrush:
    """Shared brushes: ``data()`` runs for every visible cell on every paint, so nothing is built there."""
    return QBrush(QColor(hex_text))


def mono_font(point_delta: int = 0) -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if point_delta:
        f.setPointSize(max(6, f.pointSize() + point_delta))
    return f


def format_ms(ms: object) -> str:
    """Epoch milliseconds as local date-time (the engine stores JS ``Date.now()``)."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    try:
        return _dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def format_clock(ms: object) -> str:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    try:
        return _dt.datetime.fromtimestamp(ms / 1000).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


def format_ns(ns: int | None) -> str:
    if ns is None:
        return ""
    return _dt.datetime.fromtimestamp(ns / 1e9).strftime("%Y-%m-%d %H:%M")


def format_size(n: int | None) -> str:
    """A size the glossary's one way (``512 B``, ``1.5 KB``)."""
    return size(n)


def relative_luminance(c: QColor) -> float:
    """WCAG relative luminance of an sRGB colour (0 black … 1 white)."""

    def lin(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF())


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1 … 21)."""
    la, lb = relative_luminance(a), relative_luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < DARK_LIGHTNESS


def focus_color(palette: QPalette) -> QColor:
    """The focus ring's colour for ``palette``: its highlight, unless that is too faint against the base."""
    base = palette.color(QPalette.ColorRole.Base)
    highlight = palette.color(QPalette.ColorRole.Highlight)
    if contrast_ratio(highlight, base) >= MIN_FOCUS_CONTRAST:
        return highlight
    return QColor(FOCUS_FALLBACK_DARK if is_dark(palette) else FOCUS_FALLBACK_LIGHT)
