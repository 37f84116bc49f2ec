"""The contract of ``append`` (persistence-contract §2.4, §9.2: R-03..R-08, plus jsonl-backend §15.7
cases 82, 83, 92 in their backend-neutral form).

Every test runs once per backend parameter of the ``backend`` fixture (tests/contract/conftest.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from contract_backends import BackendKit
from contract_logs import stored_one_turn
from sessionkit import (
    WORK,
    completed_turn2,
    ev,
    meta,
    one_turn_log,
    run,
    seqs_of,
    step_start,
    turn_end,
    turn_start,
    user_message,
    wire,
)

from persistence import SessionEvent, SessionNotFoundError, SessionPersistenceError
from persistence.errors import upstream_class_of

pytestmark = pytest.mark.usefixtures("fast_fsync")


def test_R_03_reappending_stored_seqs_is_rejected(backend: BackendKit) -> None:
    """R-03 / jsonl §15 case 82."""

    async def body() -> None:
        store = await stored_one_turn(backend)
        with pytest.raises(SessionPersistenceError, match=r'append seq mismatch for "s1": expected 6 at index 0, got 0'):
            await store.append("s1", one_turn_log())
        assert len((await store.load("s1")).events) == 6

    run(body())


def test_R_04_gap_inside_a_batch_is_rejected(backend: BackendKit) -> None:
    """R-04 / jsonl §15 case 82."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("gap", "/proj"))
        with pytest.raises(SessionPersistenceError, match="expected 1 at index 1, got 2"):
            await store.append("gap", [turn_start(0, 1), step_start(2, 1, 1)])
        assert await store.list() == []
        await store.append("gap", one_turn_log())
        assert seqs_of((await store.load("gap")).events) == list(range(6))

    run(body())


def test_append_rejects_bool_seq(backend: BackendKit) -> None:
    """jsonl §6.4: ``True`` is never the seq 1 (bool is not a number)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("b", "/proj"))
        await store.append("b", [turn_start(0, 1)])
        with pytest.raises(SessionPersistenceError, match="seq mismatch"):
            await store.append("b", [{**turn_end(1, 1), "seq": True}])

    run(body())


class _Opaque:
    pass


def _cyclic() -> dict[str, Any]:
    d: dict[str, Any] = {"a": 1}
    d["self"] = d
    return d


NON_LOSSLESS: dict[str, Any] = {
    "unsafe-int": 2**53,
    "undefined-sentinel": _Opaque(),
    "infinity": float("inf"),
    "nan": float("nan"),
    "negative-zero": -0.0,
    "callable": lambda: None,
    "set": {1, 2},
    "bytes": b"x",
    "tuple": (1, 2),
    "non-str-key": {1: "x"},
    "cyclic": _cyclic(),
}


@pytest.mark.parametrize("case", sorted(NON_LOSSLESS))
def test_R_05_non_lossless_event_data_is_rejected(backend: BackendKit, case: str) -> None:
    """R-05 / jsonl §15 case 83 / session-model §8 rule 10: nothing is materialized."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("nl", "/proj"))
        bad = user_message(0, "hi")
        bad["data"]["extra"] = NON_LOSSLESS[case]
        with pytest.raises(TypeError, match="losslessly JSON-serializable") as info:
            await store.append("nl", [bad])
        assert "non-JSON-serializable" in str(info.value)
        assert upstream_class_of(info.value) == "TypeError"
        assert await store.list() == []
        # The session stays usable.
        await store.append("nl", [user_message(0, "hi")])
        assert len((await store.inspect("nl")).events) == 1

    run(body())


def test_R_05_null_and_nested_json_are_accepted(backend: BackendKit) -> None:
    """jsonl §15 case 83: ``None`` and nested null/bool/list/dict values are valid JSON."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("ok", "/proj"))
        event = user_message(0, "hi")
        event["data"]["extra"] = {"n": None, "b": [True, False, None, {"x": [1, 2.5, "s"]}], "empty": {}}
        await store.append("ok", [event])
        assert wire((await store.inspect("ok")).events) == [event]

    run(body())


def test_R_06_append_snapshot_survives_mutation_while_in_flight(backend: BackendKit) -> None:
    """R-06: the batch is snapshotted before the append's first suspension point.

    Port decision (README): the service methods stay ``async def`` as the issue fixes them, so
    "call time" is when the coroutine starts running; mutation from then on has no effect.
    """

    async def body() -> None:
        store = backend.make()
        await store.create(meta("mut2", "/proj"))
        log = one_turn_log()
        task = asyncio.ensure_future(store.append("mut2", log))
        await asyncio.sleep(0)
        log.append(turn_start(6, 2))
        log[1]["data"]["content"][0]["text"] = "MUTATED"
        await task
        stored = wire((await backend.make().load("mut2")).events)
        assert stored == one_turn_log()

    run(body())


def test_R_07_fresh_instance_appends_to_stored_session(backend: BackendKit) -> None:
    """R-07: append adoption by an instance that never created or loaded the id."""

    async def body() -> None:
        await stored_one_turn(backend, "adopt", WORK)
        second = backend.make()
        await second.append("adopt", completed_turn2())
        loaded = await second.load("adopt")
        assert seqs_of(loaded.events) == list(range(8))
        assert wire(loaded.events) == one_turn_log() + completed_turn2()

    run(body())


def test_R_08_empty_batch_stays_lazy(backend: BackendKit) -> None:
    """R-08 (+ contract §2.4 b: an empty batch is a no-op even for an unknown id)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("empty", "/proj"))
        await store.append("empty", [])
        assert await store.list() == []
        await store.append("never-created", [])
        assert await store.list() == []

    run(body())


def test_append_to_unknown_id_is_not_found(backend: BackendKit) -> None:
    """Contract §2.4 d: adoption of an id with no stored log fails with "not found"."""

    async def body() -> None:
        store = backend.make()
        with pytest.raises(SessionNotFoundError, match='session "ghost" not found'):
            await store.append("ghost", [turn_start(0, 1)])

    run(body())


def test_append_accepts_session_event_values(backend: BackendKit) -> None:
    """R-09 variant: ``append`` takes SessionEvent values as well as dicts."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("typed-events", "/proj"))
        await store.append("typed-events", [SessionEvent.from_json(e) for e in one_turn_log()])
        assert wire((await store.load("typed-events")).events) == one_turn_log()

    run(body())


@pytest.mark.parametrize(
    ("event", "phrase"),
    [
        (ev("request/header-delta", 0, {}), 'session "legacy" contains unsupported legacy request/header-delta event at seq 0'),
        (ev("mode/set", 0, {"mode": "x"}), 'session "legacy" contains unsupported legacy mode/set event at seq 0'),
        (
            ev("request/header", 0, {"reason": "fallback"}),
            'session "legacy" contains unsupported legacy request/header reason "fallback" at seq 0',
        ),
    ],
    ids=["header-delta", "mode-set", "fallback"],
)
def test_append_refuses_legacy_vocabulary(backend: BackendKit, event: dict[str, Any], phrase: str) -> None:
    """Contract §2.4 a / jsonl §15 case 92 (append side): retired vocabulary never reaches storage."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("legacy", "/proj"))
        with pytest.raises(SessionPersistenceError) as info:
            await store.append("legacy", [event])
        assert str(info.value) == phrase
        assert await store.list() == []

    run(body())
