"""Search every session from the window: typing a query, the grouped hits, opening a hit at its event,
back / forward, links, the background index (watcher, rebuild, cancel)."""

from __future__ import annotations

import glob
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMessageBox

from app.gui.models.search_results import GROUP_ROLE, HIT_ROLE, SPANS_ROLE
from app.gui.window.main_window import TAB_HEADER, TAB_RAW, TAB_TIMELINE
from app.gui.window.menus import KEYS_HELP
from app.links import parse_link
from app.paths import CACHE_DIR_ENV
from app.search import SearchFilters, run_index
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every index these tests build lives in tmp_path, never in the user's cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))
    return cache


def _window(qtbot: Any, make_window: Any, root: Any, **kw: Any) -> Any:
    w = make_window(root, **kw)
    w.search.controller.start_delay_ms = 0
    wait_listed(qtbot, w, details=False)
    qtbot.waitUntil(lambda: w.search.controller.runs_finished >= 1, timeout=WAIT_MS)
    return w


def _type_query(qtbot: Any, w: Any, text: str) -> Any:
    """Ctrl+K, type, wait for the debounced query's result (both steps: the hits, then their counts)."""
    qtbot.keyClick(w, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(w.search.pane.field.hasFocus, timeout=WAIT_MS)
    assert w.left_tabs.currentWidget() is w.search.pane
    before = w.search.controller.last_result
    qtbot.keyClicks(w.search.pane.field, text)
    qtbot.waitUntil(
        lambda: (
            w.search.controller.last_result is not before
            and w.search.controller.last_result is not None
            and w.search.controller.last_result.query == text
            and w.search.controller.last_result.counted
        ),
        timeout=WAIT_MS,
    )
    return w.search.controller.last_result


def _landed(qtbot: Any, w: Any, seq: int) -> None:
    qtbot.waitUntil(
        lambda: w.search.navigator.last_landed is not None and w.search.navigator.last_landed.seq == seq, timeout=WAIT_MS
    )


def _assert_at_event(w: Any, seq: int) -> None:
    """The timeline's current row stands for ``seq`` and the raw view's current line holds it."""
    node = w.timeline_pane.current_node()
    assert node is not None and (node.seq == seq or seq in node.seqs)
    line = w.raw_pane.current_line()
    lo, hi = w.raw_model.text.seqs_of_line(line)
    assert lo <= seq <= hi
    assert line == w.raw_model.text.line_for_seq(seq)


def test_typing_a_query_shows_hits_grouped_by_session(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    result = _type_query(qtbot, w, "order.ts")
    pane, model = w.search.pane, w.search.model
    assert result.hit_count > 0 and result.session_count > 1
    assert model.rowCount() == result.session_count or model.rowCount() == len(result.sessions)
    assert pane.stack.currentWidget() is pane.tree
    assert f"{result.session_count} sessions" in pane.count.text() and "hits" in pane.count.text()
    group = model.index(0, 0)
    g = model.data(group, GROUP_ROLE)
    assert model.data(group) == (g.title or g.session_id) and model.rowCount(group) == len(g.hits)
    assert model.data(model.index(0, 2), Qt.ItemDataRole.DisplayRole) == (g.cwd or "(no cwd)")  # the project
    hit_index = model.index(0, 0, group)
    hit = model.data(hit_index, HIT_ROLE)
    assert "order.ts" in hit.snippet.lower()
    spans = model.data(hit_index, SPANS_ROLE)
    assert spans and all(hit.snippet[a:b].lower() == "order.ts" for a, b in spans)
    assert model.data(model.index(0, 2, group)).endswith(f"seq {hit.seq}")  # turn/seq
    assert model.data(model.index(0, 1, group))  # the event kind
    assert w.search.pane.tree.isExpanded(group)


def test_the_same_query_again_keeps_the_chosen_hit(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    first = _type_query(qtbot, w, "order.ts")
    w.search.select_hit_row(4)
    chosen = w.search.model.hit_at(w.search.pane.tree.currentIndex())
    assert chosen is not None
    w.search.controller.indexed.emit(False)  # a watched session was indexed: the query runs again
    qtbot.waitUntil(lambda: w.search.controller.last_result is not first, timeout=WAIT_MS)
    again = w.search.model.hit_at(w.search.pane.tree.currentIndex())
    assert again is not None and (again.key, again.seq) == (chosen.key, chosen.seq)


def test_filters_narrow_and_the_empty_state_says_what_was_searched(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    everything = _type_query(qtbot, w, "order.ts")
    pane = w.search.pane
    pane.kind.setCurrentIndex(pane.kind.findData("tool-call"))
    qtbot.waitUntil(lambda: w.search.controller.last_request.filters.kinds == frozenset({"tool-call"}), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: w.search.controller.last_result.hit_count < everything.hit_count, timeout=WAIT_MS)
    assert all(h.kind == "tool-call" for h in w.search.controller.last_result.hits)
    pane.kind.setCurrentIndex(0)
    pane.project.setText("no-such-project")
    qtbot.waitUntil(lambda: w.search.controller.last_result.hit_count == 0, timeout=WAIT_MS)
    assert pane.stack.currentWidget() is pane.empty
    text = pane.empty.text()
    assert "order.ts" in text and "no-such-project" in text and "tool calls" in text
    assert "0 hits in 0 sessions" in pane.count.text()


def test_a_bad_query_is_said_next_to_the_field(qtbot: Any, make_window: Any, demo_root: str, monkeypatch: Any) -> None:
    dialogs: list[Any] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda *a: dialogs.append(a))
    w = _window(qtbot, make_window, demo_root)
    w.search.focus_search()
    w.search.pane.field.setText('"npm run')
    w.search.pane.request_now()
    qtbot.waitUntil(lambda: "unclosed quote" in w.search.pane.count.text(), timeout=WAIT_MS)
    assert w.search.pane.stack.currentWidget() is w.search.pane.empty
    assert not dialogs


def test_activating_a_hit_opens_the_session_at_its_event(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    _type_query(qtbot, w, '"npm run build"')
    model, tree = w.search.model, w.search.pane.tree
    # A hit in an older turn of the long session: the timeline must load and expand down to it.
    group = next(
        model.index(i, 0)
        for i in range(model.rowCount())
        if model.data(model.index(i, 0), GROUP_ROLE).session_id.startswith("long-refactor")
    )
    hits = [model.data(model.index(r, 0, group), HIT_ROLE) for r in range(model.rowCount(group))]
    row = min(range(len(hits)), key=lambda r: hits[r].seq)
    hit = hits[row]
    idx = model.index(row, 0, group)
    tree.setCurrentIndex(idx)
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_Return)
    _landed(qtbot, w, hit.seq)
    assert w.loader.current is not None and w.loader.current.row.session_id == hit.session_id
    assert w.tabs.currentIndex() == TAB_TIMELINE
    _assert_at_event(w, hit.seq)
    # Every ancestor of the selected row is expanded.
    p = w.timeline_pane.tree.currentIndex().parent()
    while p.isValid():
        assert w.timeline_pane.tree.isExpanded(p)
        p = p.parent()


def test_back_and_forward_between_visited_events(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    result = _type_query(qtbot, w, "order.ts")
    first_session = result.sessions[0]
    a, b = first_session.hits[0], first_session.hits[3]
    other = next(
        s for s in result.sessions if s.session_id != first_session.session_id and s.status == "ok" and s.hits[0].seq is not None
    ).hits[0]
    for hit in (a, b, other):
        assert w.search.open_hit(hit)
        _landed(qtbot, w, hit.seq)
    assert w.loader.current.row.session_id == other.session_id
    qtbot.keyClick(w, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    _landed(qtbot, w, b.seq)
    qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.row.session_id == b.session_id, timeout=WAIT_MS)
    _assert_at_event(w, b.seq)
    qtbot.keyClick(w, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    _landed(qtbot, w, a.seq)
    _assert_at_event(w, a.seq)
    qtbot.keyClick(w, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    _landed(qtbot, w, b.seq)
    _assert_at_event(w, b.seq)
    qtbot.keyClick(w, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.row.session_id == other.session_id, timeout=WAIT_MS)
    _landed(qtbot, w, other.seq)
    _assert_at_event(w, other.seq)
    assert not w.search.navigator.history.can_go_forward


def test_a_header_hit_opens_the_header_tab(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    _type_query(qtbot, w, "long-refactor")
    hit = next(h for h in w.search.controller.last_result.hits if h.seq is None)
    assert w.search.open_hit(hit)
    qtbot.waitUntil(lambda: w.search.navigator.last_landed is not None and w.tabs.currentIndex() == TAB_HEADER, timeout=WAIT_MS)
    assert w.loader.current.row.session_id == hit.session_id


def test_copy_link_round_trips_and_opens_the_window_there(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    result = _type_query(qtbot, w, "order.ts")
    hit = result.sessions[0].hits[2]
    w.search.open_hit(hit)
    _landed(qtbot, w, hit.seq)
    # The timeline's context menu holds the entry (after the pane's own "Fork here").
    tree = w.timeline_pane.tree
    rect = tree.visualRect(tree.currentIndex())
    tree.customContextMenuRequested.emit(rect.center())
    entries = [a.text() for a in w.timeline_pane.last_menu.actions()]
    assert any(t.startswith("Fork here") for t in entries) and "Copy link to this event" in entries
    copy = next(a for a in w.timeline_pane.last_menu.actions() if a.text() == "Copy link to this event")
    copy.trigger()
    w.timeline_pane.last_menu.close()
    url, command = QGuiApplication.clipboard().text().splitlines()
    link = parse_link(url)
    assert (link.root, link.session, link.seq) == (os.path.abspath(demo_root), hit.session_id, hit.seq)
    assert command.startswith("sessionscope --root ") and f"--session {hit.session_id} --seq {hit.seq}" in command
    # The raw view's context menu copies the same link.
    QGuiApplication.clipboard().clear()
    view = w.raw_pane.view
    view.customContextMenuRequested.emit(view.visualRect(view.currentIndex()).center())
    act = next(a for a in w.search.navigator.last_menu.actions() if a.text() == "Copy link to this event")
    act.trigger()
    w.search.navigator.last_menu.close()
    assert parse_link(QGuiApplication.clipboard().text().splitlines()[0]) == link
    # A new window opened with --root/--session/--seq lands on the event.
    w2 = make_window(None)
    w2.search.controller.start_delay_ms = 0
    w2.open_root(link.root, session=link.session, seq=link.seq)
    wait_opened(qtbot, w2)
    qtbot.waitUntil(lambda: w2.search.navigator.last_landed is not None, timeout=WAIT_MS)
    _assert_at_event(w2, hit.seq)
    assert w2.loader.current.row.session_id == hit.session_id


def test_ctrl_shift_l_copies_the_selected_event(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    result = _type_query(qtbot, w, "order.ts")
    hit = result.sessions[0].hits[1]
    w.search.open_hit(hit)
    _landed(qtbot, w, hit.seq)
    qtbot.keyClick(w, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert parse_link(QGuiApplication.clipboard().text().splitlines()[0]).seq == hit.seq


def test_new_sessions_seen_by_the_watcher_become_searchable(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"

    async def create(sid: str, prompt: str, created: int) -> None:
        store = JsonlSessionPersistence(root)
        await store.create({"id": sid, "createdAt": created, "cwd": "/home/dev/app"})
        await store.append(sid, make_turn(0, 1, prompt))
        await store.close()

    arun(create("first", "set up the repo", 1))
    w = _window(qtbot, make_window, root)
    qtbot.waitUntil(lambda: w.controller.watcher.active, timeout=WAIT_MS)
    arun(create("second", "deploy the zebrafish service", 2))
    # The watcher's session folder reaches the index (no full run, no F5): the hit shows up.
    qtbot.waitUntil(lambda: w.session_model.find_id("second") is not None, timeout=WAIT_MS)

    def found() -> bool:
        w.search.controller.search("zebrafish", SearchFilters())
        r = w.search.controller.last_result
        return r is not None and r.query == "zebrafish" and r.hit_count > 0

    qtbot.waitUntil(found, timeout=WAIT_MS)
    assert w.search.controller.last_result.sessions[0].session_id == "second"
    assert w.search.controller.runs_finished == 1  # it was the watched path's own run, not a full one


def test_a_corrupt_index_is_rebuilt_with_a_message(
    qtbot: Any, make_window: Any, demo_root: str, _cache: Path, monkeypatch: Any
) -> None:
    dialogs: list[Any] = []
    for name in ("exec", "open", "show"):
        monkeypatch.setattr(QMessageBox, name, lambda *a, _n=name: dialogs.append(_n))
    # An index built earlier (by the command line, say), then damaged on disk.
    with ThreadPoolExecutor(1) as pool:  # run_index runs its own event loop: not on the window's
        pool.submit(run_index, demo_root).result(timeout=120)
    (index_file,) = glob.glob(str(_cache / "**" / "*.sqlite"), recursive=True)
    with open(index_file, "r+b") as f:
        f.write(b"this is not a database" * 100)
    w = make_window(None)
    messages: list[str] = []
    w.statusBar().messageChanged.connect(messages.append)
    w.search.controller.start_delay_ms = 0
    w.open_root(demo_root)
    qtbot.waitUntil(lambda: w.search.controller.runs_finished >= 1, timeout=WAIT_MS)
    assert any(m.startswith("Search index: ") and "rebuilding it" in m for m in messages), messages
    assert w.search.controller.worker.index_file == index_file
    result = _type_query(qtbot, w, "order.ts")
    assert result.hit_count > 0
    assert not dialogs


def test_indexing_shows_progress_and_can_be_stopped(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = make_window(demo_root)
    c = w.search.controller
    c.start_delay_ms = 0
    states: list[Any] = []
    c.state_changed.connect(states.append)
    tracked: list[Any] = []
    c.progress_started.connect(tracked.append)
    wait_listed(qtbot, w, details=False)
    qtbot.waitUntil(lambda: c.runs_finished >= 1, timeout=WAIT_MS)
    assert any(s.building and s.total > 0 for s in states)
    assert tracked and tracked[0].snapshot()[0].startswith("Indexing ")
    assert c.state.ready and not c.building
    # Rebuild, and stop it at once: the state says it stopped, the pane says so.
    c.rebuild_index()
    qtbot.waitUntil(lambda: c.building, timeout=WAIT_MS)
    w.search.index_progress.cancel_requested.emit()
    qtbot.waitUntil(lambda: c.runs_finished >= 2, timeout=WAIT_MS)
    if c.state.stopped:  # a fast machine may finish the 30 sessions before the cancel lands
        assert "Indexing stopped at" in w.search.pane.index_state.text()
    c.update_index()
    qtbot.waitUntil(lambda: c.runs_finished >= 3 and c.state.ready and not c.state.stopped, timeout=WAIT_MS)


def test_keyboard_help_lists_the_new_keys_and_no_shortcut_clashes(qtbot: Any, make_window: Any) -> None:
    w = make_window(None)
    for key in ("Ctrl+K", "Ctrl+G", "F3", "Shift+F3", "Alt+Left", "Alt+Right", "Ctrl+Shift+L"):
        assert key in KEYS_HELP
    seen: dict[str, str] = {}
    for action in w.actions():
        for seq in action.shortcuts():
            text = seq.toString(QKeySequence.SequenceFormat.PortableText)
            assert text not in seen, f"{text} is both {seen[text]!r} and {action.text()!r}"
            seen[text] = action.text()
    assert seen["Ctrl+F"] == "&Filter sessions"  # unchanged: the list filter keeps Ctrl+F


def test_escape_leaves_the_find_bar_and_clears_the_search_field(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = _window(qtbot, make_window, demo_root)
    _type_query(qtbot, w, "order")
    qtbot.keyClick(w.search.pane.field, Qt.Key.Key_Escape)
    assert w.search.pane.field.text() == ""
    qtbot.keyClick(w, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(w.search.find_bar.field.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(w.search.find_bar.field, Qt.Key.Key_Escape)
    assert not w.search.find_bar.isVisible()
    assert w.tabs.currentIndex() in (TAB_TIMELINE, TAB_RAW)


def test_the_window_search_benchmark_still_runs(tmp_path: Path) -> None:
    """``benchmarks/bench_gui_search.py --quick`` prints its table (numbers are never asserted)."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_gui_search.py"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, str(script), "--quick", "--repeat", "1", "--workdir", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for label in ("background index", "GUI stall max", "first results after the last key", "new session searchable"):
        assert label in proc.stdout, proc.stdout
