"""The Activity log (``app.activity``): Qt-free, bounded, newest on demand, listeners told of every change;
and ``app.demo.reset_demo_root``, which the window's "Reset demo root" calls."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.activity import DONE, FAILED, MAX_ENTRIES, ActivityEntry, ActivityLog
from app.demo import DEMO_DIR_NAME, build_demo_root, reset_demo_root


class Clock:
    def __init__(self) -> None:
        self.now = 1_767_600_000.0

    def __call__(self) -> float:
        self.now += 1.5
        return self.now


def test_record_keeps_time_action_session_outcome_and_detail() -> None:
    log = ActivityLog(clock=Clock())
    e = log.record("fork", DONE, "Forked a into b", session="a")
    assert (e.time, e.action, e.session, e.outcome, e.detail) == (1_767_600_001.5, "fork", "a", "done", "Forked a into b")
    assert list(log) == [e] and log[0] is e and len(log) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.outcome = FAILED  # type: ignore[misc]
    assert ActivityEntry.__slots__  # a value: no per-instance dict
    assert len(e.clock()) == 8 and e.clock().count(":") == 2  # HH:MM:SS, local time


def test_log_is_bounded_and_drops_the_oldest_first() -> None:
    told: list[tuple[str | None, bool]] = []
    log = ActivityLog(3, clock=Clock())
    log.add_listener(lambda e, dropped: told.append((e.detail if e else None, dropped)))
    for i in range(5):
        log.record("copy", DONE, f"#{i}")
    assert [e.detail for e in log] == ["#2", "#3", "#4"]  # oldest first
    assert told == [("#0", False), ("#1", False), ("#2", False), ("#3", True), ("#4", True)]
    assert [e.detail for e in log.newest(2)] == ["#4", "#3"]
    assert [e.detail for e in log.newest(10)] == ["#4", "#3", "#2"]
    assert log.max_entries == 3
    assert ActivityLog().max_entries == MAX_ENTRIES == 500


def test_clear_tells_listeners_and_removed_listeners_hear_nothing() -> None:
    told: list[tuple[object, bool]] = []
    log = ActivityLog(clock=Clock())

    def listener(e: ActivityEntry | None, dropped: bool) -> None:
        told.append((e, dropped))

    log.add_listener(listener)
    log.record("repair", DONE, "ok")
    log.clear()
    assert len(log) == 0 and told[-1] == (None, True)
    log.remove_listener(listener)
    log.remove_listener(listener)  # twice is harmless
    log.record("repair", DONE, "again")
    assert len(told) == 2


def test_a_log_keeps_at_least_one_entry() -> None:
    with pytest.raises(ValueError):
        ActivityLog(0)


def test_activity_never_imports_qt() -> None:
    code = "import sys, app.activity; print(any(m.startswith('PySide6') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2])
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- reset the demo root


def test_reset_demo_root_rebuilds_in_place_and_discards_changes(tmp_path: Path) -> None:
    root = tmp_path / "data" / DEMO_DIR_NAME
    build_demo_root(str(root))
    sessions = sorted(p.relative_to(root) for p in root.rglob("session.jsonl*"))
    stray = next(root.iterdir()) / "stray-fork"
    stray.mkdir()
    (stray / "session.jsonl").write_text("a change made in the demo\n")
    victim = root / sessions[0]
    victim.write_bytes(b"garbage")
    assert reset_demo_root(str(root)) == str(root)
    assert not stray.exists()
    assert sorted(p.relative_to(root) for p in root.rglob("session.jsonl*")) == sessions
    assert victim.read_bytes() != b"garbage"
    assert os.listdir(tmp_path / "data") == [DEMO_DIR_NAME]  # no temporary folder left behind


def test_reset_demo_root_builds_a_missing_one_and_refuses_other_folders(tmp_path: Path) -> None:
    root = tmp_path / DEMO_DIR_NAME
    reset_demo_root(str(root))
    assert any(root.rglob("session.jsonl*"))
    mine = tmp_path / "sessions"
    mine.mkdir()
    (mine / "keep").write_text("a real root")
    with pytest.raises(ValueError, match="not a demo root"):
        reset_demo_root(str(mine))
    assert (mine / "keep").read_text() == "a real root"
