"""Property tests: the packed ``EventTable``/``EventLog`` equal eager expansion, and callers cannot mutate them.

Why (issue 12, Constraints): chunk runs now stay packed (``PackedRun``) and events are built on access, so
every read surface (len, indices incl. negative, slices incl. steps and out-of-range bounds, iteration
after partial access, ``segments``/``scalars``/``records``/``between``/``last``/``+``/``==``/``to_json``)
must give exactly what the eager list of member dicts gives.  The eager reference is independent of the
table: runs are generated as plain member events, packed with ``chunk_rows.build_row`` and read back with
``validate_row``; ``expand_row`` and ``PackedRun.members`` must reproduce the generated members.

Runs of 1, 2, 3, 1024 and 1025 members are pinned by explicit examples (1024 is SQLite's row cap, 1025
the first length it splits); hypothesis adds random layouts on top.
"""

from __future__ import annotations

import copy
import dataclasses
import marshal
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from persistence.model.chunk_rows import build_row, classify, expand_row, validate_row
from persistence.model.event import EventLog, SessionEvent
from persistence.model.event_table import EventTable
from persistence.model.jsontext import MAX_SAFE_INTEGER
from persistence.model.packed_run import PackedRun

MAX = MAX_SAFE_INTEGER
KINDS = ("text-delta", "reasoning-delta", "tool-call-delta")
PAYLOADS = ("", "tok", "é😀", "\ud800", "a\nb", '"\\', "你好", "x" * 40)
TIME_MODES = ("small", "wide", "edge-high", "edge-low")


# ---------------------------------------------------------------- log layouts


@dataclass(frozen=True, slots=True)
class RunSpec:
    """A run of chunk deltas; member texts and times come from ``seed`` (``times`` picks the dt regime)."""

    kind: str
    length: int
    times: str = "small"
    seed: int = 0
    named: bool = True  # tool-call runs: every member carries ``name`` (else none does)
    turn: Any = 1
    step: Any = 1
    index: Any = 0


@dataclass(frozen=True, slots=True)
class ScalarSpec:
    """One event that stays a scalar record: ``record`` without seq/time."""

    record: dict[str, Any]
    dt: int = 1


Spec = RunSpec | ScalarSpec


@dataclass(slots=True)
class Built:
    items: list[dict[str, Any] | PackedRun]  # what the table holds
    eager: list[dict[str, Any]]  # the same log as member dicts (a deep copy: the reference)
    in_run: list[bool]  # per event: inside a packed run


def _clamp(t: int) -> int:
    return max(-MAX, min(MAX, t))


def _run_times(spec: RunSpec, t: int, rng: random.Random) -> list[int]:
    """Member times (all safe, every step within +-MAX so the row's dt are safe integers)."""
    if spec.times == "edge-high":
        t = MAX - rng.randint(0, 3)
    elif spec.times == "edge-low":
        t = -MAX + rng.randint(0, 3)
    out = [t]
    for _ in range(spec.length - 1):
        if spec.times == "small":
            d = rng.randint(-5, 40)
        elif spec.times == "wide":
            d = rng.choice([MAX, -MAX, MAX - 1, 2**52, -(2**52), rng.randint(-MAX, MAX), 0])
        else:
            d = rng.choice([1, -1, 0, 2, -2, MAX, -MAX])
        t = _clamp(t + d)
        out.append(t)
    return out


def _member(spec: RunSpec, seq: int, time: int, text: str) -> dict[str, Any]:
    if spec.kind == "tool-call-delta":
        chunk: dict[str, Any] = {"type": spec.kind, "index": spec.index, "id": "call-1"}
        if spec.named:
            chunk["name"] = "bash"
        chunk["argumentsDelta"] = text
    else:
        chunk = {"type": spec.kind, "index": spec.index, "text": text}
    return {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": spec.turn, "step": spec.step, "chunk": chunk}}


def packed(kind: str, members: list[dict[str, Any]]) -> PackedRun:
    """The run a reader keeps for ``members``: pack with ``build_row``, validate with ``validate_row``."""
    row = build_row(kind, members)
    run = validate_row(copy.deepcopy(row))
    # The eager decoders agree with the generated members, key order included.
    assert repr(expand_row(copy.deepcopy(row))) == repr(members)
    assert repr(run.members()) == repr(members)
    return run


def build(specs: Sequence[Spec], time0: int = 1_767_225_600_000) -> Built:
    items: list[dict[str, Any] | PackedRun] = []
    eager: list[dict[str, Any]] = []
    in_run: list[bool] = []
    t = time0
    for spec in specs:
        if isinstance(spec, ScalarSpec):
            t = _clamp(t + spec.dt)
            rec = {"type": spec.record["type"], "seq": len(eager), "time": t}
            rec.update((k, copy.deepcopy(v)) for k, v in spec.record.items() if k != "type")
            items.append(rec)
            eager.append(rec)
            in_run.append(False)
            continue
        rng = random.Random(spec.seed)
        times = _run_times(spec, t, rng)
        t = times[-1]
        members = [_member(spec, len(eager) + k, tm, rng.choice(PAYLOADS)) for k, tm in enumerate(times)]
        assert all(classify(m) == spec.kind for m in members)
        items.append(packed(spec.kind, members))
        eager.extend(members)
        in_run.extend([True] * len(members))
    return Built(items, clone(eager), in_run)


# ---------------------------------------------------------------- strategies

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-MAX, MAX),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
    st.sampled_from(PAYLOADS),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "0", "text"]), children, max_size=3)
    ),
    max_leaves=6,
)
NUMBERS = st.one_of(st.integers(0, 5), st.sampled_from([1.5, -2, 0.0, 2**53 + 2]))


@st.composite
def scalar_specs(draw: st.DrawFn) -> ScalarSpec:
    variant = draw(st.integers(0, 5))
    record: dict[str, Any]
    if variant == 0:
        record = {"type": "turn/start", "data": {"turn": draw(st.integers(1, 9))}}
    elif variant == 1:
        record = {
            "type": "user/message",
            "data": {"id": "u", "role": "user", "content": [{"type": "text", "text": draw(st.sampled_from(PAYLOADS))}]},
            "surfaceOp": "append",
        }
    elif variant == 2:
        record = {"type": "tool/result", "data": draw(JSON_VALUES), "sourceEventSeqs": [0, 1], "surfaceOp": {"op": "replace"}}
    elif variant == 3:  # a chunk that is never packed (usage)
        record = {"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": {"type": "usage", "usage": {"n": 1}}}}
    elif variant == 4:  # a delta with an extra envelope key stays verbatim
        record = {
            "type": "assistant/chunk",
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "v"}},
            "ignorable": True,
        }
    else:
        record = {"type": "custom/event", "data": draw(JSON_VALUES)}
    return ScalarSpec(record, draw(st.integers(-3, 50)))


SMALL_LENGTHS = st.one_of(st.sampled_from([1, 2, 3]), st.integers(4, 30))


@st.composite
def run_specs(draw: st.DrawFn, lengths: st.SearchStrategy[int] = SMALL_LENGTHS) -> RunSpec:
    return RunSpec(
        kind=draw(st.sampled_from(KINDS)),
        length=draw(lengths),
        times=draw(st.sampled_from(TIME_MODES)),
        seed=draw(st.integers(0, 2**16)),
        named=draw(st.booleans()),
        turn=draw(NUMBERS),
        step=draw(NUMBERS),
        index=draw(NUMBERS),
    )


@st.composite
def layouts(draw: st.DrawFn) -> list[Spec]:
    """Scalars and runs in any order (adjacent runs included), sometimes one run of 1024/1025 members
    (one in four examples: they cost ~50x a small log; the explicit examples pin both lengths)."""
    specs: list[Spec] = draw(st.lists(st.one_of(scalar_specs(), run_specs()), max_size=10))
    length = draw(st.sampled_from([0, 0, 0, 1024, 1025]))
    if length:
        specs.insert(draw(st.integers(0, len(specs))), draw(run_specs(st.just(length))))
    return specs


# A bound is None, an absolute int (small, so negative ones count from the end) or a fraction of len.
BOUNDS = st.one_of(st.none(), st.integers(-4, 4), st.floats(-1.3, 1.3))
STEPS = st.sampled_from([None, 1, 1, 2, 3, 7, -1, -2, -5, 1000])
SLICES = st.tuples(BOUNDS, BOUNDS, STEPS)


def _bound(b: int | float | None, n: int) -> int | None:
    if b is None or isinstance(b, int):
        return b
    return round(b * n)


def resolve(sl: tuple[Any, Any, Any], n: int) -> slice:
    return slice(_bound(sl[0], n), _bound(sl[1], n), sl[2])


def expand(items: Iterable[dict[str, Any] | PackedRun]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for it in items:
        if isinstance(it, PackedRun):
            out.extend(it.members())
        else:
            out.append(it)
    return out


def same(got: Any, want: Any) -> None:
    """Equal values, key order and int/float/bool types included.

    marshal version 0 writes containers in order, keeps every type apart and shares no references, so
    equal bytes mean equal structure; it is ~10x faster than repr on 2,000-event lists (the diff of a
    failure is shown as repr)."""
    if marshal.dumps(got, 0) != marshal.dumps(want, 0):
        assert repr(got) == repr(want)
        raise AssertionError("same repr, different structure")


def clone(value: Any) -> Any:
    """A deep copy (marshal round trip: several times faster than ``copy.deepcopy`` on event lists)."""
    return marshal.loads(marshal.dumps(value, 0))


def sample(n: int) -> list[int]:
    """Indices at both ends and a few in between, both signs (for checks too costly for every index)."""
    if not n:
        return []
    picks = {0, 1, 2, n // 3, n // 2, n - 3, n - 2, n - 1}
    return sorted({i for i in picks if 0 <= i < n} | {i - n for i in picks if 0 <= i < n})


def log_json(log: Iterable[SessionEvent]) -> list[dict[str, Any]]:
    return [e.to_json() for e in log]


RUN_LENGTH_EXAMPLE: list[Spec] = [
    ScalarSpec({"type": "turn/start", "data": {"turn": 1}}),
    RunSpec("text-delta", 1, seed=1),
    RunSpec("reasoning-delta", 2, times="wide", seed=2),
    ScalarSpec({"type": "custom/event", "data": [1, {"a": None}]}),
    RunSpec("tool-call-delta", 3, times="edge-high", seed=3, named=False),
    RunSpec("text-delta", 1024, times="wide", seed=4),
    RunSpec("tool-call-delta", 1025, times="edge-low", seed=5),
    ScalarSpec({"type": "turn/end", "data": {"turn": 1}}),
]
EXAMPLE_SLICES = [
    (None, None, None),
    (-1030, None, None),
    (1, 1028, 1),
    (1027, 6, -1),
    (0.5, 10_000, 3),
    (-5000, -2, 2),
    (3, 3, None),
    (None, None, -1),
    (1030, 2053, 1024),
]
EXAMPLE_TOUCHES = [0.0, 0.5, -0.01, 0.99, -1.0, 0.25]


# ---------------------------------------------------------------- 1. lazy == eager


@settings(max_examples=20, deadline=None)
@given(specs=layouts(), slices=st.lists(SLICES, max_size=6), touches=st.lists(st.floats(-1, 0.999), max_size=6))
@example(specs=RUN_LENGTH_EXAMPLE, slices=EXAMPLE_SLICES, touches=EXAMPLE_TOUCHES)
@example(specs=[], slices=[(None, None, None), (-1, 5, 2)], touches=[])
@example(specs=[RunSpec("text-delta", 1025, seed=9)], slices=[(-1025, 1025, None), (1024, None, None)], touches=[-1.0])
def test_table_and_log_equal_eager_expansion(specs: list[Spec], slices: list[tuple[Any, Any, Any]], touches: list[float]) -> None:
    b = build(specs)
    eager, n = b.eager, len(b.eager)
    table = EventTable(b.items)
    log = EventLog(table)
    assert len(table) == n and len(log) == n
    assert table.has_runs == any(isinstance(it, PackedRun) for it in b.items)

    # Every index, both signs; one past either end raises.
    same([table[i] for i in range(-n, n)], eager + eager)
    same([log[i].to_json() for i in range(-n, n)], eager + eager)
    for i in sample(n):
        assert log[i] == SessionEvent.from_json(eager[i])
    for bad in (n, -n - 1, n + 1000):
        with pytest.raises(IndexError):
            table[bad]
        with pytest.raises(IndexError):
            log[bad]

    # Slices (steps, empty, out-of-range bounds), slices of slices, and views of views.
    for raw in [*slices, (None, None, None)]:
        sl = resolve(raw, n)
        want = eager[sl]
        same(list(table[sl]), want)
        same(log_json(log[sl]), want)
        same(log[sl].to_json(), want)
        assert len(table[sl]) == len(want) and len(log[sl]) == len(want)
        for raw2 in slices[:2]:
            sl2 = resolve(raw2, len(want))
            same(log[sl][sl2].to_json(), want[sl2])
            same(list(table[sl][sl2]), want[sl2])
        if sl.step in (None, 1):
            # A step-1 slice is a view: its segments expand to it, and its records/scalars match.
            view = log[sl]
            same(expand(view.segments()), want)
            same(expand(table[sl].segments()), want)
            same(view.records(), want)
            same(list(view.record_table()), want)
            assert view == want and view == EventLog(clone(want))
            same([view[j].to_json() for j in sample(len(want))], [want[j] for j in sample(len(want))])

    # Iteration after partial access: touched events are the ones iteration yields (log[i] is log[i]).
    fresh = EventLog(EventTable(b.items))
    touched = {round(f * n) % n: None for f in touches} if n else {}
    got = {i: fresh[i] for i in touched}
    all_events = list(fresh)
    same(log_json(all_events), eager)
    for i, ev in got.items():
        assert all_events[i] is ev and fresh[i] is ev
    same(log_json(fresh), eager)  # a second pass, now fully cached
    for raw in slices:
        sl = slice(_bound(raw[0], n), _bound(raw[1], n))
        view, want = EventLog(EventTable(b.items))[sl], eager[sl]
        m = len(want)
        early = {round(f * m) % m: view[round(f * m) % m] for f in touches} if m else {}
        events = list(view)
        same(log_json(events), want)
        for i, ev in early.items():
            assert events[i] is ev

    # segments()/between()/scalars() over raw bounds, clipped past the end.
    for raw in slices:
        lo, hi, _ = slice(_bound(raw[0], n), _bound(raw[1], n)).indices(n)  # step 1: 0 <= lo, hi <= n
        for stop in (hi, hi + 3, n + 50):
            same(expand(table.segments(lo, stop)), eager[lo:stop])
            same(list(table.between(lo, stop)), eager[lo:stop])
            same(list(table.iter_range(lo, stop)), eager[lo:stop])
            same(list(table.scalars(lo, stop)), [(i, eager[i]) for i in range(lo, min(stop, n)) if not b.in_run[i]])
    same(list(table.scalars()), [(i, e) for i, e in enumerate(eager) if not b.in_run[i]])
    same(expand(table.segments()), eager)
    same(expand(log.segments()), eager)

    # records(), ==, to_json(), last(), +.
    same(table.records(), eager)
    same(log.records(), eager)
    same(log.to_json(), eager)
    assert table == eager and table == tuple(eager) and table == EventTable.adopt(clone(eager))
    assert log == eager and log == EventLog(clone(eager)) and log == list(EventLog(clone(eager)))
    if n:
        same(table.last(), eager[-1])
        changed = clone(eager)
        changed[-1]["time"] = 0.5  # no generated time is fractional
        assert table != changed and log != changed and log != EventLog(changed)
        assert table != eager[:-1] and log != eager[:-1]
    else:
        with pytest.raises(IndexError):
            table.last()
    same(list(table + table), eager + eager)
    same(list(table + eager), eager + eager)
    same(list(EventTable() + table), eager)
    same(list(table + EventTable(b.items[:1])), eager + expand(b.items[:1]))
    same(list(EventTable.adopt(list(b.items))), eager)

    # Nothing above changed what the table returns.
    same(list(table), eager)


@settings(max_examples=20, deadline=None)
@given(
    specs=layouts(), checkpoints=st.lists(st.integers(0, 12), max_size=5), replace=st.sampled_from(["never", "cached", "stale"])
)
@example(specs=RUN_LENGTH_EXAMPLE, checkpoints=[0, 1, 2, 5, 6, 7], replace="cached")
@example(specs=RUN_LENGTH_EXAMPLE, checkpoints=[0, 2, 3, 5, 7], replace="stale")
def test_growing_table_keeps_records_and_snapshots(specs: list[Spec], checkpoints: list[int], replace: str) -> None:
    """Append-only growth: ``records()`` stays current after it was cached, and a live snapshot
    (``EventLog(table, length)``) never shows events appended after it was taken."""
    b = build(specs)
    eager = b.eager
    table = EventTable()
    snapshots: list[tuple[EventLog, int]] = []
    done = 0
    for k, it in enumerate(b.items):
        if isinstance(it, PackedRun):
            table.append_run(it)
            done += len(it)
        else:
            table.append(it)
            done += 1
            if replace != "never" and k in checkpoints:
                # An unpublished marker re-stamped in place: records() cached before (complete, or stale
                # because the table grew since) follow it.
                if replace == "cached":
                    same(table.records(), eager[:done])
                new = {**copy.deepcopy(it), "data": {"restamped": k}}
                table.replace_last(new)
                eager[done - 1] = copy.deepcopy(new)
        if k in checkpoints:
            same(table.records(), eager[:done])
            snapshots.append((EventLog(table, done), done))
            snapshot = snapshots[-1][0]
            if done:
                snapshot[done // 2]  # partially touched before the table grows
    same(table.records(), eager)
    same(list(table), eager)
    for snap, size in snapshots:
        assert len(snap) == size
        same(snap.to_json(), eager[:size])
        same(snap.records(), eager[:size])
        same(list(snap.record_table()), eager[:size])
        same(expand(snap.segments()), eager[:size])
    if table.items and isinstance(table.items[-1], PackedRun):
        with pytest.raises(TypeError):
            table.replace_last({"type": "x", "seq": 0, "time": 0, "data": None})


# ---------------------------------------------------------------- 2. callers cannot mutate the table


def _scribble(value: Any) -> None:
    """Mutate every container reachable from ``value`` in place."""
    if isinstance(value, dict):
        for k in list(value):
            _scribble(value[k])
            value[k] = "scribbled"
        value["extra"] = [1]
    elif isinstance(value, list):
        for v in value:
            _scribble(v)
        value.append("scribbled")


@settings(max_examples=25, deadline=None)
@given(specs=layouts(), picks=st.lists(st.floats(0, 0.999), min_size=1, max_size=6))
@example(specs=RUN_LENGTH_EXAMPLE, picks=[0.0, 0.3, 0.6, 0.999])
def test_caller_mutation_cannot_change_the_table(specs: list[Spec], picks: list[float]) -> None:
    b = build(specs)
    eager, n = b.eager, len(b.eager)
    table = EventTable(b.items)
    log = EventLog(table)
    if not n:
        return
    idx = sorted({int(f * n) for f in picks})

    # to_json() is detached: per event and for the whole log (and for slices).
    for i in idx:
        _scribble(log[i].to_json())
        _scribble(log[i:].to_json())
    _scribble(log.to_json())

    # A member dict from EventTable[i] (i inside a run) is fresh: a caller may change it freely.
    # (Scalar records are the engine's own: ``EventTable`` documents "never mutate" for them.)
    for i in idx:
        if b.in_run[i]:
            _scribble(table[i])
            _scribble(table[i - n])
            window = list(table[i : i + 3])
            for j, rec in enumerate(window):
                if b.in_run[i + j]:
                    _scribble(rec)

    # A PackedRun's members, member and chunk are fresh dicts.
    for it in b.items:
        if isinstance(it, PackedRun):
            before = repr(it.members())
            for m in it.members():
                _scribble(m)
            _scribble(it.member(0))
            _scribble(it.member(-1))
            _scribble(it.chunk(len(it) - 1))
            _scribble(it.sub(0, len(it)).members())
            assert repr(it.members()) == before

    # SessionEvent is frozen and its data a read-only view, nested containers included.
    for i in idx:
        ev = log[i]
        with pytest.raises(dataclasses.FrozenInstanceError):
            ev.seq = 99  # type: ignore[misc]
        assert not isinstance(ev.data, (dict, list))
        _assert_read_only(ev.data)
        assert ev.source_event_seqs is None or isinstance(ev.source_event_seqs, tuple)
        _assert_read_only(ev.surface_op)

    # Whatever the caller did, every surface still answers the original log.
    for i in range(-n, n):
        same(table[i], eager[i])
        same(log[i].to_json(), eager[i])
    same(list(table), eager)
    same(log.to_json(), eager)
    same(log.records(), eager)
    same(expand(table.segments()), eager)


def _assert_read_only(value: Any) -> None:
    """Item assignment fails at every level of a frozen view (scalars have nothing to assign)."""
    if isinstance(value, Mapping):
        with pytest.raises(TypeError):
            value["turn"] = 99  # type: ignore[index]
        for key in value:
            _assert_read_only(value[key])
    elif isinstance(value, Sequence) and not isinstance(value, str):
        assert not isinstance(value, list)
        if len(value):
            with pytest.raises(TypeError):
                value[0] = "changed"  # type: ignore[index]
        for v in value:
            _assert_read_only(v)
