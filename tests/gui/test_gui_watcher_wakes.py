"""The root watcher drains its queue when an event arrives, not only on its periodic safety-net timer
(a followed session's append reaches the window without waiting up to ``interval_ms``, issue 25)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS

from app.gui.controllers.root_watcher import RootWatcher

pytestmark = pytest.mark.timeout(60)


def test_a_change_is_reported_without_the_periodic_timer(qtbot: Any, arun: Any, tmp_path: Path) -> None:
    session = tmp_path / "project" / "session"
    session.mkdir(parents=True)
    watcher = RootWatcher(interval_ms=3_600_000)  # the periodic drain never fires during this test
    got: list[list[str]] = []
    watcher.changed.connect(got.append)
    arun(watcher.start(str(tmp_path)))
    try:
        qtbot.waitUntil(lambda: watcher.active, timeout=WAIT_MS)
        (session / "session.jsonl").write_bytes(b"{}\n")
        qtbot.waitUntil(lambda: bool(got), timeout=WAIT_MS)
        assert str(session) in got[0]
        got.clear()
        with open(session / "session.jsonl", "ab") as f:  # a later burst wakes it again
            f.write(b"{}\n")
        qtbot.waitUntil(lambda: bool(got), timeout=WAIT_MS)
        assert got[0] == [str(session)]
    finally:
        arun(watcher.stop())
