"""First run (issue 24 item 9): an empty or missing root says where the harness keeps its sessions
($DSH_HOME/sessions, else ~/.dsh/sessions, with the resolved path), offers Open folder …, Open file …
and the demo, and spans the content area instead of leaving an empty timeline beside an empty list."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, wait_listed

from app.gui.window.main_window import MainWindow
from app.gui.window.sources import WindowSources
from app.paths import default_root

pytestmark = pytest.mark.timeout(120)


def _first_run_shown(w: Any) -> bool:
    return w.list_pane.empty.isVisible() and not w.content_area.isVisible()


def _text(w: Any) -> str:
    return f"{w.list_pane.empty_label.text()} {w.list_pane.hint_label.text()}"


def test_an_empty_root_says_where_the_harness_keeps_sessions_and_offers_the_ways_in(
    qtbot: Any, make_window: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    calls: list[str] = []  # the ways in run the window's own commands (patched before they are connected)
    monkeypatch.setattr(WindowSources, "choose_folder", lambda self: calls.append("folder"))
    monkeypatch.setattr(WindowSources, "choose_file", lambda self: calls.append("file"))
    monkeypatch.setattr(MainWindow, "open_demo", lambda self: calls.append("demo"))
    empty = tmp_path / "empty"
    empty.mkdir()
    w = make_window(empty)
    w.resize(1024, 700)
    wait_listed(qtbot, w, details=False)
    qtbot.waitUntil(lambda: _first_run_shown(w), timeout=WAIT_MS)
    panel = w.list_pane
    text = _text(w)
    assert html.escape(str(empty)) in text  # what was opened
    assert "$DSH_HOME/sessions" in text and "~/.dsh/sessions" in text  # the rule …
    assert html.escape(default_root()) in text and default_root() == str(tmp_path / "dsh" / "sessions")  # … and its answer
    # Across the content area: the panel takes the window's width, not a third of it.
    assert panel.empty.width() >= w.width() * 0.9
    for label in (panel.empty_label, panel.hint_label):  # each paragraph shows whole, at a readable width
        qtbot.waitUntil(lambda lb=label: lb.width() >= 300 and lb.height() >= lb.heightForWidth(lb.width()), timeout=WAIT_MS)
    assert all(b.isVisible() for b in (panel.open_button, panel.open_file_button, panel.demo_button))
    panel.open_button.click()
    panel.open_file_button.click()
    panel.demo_button.click()
    assert calls == ["folder", "file", "demo"]


def test_a_missing_root_says_the_default_does_not_exist_yet(
    qtbot: Any, make_window: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("DSH_HOME", raising=False)
    w = make_window(tmp_path / "nowhere")
    qtbot.waitUntil(lambda: _first_run_shown(w), timeout=WAIT_MS)
    text = _text(w)
    assert html.escape(default_root()) in text and "does not exist yet" in text


def test_a_root_with_sessions_shows_list_and_content(qtbot: Any, make_window: Any, demo_root: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    w = make_window(empty)
    qtbot.waitUntil(lambda: _first_run_shown(w), timeout=WAIT_MS)
    w.open_root(demo_root)
    wait_listed(qtbot, w, details=False)
    qtbot.waitUntil(lambda: w.content_area.isVisible() and not w.list_pane.empty.isVisible(), timeout=WAIT_MS)
