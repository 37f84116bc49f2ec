"""Live refresh: appends, new and removed sessions reach the list and the open session without a reset."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened

from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(90)


async def _make_root(root: Path, ids: list[str], turns: int = 1, compression: str = "zstd") -> None:
    store = JsonlSessionPersistence(root, compression=compression)
    try:
        for i, sid in enumerate(ids):
            await store.create({"id": sid, "createdAt": 1767600000000 + i, "cwd": f"/proj/p{i % 2}"})
            seq = 0
            for t in range(1, turns + 1):
                evs = make_turn(seq, t, f"prompt {t} of {sid}")
                await store.append(sid, evs)
                seq += len(evs)
    finally:
        await store.close()


async def _append_turn(root: Path, sid: str, turn: int, seq: int, compression: str = "zstd", *, close: bool = True) -> int:
    store = JsonlSessionPersistence(root, compression=compression)
    try:
        evs = make_turn(seq, turn, f"live prompt {turn}", close=close)
        await store.append(sid, evs)
        return seq + len(evs)
    finally:
        await store.close()


class _Counter:
    def __init__(self, model: Any) -> None:
        self.resets = self.inserted = self.removed = self.changed = 0
        model.modelReset.connect(lambda: self._bump("resets"))
        model.rowsInserted.connect(lambda *_: self._bump("inserted"))
        model.rowsRemoved.connect(lambda *_: self._bump("removed"))
        model.dataChanged.connect(lambda *_: self._bump("changed"))

    def _bump(self, name: str) -> None:
        setattr(self, name, getattr(self, name) + 1)


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_watched_changes_update_rows_and_the_open_session(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, compression: str
) -> None:
    root = tmp_path / "root"
    arun(_make_root(root, ["s1", "s2"], compression=compression))
    w = make_window(root, session="s1")
    wait_listed(qtbot, w)
    key1 = w.session_model.find_id("s1").key
    wait_opened(qtbot, w, key1)
    qtbot.waitUntil(lambda: w.controller.watcher.active, timeout=WAIT_MS)
    list_changes = _Counter(w.session_model)
    tl = w.timeline_model
    assert tl.rowCount() == 1
    raw_before = w.raw_model.rowCount()
    count_before = w.session_model.find_id("s1").event_count

    # 1. An append to the open session: one row changes, the timeline and raw view grow in place.
    seq = arun(_append_turn(root, "s1", 2, count_before, compression))
    qtbot.waitUntil(lambda: w.session_model.find_id("s1").event_count == seq, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: tl.rowCount() == 2 and w.raw_model.rowCount() > raw_before, timeout=WAIT_MS)
    assert w.raw_model.text.line_for_seq(seq - 1) == w.raw_model.rowCount() - 1
    assert tl.data(tl.index(1, 0)) == "Turn 2"

    # 2. A new session appears as one inserted row.
    arun(_make_root(root, ["s3"], compression=compression))
    qtbot.waitUntil(lambda: w.session_model.find_id("s3") is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: w.session_model.find_id("s3").status == "ok", timeout=WAIT_MS)

    # 3. A removed session disappears as one removed row.
    shutil.rmtree(Path(w.session_model.find_id("s2").path).parent)
    qtbot.waitUntil(lambda: w.session_model.find_id("s2") is None, timeout=WAIT_MS)

    assert list_changes.resets == 0
    assert list_changes.inserted >= 1 and list_changes.removed >= 1 and list_changes.changed >= 1
    assert sorted(r.session_id for r in w.session_model.rows()) == ["s1", "s3"]


def test_open_turn_follows_live_appends_and_drops_synthetic_closers(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    writer = JsonlSessionPersistence(root)  # one live writer, as the harness keeps it while a turn runs
    first = make_turn(0, 1, "x")
    second = make_turn(len(first), 2, "still running", close=False)
    arun(writer.create({"id": "live", "createdAt": 1767600000000, "cwd": "/proj/p"}))
    arun(writer.append("live", first))
    arun(writer.append("live", second))
    seq = len(first) + len(second)
    w = make_window(root, session="live")
    wait_listed(qtbot, w)
    key = w.session_model.find_id("live").key
    wait_opened(qtbot, w, key)
    tl = w.timeline_model
    # Issue 16 bug 3: written a moment ago, the open turn is live, its would-be closers shown on request only.
    assert "open" in tl.node(tl.index(1, 0)).flags and "synthetic" not in tl.node(tl.index(1, 0)).flags
    w.banner.closers_box.setChecked(True)
    qtbot.waitUntil(lambda: "synthetic" in tl.node(tl.index(1, 0)).flags, timeout=WAIT_MS)  # inspect()'s closers
    assert w.session_model.find_id("live").status == "open-turn"
    arun(
        writer.append(
            "live",
            [
                {"type": "step/end", "seq": seq, "time": 1, "data": {"turn": 2, "step": 1}},
                {"type": "turn/end", "seq": seq + 1, "time": 2, "data": {"turn": 2, "reason": {"kind": "completed"}}},
            ],
        )
    )
    arun(writer.close())
    qtbot.waitUntil(lambda: "synthetic" not in tl.node(tl.index(1, 0)).flags, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: w.session_model.find_id("live").status == "ok", timeout=WAIT_MS)
    assert tl.stored_count == len(tl.records) == seq + 2
    assert "completed" in tl.node(tl.index(1, 0)).info


def test_periodic_poll_catches_what_watching_misses(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    arun(_make_root(root, ["a", "b"]))
    w = make_window(root, session="a", poll_ms=200)
    wait_listed(qtbot, w)
    qtbot.waitUntil(lambda: w.controller.watcher.active, timeout=WAIT_MS)
    arun(w.controller.watcher.stop())  # simulate a missed notification (network drive, inotify limit)
    resets = _Counter(w.session_model)
    n = w.session_model.find_id("b").event_count
    arun(_append_turn(root, "b", 2, n))
    arun(_make_root(root, ["c"]))
    qtbot.waitUntil(lambda: w.session_model.find_id("c") is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: (w.session_model.find_id("b").event_count or 0) > n, timeout=WAIT_MS)
    assert resets.resets == 0


def test_sqlite_store_follows_a_live_writer(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    from persistence.sqlite.backend import SqliteSessionPersistence

    tmp_path.chmod(0o700)
    db = tmp_path / "sessions.sqlite"
    writer = SqliteSessionPersistence(db)
    first = make_turn(0, 1, "hello sqlite")
    arun(writer.create({"id": "sq", "createdAt": 1767600000000, "cwd": "/proj/sq"}))
    arun(writer.append("sq", first))
    w = make_window(db, session="sq")
    wait_listed(qtbot, w)
    key = w.session_model.find_id("sq").key
    wait_opened(qtbot, w, key)
    qtbot.waitUntil(lambda: w.controller.watcher.active, timeout=WAIT_MS)
    tl, raw = w.timeline_model, w.raw_model
    assert tl.rowCount() == 1 and raw.rowCount() == len(first)
    second = make_turn(len(first), 2, "more, live")
    arun(writer.append("sq", second))
    qtbot.waitUntil(lambda: tl.rowCount() == 2 and raw.rowCount() == len(first) + len(second), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: w.session_model.find_id("sq").event_count == len(first) + len(second), timeout=WAIT_MS)
    arun(writer.close())


def test_a_long_session_previews_its_tail_then_keeps_the_users_row(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.gui.controllers.session_loader as session_loader

    monkeypatch.setattr(session_loader, "PREVIEW_EVENTS", 200)
    monkeypatch.setattr(session_loader, "PREVIEW_PAINT_S", 0.6)  # time to pick a row before the full read lands
    root = tmp_path / "root"
    arun(_make_root(root, ["long"], turns=60))
    w = make_window(root)
    wait_listed(qtbot, w)
    readies: list[int] = []
    w.loader.timeline_ready.connect(lambda _k: readies.append(w.timeline_model.stored_count))
    key = w.session_model.find_id("long").key
    w.loader.close()
    w._open_key = None
    w.open_session_key(key)
    qtbot.waitUntil(lambda: len(readies) >= 1, timeout=WAIT_MS)
    assert w.loader.current.previewed
    preview_count = readies[0]
    tl = w.timeline_model
    assert 200 <= preview_count < 60 * 13
    # The user picks the second-to-last turn while the preview shows.
    pick = tl.index(tl.rowCount() - 2, 0)
    w.timeline_pane.select_index(pick)
    picked_seq = w.timeline_pane.current_node().first_seq
    qtbot.waitUntil(lambda: len(readies) >= 2, timeout=WAIT_MS)
    wait_opened(qtbot, w, key)
    total = w.session_model.find_id("long").event_count
    assert readies[1] == total == tl.stored_count
    assert w.timeline_pane.current_node().first_seq == picked_seq  # the full read did not move the user


def test_stopping_a_long_load_during_its_preview_says_so(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.gui.controllers.session_loader as session_loader

    monkeypatch.setattr(session_loader, "PREVIEW_EVENTS", 200)
    monkeypatch.setattr(session_loader, "PREVIEW_PAINT_S", 1.0)
    root = tmp_path / "root"
    arun(_make_root(root, ["long"], turns=60))
    w = make_window(root)
    wait_listed(qtbot, w)
    key = w.session_model.find_id("long").key
    w.loader.close()
    w._open_key = None
    w.open_session_key(key)
    qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.previewed, timeout=WAIT_MS)
    w.loader.cancel()  # what Esc / the progress panel's Cancel do
    qtbot.waitUntil(lambda: "Reading stopped" in w.timeline_pane.banner.text(), timeout=WAIT_MS)
    assert w.timeline_model.rowCount() > 0  # the newest turns stay readable
