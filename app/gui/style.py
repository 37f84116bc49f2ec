"""Colours, fonts and labels shared by the models (one palette, readable on light and dark themes).

May import: PySide6.QtGui and the standard library.
"""

from __future__ import annotations

import datetime as _dt
import functools

from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase, QPalette

STATUS_LABELS: dict[str, str] = {
    "pending": "…",
    "ok": "ok",
    "open-turn": "open turn",
    "torn-tail": "torn tail",
    "corrupt": "corrupt",
    "unsupported": "unsupported",
    "missing": "missing",
    "busy": "busy",
    "unreadable": "unreadable",
    "symlink": "symlink",
}

# Foreground / background per status: strong enough to scan a long list, soft enough to read text on.
STATUS_COLORS: dict[str, tuple[str, str | None]] = {
    "pending": ("#808080", None),
    "ok": ("#1b7f3b", None),
    "open-turn": ("#9a5b00", "#fff4de"),
    "torn-tail": ("#b34700", "#ffe9dc"),
    "corrupt": ("#b00020", "#fde4e7"),
    "unsupported": ("#6a1b9a", "#f1e6f8"),
    "missing": ("#808080", "#eeeeee"),
    "busy": ("#0b57d0", "#e3edfd"),
    "unreadable": ("#b00020", "#fde4e7"),
    "symlink": ("#6a1b9a", "#f1e6f8"),
}

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

FLAG_COLORS = {
    "error": ("#b00020", "#fde4e7"),
    "synthetic": ("#6a1b9a", "#f1e6f8"),
    "repaired": ("#9a5b00", "#fff4de"),
    "cancelled": ("#7a7a7a", None),
    "human": ("#0b57d0", None),
    "seed": ("#00796b", "#e0f2f1"),
    "pruned": ("#7a7a7a", None),
    "open": ("#9a5b00", "#fff4de"),
}

KIND_COLORS = {
    "turn": "#202124",
    "step": "#3c4043",
    "reasoning": "#7a7a7a",
    "tool": "#8a4f00",
    "result": "#1b5e20",
    "usage": "#5f6368",
    "request": "#5f6368",
    "context": "#00695c",
    "sentinel": "#0b57d0",
}

LINK_COLOR = "#0b57d0"
MUTED = "#808080"

# The focused pane's ring (views.focus_ring): the palette's highlight when it stands out enough
# against the pane's base colour, else one of these (a blue that reads on light, a light blue on dark).
FOCUS_RING_WIDTH_PX = 2
FOCUS_FALLBACK_LIGHT = "#0b57d0"
FOCUS_FALLBACK_DARK = "#8ab4f8"
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
    if n is None:
        return ""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    if n < 1024**3:
        return f"{n / 1024 / 1024:.1f} MB"
    return f"{n / 1024**3:.2f} GB"


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
