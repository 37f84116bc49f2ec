"""``judge_many``: a worker's batch of verdicts equals one ``judge`` per session, damaged logs included.

The batch reads through ``CoordinatedPersistence.map_views`` (one engine call for tens of sessions); what
it must not change is any verdict: status, reason, counts, the readable prefix's title of a refused
log, and the listed revision kept for it.  A batch the engine refuses as a whole falls back to one
read per session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from damagedkit import BACKENDS, CORRUPT, UNSUPPORTED, build_damaged, storage_of
from livekit import open_backend

from app.diagnosis.verdicts import Verdict, judge, judge_many
from persistence import CoordinatedPersistence

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]


def _without_clock(v: Verdict) -> tuple[Any, ...]:
    return (v.session_id, v.place, v.revision, v.status, v.reason, v.error_class, v.events, v.closers, v.title, v.last_time)


async def _jobs(store: CoordinatedPersistence) -> list[tuple[str, str, str | None]]:
    revisions = {e.session_id: e.revision for e in await store.list_entries() if e.session_id}
    return [(sid, f"place-{sid}", revisions.get(sid)) for sid in (CORRUPT, UNSUPPORTED, "no-such-session", CORRUPT)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_judges_as_one_judge_each(backend: str, tmp_path: Path) -> None:
    storage = storage_of(backend, tmp_path)
    build_damaged(backend, storage)

    async def go() -> tuple[list[Verdict], list[Verdict]]:
        batch_store = open_backend(backend, storage)
        single_store = open_backend(backend, storage)
        try:
            jobs = await _jobs(batch_store)
            batch = await judge_many(batch_store, jobs)
            singles = [await judge(single_store, sid, place, rev) for sid, place, rev in jobs]
        finally:
            await batch_store.close()
            await single_store.close()
        return batch, singles

    batch, singles = sk.run(go())
    assert [_without_clock(v) for v in batch] == [_without_clock(v) for v in singles]
    assert [v.status for v in batch] == ["corrupt", "unsupported", "missing", "corrupt"]
    assert batch[0].title and batch[1].title  # the readable prefix still names a refused log
    assert len({v.started_ns for v in batch}) == 1 and batch[0].started_ns > 0


def test_a_batch_the_engine_refuses_falls_back_to_one_read_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = storage_of("jsonl-zstd", tmp_path)
    build_damaged("jsonl-zstd", storage)

    async def go() -> list[Verdict]:
        store = open_backend("jsonl-zstd", storage)

        async def refuse(_ids: Any, _digest: Any, _signal: Any = None) -> Any:
            raise OSError("the batch could not run")

        monkeypatch.setattr(store, "map_views", refuse)
        try:
            return await judge_many(store, await _jobs(store))
        finally:
            await store.close()

    verdicts = sk.run(go())
    assert [v.status for v in verdicts] == ["corrupt", "unsupported", "missing", "corrupt"]
