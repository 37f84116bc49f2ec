"""The window's light and dark themes: one table of colour roles, each with a light and a dark variant.

Every custom colour the window paints (status cells, turn bands, banners, search highlights, charts,
the focus ring's fallback, …) is a role here, so a dark system theme never gets a pastel cell under
light text.  ``apply(app, "dark")`` sets a matching QPalette (Fusion style, which honours a dark
palette on every platform) and tells the views through ``notifier().changed`` to repaint; models read
``color(role)`` / ``brush(role)`` at paint time, so they follow without a signal.  ``"system"`` follows
the platform's colour scheme (Qt 6.5+ ``QStyleHints.colorScheme``) and keeps following it.

Foregrounds are chosen for at least 4.5:1 (WCAG AA) against their background role, or against the
palette's Base when they have none (tests/gui/test_gui_theme.py measures every pair the models return).

May import: PySide6 and the standard library (the bottom layer of app.gui).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

LIGHT = "light"
DARK = "dark"
SYSTEM = "system"
CHOICES = (SYSTEM, LIGHT, DARK)

# role -> (light, dark).  A "*.bg" role is a cell's background; its foreground is the role without ".bg".
TABLE: dict[str, tuple[str, str]] = {
    # general text
    "text.muted": ("#5f6368", "#a8adb3"),
    "link": ("#0b57d0", "#8ab4f8"),
    "warn": ("#8a4f00", "#f0b35e"),
    "banner.bg": ("#eef7f0", "#1f3325"),
    # session statuses (list cells, banners, lineage, activity)
    "status.pending": ("#5f6368", "#a8adb3"),
    "status.ok": ("#187535", "#7fd89b"),
    "status.open-turn": ("#8a4f00", "#f0b35e"),
    "status.open-turn.bg": ("#fff4de", "#3a2c12"),
    "status.torn-tail": ("#a34000", "#ffa574"),
    "status.torn-tail.bg": ("#ffe9dc", "#3d2417"),
    "status.corrupt": ("#b00020", "#ff8f8f"),
    "status.corrupt.bg": ("#fde4e7", "#3f1d22"),
    "status.unsupported": ("#6a1b9a", "#d7a8f7"),
    "status.unsupported.bg": ("#f1e6f8", "#33243f"),
    "status.missing": ("#5f6368", "#a8adb3"),
    "status.missing.bg": ("#eeeeee", "#2f2f2f"),
    "status.busy": ("#0b57d0", "#8ab4f8"),
    "status.busy.bg": ("#e3edfd", "#1c2b44"),
    "status.unreadable": ("#b00020", "#ff8f8f"),
    "status.unreadable.bg": ("#fde4e7", "#3f1d22"),
    "status.symlink": ("#6a1b9a", "#d7a8f7"),
    "status.symlink.bg": ("#f1e6f8", "#33243f"),
    # timeline flags (foreground of the Info cell, background of the row)
    "flag.error": ("#b00020", "#ff8f8f"),
    "flag.error.bg": ("#fde4e7", "#3f1d22"),
    "flag.synthetic": ("#6a1b9a", "#d7a8f7"),
    "flag.synthetic.bg": ("#efe3f7", "#33243f"),
    "flag.repaired": ("#8a4f00", "#f0b35e"),
    "flag.repaired.bg": ("#fff1d6", "#3a2c12"),
    "flag.cancelled": ("#5f6368", "#a8adb3"),
    "flag.human": ("#0b57d0", "#8ab4f8"),
    "flag.seed": ("#00695c", "#6fd6c6"),
    "flag.seed.bg": ("#e0f2f1", "#16332f"),
    "flag.pruned": ("#5f6368", "#a8adb3"),
    "flag.open": ("#8a4f00", "#f0b35e"),
    "flag.open.bg": ("#fff1d6", "#3a2c12"),
    "timeline.turn.bg": ("#eef1f5", "#2a2f36"),
    "timeline.damage": ("#ffffff", "#ffffff"),
    "timeline.damage.bg": ("#b00020", "#9b1b2e"),
    # timeline / event kinds (the Kind column)
    "kind.turn": ("#202124", "#e8eaed"),
    "kind.step": ("#3c4043", "#d2d5d9"),
    "kind.reasoning": ("#5f6368", "#a8adb3"),
    "kind.tool": ("#8a4f00", "#f0b35e"),
    "kind.result": ("#1b5e20", "#7fd89b"),
    "kind.usage": ("#5f6368", "#a8adb3"),
    "kind.request": ("#5f6368", "#a8adb3"),
    "kind.context": ("#00695c", "#6fd6c6"),
    "kind.sentinel": ("#0b57d0", "#8ab4f8"),
    # "User" and the other conversation roles (search results, conversation)
    "role.user": ("#00695c", "#6fd6c6"),
    "role.assistant": ("#202124", "#e8eaed"),
    "role.reasoning": ("#5f6368", "#a8adb3"),
    "role.tool-call": ("#8a4f00", "#f0b35e"),
    "role.tool-result": ("#1b5e20", "#7fd89b"),
    "role.error": ("#b00020", "#ff8f8f"),
    "role.title": ("#6a1b9a", "#d7a8f7"),
    "role.meta": ("#5f6368", "#a8adb3"),
    # raw record kinds (Raw tab)
    "raw.header": ("#6a1b9a", "#d7a8f7"),
    "raw.turn": ("#0b57d0", "#8ab4f8"),
    "raw.step": ("#2f5cb0", "#9fb9ee"),
    "raw.user": ("#00695c", "#6fd6c6"),
    "raw.chunk": ("#5f6368", "#a8adb3"),
    "raw.tool": ("#8a4f00", "#f0b35e"),
    "raw.request": ("#5f6368", "#a8adb3"),
    "raw.damage.bg": ("#fde4e7", "#3f1d22"),
    "raw.torn.bg": ("#ffe9dc", "#3d2417"),
    # JSON tokens in the Raw tab's detail pane (app.rawview.json_tokens roles), on the palette's Base
    "json.key": ("#6a1b9a", "#d7a8f7"),
    "json.string": ("#1b5e20", "#7fd89b"),
    "json.number": ("#0b57d0", "#8ab4f8"),
    "json.literal": ("#a34000", "#ffa574"),
    "json.punctuation": ("#5f6368", "#a8adb3"),
    # header pane section rows
    "header.section.bg": ("#eef1f5", "#2a2f36"),
    # find and search highlights (a match's text stays readable on its highlight)
    "find.row.bg": ("#fff3b0", "#4a4214"),
    "find.text": ("#000000", "#000000"),
    "find.text.bg": ("#ffd84d", "#e0b93a"),
    "search.match": ("#000000", "#000000"),
    "search.match.bg": ("#ffe066", "#e0b93a"),
    # session comparison tints (text on them is "compare.text")
    "compare.text": ("#202020", "#e8e8e8"),
    "compare.changed.bg": ("#fff1c2", "#3d3514"),
    "compare.replaced.bg": ("#ffd9d2", "#45221c"),
    "compare.only-a.bg": ("#dbe9ff", "#1c2b44"),
    "compare.only-b.bg": ("#d9f2dc", "#1a3320"),
    # the "new events" marker over a following view (white text on a strong blue in both)
    "marker": ("#ffffff", "#ffffff"),
    "marker.bg": ("#0b57d0", "#2f65b8"),
    "marker.hover.bg": ("#0842a0", "#3d74c8"),
    # the focus ring when the palette's highlight is too faint against the base
    "focus.fallback": ("#0b57d0", "#8ab4f8"),
    # charts: Okabe-Ito (colour-blind safe); the dark variants are lighter to hold against a dark base
    "chart.error": ("#D55E00", "#FF8A4C"),
    "chart.series.0": ("#0072B2", "#56B4E9"),
    "chart.series.1": ("#E69F00", "#F5C04A"),
    "chart.series.2": ("#009E73", "#3CCB9F"),
    "chart.series.3": ("#CC79A7", "#E39AC4"),
    "chart.series.4": ("#56B4E9", "#8FD0F5"),
    "chart.series.5": ("#D55E00", "#FF8A4C"),
    "chart.series.6": ("#F0E442", "#F0E442"),
}
CHART_SERIES = 7

# The dark palette (Fusion): window and base dark, text light; the highlight holds 4.5:1 with white text.
_DARK_PALETTE: dict[QPalette.ColorRole, str] = {
    QPalette.ColorRole.Window: "#2b2d30",
    QPalette.ColorRole.WindowText: "#e8eaed",
    QPalette.ColorRole.Base: "#1e1f22",
    QPalette.ColorRole.AlternateBase: "#26282b",
    QPalette.ColorRole.ToolTipBase: "#3c3f43",
    QPalette.ColorRole.ToolTipText: "#e8eaed",
    QPalette.ColorRole.PlaceholderText: "#9aa0a6",
    QPalette.ColorRole.Text: "#e8eaed",
    QPalette.ColorRole.Button: "#34373b",
    QPalette.ColorRole.ButtonText: "#e8eaed",
    QPalette.ColorRole.BrightText: "#ff8f8f",
    QPalette.ColorRole.Light: "#4a4d52",
    QPalette.ColorRole.Midlight: "#3e4145",
    QPalette.ColorRole.Mid: "#2f3134",
    QPalette.ColorRole.Dark: "#1a1b1d",
    QPalette.ColorRole.Shadow: "#0d0d0e",
    QPalette.ColorRole.Highlight: "#2f65b8",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#8ab4f8",
    QPalette.ColorRole.LinkVisited: "#c58af9",
}
_DARK_DISABLED: dict[QPalette.ColorRole, str] = {
    QPalette.ColorRole.WindowText: "#7f8388",
    QPalette.ColorRole.Text: "#7f8388",
    QPalette.ColorRole.ButtonText: "#7f8388",
}


class _Notifier(QObject):
    """Emits ``changed(name)`` after a theme is applied: widgets with colours in style sheets restyle."""

    changed = Signal(str)


class _Binding(QObject):
    """Calls ``fn`` on every theme change for as long as its parent widget lives (a child of it)."""

    def __init__(self, parent: QObject, fn: Callable[[], None]) -> None:
        super().__init__(parent)
        self._fn = fn
        notifier().changed.connect(self._on_changed)

    def _on_changed(self, _name: str) -> None:
        self._fn()


_state: dict[str, str] = {"name": LIGHT, "choice": SYSTEM}
# The style and palette the application had before the first apply (the platform's own look).
_original: dict[str, QPalette | str] = {}
# Plain callbacks run before ``changed`` is emitted (style's derived tables), so every slot sees the new theme.
_hooks: list[Callable[[str], None]] = []


def on_apply(fn: Callable[[str], None]) -> None:
    """Call ``fn(theme)`` on every apply, before the views are told (for tables derived from this one)."""
    _hooks.append(fn)


@functools.cache
def notifier() -> _Notifier:
    return _Notifier()


def current() -> str:
    """The applied theme: ``"light"`` or ``"dark"``."""
    return _state["name"]


def choice() -> str:
    """What the user chose: ``"system"``, ``"light"`` or ``"dark"``."""
    return _state["choice"]


def is_dark() -> bool:
    return _state["name"] == DARK


def hex_of(role: str, name: str | None = None) -> str:
    light, dark = TABLE[role]
    return dark if (name or _state["name"]) == DARK else light


def has(role: str) -> bool:
    return role in TABLE


def color(role: str, name: str | None = None) -> QColor:
    return QColor(hex_of(role, name))


@functools.cache
def _brush(hex_text: str) -> QBrush:
    # data() runs for every visible cell on every paint: brushes are shared, never built there.
    return QBrush(QColor(hex_text))


def brush(role: str) -> QBrush:
    return _brush(hex_of(role))


def bind(widget: QObject, fn: Callable[[], None]) -> None:
    """Run ``fn`` now and after every theme change while ``widget`` lives (for style sheets with colours)."""
    fn()
    _Binding(widget, fn)


def applied() -> bool:
    """Whether a theme was applied in this process (the launch line's ``--theme`` wins over the setting)."""
    return "style" in _original


def system_scheme() -> str:
    """The platform's colour scheme (``"dark"`` or ``"light"``): Qt's answer (6.5+), else whether the
    platform's own palette is dark; light when neither tells."""
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return LIGHT
    scheme = QGuiApplication.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return DARK
    if scheme == Qt.ColorScheme.Light:
        return LIGHT
    original = _original.get("palette")
    palette = original if isinstance(original, QPalette) else QGuiApplication.palette()
    return DARK if palette.color(QPalette.ColorRole.Window).lightness() < 128 else LIGHT


def dark_palette() -> QPalette:
    pal = QPalette()
    for role, hex_text in _DARK_PALETTE.items():
        pal.setColor(role, QColor(hex_text))
    for role, hex_text in _DARK_DISABLED.items():
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(hex_text))
    return pal


def apply(app: QApplication, name: str) -> str:
    """Apply ``name`` (``"system"``, ``"light"`` or ``"dark"``) to ``app``; returns the theme applied.

    Dark sets the Fusion style with the dark palette; light restores the style the application started
    with and its palette when that palette is light (else Fusion's light one).  "system" resolves now and
    again on each change of the platform's scheme.
    """
    if name not in CHOICES:
        raise ValueError(f"unknown theme {name!r} (expected one of {', '.join(CHOICES)})")
    if "style" not in _original:  # the first apply: what the platform gave
        _original["style"] = app.style().name()
        _original["palette"] = QPalette(app.palette())
    _state["choice"] = name
    _follow_system(app)
    resolved = system_scheme() if name == SYSTEM else name
    _state["name"] = resolved
    if resolved == DARK:
        app.setStyle(QStyleFactory.create("Fusion"))
        app.setPalette(dark_palette())
    else:
        style_name = _original["style"]
        base = QStyleFactory.create(style_name if isinstance(style_name, str) else "Fusion") or QStyleFactory.create("Fusion")
        original = _original["palette"]
        light_original = isinstance(original, QPalette) and original.color(QPalette.ColorRole.Window).lightness() >= 128
        app.setStyle(base)
        app.setPalette(QPalette(original) if light_original and isinstance(original, QPalette) else base.standardPalette())
    for hook in _hooks:
        hook(resolved)
    for w in app.allWidgets():
        w.update()
    notifier().changed.emit(resolved)
    return resolved


def _follow_system(app: QApplication) -> None:
    if _state.get("following") == "yes":
        return
    _state["following"] = "yes"

    def on_scheme(_scheme: object) -> None:
        if _state["choice"] == SYSTEM:
            apply(app, SYSTEM)

    QGuiApplication.styleHints().colorSchemeChanged.connect(on_scheme)
