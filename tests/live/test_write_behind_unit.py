"""The write-behind controller on a virtual clock (persistence-contract §7, W-01..W-10).

Writes are fake coroutines scripted per call, so every time below is exact (milliseconds of
the loop's virtual clock); no test waits for real time.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from livekit import now_ms, run_virtual, settle

from persistence import SessionArgumentError, SessionStore
from persistence.jsonl.backend import JsonlSessionPersistence
from persistence.write_behind import SessionWriteBehind


def event(seq: int, text: str = "x") -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": seq, "time": seq, "data": {"text": text}}


class FakeWrites:
    """Records every write attempt; ``script`` holds per-attempt behaviour in call order.

    A script entry is ``None`` (succeed at once), an ``int`` (take that many ms), an
    exception (fail at once) or an ``asyncio.Future`` (block until it resolves or raises).
    """

    def __init__(self) -> None:
        self.attempts: list[tuple[int, list[int]]] = []  # (start ms, seqs)
        self.done: list[tuple[int, list[dict[str, Any]]]] = []  # (end ms, batch)
        self.script: list[Any] = []

    async def __call__(self, batch: list[dict[str, Any]]) -> None:
        self.attempts.append((now_ms(), [e["seq"] for e in batch]))
        step = self.script.pop(0) if self.script else None
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, int):
            await asyncio.sleep(step / 1000)
        elif isinstance(step, asyncio.Future):
            await step
        self.done.append((now_ms(), batch))

    def seqs(self) -> list[list[int]]:
        return [[e["seq"] for e in b] for _t, b in self.done]


def controller(delay: int = 200) -> tuple[SessionWriteBehind, FakeWrites, list[BaseException]]:
    writes = FakeWrites()
    reported: list[BaseException] = []
    return SessionWriteBehind(writes, max_delay_ms=delay, report_background_failure=reported.append), writes, reported


async def at(ms: int) -> None:
    """Advance the virtual clock to ``ms`` (running everything due before it)."""
    delta = ms - now_ms()
    assert delta >= 0, f"cannot go back from {now_ms()} to {ms}"
    await asyncio.sleep(delta / 1000)
    await settle()


def assert_quiet(w: SessionWriteBehind) -> None:
    assert not w.has_work
    assert not w.window_armed
    assert w.pending == []


def test_W_01_window_is_fixed_from_the_first_event_and_copies_events() -> None:
    async def body() -> None:
        w, writes, reported = controller()
        first = event(0, "original")
        w.enqueue(first)
        first["data"]["text"] = "MUTATED"  # the producer's later mutation must not reach storage
        await at(150)
        assert w.window_armed
        w.enqueue(event(1))
        await at(199)
        assert writes.attempts == []
        await at(200)
        assert writes.done == [(200, [event(0, "original"), event(1)])]
        assert_quiet(w)
        assert reported == []

    run_virtual(body())


def test_W_02_events_every_10ms_coalesce_into_one_batch_at_the_deadline() -> None:
    async def body() -> None:
        w, writes, _ = controller()
        for i in range(20):
            await at(i * 10)
            w.enqueue(event(i))
        await at(199)
        assert writes.attempts == []
        await at(200)
        assert [(t, len(b)) for t, b in writes.done] == [(200, 20)]
        assert writes.seqs() == [list(range(20))]
        assert_quiet(w)

    run_virtual(body())


def test_W_02_window_is_not_a_debounce() -> None:
    """A steady trickle still flushes every ``max_delay`` ms (bounded coalescing)."""

    async def body() -> None:
        w, writes, _ = controller(100)
        for i in range(30):
            await at(i * 20)
            w.enqueue(event(i))
        await at(700)
        # Windows open at 0, 100, ..., 500 (the first event after each write) and never slide.
        assert [t for t, _b in writes.done] == [100, 200, 300, 400, 500, 600]
        assert writes.seqs() == [list(range(i, i + 5)) for i in range(0, 30, 5)]

    run_virtual(body())


def test_W_03_concurrent_flushes_share_one_barrier_that_drains_late_events() -> None:
    async def body() -> None:
        w, writes, _ = controller()
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        writes.script = [gate]
        w.enqueue(event(0))
        await at(10)
        f1 = w.flush()
        f2 = w.flush()
        assert f1 is f2
        await settle()
        assert writes.attempts == [(10, [0])]  # the barrier writes at once, not at the deadline
        w.enqueue(event(1))  # admitted while the barrier's first write is blocked
        assert not w.window_armed  # the barrier owns it: no automatic window
        gate.set_result(None)
        await asyncio.gather(f1, f2)
        assert writes.seqs() == [[0], [1]]
        assert_quiet(w)

    run_virtual(body())


def test_W_04_flush_of_an_idle_controller_resolves_and_the_next_event_gets_a_window() -> None:
    async def body() -> None:
        w, writes, _ = controller()
        await w.flush()
        assert writes.attempts == []
        await at(50)
        w.enqueue(event(0))
        assert w.window_armed
        await at(249)
        assert writes.attempts == []
        await at(250)
        assert writes.seqs() == [[0]]
        assert writes.done[0][0] == 250
        assert_quiet(w)

    run_virtual(body())


def test_W_05_an_expired_follow_up_window_writes_right_after_the_active_write() -> None:
    async def body() -> None:
        w, writes, _ = controller()
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        writes.script = [gate]
        w.enqueue(event(0))
        await at(200)
        assert writes.attempts == [(200, [0])]
        await at(250)
        w.enqueue(event(1))  # its own window: deadline 450
        assert w.window_armed
        await at(500)  # deadline passed while the first write is still blocked
        assert len(writes.attempts) == 1
        gate.set_result(None)
        await settle()
        assert writes.attempts == [(200, [0]), (500, [1])]
        await settle()
        assert writes.seqs() == [[0], [1]]
        assert_quiet(w)

    run_virtual(body())


def test_W_06_an_unexpired_follow_up_window_keeps_its_own_deadline() -> None:
    async def body() -> None:
        w, writes, _ = controller()
        writes.script = [50]  # the first write takes 50 ms (200 -> 250)
        w.enqueue(event(0))
        await at(200)
        assert writes.attempts == [(200, [0])]
        w.enqueue(event(1))  # admitted at 200 during the write: deadline 400
        await at(260)
        assert writes.seqs() == [[0]]
        await at(399)
        assert len(writes.attempts) == 1
        await at(400)
        assert writes.attempts == [(200, [0]), (400, [1])]
        assert_quiet(w)

    run_virtual(body())


def test_W_07_background_failure_is_reported_once_and_pauses_until_a_new_event() -> None:
    async def body() -> None:
        w, writes, reported = controller()
        boom = OSError("disk unavailable")
        writes.script = [boom]
        w.enqueue(event(0))
        await at(200)
        assert reported == [boom]
        assert [e["seq"] for e in w.pending] == [0]
        assert w.has_work and w.automatic_paused and not w.window_armed
        await at(1200)  # no timer-driven retry loop
        assert len(writes.attempts) == 1
        assert reported == [boom]
        w.enqueue(event(1))  # un-pauses and opens a fresh fixed window
        assert not w.automatic_paused and w.window_armed
        await at(1399)
        assert len(writes.attempts) == 1
        await at(1400)
        assert writes.attempts[-1] == (1400, [0, 1])
        assert writes.seqs() == [[0, 1]]
        assert_quiet(w)

    run_virtual(body())


def test_W_08_background_failure_overlapping_shared_flushes_is_retried_in_the_barrier() -> None:
    async def body() -> None:
        w, writes, reported = controller()
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        writes.script = [gate]
        w.enqueue(event(0))
        await at(200)
        f1, f2 = w.flush(), w.flush()
        assert f1 is f2
        boom = OSError("transient")
        gate.set_exception(boom)
        await asyncio.gather(f1, f2)
        assert reported == [boom]
        assert [seqs for _t, seqs in writes.attempts] == [[0], [0]]
        assert writes.seqs() == [[0]]
        assert_quiet(w)
        assert not w.automatic_paused

    run_virtual(body())


def test_W_09_barrier_failure_rejects_callers_only_and_keeps_the_batch() -> None:
    async def body() -> None:
        w, writes, reported = controller()
        boom = OSError("disk full")
        writes.script = [boom]
        w.enqueue(event(0))
        f1, f2 = w.flush(), w.flush()
        for f in (f1, f2):
            with pytest.raises(OSError, match="disk full") as info:
                await f
            assert info.value is boom
        assert reported == []  # a barrier failure is the callers' to handle
        assert [e["seq"] for e in w.pending] == [0]
        assert w.automatic_paused and not w.window_armed
        await at(1000)
        assert len(writes.attempts) == 1
        w.enqueue(event(1))
        start = now_ms()
        await at(start + 200)
        assert writes.attempts[-1] == (start + 200, [0, 1])
        assert_quiet(w)

    run_virtual(body())


def test_W_09_explicit_flush_after_background_failure_retries_at_once_and_raises() -> None:
    async def body() -> None:
        w, writes, reported = controller()
        first, second = OSError("first"), OSError("second")
        writes.script = [first, second]
        w.enqueue(event(0))
        await at(200)
        assert reported == [first]
        await at(300)
        with pytest.raises(OSError) as info:
            await w.flush()
        assert info.value is second
        assert writes.attempts == [(200, [0]), (300, [0])]
        assert reported == [first]
        await w.flush()  # the third try succeeds
        assert writes.seqs() == [[0]]
        assert_quiet(w)

    run_virtual(body())


def test_W_10_a_huge_failed_batch_is_retained_whole() -> None:
    async def body() -> None:
        w, writes, _ = controller()
        writes.script = [OSError("nope")]
        n = 150_000
        for i in range(n):
            w.enqueue(event(i))
        await at(200)
        assert len(w.pending) == n
        await w.flush()
        assert len(writes.done) == 1
        assert [e["seq"] for e in writes.done[0][1]] == list(range(n))
        assert_quiet(w)

    run_virtual(body())


def test_failed_batch_goes_back_in_front_of_newer_events() -> None:
    """§7.4: order is preserved across a failure (retained batch first, then newer events)."""

    async def body() -> None:
        w, writes, _ = controller()
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        writes.script = [gate]
        w.enqueue(event(0))
        w.enqueue(event(1))
        await at(200)
        w.enqueue(event(2))
        w.enqueue(event(3))
        gate.set_exception(OSError("x"))
        await settle()
        assert [e["seq"] for e in w.pending] == [0, 1, 2, 3]
        await w.flush()
        assert writes.seqs() == [[0, 1, 2, 3]]

    run_virtual(body())


def test_flush_drains_events_admitted_by_each_write_until_quiescent() -> None:
    """§7.3: the barrier loops until the queue is empty, then the next event opens a window."""

    async def body() -> None:
        w, writes, _ = controller()
        seq = 0

        async def writer(batch: list[dict[str, Any]]) -> None:
            nonlocal seq
            await FakeWrites.__call__(writes, batch)
            if seq < 3:  # every write admits one more event, three times
                seq += 1
                w.enqueue(event(seq))

        w._write = writer  # type: ignore[method-assign]
        w.enqueue(event(0))
        await w.flush()
        assert writes.seqs() == [[0], [1], [2], [3]]
        assert_quiet(w)
        w.enqueue(event(4))
        assert w.window_armed

    run_virtual(body())


def test_cancel_automatic_wait_disarms_without_writing() -> None:
    async def body() -> None:
        w, writes, _ = controller()
        w.enqueue(event(0))
        w.cancel_automatic_wait()
        assert not w.window_armed and w.has_work
        await at(1000)
        assert writes.attempts == []
        await w.flush()
        assert writes.seqs() == [[0]]

    run_virtual(body())


@pytest.mark.parametrize("delay", [0, -1, 1.5, 2**31, True, None, "200"])
def test_S_10_S_11_S_12_write_batch_delay_is_validated(delay: Any) -> None:
    with pytest.raises(TypeError, match="writeBatchMaxDelayMs must be an integer between 1 and 2147483647") as info:
        SessionWriteBehind(FakeWrites(), max_delay_ms=delay)
    assert isinstance(info.value, SessionArgumentError)


@pytest.mark.parametrize("delay", [0, 1.5, 2**31])
def test_S_10_S_11_S_12_store_validates_write_batch_delay(tmp_path: Any, delay: Any) -> None:
    with pytest.raises(TypeError, match="writeBatchMaxDelayMs must be an integer between"):
        SessionStore(JsonlSessionPersistence(tmp_path / "root"), write_batch_max_delay_ms=delay)


def test_extreme_delays_are_accepted() -> None:
    async def body() -> None:
        for delay in (1, 2147483647):
            w, writes, _ = controller(delay)
            w.enqueue(event(0))
            await w.flush()
            assert writes.seqs() == [[0]]
            assert_quiet(w)

    run_virtual(body())
