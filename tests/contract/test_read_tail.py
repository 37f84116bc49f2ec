"""``read_tail``: a cheap first look at the newest events, on every backend.

Whatever span a backend picks, it must be exactly what ``read_from`` returns from that span's first
seq, hold at least the events asked for and a ``turn/start``, and never add closers or write.
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_backends import BackendKit
from sessionkit import (
    assistant_message,
    meta,
    run,
    step_end,
    step_start,
    turn_end,
    turn_start,
    user_message,
)

from persistence import SessionArgumentError, SessionNotFoundError

pytestmark = pytest.mark.usefixtures("fast_fsync")

TURNS = 90
PROMPT = "p" * 4000  # a plain-JSONL log past the tail window (256 KB), so the tail path is taken there too


def turn_events(seq: int, turn: int, *, close: bool = True) -> list[dict[str, Any]]:
    evs = [
        turn_start(seq, turn),
        user_message(seq + 1, f"{turn} {PROMPT}"),
        step_start(seq + 2, turn, 1),
        assistant_message(seq + 3, turn, 1, f"answer {turn}"),
    ]
    if close:
        evs += [step_end(seq + 4, turn, 1), turn_end(seq + 5, turn)]
    return evs


async def write_long(kit: BackendKit, *, open_last: bool = False) -> int:
    store = kit.make()
    await store.create(meta("long", "/proj"))
    seq = 0
    for t in range(1, TURNS + 1):
        evs = turn_events(seq, t, close=not (open_last and t == TURNS))
        await store.append("long", evs)  # one frame / one transaction per turn
        seq += len(evs)
    await store.close()
    return seq


async def tail_and_truth(kit: BackendKit, min_events: int) -> tuple[list[Any], list[Any], list[Any]]:
    store = kit.make()
    tail = (await store.read_tail("long", min_events)).events.to_json()
    first = tail[0]["seq"] if tail else 0
    fresh = kit.make()
    same_span = (await fresh.read_from("long", first)).events.to_json()
    everything = (await fresh.read_from("long", 0)).events.to_json()
    return tail, same_span, everything


def test_tail_is_a_read_from_suffix_with_a_turn_start(backend: BackendKit) -> None:
    total = run(write_long(backend))
    tail, same_span, everything = run(tail_and_truth(backend, 20))
    assert tail == same_span and tail == everything[len(everything) - len(tail) :]
    assert len(tail) >= 20 and any(e["type"] == "turn/start" for e in tail)
    assert tail[-1]["seq"] == total - 1
    assert tail[0]["seq"] > 0, "a long log should not be read whole for a 20-event tail"


def test_a_tail_larger_than_the_log_is_the_whole_log(backend: BackendKit) -> None:
    total = run(write_long(backend))
    tail, _same, everything = run(tail_and_truth(backend, 10 * total))
    assert tail == everything and tail[0]["seq"] == 0


def test_an_open_turn_gets_no_closers(backend: BackendKit) -> None:
    total = run(write_long(backend, open_last=True))
    tail, same_span, _all = run(tail_and_truth(backend, 3))
    assert tail == same_span and tail[-1]["seq"] == total - 1
    assert tail[-1]["type"] == "assistant/message"


def test_a_torn_tail_reads_like_read_from(backend: BackendKit) -> None:
    total = run(write_long(backend))
    backend.corrupt_tail("long", "/proj", total)
    tail, same_span, _all = run(tail_and_truth(backend, 20))
    assert tail == same_span and tail[-1]["seq"] == total - 1


def test_missing_session_and_bad_arguments(backend: BackendKit) -> None:
    async def go() -> None:
        store = backend.make()
        with pytest.raises(SessionNotFoundError):
            await store.read_tail("nope", 10)
        for bad in (0, -1, 1.5, True, "3"):
            with pytest.raises(SessionArgumentError):
                await store.read_tail("nope", bad)  # type: ignore[arg-type]

    run(go())


def test_a_log_written_in_one_batch_is_still_read_from_its_tail(backend: BackendKit) -> None:
    """A fork's seed is one frame (one transaction): the tail is cut inside it, not read whole."""

    async def write_one_batch() -> int:
        store = backend.make()
        await store.create(meta("long", "/proj"))
        evs: list[dict[str, Any]] = []
        for t in range(1, TURNS + 1):
            evs += turn_events(len(evs), t)
        await store.append("long", evs)
        await store.close()
        return len(evs)

    total = run(write_one_batch())
    tail, same_span, everything = run(tail_and_truth(backend, 20))
    assert tail == same_span and tail == everything[len(everything) - len(tail) :]
    assert 0 < tail[0]["seq"] and tail[-1]["seq"] == total - 1
    assert any(e["type"] == "turn/start" for e in tail)
