"""Write-behind through a live SessionStore, for every backend (persistence-contract §6.8.5, §7, W-/S- rules).

Runs on the virtual clock of ``livekit.run_virtual``: the loop's clock only moves while it is idle,
so "nothing was written before the deadline" is exact.  While a storage hook runs on a worker
thread the idle loop may jump to its next timer; tests that care hold such hooks behind a gate.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from contract_backends import BackendKit
from contract_logs import TURN1
from livekit import append_log, eventually, instrument, live, now_ms, plain, run_virtual, settle, stored_events, writer_of
from sessionkit import WORK, one_turn_log, types_of

from persistence import SessionStore


def chunk(session: Any, text: str) -> None:
    session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": text}})


async def quiesce(writer: Any) -> None:
    """Wait until the writer's task has observed its last write (the hook returns before the task resumes)."""
    while writer.has_work:
        await asyncio.sleep(0.001)


async def at(ms: int) -> None:
    await asyncio.sleep((ms - now_ms()) / 1000)
    await settle()


def test_W_01_window_is_fixed_from_the_first_event(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("w01", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            w = writer_of(store, "w01")
            start = now_ms()
            s.append("turn/start", {"turn": 1})
            assert w.window_armed and len(w.pending) == 1
            await at(start + 150)
            chunk(s, "later")  # joins the open window, does not reset it
            await at(start + 199)
            assert probe.calls["append_batch"] == 0 and len(w.pending) == 2
            await at(start + 200)
            await probe.until(lambda: probe.committed != [])
            assert probe.committed == [[0, 1]]
            await quiesce(w)
            assert not w.window_armed and w.pending == []

    run_virtual(body())


def test_W_02_a_trickle_of_events_becomes_one_batch(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("w02", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            start = now_ms()
            s.append("turn/start", {"turn": 1})
            for i in range(1, 20):
                await at(start + 10 * i)
                chunk(s, str(i))
            assert probe.calls["append_batch"] == 0
            await probe.until(lambda: probe.committed != [])
            assert probe.committed == [list(range(20))]

    run_virtual(body())


def test_W_03_concurrent_flushes_share_a_barrier_that_also_writes_late_events(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("w03", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            gate = probe.gate("append_batch")
            s.append("turn/start", {"turn": 1})
            flushes = asyncio.gather(store.flush("w03"), store.flush("w03"), store.persistence.flush_live("w03"))
            await gate.wait_entered()  # the barrier's first write started at once (no window wait)
            chunk(s, "admitted during the write")
            gate.open()
            assert (await flushes)[:2] == [True, True]
            assert probe.committed == [[0], [1]]
            w = writer_of(store, "w03")
            assert not w.has_work and not w.window_armed

    run_virtual(body())


def test_W_04_flush_of_an_idle_session_then_a_normal_window(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("w04", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            assert await store.flush("w04") is True
            assert probe.calls["append_batch"] == 0
            start = now_ms()
            s.append("turn/start", {"turn": 1})
            assert writer_of(store, "w04").window_armed
            await at(start + 199)
            assert probe.calls["append_batch"] == 0
            await probe.until(lambda: probe.committed != [])
            assert probe.committed == [[0]]

    run_virtual(body())


def test_S_04_W_05_events_admitted_during_a_background_write_get_a_follow_up_batch(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend, delay_ms=1) as store:
            s = await store.create("s04", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            gate = probe.gate("append_batch")
            s.append("turn/start", {"turn": 1})
            await gate.wait_entered()  # the first background write is in flight
            w = writer_of(store, "s04")
            chunk(s, "during")
            assert w.pending and w.window_armed  # its own window
            gate.open()
            await probe.until(lambda: len(probe.committed) == 2)  # no explicit flush
            assert probe.committed == [[0], [1]]
            await quiesce(w)
            assert not w.window_armed and w.pending == []
        assert [e["seq"] for e in await stored_events(backend, "s04")] == [0, 1]

    run_virtual(body())


def test_W_07_background_failure_is_reported_retained_and_never_logged_as_an_event(
    backend: BackendKit, caplog: pytest.LogCaptureFixture
) -> None:
    errors: list[tuple[str, BaseException]] = []

    async def body() -> None:
        async with live(backend, on_error=lambda sid, err: errors.append((sid, err))) as store:
            s = await store.create("w07", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            boom = OSError("disk unavailable")
            probe.fail("append_batch", boom)
            w = writer_of(store, "w07")
            s.append("turn/start", {"turn": 1})
            await eventually(lambda: bool(errors))
            assert errors == [("w07", boom)]
            assert [e["seq"] for e in w.pending] == [0]
            assert w.automatic_paused and not w.window_armed
            await asyncio.sleep(5)  # no timer-driven retry
            assert probe.calls["append_batch"] == 1
            assert types_of(s.events) == ["turn/start"]  # the failure is not a session event
            start = now_ms()
            chunk(s, "new event")  # un-pauses with a fresh window
            assert w.window_armed and not w.automatic_paused
            await at(start + 199)
            assert probe.calls["append_batch"] == 1
            await probe.until(lambda: probe.committed != [])
            assert probe.attempted == [[0], [0, 1]] and probe.committed == [[0, 1]]
            assert errors == [("w07", boom)]
        assert [e["seq"] for e in await stored_events(backend, "w07")] == [0, 1]

    with caplog.at_level(logging.WARNING, logger="persistence.coordinator"):
        run_virtual(body())
    warnings = [r.getMessage() for r in caplog.records if "background write" in r.getMessage()]
    assert len(warnings) == 1
    assert 'background write for session "w07" failed (buffered events retained): disk unavailable' in warnings[0]


def test_a_failing_on_error_callback_is_logged_and_contained(backend: BackendKit, caplog: pytest.LogCaptureFixture) -> None:
    def broken(_sid: str, _err: BaseException) -> None:
        raise RuntimeError("callback bug")

    async def body() -> None:
        async with live(backend, on_error=broken) as store:
            s = await store.create("cb", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            probe.fail("append_batch", OSError("boom"))
            s.append("turn/start", {"turn": 1})
            w = writer_of(store, "cb")
            await eventually(lambda: w.automatic_paused)
            assert [e["seq"] for e in w.pending] == [0]
            assert await store.flush("cb") is True
            assert probe.committed == [[0]]

    with caplog.at_level(logging.WARNING, logger="persistence.coordinator"):
        run_virtual(body())
    assert any("on_error callback failed" in r.getMessage() for r in caplog.records)


def test_S_05_W_08_background_failure_overlapping_two_flushes(backend: BackendKit) -> None:
    errors: list[tuple[str, BaseException]] = []

    async def body() -> None:
        async with live(backend, on_error=lambda sid, err: errors.append((sid, err))) as store:
            s = await store.create("s05", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            gate = probe.gate("append_batch")
            s.append("turn/start", {"turn": 1})
            chunk(s, "x")
            await gate.wait_entered()  # a background write of [0, 1] is in flight
            flushes = asyncio.gather(store.flush("s05"), store.flush("s05"))
            await settle()
            boom = OSError("transient")
            gate.fail(boom)
            assert await flushes == [True, True]
            assert probe.attempted == [[0, 1], [0, 1]]
            assert errors == [("s05", boom)]  # reported once, as a background failure
            assert not writer_of(store, "s05").has_work
        assert [e["seq"] for e in await stored_events(backend, "s05")] == [0, 1]

    run_virtual(body())


def test_W_09_explicit_flush_retries_at_once_and_raises_to_every_caller(backend: BackendKit) -> None:
    errors: list[tuple[str, BaseException]] = []

    async def body() -> None:
        async with live(backend, delay_ms=2147483647, on_error=lambda sid, err: errors.append((sid, err))) as store:
            s = await store.create("w09", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            boom = OSError("disk full")
            probe.fail("append_batch", boom)
            append_log(s, one_turn_log()[:2])
            results = await asyncio.gather(store.flush("w09"), store.flush("w09"), return_exceptions=True)
            assert results[0] is boom and results[1] is boom
            assert errors == []  # a barrier failure is not a background failure
            w = writer_of(store, "w09")
            assert [e["seq"] for e in w.pending] == [0, 1] and w.automatic_paused
            assert types_of(s.events) == ["turn/start", "user/message"]
            assert await store.flush("w09") is True  # the retry writes the retained batch whole
            assert probe.attempted == [[0, 1], [0, 1]]
            assert not w.has_work and not w.window_armed

    run_virtual(body())


def test_flush_drains_to_quiescence(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend, delay_ms=2147483647) as store:
            s = await store.create("quiet", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            w = writer_of(store, "quiet")
            appended = 0

            def more(*_args: Any) -> None:
                nonlocal appended
                appended += 1

            for _ in range(3):
                probe.after("append_batch", more)
            s.append("turn/start", {"turn": 1})
            flushing = asyncio.ensure_future(store.flush("quiet"))
            await probe.until(lambda: appended == 1)
            chunk(s, "a")  # admitted while the barrier writes
            await probe.until(lambda: appended == 2)
            chunk(s, "b")
            await flushing
            assert probe.committed_seqs() == [0, 1, 2]
            assert not w.has_work and not w.window_armed and w.pending == []
            assert await stored_events(backend, "quiet") == plain(s.events)

    run_virtual(body())


def test_dispose_drains_without_waiting_for_the_window(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend, delay_ms=2147483647) as store:
            s = await store.create("drain", meta={"cwd": WORK})
            append_log(s, one_turn_log())
            start = now_ms()
            await store.dispose("drain")
            assert now_ms() - start < 1000  # the (virtual) clock did not wait for the window
            assert store.get("drain") is None and not store.persistence.is_live("drain")
            assert await store.flush("drain") is False
        assert types_of(await stored_events(backend, "drain")) == TURN1

    run_virtual(body())


def test_store_close_drains_every_session(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend, delay_ms=2147483647) as store:
            for i in range(3):
                s = await store.create(f"close-{i}", meta={"cwd": WORK})
                append_log(s, one_turn_log()[: i + 1])
            await store.close()
            assert store.ids() == []
        for i in range(3):
            assert len(await stored_events(backend, f"close-{i}")) == i + 1

    run_virtual(body())


def test_store_close_reports_drain_failures_and_keeps_draining_the_others(backend: BackendKit) -> None:
    async def body() -> None:
        p = backend.make()
        probe = instrument(p)
        store = SessionStore(p, write_batch_max_delay_ms=2147483647)
        a = await store.create("fails", meta={"cwd": WORK})
        b = await store.create("drains", meta={"cwd": WORK})
        a.append("turn/start", {"turn": 1})
        b.append("turn/start", {"turn": 1})
        probe.fail("append_batch", OSError("no space"))
        with pytest.raises(Exception, match="session store dispose failed: no space"):
            await store.close()
        assert [e["seq"] for e in await stored_events(backend, "drains")] == [0]
        await p.close()  # backend teardown retries the retained batch
        assert [e["seq"] for e in await stored_events(backend, "fails")] == [0]

    run_virtual(body())


def test_writes_follow_the_log_across_many_windows(backend: BackendKit) -> None:
    """Batching changes frame/transaction boundaries only: order, seq, time and shape are kept."""

    async def body() -> None:
        async with live(backend, delay_ms=5) as store:
            s = await store.create("many", meta={"cwd": WORK})
            probe = instrument(store.persistence)
            s.append("turn/start", {"turn": 1})
            s.append("step/start", {"turn": 1, "step": 1})
            for i in range(60):
                chunk(s, f"t{i}")
                if i % 7 == 0:
                    await asyncio.sleep(0.003)
                if i % 19 == 0:
                    await store.flush("many")
            s.append("step/end", {"turn": 1, "step": 1})
            s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await store.flush("many")
            assert len(probe.committed) > 2
            assert probe.committed_seqs() == list(range(64))
            assert (await store.persistence.load("many")).events == s.events
        assert await stored_events(backend, "many") == plain(s.events)

    run_virtual(body())
