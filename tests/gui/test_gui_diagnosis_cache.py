"""The window's list and the diagnosis cache (issue 25 item 2).

A second window on the same root takes every status from the cache (the logs are unchanged), except
the log changed in between, which is judged again; and the search index does not start while a row
the list painted still waits for its status.  (The cache's own rules are in tests/diagnosis_cache.)
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from guikit import WAIT_MS, wait_listed

import app.gui.controllers.diagnosis_pass as diagnosis_pass
from app.diagnosis.cache import RACY_NS, cache_path
from app.diagnosis.verdicts import Verdict
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(90)

CWD = sk.WORK
SIDS = [f"w-{i}" for i in range(6)]


def write_root(root: Path, arun: Any) -> None:
    async def go() -> None:
        store = JsonlSessionPersistence(root, compression="none")
        try:
            for i, sid in enumerate(SIDS):
                await store.create(sk.meta(sid, CWD))
                await store.append(sid, sk.one_turn_log())
                if i == 2:
                    await store.append(sid, sk.open_turn2())
        finally:
            await store.close()

    arun(go())
    time.sleep(RACY_NS / 1e9 + 0.05)  # older than the race margin: verdicts may be stored


def statuses(w: Any) -> dict[str, tuple[str, int | None]]:
    return {r.session_id: (r.status, r.event_count) for r in w.session_model.rows()}


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The session ids the windows' diagnosis passes read (in worker processes or not), in order."""
    seen: list[str] = []
    real = diagnosis_pass.DiagnosisPass._run

    async def spy(self: Any, jobs: list[Any]) -> list[Verdict]:
        seen.extend(sid for _key, sid, _place, _rev in jobs)
        return await real(self, jobs)

    monkeypatch.setattr(diagnosis_pass.DiagnosisPass, "_run", spy)
    return seen


def all_from_cache(w: Any, judged: list[str], changed: int = 0) -> None:
    """Every status of ``w`` but ``changed`` came from the cache and none was read by the pass then.  The
    session the window opens takes its row's status from its own load, which may land before the cache
    is read: that row is then not the cache's to fill (it counts one less)."""
    assert len(set(judged)) <= changed, judged
    n = w.diagnosis_pass.from_cache
    assert n == len(SIDS) - changed or (n == len(SIDS) - changed - 1 and w.session_model.pinned_key is not None)


def test_a_warm_open_takes_every_status_from_the_cache(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, judged: list[str]
) -> None:
    root = tmp_path / "root"
    write_root(root, arun)
    first = make_window(root)
    wait_listed(qtbot, first)
    cold = statuses(first)
    assert cold["w-2"] == ("open-turn", 8) and cold["w-0"] == ("ok", 6)
    assert first.diagnosis_pass.from_cache == 0

    judged.clear()
    second = make_window(root)
    wait_listed(qtbot, second)
    all_from_cache(second, judged)
    assert statuses(second) == cold

    # A same-size rewrite (the last record torn) with the old mtime put back: only that row is judged again.
    path = sk.artifact(root, CWD, "w-4", "none")
    st = path.stat()
    data = path.read_bytes()
    with open(path, "r+b") as f:
        f.write(data[:-2] + b" \n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    judged.clear()
    third = make_window(root)
    wait_listed(qtbot, third)
    all_from_cache(third, judged, changed=1)
    assert set(judged) <= {"w-4"}
    got = statuses(third)
    assert got["w-4"][0] != "ok"
    assert {k: v for k, v in got.items() if k != "w-4"} == {k: v for k, v in cold.items() if k != "w-4"}


def test_the_search_index_waits_until_every_painted_row_has_its_status(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    write_root(root, arun)
    release = asyncio.Event()
    real = diagnosis_pass.judge

    async def slow(store: Any, session_id: str, place: str = "", expected: str | None = None) -> Verdict:
        await release.wait()  # every status stays pending until the test says so
        return await real(store, session_id, place, expected)

    monkeypatch.setattr(diagnosis_pass, "judge", slow)
    monkeypatch.setattr(diagnosis_pass, "shared_pool", lambda: None)  # judged in this process, through ``judge``
    w = make_window()
    controller = w.search.controller
    controller.start_delay_ms = 0
    w.open_root(str(root))
    qtbot.waitUntil(w.controller.listed.is_set, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: controller.gate_waits >= 3, timeout=WAIT_MS)
    assert controller.worker is None
    assert not w.diagnosis_pass.visible_settled()
    # (the row of the session the window opens gets its status from that load; the others wait)
    assert sum(r.status == "pending" for r in w.session_model.rows()) >= len(SIDS) - 1

    release.set()
    qtbot.waitUntil(lambda: controller.worker is not None, timeout=WAIT_MS)
    assert all(r.status != "pending" for r in w.session_model.rows())
    qtbot.waitUntil(lambda: controller.runs_finished >= 1, timeout=WAIT_MS)


def test_a_damaged_cache_is_rebuilt_and_the_window_says_so(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, judged: list[str]
) -> None:
    root = tmp_path / "root"
    write_root(root, arun)
    path = Path(cache_path(str(root), "jsonl"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a database " * 100)
    w = make_window()
    said: list[str] = []
    w.diagnosis_pass.messages.connect(said.extend)
    w.open_root(str(root))
    wait_listed(qtbot, w)
    assert any("diagnosis cache" in m and "rebuilding it" in m for m in said)
    assert statuses(w)["w-2"] == ("open-turn", 8)
    judged.clear()
    again = make_window(root)
    wait_listed(qtbot, again)
    all_from_cache(again, judged)
