"""Keyboard-first (issue 16): the command palette, the generated shortcuts list (F1 / ?), every menu
entry reachable by key, the focus ring on the focused pane, and the timeline legend."""

from __future__ import annotations

from typing import Any

import pytest
from guikit import WAIT_MS, wait_listed
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu

from app.gui import style
from app.gui.dialogs.command_palette import CatalogEntry, match_score, rank, window_actions
from app.gui.dialogs.shortcuts_dialog import ShortcutsDialog, menu_route, mnemonic
from app.gui.models import timeline as timeline_model
from app.gui.views.timeline_legend import SAMPLES, LegendModel

pytestmark = pytest.mark.timeout(120)

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def active(qtbot: Any, w: Any) -> None:
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w, timeout=WAIT_MS)


def open_palette(qtbot: Any, w: Any) -> Any:
    active(qtbot, w)
    qtbot.keyClick(w, Qt.Key.Key_P, CTRL_SHIFT)
    qtbot.waitUntil(lambda: w.keyboard.palette is not None and w.keyboard.palette.isVisible(), timeout=WAIT_MS)
    return w.keyboard.palette


def shown_names(palette: Any) -> list[str]:
    return [e.name for e in palette.model.shown]


def menus_of(w: Any) -> list[tuple[str, QMenu]]:
    out: list[tuple[str, QMenu]] = []

    def walk(menu: QMenu, path: str) -> None:
        out.append((path, menu))
        for a in menu.actions():
            if isinstance(a.menu(), QMenu):
                walk(a.menu(), f"{path} > {a.text()}")

    for top in w.menuBar().actions():
        if isinstance(top.menu(), QMenu):
            walk(top.menu(), top.text())
    return out


# ---------------------------------------------------------------- matching


def test_matching_prefers_names_then_substrings_then_subsequences(qapp: Any) -> None:
    assert match_score("rsm", "Resume in the harness …") is not None  # a subsequence still matches
    assert match_score("xyz", "Resume") is None
    substring, subsequence = match_score("sume", "Resume"), match_score("rsm", "Resume")
    assert substring is not None and subsequence is not None and substring > subsequence
    entries = [
        CatalogEntry(QAction("Fork after the last completed turn …"), "Fork after the last completed turn …", "Session", ""),
        CatalogEntry(QAction("Search every session …"), "Search every session …", "Search", "Ctrl+K"),
        CatalogEntry(QAction("Refresh"), "Refresh", "File", "F5"),
    ]
    assert [e.name for e in rank(entries, "")] == [e.name for e in entries]  # an empty query lists all, in menu order
    assert next(e.name for e in rank(entries, "session")) == "Search every session …"  # the name beats the menu
    assert [e.name for e in rank(entries, "f5")] == ["Refresh"]  # keys are searched too
    assert [e.name for e in rank(entries, "fork turn")] == ["Fork after the last completed turn …"]  # every word


# ---------------------------------------------------------------- the palette


def test_palette_lists_every_menu_action_with_its_keys_and_runs_the_chosen_one(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)
    late = QAction("Zebra crossing test entry", w)  # added to a menu after the window was built
    ran: list[bool] = []
    late.triggered.connect(lambda: ran.append(True))
    menus_of(w)[0][1].addAction(late)
    p = open_palette(qtbot, w)
    by_name = {e.name: e for e in p.model.entries}
    in_menus = [a for _path, m in menus_of(w) for a in m.actions() if not a.isSeparator() and a.menu() is None and a.text()]
    assert all(a in {e.action for e in p.model.entries} for a in in_menus if a.isVisible())
    assert by_name["Refresh"].keys == QKeySequence("F5").toString(QKeySequence.SequenceFormat.NativeText)
    assert by_name["Repair …"].menu == "Session" and by_name["Command palette …"].keys.endswith("P")
    assert "Zebra crossing test entry" in by_name  # collected from the menus, not a hand-kept list
    assert "actions" in p.hint.text()

    qtbot.keyClicks(p.field, "zebra")
    assert shown_names(p) == ["Zebra crossing test entry"]
    assert p.current_entry() is not None and p.current_entry().action is late
    qtbot.keyClick(p.field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(ran), timeout=WAIT_MS)  # run after the palette closed
    qtbot.waitUntil(lambda: w.keyboard.palette is None, timeout=WAIT_MS)  # closed and deleted


def test_palette_arrows_choose_and_esc_closes_without_running(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)
    p = open_palette(qtbot, w)
    qtbot.keyClicks(p.field, "legend")
    assert shown_names(p)[0] == "Timeline legend …"
    qtbot.keyClick(p.field, Qt.Key.Key_Down)
    qtbot.keyClick(p.field, Qt.Key.Key_Up)
    assert p.current_entry() is not None and p.current_entry().name == "Timeline legend …"
    qtbot.keyClick(p.field, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: w.keyboard.palette is None, timeout=WAIT_MS)  # closed and deleted
    qtbot.wait(50)
    assert w.keyboard.legend is None  # nothing ran
    p = open_palette(qtbot, w)  # again: Enter runs the legend
    qtbot.keyClicks(p.field, "legend")
    qtbot.keyClick(p.field, Qt.Key.Key_Enter)
    qtbot.waitUntil(lambda: w.keyboard.legend is not None and w.keyboard.legend.isVisible(), timeout=WAIT_MS)


def test_disabled_actions_are_listed_greyed_and_cannot_run(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)  # no session open: Repair is disabled
    ran: list[bool] = []
    w.menus.repair.triggered.connect(lambda: ran.append(True))
    assert not w.menus.repair.isEnabled()
    p = open_palette(qtbot, w)
    qtbot.keyClicks(p.field, "repair")
    row = shown_names(p).index("Repair …")
    assert not p.model.flags(p.model.index(row, 0)) & Qt.ItemFlag.ItemIsEnabled
    assert "greyed" in p.hint.text()
    assert p.current_entry() is None or p.current_entry().enabled
    assert not p.run_row(row)
    qtbot.keyClick(p.field, Qt.Key.Key_Return)
    qtbot.wait(50)
    assert not ran and p.isVisible()


def test_new_shortcuts_do_not_clash(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)
    seen: dict[str, str] = {}
    for action in w.actions():
        for seq in action.shortcuts():
            text = seq.toString(QKeySequence.SequenceFormat.PortableText)
            assert text not in seen, f"{text} is both {seen[text]!r} and {action.text()!r}"
            seen[text] = action.text()
    assert seen["Ctrl+Shift+P"] == "Command &palette …"
    assert seen["Ctrl+Shift+A"] == "&Activity"
    assert seen["F1"] == seen["?"] == "&Keyboard shortcuts …"


# ---------------------------------------------------------------- every action by key


def test_every_menu_entry_has_a_key_or_a_unique_menu_letter(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)
    tops = [mnemonic(a.text()) for a in w.menuBar().actions() if a.menu() is not None]
    assert None not in tops and len(set(tops)) == len(tops), tops
    for path, menu in menus_of(w):
        if menu is w.menus.recent_menu:
            continue  # folders, filled when it opens; reached with the arrows (and in the palette)
        shown = [a for a in menu.actions() if not a.isSeparator() and a.isVisible()]
        letters = [mnemonic(a.text()) for a in shown]
        for a, letter in zip(shown, letters, strict=True):
            if not a.shortcut().isEmpty():
                continue  # its key reaches it (a shared letter only makes Qt cycle between the entries)
            # Reached only through the menu: its letter must exist and pick it alone (Enter, not a cycle).
            assert letter is not None, f"{path} > {a.text()!r}: no key and no menu letter"
            assert letters.count(letter) == 1, f"{path} > {a.text()!r}: Alt+{letter} is shared in this menu"
    entries = {e.name: e for e in window_actions(w)}
    assert menu_route(w, entries["Restore a backup …"]) == "Alt+S, T"
    assert menu_route(w, entries["Timeline legend …"]) == "Alt+V, G"


def test_f1_and_question_mark_open_the_generated_shortcuts_but_not_in_a_text_field(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)
    active(qtbot, w)

    def dialog() -> Any:
        return w.findChild(ShortcutsDialog, "shortcutsDialog")

    w.list_pane.filter.setFocus()
    qtbot.waitUntil(w.list_pane.filter.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(w.list_pane.filter, "?")
    assert w.list_pane.filter.text() == "?" and dialog() is None  # typed, not a shortcut
    w.list_pane.filter.clear()

    w.list_pane.table.setFocus()
    qtbot.waitUntil(w.list_pane.table.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(w.list_pane.table, "?")
    qtbot.waitUntil(lambda: dialog() is not None and dialog().isVisible(), timeout=WAIT_MS)
    text = dialog().text()
    dialog().close()
    qtbot.waitUntil(lambda: dialog() is None, timeout=WAIT_MS)  # deleted on close

    # Generated: every shortcut of the window is listed, and an entry added later shows up.
    for action in w.actions():
        for seq in action.shortcuts():
            assert seq.toString(QKeySequence.SequenceFormat.NativeText) in text, action.text()
    late = QAction("Fr&obnicate", w, shortcut=QKeySequence("Ctrl+Alt+9"))
    next(m for p, m in menus_of(w) if p == "&Session").addAction(late)
    active(qtbot, w)
    qtbot.keyClick(w, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: dialog() is not None and dialog().isVisible(), timeout=WAIT_MS)
    assert "Frobnicate" in dialog().text()
    assert QKeySequence("Ctrl+Alt+9").toString(QKeySequence.SequenceFormat.NativeText) in dialog().text()
    assert "Alt+S, T  Restore a backup …" in dialog().text()  # no shortcut: its menu letters


# ---------------------------------------------------------------- focus ring


def ring_color_at(widget: Any, point: QPoint) -> str:
    return widget.grab().toImage().pixelColor(point).name()


def test_the_focused_pane_has_a_visible_ring_that_follows_the_focus(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)
    w.resize(1200, 800)
    active(qtbot, w)
    ring = w.keyboard.focus_ring
    table, tree, raw = w.list_pane.table, w.timeline_pane.tree, w.raw_pane.view
    table.setFocus()
    qtbot.waitUntil(lambda: ring.target is table, timeout=WAIT_MS)
    assert ring.visible
    want = style.focus_color(table.palette()).name()
    mid = table.width() // 2
    assert ring_color_at(table, QPoint(mid, 0)) == want  # top edge
    assert ring_color_at(table, QPoint(mid, table.height() - 1)) == want  # bottom edge
    assert ring_color_at(table, QPoint(0, table.height() // 2)) == want  # left edge

    w.show_tab(1)  # the timeline tab takes the focus
    qtbot.waitUntil(lambda: ring.target is tree, timeout=WAIT_MS)
    assert all(s.parent() is tree for s in ring.strips) and ring_color_at(tree, QPoint(tree.width() // 2, 0)) == want
    assert ring_color_at(table, QPoint(mid, 0)) != want  # the list lost it

    w.show_tab(2)
    qtbot.waitUntil(lambda: ring.target is raw, timeout=WAIT_MS)
    w.resize(1000, 700)  # the ring follows the pane's size
    qtbot.waitUntil(lambda: ring.strips[3].geometry().right() == raw.width() - 1, timeout=WAIT_MS)

    w.list_pane.filter.setFocus()  # a field is a pane too
    qtbot.waitUntil(lambda: ring.target is w.list_pane.filter, timeout=WAIT_MS)


def test_focus_colour_keeps_contrast_on_light_and_dark_palettes(qapp: Any) -> None:
    from PySide6.QtGui import QColor, QPalette

    light, dark = QPalette(), QPalette()
    light.setColor(QPalette.ColorRole.Window, QColor("#f0f0f0"))
    light.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    light.setColor(QPalette.ColorRole.Highlight, QColor("#308cc6"))
    assert style.focus_color(light).name() == "#308cc6"  # the theme's own highlight when it stands out
    light.setColor(QPalette.ColorRole.Highlight, QColor("#dde8f5"))  # too faint on white
    assert style.focus_color(light).name() == style.FOCUS_FALLBACK_LIGHT
    dark.setColor(QPalette.ColorRole.Window, QColor("#202124"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#1b1b1b"))
    dark.setColor(QPalette.ColorRole.Highlight, QColor("#2a3340"))  # too faint on near-black
    assert style.focus_color(dark).name() == style.FOCUS_FALLBACK_DARK
    for pal in (light, dark):
        assert style.contrast_ratio(style.focus_color(pal), pal.color(QPalette.ColorRole.Base)) >= style.MIN_FOCUS_CONTRAST


# ---------------------------------------------------------------- legend


def test_legend_paints_with_the_timelines_own_colours_and_covers_every_flag(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)
    active(qtbot, w)
    w.keyboard.legend_action.trigger()
    qtbot.waitUntil(lambda: w.keyboard.legend is not None and w.keyboard.legend.isVisible(), timeout=WAIT_MS)
    model = w.keyboard.legend.model
    assert isinstance(model, LegendModel) and isinstance(model, timeline_model.TimelineModel)
    labels = [model.index(r, 0).data() for r in range(model.rowCount())]

    def fg(label: str) -> str:
        return model.index(labels.index(label), 0).data(Qt.ItemDataRole.ForegroundRole).color().name()

    def bg(label: str) -> str | None:
        b = model.index(labels.index(label), 0).data(Qt.ItemDataRole.BackgroundRole)
        return None if b is None else b.color().name()

    assert fg("Turn 4") == style.FLAG_COLORS["error"][0]  # red turns
    assert fg("Result") == style.FLAG_COLORS["synthetic"][0]  # purple synthetic rows
    assert bg("Result") == timeline_model._BG["synthetic"]
    assert model.index(labels.index("Turn 5"), 0).data(Qt.ItemDataRole.FontRole).italic()
    meanings = " ".join(model.index(r, 1).data() for r in range(model.rowCount()))
    assert "red" in meanings and "purple" in meanings and "NOT on disk" in meanings
    shown = set().union(*(flags for *_rest, flags in SAMPLES))
    assert set(timeline_model._FLAG_TIPS) <= shown  # a flag the timeline paints has a legend row
    assert w.keyboard.legend_button.isVisible()  # also one click away, beside the tabs


def test_ctrl_l_goes_to_the_list_and_tab_leaves_the_read_only_tables(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = make_window(demo_root)
    wait_listed(qtbot, w, details=False)
    active(qtbot, w)
    w.search.focus_search()  # somewhere else: the Search tab's field
    qtbot.waitUntil(lambda: w.left_tabs.currentWidget() is w.search.pane, timeout=WAIT_MS)
    qtbot.keyClick(w, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    table = w.list_pane.table
    qtbot.waitUntil(table.hasFocus, timeout=WAIT_MS)
    assert w.left_tabs.currentWidget() is w.list_pane and w.keyboard.focus_ring.target is table
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: not table.hasFocus(), timeout=WAIT_MS)  # not the next cell: the next pane
    for view in (table, w.raw_pane.view, w.header_pane.view):
        assert not view.tabKeyNavigation()
