"""Themes (issue 24 item 6): every foreground/background pair the models paint holds 4.5:1 (WCAG AA) in
the light and the dark theme, the theme follows View > Theme (kept in settings) and the system scheme."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from guikit import WAIT_MS, wait_listed, wait_opened
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QSettings, Qt
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from app.gui import style, theme
from app.gui.settings import AppSettings
from app.gui.views.timeline_legend import LegendModel

pytestmark = pytest.mark.timeout(180)

MIN_TEXT_CONTRAST = 4.5  # WCAG 2.1 SC 1.4.3, normal text


@pytest.fixture
def light_again(qapp: Any) -> Iterator[None]:
    """Whatever a test applies, the next test starts as a fresh window would: following the (light) system."""
    yield
    theme.apply(qapp, theme.SYSTEM)
    assert theme.current() == theme.LIGHT


def _colour(value: Any) -> QColor | None:
    if isinstance(value, QBrush):
        return value.color()
    if isinstance(value, QColor):
        return value
    return None


def _indexes(model: QAbstractItemModel, parent: QModelIndex | None = None) -> Iterator[QModelIndex]:
    parent = parent if parent is not None else QModelIndex()
    if model.canFetchMore(parent):
        model.fetchMore(parent)
    for r in range(model.rowCount(parent)):
        for c in range(model.columnCount(parent)):
            idx = model.index(r, c, parent)
            yield idx
        first = model.index(r, 0, parent)
        if model.canFetchMore(first) or model.rowCount(first) > 0:
            yield from _indexes(model, first)


def weak_pairs(name: str, model: QAbstractItemModel, palette: QPalette) -> list[str]:
    """The cells of ``model`` whose text colour is under 4.5:1 against their background (palette Base/Text
    where the model leaves a role to the view)."""
    base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
    out: list[str] = []
    for idx in _indexes(model):
        fg_value, bg_value = idx.data(Qt.ItemDataRole.ForegroundRole), idx.data(Qt.ItemDataRole.BackgroundRole)
        if fg_value is None and bg_value is None:
            continue
        fg, bg = _colour(fg_value) or text, _colour(bg_value) or base
        ratio = style.contrast_ratio(fg, bg)
        if ratio < MIN_TEXT_CONTRAST:
            shown = str(idx.data(Qt.ItemDataRole.DisplayRole) or "")[:30]
            out.append(f"{name}[{idx.row()},{idx.column()}] {shown!r}: {fg.name()} on {bg.name()} = {ratio:.2f}:1")
    return out


def _showing(w: Any, session_id: str) -> bool:
    return w.loader.current is not None and w.loader.current.row.session_id == session_id


@pytest.mark.parametrize("name", [theme.LIGHT, theme.DARK])
def test_every_pair_the_models_paint_reads_at_4_5_to_1(
    qtbot: Any, qapp: Any, make_window: Any, demo_root: str, light_again: None, name: str
) -> None:
    w = make_window(demo_root)
    w.search.controller.start_delay_ms = 0
    wait_listed(qtbot, w)
    theme.apply(qapp, name)
    assert theme.current() == name
    palette = QApplication.palette()
    assert style.is_dark(palette) == (name == theme.DARK)
    weak: list[str] = []
    weak += weak_pairs("list", w.session_model, palette)
    weak += weak_pairs("legend", LegendModel(), palette)  # a sample of every flag the timeline paints
    # Sessions with errors, synthetic closers, damage and a plain one: their timeline, raw lines and header.
    rows = w.session_model.rows()
    picked = {r.status: r for r in rows}
    assert len(picked) >= 3  # the demo root holds clean, open and damaged sessions
    for row in picked.values():
        if not w.select_session(row.session_id):
            continue
        wait_opened(qtbot, w)
        qtbot.waitUntil(lambda sid=row.session_id: _showing(w, sid), timeout=WAIT_MS)
        qtbot.waitUntil(lambda: w.timeline_model.rowCount() > 0, timeout=WAIT_MS)
        weak += weak_pairs(f"timeline({row.status})", w.timeline_model, palette)
        weak += weak_pairs(f"raw({row.status})", w.raw_model, palette)
        weak += weak_pairs(f"header({row.status})", w.header_model, palette)
    qtbot.waitUntil(lambda: w.search.controller.runs_finished >= 1, timeout=WAIT_MS)
    w.search.pane.field.setText("error OR build OR user")
    qtbot.waitUntil(lambda: w.search.model.rowCount() > 0, timeout=WAIT_MS)
    weak += weak_pairs("search", w.search.model, palette)
    weak += weak_pairs("activity", w.keyboard.activity_model, palette)
    assert not weak, f"{len(weak)} pairs under {MIN_TEXT_CONTRAST}:1 in the {name} theme:\n" + "\n".join(sorted(set(weak))[:60])


def _theme_menu(w: Any) -> Any:
    view = w.menus.menu("View")
    assert view is not None
    menus = [a.menu() for a in view.actions() if a.menu() is not None and a.text().replace("&", "") == "Theme"]
    assert len(menus) == 1, "View > Theme"
    return menus[0]


def test_view_theme_switches_the_palette_and_is_remembered(qtbot: Any, qapp: Any, make_window: Any, light_again: None) -> None:
    w = make_window(None)
    entries = {a.text().replace("&", ""): a for a in _theme_menu(w).actions()}
    assert set(entries) == {"System", "Light", "Dark"}
    assert entries["System"].isChecked()  # the default follows the system
    entries["Dark"].trigger()
    assert theme.current() == theme.DARK and theme.choice() == theme.DARK
    assert style.is_dark(QApplication.palette())
    qtbot.waitUntil(lambda: w.timeline_pane.palette().color(QPalette.ColorRole.Base).lightness() < 128, timeout=WAIT_MS)
    assert w.settings.theme() == theme.DARK
    assert AppSettings(QSettings(w.settings.q.fileName(), QSettings.Format.IniFormat)).theme() == theme.DARK
    assert entries["Dark"].isChecked() and not entries["System"].isChecked()
    entries["Light"].trigger()
    assert theme.current() == theme.LIGHT and not style.is_dark(QApplication.palette())
    assert w.settings.theme() == theme.LIGHT


def test_system_follows_the_platform_scheme(qtbot: Any, qapp: Any, make_window: Any, light_again: None, monkeypatch: Any) -> None:
    w = make_window(None)
    entries = {a.text().replace("&", ""): a for a in _theme_menu(w).actions()}
    monkeypatch.setattr(theme, "system_scheme", lambda: theme.DARK)
    entries["System"].trigger()
    assert theme.choice() == theme.SYSTEM and theme.current() == theme.DARK
    assert style.STATUS_COLORS["corrupt"][0] == theme.hex_of("status.corrupt", theme.DARK)
    monkeypatch.setattr(theme, "system_scheme", lambda: theme.LIGHT)
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)  # the platform switched back
    assert theme.current() == theme.LIGHT
    assert w.settings.theme() == theme.SYSTEM


def test_a_saved_theme_is_applied_when_the_launch_line_chose_none(
    qtbot: Any, qapp: Any, make_window: Any, light_again: None, monkeypatch: Any
) -> None:
    monkeypatch.setattr(theme, "applied", lambda: False)  # a fresh process: no --theme on the launch line
    monkeypatch.setattr(AppSettings, "theme", lambda self: theme.DARK)
    w = make_window(None)
    assert theme.current() == theme.DARK
    assert {a.text().replace("&", ""): a for a in _theme_menu(w).actions()}["Dark"].isChecked()


def test_labels_with_colours_of_their_own_follow_a_theme_switch(
    qtbot: Any, qapp: Any, make_window: Any, demo_root: str, light_again: None
) -> None:
    w = make_window(demo_root)
    wait_listed(qtbot, w, details=False)
    w.banner.show_none()
    theme.apply(qapp, theme.DARK)
    muted = theme.hex_of("text.muted", theme.DARK)
    assert muted in w.list_pane.count_label.styleSheet()
    assert muted in w.search.pane.index_state.styleSheet()
    assert muted in w.banner.label.text()  # "No session selected"
    assert theme.hex_of("status.open-turn", theme.DARK) in w.hidden_note.styleSheet()
    row = next(r for r in w.session_model.rows() if r.status == "corrupt")
    w.banner.show_row(row)
    theme.apply(qapp, theme.LIGHT)
    assert theme.hex_of("status.corrupt", theme.LIGHT) in w.banner.label.text()  # the open session's badge too
    assert theme.hex_of("text.muted", theme.LIGHT) in w.list_pane.count_label.styleSheet()


# Roles that are not text on a background: chart marks and the focus ring (3:1 applies to those).
NOT_TEXT = ("chart.", "focus.")


@pytest.mark.parametrize("name", [theme.LIGHT, theme.DARK])
def test_every_text_role_of_the_table_reads_on_its_background(qapp: Any, light_again: None, name: str) -> None:
    """Each text role against its own ``.bg`` role when it has one, else the theme's Base (and Window);
    the comparison tints against their text role."""
    theme.apply(qapp, name)
    palette = QApplication.palette()
    grounds = [palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Window)]
    weak: list[str] = []
    for role in theme.TABLE:
        if role.endswith(".bg") or role.startswith(NOT_TEXT) or role == "compare.text":
            continue
        fg = theme.color(role, name)
        backs = [theme.color(f"{role}.bg", name)] if theme.has(f"{role}.bg") else grounds
        weak += [f"{role} on {b.name()}: {style.contrast_ratio(fg, b):.2f}" for b in backs if style.contrast_ratio(fg, b) < 4.5]
    for role in (r for r in theme.TABLE if r.startswith("compare.") and r.endswith(".bg")):
        ratio = style.contrast_ratio(theme.color("compare.text", name), theme.color(role, name))
        if ratio < 4.5:
            weak.append(f"compare.text on {role}: {ratio:.2f}")
    assert not weak, "\n".join(weak)
