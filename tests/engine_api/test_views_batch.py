"""``views()``: many reads in one hop, each equal to its own ``view()``, on every backend and status.

A worker process judging a root's sessions calls ``views`` with tens of ids at a time (issue 25:
the per-call hop cost as much as a small session's read).  These tests pin that a batch changes
nothing a caller can see: same verdicts, events, closers and torn facts, in the order asked, a
repeated id read once, and cancellation between sessions.
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


def test_views_equal_one_view_each_in_the_order_asked(built: tuple[str, Path]) -> None:
    name, storage = built
    asked = [*reversed(STATUSES), "ok", "no-such-session", "open-turn"]

    async def go() -> tuple[list[SessionView], list[SessionView]]:
        batch_store = open_backend(name, storage)
        single_store = open_backend(name, storage)  # cold too: no cache shared with the batch
        try:
            batch = await batch_store.views(asked)
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


def test_views_of_nothing_is_nothing(built: tuple[str, Path]) -> None:
    name, storage = built

    async def go() -> list[SessionView]:
        store = open_backend(name, storage)
        try:
            return await store.views([])
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
            task = asyncio.ensure_future(store.views(list(STATUSES)))
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
