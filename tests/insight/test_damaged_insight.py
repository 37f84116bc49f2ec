"""The statistics cache and lineage keep what a damaged session's readable part holds, on every backend
(issue 24 item 5): its title (lineage showed "(untitled)") and the numbers of its readable events (all
zeros before), with its status kept so nobody takes them for the whole log."""

from __future__ import annotations

from pathlib import Path

import damagedkit as dk
import insightkit as ik
import pytest

from app.insight import InsightCache, lineage_from_cache


@pytest.mark.parametrize("backend", dk.BACKENDS)
def test_a_damaged_session_keeps_its_title_and_readable_numbers_in_the_cache(tmp_path: Path, backend: str) -> None:
    storage = dk.storage_of(backend, tmp_path)
    dk.build_damaged(backend, storage)
    cache = InsightCache(ik.reader(str(storage), backend), cache_file=str(tmp_path / "stats.sqlite"))
    try:
        ik.run(cache.update())
        tree = lineage_from_cache(cache)
        summaries = {s.session_id: s for s in cache.summaries()}
    finally:
        ik.run(cache.aclose())
    readable = {dk.CORRUPT: dk.READABLE_EVENTS, dk.UNSUPPORTED: dk.READABLE_EVENTS + len(dk.later_turn())}
    for sid, status in ((dk.CORRUPT, "corrupt"), (dk.UNSUPPORTED, "unsupported")):
        node = tree.find(sid)
        assert node is not None and node.title == dk.TITLE[sid] and node.status == status
        s = summaries[sid]
        assert (s.status, s.title, s.project) == (status, dk.TITLE[sid], dk.CWD)
        assert s.events == readable[sid] and s.tool_calls == 1 and s.turns >= 1
