"""The open session's row is judged again through the window's store when its log grows, not by a diagnosis
worker (which reads the whole log afresh; the window's store extends its last read, issue 25)."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from guikit import WAIT_MS, make_turn, wait_listed, wait_opened

import app.gui.controllers.diagnosis_pass as diagnosis_pass
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(90)

SIDS = ["f-0", "f-1"]


def test_a_followed_session_is_judged_again_by_the_window_not_a_worker(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"

    async def write() -> None:
        store = JsonlSessionPersistence(root, compression="none")
        try:
            for sid in SIDS:
                await store.create(sk.meta(sid, sk.WORK))
                await store.append(sid, sk.one_turn_log())
        finally:
            await store.close()

    arun(write())
    judged_by_workers: list[str] = []
    real = diagnosis_pass.judge_chunk

    def recording(root_path: str, backend: str, triples: list[Any]) -> Any:
        judged_by_workers.extend(sid for sid, _place, _revision in triples)
        return real(root_path, backend, triples)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)  # workers in this process, so they can be watched
    monkeypatch.setattr(diagnosis_pass, "shared_pool", lambda: pool)
    monkeypatch.setattr(diagnosis_pass, "judge_chunk", recording)
    try:
        w = make_window(root, session="f-0")
        wait_listed(qtbot, w)
        wait_opened(qtbot, w)
        qtbot.waitUntil(lambda: all(r.status != "pending" for r in w.session_model.rows()), timeout=WAIT_MS)
        assert "f-1" in judged_by_workers  # the pass does use its workers
        judged_by_workers.clear()

        async def append() -> None:
            store = JsonlSessionPersistence(root, compression="none")
            try:
                await store.append("f-0", make_turn(6, 2, "more"))
            finally:
                await store.close()

        arun(append())
        row = w.session_model.find_id("f-0")
        assert row is not None
        grown = 6 + len(make_turn(6, 2, "more"))
        qtbot.waitUntil(lambda: w.session_model.find_id("f-0").event_count == grown, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: w.timeline_model.stored_count == grown, timeout=WAIT_MS)
        assert w.session_model.find_id("f-0").status == "ok"
        assert "f-0" not in judged_by_workers
    finally:
        pool.shutdown(wait=False)
