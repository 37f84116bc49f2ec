"""A change that lands while the loader re-judges a live turn is read, not lost (review finding).

The re-judgement (the quiet period passed, or the closers toggle) runs as the "follow" job; a change the
watcher reports meanwhile only marks "follow again".  The writer's last append (its ``turn/end``) may be
exactly that change, and no other file event comes after it: it must still be read.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened

import app.gui.controllers.session_loader as loader_module
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(60)
SLOW_JUDGE_S = 0.8  # how long the re-judgement's liveness look takes here: the append lands inside it


def test_an_append_during_a_rejudgement_is_followed(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    root = tmp_path / "root"
    turn = make_turn(0, 1, "p1")
    assert turn[-1]["type"] == "turn/end"
    store = JsonlSessionPersistence(root)  # the harness, its turn still open

    async def start() -> None:
        await store.create({"id": "live", "createdAt": 1767600000000, "cwd": "/proj/p"})
        await store.append("live", turn[:-1])

    arun(start())
    try:
        w = make_window(root, session="live")
        wait_listed(qtbot, w)
        wait_opened(qtbot, w, w.session_model.find_id("live").key)
        qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.snapshot is not None, timeout=WAIT_MS)
        assert w.loader.current.snapshot.status == "open-turn"
        real = loader_module.writer_active

        def slow(*args: Any, **kwargs: Any) -> Any:
            time.sleep(SLOW_JUDGE_S)
            return real(*args, **kwargs)

        monkeypatch.setattr(loader_module, "writer_active", slow)
        w.loader.reevaluate()  # the live timer fired, say
        assert w.loader.jobs.running("follow")
        arun(store.append("live", [turn[-1]]))  # the writer closes the turn meanwhile
        w.loader.follow(w.loader.current.row)  # what the watcher does on that change
        qtbot.waitUntil(lambda: w.loader.current.snapshot.status == "ok", timeout=WAIT_MS)
        assert len(w.timeline_model.records) == len(turn)
        assert w.session_model.find_id("live").status == "ok"
    finally:
        arun(store.close())


def test_a_rejudgement_asked_for_during_a_follow_runs_after_it(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    """The closers toggle flipped while a follow runs: the follow ends, then the toggle takes effect."""
    root = tmp_path / "root"
    turn = make_turn(0, 1, "p1", close=False)
    store = JsonlSessionPersistence(root)

    async def start() -> None:
        await store.create({"id": "live", "createdAt": 1767600000000, "cwd": "/proj/p"})
        await store.append("live", turn)

    arun(start())
    try:
        w = make_window(root, session="live")
        wait_listed(qtbot, w)
        wait_opened(qtbot, w, w.session_model.find_id("live").key)
        qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.snapshot is not None, timeout=WAIT_MS)
        snap = w.loader.current.snapshot
        if not snap.live:
            pytest.skip("the quiet period passed before the first look (a very slow machine)")
        assert not snap.closers_shown
        w.loader._judge_after = False
        # A follow is running (the job key is taken) when the toggle flips: the flip waits for it.
        w.loader.jobs.spawn(w.loader._follow(), name="follow", key="follow")
        w.loader.set_show_closers(True)
        assert w.loader._judge_after
        qtbot.waitUntil(lambda: w.loader.current.snapshot.closers_shown, timeout=WAIT_MS)
    finally:
        arun(store.close())
