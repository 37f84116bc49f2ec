"""``map_views()``: many reads (and their digests) in one hop, each view equal to its own ``view()``.

A worker process judging a root's sessions calls ``map_views`` with tens of ids at a time (issue 25:
the per-call hop cost as much as a small session's read).  These tests pin that a batch changes
nothing a caller can see, on every backend and status: same verdicts, events, closers and torn facts,
in the order asked, a repeated id read and digested once, a digest's error raised, and cancellation
between sessions.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from livekit import open_backend
from sessionkit import run
from viewkit import STATUSES

from persistence import CoordinatedPersistence, SessionView

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]


def _facts(view: SessionView) -> tuple[Any, ...]:
    torn = view.torn
    return (
        view.diagnosis,
        view.header,
        view.events.records(),
        view.stored.records(),
        view.closers,
        view.closer_start,
        None if torn is None else (torn.offset, torn.recovered, torn.cut),
    )


def test_map_views_sees_one_view_each_in_the_order_asked(built: tuple[str, Path]) -> None:
    name, storage = built
    asked = [*reversed(STATUSES), "ok", "no-such-session", "open-turn"]

    async def go() -> tuple[list[SessionView], list[SessionView]]:
        batch_store = open_backend(name, storage)
        single_store = open_backend(name, storage)  # cold too: no cache shared with the batch
        try:
            batch = await batch_store.map_views(asked, lambda v: v)
            singles = [await single_store.view(sid) for sid in asked]
        finally:
            await batch_store.close()
            await single_store.close()
        return batch, singles

    batch, singles = run(go())
    assert [v.session_id for v in batch] == asked
    assert [v.status for v in batch] == [*reversed(STATUSES), "ok", "missing", "open-turn"]
    for got, want in zip(batch, singles, strict=True):
        assert _facts(got) == _facts(want)
    ok_at = asked.index("ok")
    assert batch[len(STATUSES)] is batch[ok_at]  # a repeated id is read once


def test_map_views_of_nothing_is_nothing(built: tuple[str, Path]) -> None:
    name, storage = built

    async def go() -> list[SessionView]:
        store = open_backend(name, storage)
        try:
            return await store.map_views([], lambda v: v)
        finally:
            await store.close()

    assert run(go()) == []


def test_a_cancelled_batch_stops_between_sessions_and_releases_its_locks(
    built: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    name, storage = built
    examined: list[str] = []

    async def go() -> SessionView:
        store: CoordinatedPersistence = open_backend(name, storage)
        inner = store._examine
        started = asyncio.Event()
        loop = asyncio.get_running_loop()

        def slow_examine(session_id: str, t: Any, keep_raw: bool) -> Any:
            examined.append(session_id)
            loop.call_soon_threadsafe(started.set)
            deadline = time.monotonic() + 5
            while not t.cancelled and time.monotonic() < deadline:  # a long read: the cancel lands while it runs
                time.sleep(0.005)
            return inner(session_id, t, keep_raw)

        monkeypatch.setattr(store, "_examine", slow_examine)
        try:
            task = asyncio.ensure_future(store.map_views(list(STATUSES), lambda v: v.status))
            await started.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            monkeypatch.setattr(store, "_examine", inner)
            # Every id's lock was released: a later read of each is not kept waiting.
            return await asyncio.wait_for(store.view("ok"), 30)
        finally:
            await store.close()

    view = run(go())
    assert view.status == "ok"
    assert examined and len(examined) < len(STATUSES)


def test_each_view_is_digested_once_and_a_digest_error_is_raised(built: tuple[str, Path]) -> None:
    name, storage = built
    seen: list[str] = []

    def digest(view: SessionView) -> tuple[str, int]:
        seen.append(view.session_id)
        return view.status, len(view.events)

    def failing(view: SessionView) -> str:
        if view.status == "corrupt":
            raise LookupError("a digest that fails")
        return view.status

    async def go() -> list[tuple[str, int]]:
        store = open_backend(name, storage)
        try:
            got = await store.map_views(["ok", "open-turn", "ok"], digest)
            with pytest.raises(LookupError, match="a digest that fails"):
                await store.map_views(list(STATUSES), failing)
            assert (await store.view("ok")).status == "ok"  # the failed batch let go of every lock
            return got
        finally:
            await store.close()

    got = run(go())
    assert sorted(seen) == ["ok", "open-turn"]
    assert got[0] == got[2] and got[0][0] == "ok" and got[1][0] == "open-turn"
