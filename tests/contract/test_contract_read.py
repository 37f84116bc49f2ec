"""Cold reads: ``load`` of a healthy log and ``read_from`` (persistence-contract §2.6, §2.8, §9.3 R-09..R-11,
§9.6 R-22, jsonl-backend §15.7 case 90).

Crash repair on load lives in test_contract_repair.py, read normalization in test_contract_normalization.py.
Every test runs once per backend parameter of the ``backend`` fixture (tests/contract/conftest.py).
"""

from __future__ import annotations

import pytest
from contract_backends import BackendKit
from contract_logs import TURN1, revision_of, stored_one_turn
from sessionkit import one_turn_log, run, turn_start, types_of, wire

from persistence import SessionNotFoundError
from persistence.errors import upstream_class_of

pytestmark = pytest.mark.usefixtures("fast_fsync")


def test_R_09_load_returns_meta_and_events(backend: BackendKit) -> None:
    """R-09."""

    async def body() -> None:
        await stored_one_turn(backend, "s1", "/proj")
        loaded = await backend.make().load("s1")
        assert (loaded.meta.version, loaded.meta.id, loaded.meta.cwd) == (0, "s1", "/proj")
        assert wire(loaded.events) == one_turn_log()
        assert types_of(loaded.events) == TURN1
        assert loaded.to_json()["meta"]["id"] == "s1"

    run(body())


def test_R_10_unknown_id_is_not_found(backend: BackendKit) -> None:
    """R-10 (+ read_from, read_stored_revision)."""

    async def body() -> None:
        store = backend.make()
        await stored_one_turn(backend, "present")
        for call in (store.load("nope"), store.inspect("nope"), store.read_from("nope", 0)):
            with pytest.raises(SessionNotFoundError) as info:
                await call
            assert str(info.value) == 'session "nope" not found'
            assert upstream_class_of(info.value) == "Error"
        assert await store.read_stored_revision("nope") is None

    run(body())


def test_R_11_optional_header_fields_round_trip(backend: BackendKit) -> None:
    """R-11 (parentSession) and session-model §1.3: every optional header field survives."""

    async def body() -> None:
        await stored_one_turn(
            backend,
            "child",
            "/proj",
            parentSession="the-parent",
            seedLength=0,
            origin="subagent",
            delegationDepth=2,
            agentPreset="explorer",
        )
        loaded = await backend.make().load("child")
        m = loaded.meta
        assert (m.parent_session, m.seed_length, m.origin, m.delegation_depth, m.agent_preset) == (
            "the-parent",
            0,
            "subagent",
            2,
            "explorer",
        )
        listed = {h.id: h for h in await backend.make().list()}
        assert listed["child"].parent_session == "the-parent"

    run(body())


def test_R_22_read_from(backend: BackendKit) -> None:
    """R-22 / jsonl §15 case 90."""

    async def body() -> None:
        store = await stored_one_turn(backend, "rf", "/proj")
        whole = await store.read_from("rf", 0)
        assert (whole.meta.id, whole.meta.cwd) == ("rf", "/proj")
        assert wire(whole.events) == one_turn_log()
        suffix = wire((await store.read_from("rf", 3)).events)
        assert suffix == one_turn_log()[3:]
        assert suffix[0]["seq"] == 3
        assert wire((await store.read_from("rf", 6)).events) == []
        assert wire((await store.read_from("rf", 106)).events) == []
        r0 = await revision_of(store, "rf")
        await store.append("rf", [turn_start(6, 2)])
        r1 = await revision_of(store, "rf")
        assert wire((await store.read_from("rf", 6)).events) == [turn_start(6, 2)]
        assert r1 != r0
        assert await revision_of(store, "rf") == r1  # nothing repaired
        with pytest.raises(SessionNotFoundError, match="not found"):
            await store.read_from("missing", 0)
        for bad, shown in ((-1, "-1"), (1.5, "1.5"), (2**53, "9007199254740992"), ("1", "1"), (True, "true")):
            with pytest.raises(TypeError, match=f"readFrom fromSeq must be a non-negative safe integer, got {shown}$"):
                await store.read_from("rf", bad)  # type: ignore[arg-type]

    run(body())
