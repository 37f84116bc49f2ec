"""The session list on real upstream logs and on the demo root: every log listed, every status right."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from guikit import UPSTREAM, copy_private, need_upstream, wait_listed, wait_opened
from PySide6.QtCore import Qt

from app.gui.models.sessions import Col
from persistence import open_store

pytestmark = pytest.mark.timeout(60)


def _statuses(w: Any) -> dict[str, str]:
    return {r.session_id: r.status for r in w.session_model.rows()}


def test_upstream_fixtures_list_every_log_with_the_engines_status(
    qtbot: Any, make_window: Any, arun: Any, zoo_root: Path
) -> None:
    w = make_window(zoo_root)
    wait_listed(qtbot, w)
    got = _statuses(w)

    async def engine_view() -> dict[str, str]:
        store = open_store(zoo_root)
        try:
            return {h.id: (await store.diagnose(h.id)).status for h in await store.list()}
        finally:
            await store.close()

    expected = arun(engine_view())
    assert got == expected
    assert {"ok", "open-turn", "torn-tail", "unsupported"} <= set(got.values())
    # Tooltips carry the diagnosis; the title comes from session/title events.
    model = w.session_model
    for i in range(model.rowCount()):
        row = model.row_at(i)
        tip = model.data(model.index(i, Col.STATUS), 0x0003)  # ToolTipRole
        assert row.reason in tip
    titled = next(r for r in model.rows() if r.session_id == "a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d")
    assert titled.title == "Fix failing test_parse_empty"


def test_corrupt_and_unreadable_logs_are_listed_not_dropped(qtbot: Any, make_window: Any, zoo_root: Path) -> None:
    # Damage two copies: a bad frame in the middle, and a header the engine's list() silently skips.
    src = next(zoo_root.glob("*/a3f1c2d4-*/session.jsonl.zstd"))
    bad_frame = zoo_root / src.parent.parent.name / "bad-frame" / "session.jsonl.zstd"
    bad_frame.parent.mkdir()
    data = bytearray(src.read_bytes())
    data = data.replace(b'"a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"', b'"a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"', 1)
    data[len(data) // 2] ^= 0xFF
    bad_frame.write_bytes(bytes(data))
    garbage = zoo_root / "--garbage--" / "not-a-session" / "session.jsonl.zstd"
    garbage.parent.mkdir(parents=True)
    garbage.write_bytes(b"this is not zstd at all")
    flat = zoo_root / "--garbage--" / "flat-file.jsonl.zstd"
    flat.write_bytes(src.read_bytes())

    w = make_window(zoo_root)
    wait_listed(qtbot, w)
    rows = {r.path: r for r in w.session_model.rows()}
    assert str(garbage) in rows and rows[str(garbage)].status == "corrupt"
    assert "header" in rows[str(garbage)].reason
    assert str(flat) in rows and rows[str(flat)].status == "unsupported"
    assert str(bad_frame) in rows and rows[str(bad_frame)].status == "corrupt"
    # Every artifact on disk is a row.
    on_disk = {str(p) for p in zoo_root.rglob("*.jsonl.zstd")}
    assert on_disk == set(rows)


def test_demo_root_has_every_status_kind_and_lineage(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = make_window(demo_root)
    wait_listed(qtbot, w)
    rows = w.session_model.rows()
    assert len(rows) >= 30
    kinds = {r.status for r in rows}
    assert {"ok", "open-turn", "torn-tail", "corrupt", "unsupported"} <= kinds
    fork = [r for r in rows if r.lineage == "fork"]
    sub = [r for r in rows if r.lineage.startswith("subagent")]
    assert fork and sub
    assert fork[0].header("seedLength") and fork[0].parent_id
    assert sub[0].header("delegationDepth") == 1 and sub[0].header("origin") == "subagent"
    assert {r.project for r in rows} >= {"_no-cwd"}
    assert all(os.path.exists(r.path) for r in rows if r.path)


def test_filter_sort_and_project_filter(qtbot: Any, make_window: Any, demo_root: str) -> None:
    w = make_window(demo_root)
    wait_listed(qtbot, w)
    pane = w.list_pane
    model = w.session_model
    total = model.rowCount()
    qtbot.keyClicks(pane.filter, "torn")
    assert 0 < model.rowCount() < total
    pane.filter.clear()
    assert model.rowCount() == total
    pane.refresh_projects()
    keys = [pane.project.itemData(i) for i in range(1, pane.project.count())]
    assert "--srv-infra-terraform--" in keys
    pane.project.setCurrentIndex(keys.index("--srv-infra-terraform--") + 1)
    shown = {model.key_at(i) for i in range(model.rowCount())}
    assert shown and all("--srv-infra-terraform--" in k for k in shown)
    pane.project.setCurrentIndex(0)
    # Clicking the Status header sorts the damaged logs first.
    pane.table.sortByColumn(Col.STATUS, Qt.SortOrder.AscendingOrder)
    assert model.index(0, Col.STATUS).data() in ("corrupt", "unsupported")


def test_sqlite_store_lists_and_opens_read_only(qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    need_upstream()
    src = UPSTREAM / "sqlite" / "interrupted" / "before" / "root"
    root = copy_private(src, tmp_path / "sq")
    db = root / "sessions.sqlite"
    before = {p.name: p.read_bytes() for p in root.iterdir() if not p.name.endswith("-shm")}
    w = make_window(db)
    wait_listed(qtbot, w)
    rows = w.session_model.rows()
    assert [r.status for r in rows] == ["open-turn"]
    wait_opened(qtbot, w, rows[0].key)
    assert w.raw_model.text.source == "rows" and w.raw_model.rowCount() == rows[0].event_count
    assert "synthetic" in w.timeline_model.node(w.timeline_model.index(w.timeline_model.rowCount() - 1, 0)).flags
    # A viewer never writes: the database and its WAL are byte-identical afterwards (the -shm index is SQLite's).
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.name in before} == before


def test_sqlite_rows_show_size_and_newest_event_time(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    from guikit import make_turn

    db = tmp_path / "store" / "sessions.sqlite"
    db.parent.mkdir(mode=0o700)

    async def write(turns: dict[str, int]) -> None:
        store = open_store(str(db), "sqlite")
        try:
            for sid, n in turns.items():
                if await store.read_stored_revision(sid) is None:
                    await store.create({"id": sid, "createdAt": 1767600000000, "cwd": "/proj/x"})
                seq = len((await store.read_from(sid, 0)).events) if await store.read_stored_revision(sid) else 0
                for t in range(1, n + 1):
                    evs = make_turn(seq, t, f"p{t}", time=1767600000000 + 1000 * seq)
                    await store.append(sid, evs)
                    seq += len(evs)
        finally:
            await store.close()

    arun(write({"small": 1, "big": 3}))
    w = make_window(db)
    wait_listed(qtbot, w)
    small, big = w.session_model.find_id("small"), w.session_model.find_id("big")
    assert small.size and big.size and big.size > small.size
    assert small.modified_ns and big.modified_ns and big.modified_ns > small.modified_ns
    m = w.session_model
    row = m.row_for_key(big.key)
    assert m.data(m.index(row, Col.SIZE)) not in ("", None) and m.data(m.index(row, Col.MODIFIED)) not in ("", None)
    assert "event data" in m.data(m.index(row, Col.SIZE), Qt.ItemDataRole.ToolTipRole)
