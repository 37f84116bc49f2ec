"""Packed storage is invisible through the public API, on every backend (issue 12, Constraints).

Random valid logs whose chunk runs have 1, 2, 3, random, 1024, 1025 and 1027 members (the JSONL codec has
no member cap; SQLite splits a run 1024 + rest, and a rest under 3 members stays verbatim), interleaved
with turn/step/message events and appended in random batches (a batch boundary may cut a run), read back
by a fresh instance: ``inspect``/``load``/``read_from(k)``/``read_tail(n)`` give exactly the appended
events (``to_json``, key order and every member's seq/time included), plus the synthetic closers of an
interrupted last turn where the contract adds them.  What a caller does with the batches it appended or
the events it read cannot change what the store answers next.
"""

from __future__ import annotations

import itertools
import marshal
import random
from dataclasses import dataclass
from typing import Any

import pytest
from contract_backends import BackendKit
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sessionkit import (
    assistant_message,
    ev,
    meta,
    run,
    step_end,
    step_start,
    turn_end,
    turn_start,
    user_message,
)

from persistence import CoordinatedPersistence
from persistence.model.repair import interrupted_turn_closers

pytestmark = pytest.mark.usefixtures("fast_fsync")

MAX = 2**53 - 1
KINDS = ("text-delta", "reasoning-delta", "tool-call-delta")
TEXTS = ("", "tok", "é😀", "\ud800", "a\nb", "你好")
_ids = itertools.count()


@dataclass(frozen=True, slots=True)
class RunPlan:
    kind: str
    length: int
    index: int = 0
    times: str = "small"  # "small" deltas (-5..40), "wide" (up to +-MAX) or "flat" (all equal)
    naming: str = "all"  # tool-call runs: name on "all", the "first" or "none" of the members
    seed: int = 0


@dataclass(frozen=True, slots=True)
class StepPlan:
    runs: tuple[RunPlan, ...]
    usage_between: bool = False  # a non-packable chunk between runs


@dataclass(frozen=True, slots=True)
class TurnPlan:
    steps: tuple[StepPlan, ...]
    user: bool = True


@dataclass(frozen=True, slots=True)
class LogPlan:
    turns: tuple[TurnPlan, ...]
    open_last: bool = False  # the last turn is interrupted after its last step/end
    time0: int = 1_767_225_600_000


def build_log(plan: LogPlan) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    t = plan.time0

    def add(event: dict[str, Any]) -> None:
        events.append(event)

    def tick(d: int = 1) -> int:
        nonlocal t
        t = max(-MAX, min(MAX, t + d))
        return t

    for tn, turn in enumerate(plan.turns, start=1):
        add(turn_start(len(events), tn, time=tick()))
        if turn.user:
            add(user_message(len(events), f"question {tn}", f"u-{tn}", time=tick()))
        for sn, step in enumerate(turn.steps, start=1):
            add(step_start(len(events), tn, sn, time=tick()))
            for r in step.runs:
                rng = random.Random(r.seed)
                for k in range(r.length):
                    if k:
                        if r.times == "small":
                            tick(rng.randint(-5, 40))
                        elif r.times == "wide":
                            tick(rng.choice([MAX, -MAX, 2**52, -(2**52), rng.randint(-MAX, MAX)]))
                    chunk: dict[str, Any]
                    if r.kind == "tool-call-delta":
                        chunk = {"type": r.kind, "index": r.index, "id": f"call-{tn}-{sn}"}
                        if r.naming == "all" or (r.naming == "first" and k == 0):
                            chunk["name"] = "bash"
                        chunk["argumentsDelta"] = rng.choice(TEXTS)
                    else:
                        chunk = {"type": r.kind, "index": r.index, "text": rng.choice(TEXTS)}
                    add(ev("assistant/chunk", len(events), {"turn": tn, "step": sn, "chunk": chunk}, time=t))
                if step.usage_between:
                    usage = {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 2}}
                    add(ev("assistant/chunk", len(events), {"turn": tn, "step": sn, "chunk": usage}, time=tick()))
            add(assistant_message(len(events), tn, sn, f"answer {tn}.{sn}", msg_id=f"a-{tn}-{sn}", time=tick()))
            add(step_end(len(events), tn, sn, time=tick()))
        if not (plan.open_last and tn == len(plan.turns)):
            add(turn_end(len(events), tn, time=tick()))
    return events


SMALL_LENGTHS = st.one_of(st.sampled_from([1, 2, 3]), st.integers(4, 40))
RUNS = st.builds(
    RunPlan,
    kind=st.sampled_from(KINDS),
    length=SMALL_LENGTHS,
    index=st.integers(0, 2),
    times=st.sampled_from(["small", "small", "wide", "flat"]),
    naming=st.sampled_from(["all", "first", "none"]),
    seed=st.integers(0, 2**16),
)
STEPS = st.builds(StepPlan, runs=st.lists(RUNS, max_size=4).map(tuple), usage_between=st.booleans())
TURNS = st.builds(TurnPlan, steps=st.lists(STEPS, max_size=3).map(tuple), user=st.booleans())
PLANS = st.builds(
    LogPlan,
    turns=st.lists(TURNS, min_size=1, max_size=3).map(tuple),
    open_last=st.booleans(),
    time0=st.one_of(st.integers(0, 10**13), st.sampled_from([MAX - 10_000, -MAX + 10])),
)
CUTS = st.lists(st.floats(0, 1), max_size=5)

# Pinned: every run length the issue names, SQLite's 1024 cap and both kinds of remainder, batch cuts
# inside the long runs, times at both ends of the safe range.
BIG_PLAN = LogPlan(
    (
        TurnPlan(
            (
                StepPlan((RunPlan("text-delta", 1), RunPlan("reasoning-delta", 2, index=1), RunPlan("text-delta", 3, index=2))),
                StepPlan((RunPlan("reasoning-delta", 1024, times="wide", seed=1), RunPlan("text-delta", 1025, seed=2))),
            )
        ),
        TurnPlan(
            (
                StepPlan(
                    (RunPlan("tool-call-delta", 1027, naming="first", seed=3), RunPlan("tool-call-delta", 1025, index=1, seed=4)),
                    usage_between=True,
                ),
            ),
            user=False,
        ),
    ),
    open_last=True,
    time0=MAX - 5_000,
)
BIG_CUTS = [0.25, 0.5, 0.9]


def same(got: Any, want: Any) -> None:
    """Equal values, key order and int/float/bool types included (marshal v0 keeps all three apart)."""
    if marshal.dumps(got, 0) != marshal.dumps(want, 0):
        assert repr(got) == repr(want)
        raise AssertionError("same repr, different structure")


def batches_of(events: list[dict[str, Any]], cuts: list[float]) -> list[list[dict[str, Any]]]:
    bounds = sorted({0, len(events), *(round(c * len(events)) for c in cuts)})
    return [events[a:b] for a, b in itertools.pairwise(bounds) if b > a]


async def fresh(kit: BackendKit) -> CoordinatedPersistence:
    return kit.make()


async def done(kit: BackendKit, store: CoordinatedPersistence) -> None:
    await store.close()
    kit.instances.remove(store)


def check_members(log: Any, want: list[dict[str, Any]]) -> None:
    """The events' own fields (built on access for packed members) agree with the records."""
    assert [e.seq for e in log] == [w["seq"] for w in want]
    assert [e.time for e in log] == [w["time"] for w in want]
    assert [e.type for e in log] == [w["type"] for w in want]
    same(
        [log[i].to_json() for i in range(-len(want), len(want), max(1, len(want) // 50))],
        (want + want)[:: max(1, len(want) // 50)],
    )


@settings(max_examples=8, deadline=None)
@given(plan=PLANS, cuts=CUTS, ks=st.lists(st.floats(0, 1.05), min_size=1, max_size=3), tail=st.integers(1, 60))
@example(plan=BIG_PLAN, cuts=BIG_CUTS, ks=[0.5, 0.999, 1.05], tail=1030)
def test_packed_logs_read_back_exactly(backend: BackendKit, plan: LogPlan, cuts: list[float], ks: list[float], tail: int) -> None:
    events = build_log(plan)
    closers = interrupted_turn_closers(events)
    whole = events + closers
    sid = f"packed-{next(_ids)}"
    n = len(events)

    async def body() -> None:
        writer = await fresh(backend)
        await writer.create(meta(sid, "/proj"))
        for batch in batches_of(events, cuts):
            sent = marshal.loads(marshal.dumps(batch, 0))
            await writer.append(sid, sent)
            for e in sent:  # the store took a copy: the caller's dicts are the caller's
                e["data"] = "scribbled"
                e["time"] = 0.5
        await done(backend, writer)

        reader = await fresh(backend)
        inspected = (await reader.inspect(sid)).events
        same(inspected.to_json(), whole)
        check_members(inspected, whole)
        # A caller scribbling on what it read cannot change the next answer (the instance caches the read).
        for e in inspected.to_json():
            e["data"] = None
        first = inspected[min(2, len(whole) - 1)].to_json()
        first["seq"] = -1
        same((await reader.inspect(sid)).events.to_json(), whole)
        for frac in ks:
            k = min(round(frac * n), n + 1)
            got = (await reader.read_from(sid, k)).events
            same(got.to_json(), events[k:])
            check_members(got, events[k:])
        tail_log = (await reader.read_tail(sid, tail)).events
        tail_json = tail_log.to_json()
        assert len(tail_json) >= min(tail, n)
        same(tail_json, events[n - len(tail_json) :])
        check_members(tail_log, tail_json)
        await done(backend, reader)

        loader = await fresh(backend)
        loaded = (await loader.load(sid)).events
        same(loaded.to_json(), whole)
        check_members(loaded, whole)
        await done(backend, loader)

        again = await fresh(backend)
        same((await again.read_from(sid, 0)).events.to_json(), whole)  # load committed the closers
        same((await again.inspect(sid)).events.to_json(), whole)
        await done(backend, again)

    run(body())
