"""Session > Compare with…: the open session beside any other, from the list or from a file (issue 23)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import comparekit as ck
import pytest
from guikit import WAIT_MS, wait_listed, wait_opened
from sessionkit import artifact

from app.gui.dialogs.session_compare_dialog import COL_A, COL_B, COL_MARK, COL_PROMPT, COL_TOOLS
from app.gui.window.compare_wiring import CompareFeature
from app.insight import fold_stats
from persistence import open_store

CWD = "/w/shop"
A = ck.log(("set up the project", "done", ("bash",), 100), ("add a login page", "added", ("write_file",), 200))
B = ck.log(
    ("set up the project", "done", ("bash",), 100),
    ("add a login page", "added it differently", ("write_file", "bash"), 300),
    ("and a logout button", "added", ("write_file",), 50),
)


@pytest.fixture
def root(arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SESSIONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    target = tmp_path / "data" / "root"
    target.parent.mkdir(mode=0o700)

    async def write() -> None:
        store = open_store(str(target))
        try:
            for sid, events in (("a", A), ("b", B)):
                await store.create({"version": 0, "id": sid, "createdAt": 1000, "cwd": CWD})
                await store.append(sid, events)
        finally:
            await store.close()

    arun(write())
    return target


def _open(qtbot: Any, make_window: Any, root: Path) -> tuple[Any, CompareFeature]:
    w = make_window(root, session="a")
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id("a").key)
    return w, w.features.get("compare", CompareFeature)


def test_compare_with_a_session_of_the_list(qtbot: Any, make_window: Any, root: Path) -> None:
    w, feature = _open(qtbot, make_window, root)
    session_menu = w.menus.menu("Session")
    assert session_menu is not None and feature.action in session_menu.actions()
    assert feature.action in w.actions()  # a window shortcut: the command palette lists it
    assert feature.action.isEnabled()
    feature.action.trigger()
    picker = feature.picker
    assert picker is not None
    qtbot.waitUntil(picker.isVisible, timeout=WAIT_MS)
    picker.filter.setText("b")
    assert picker.chosen() == "b"
    picker.accept()
    d = feature.dialog
    assert d is not None
    qtbot.waitUntil(lambda: d.comparison is not None, timeout=WAIT_MS)
    assert d.table.rowCount() == 3
    assert [d.cell(i, COL_MARK) for i in range(3)] == ["=", "≠", "B"]
    assert [(d.cell(i, COL_A), d.cell(i, COL_B)) for i in range(3)] == [("1", "1"), ("2", "2"), ("—", "3")]
    assert d.cell(2, COL_PROMPT) == "and a logout button"
    assert d.cell(1, COL_TOOLS) == "bash 0→1"
    assert d.table.currentRow() == 1  # the first difference is selected
    assert "First difference at row 2" in d.divergence.text()
    totals = d.totals.text()
    tokens = f"<td><b>Tokens</b></td><td>{fold_stats(A).tokens.total:,}</td><td>{fold_stats(B).tokens.total:,}</td>"
    assert tokens in totals  # token totals side by side, as the Stats tab counts them


def test_compare_with_a_received_transcript_file(qtbot: Any, make_window: Any, root: Path, tmp_path: Path) -> None:
    received = tmp_path / "mail" / "customer log.txt"
    received.parent.mkdir()
    shutil.copyfile(artifact(root, CWD, "b", "zstd"), received)
    before = received.read_bytes(), received.stat().st_mtime_ns
    _w, feature = _open(qtbot, make_window, root)
    picker = feature.ask()
    assert picker is not None
    picker.choose_path(str(received))
    d = feature.dialog
    assert d is not None
    qtbot.waitUntil(lambda: d.comparison is not None, timeout=WAIT_MS)
    assert d.comparison is not None and d.comparison.b.label == "customer log.txt (b)"
    assert [d.cell(i, COL_MARK) for i in range(d.table.rowCount())] == ["=", "≠", "B"]
    assert (received.read_bytes(), received.stat().st_mtime_ns) == before  # a received file is never written
