"""The contract of ``create`` (persistence-contract §2.3, §9.1: R-01, R-02, plus jsonl-backend §15.7
cases 80, 81, 84, 85 and S-50, which hold for every backend).

Every test runs once per backend parameter of the ``backend`` fixture (tests/contract/conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_backends import BackendKit
from contract_logs import stored_one_turn
from sessionkit import WORK, meta, one_turn_log, run

from persistence import SessionArgumentError, SessionHeader, SessionPersistenceError
from persistence.errors import upstream_class_of

pytestmark = pytest.mark.usefixtures("fast_fsync")


def test_R_01_create_rejects_fractional_created_at_and_reserves_nothing(backend: BackendKit) -> None:
    """R-01 (+ jsonl §15 case 81)."""

    async def body() -> None:
        store = backend.make()
        with pytest.raises(TypeError, match="createdAt must be a non-negative safe integer") as info:
            await store.create(meta("s1", "/proj", createdAt=1.5))
        assert isinstance(info.value, SessionArgumentError)
        assert upstream_class_of(info.value) == "TypeError"
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())
        loaded = await store.load("s1")
        assert loaded.meta.created_at == 1000

    run(body())


@pytest.mark.parametrize("created_at", [-1, float(2**53), "123", None, True])
def test_R_01_create_rejects_other_bad_created_at(backend: BackendKit, created_at: Any) -> None:
    """R-01: every non-(non-negative safe integer) createdAt is an argument error."""

    async def body() -> None:
        store = backend.make()
        with pytest.raises(TypeError, match="createdAt must be a non-negative safe integer"):
            await store.create(meta("s1", "/proj", createdAt=created_at))
        assert await store.list() == []

    run(body())


def test_R_02_create_twice_and_create_over_persisted_log(backend: BackendKit) -> None:
    """R-02: duplicate create on one instance; a fresh instance refuses an id with a stored log."""

    async def body() -> None:
        first = backend.make()
        await first.create(meta("dup", WORK))
        with pytest.raises(SessionPersistenceError, match='session "dup" already exists in this backend'):
            await first.create(meta("dup", WORK))
        await first.append("dup", one_turn_log())
        second = backend.make()
        with pytest.raises(
            SessionPersistenceError, match='session "dup" already has a persisted log on disk; load/resume it instead of creating'
        ):
            await second.create(meta("dup", WORK))

    run(body())


def test_R_02_create_over_persisted_log_under_another_cwd(backend: BackendKit) -> None:
    """R-02 / jsonl §15 case 85: the collision probe searches every storage scope, not just the new cwd."""

    async def body() -> None:
        await stored_one_turn(backend, "moved", "/projA")
        fresh = backend.make()
        with pytest.raises(SessionPersistenceError, match="already has a persisted log on disk"):
            await fresh.create(meta("moved", "/projB"))

    run(body())


def test_create_does_not_materialize(backend: BackendKit) -> None:
    """R-23 / jsonl §15 case 80: create alone writes nothing; the first append materializes."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("lazy", "/proj"))
        assert await store.list() == []
        assert await store.list_snapshots() == []
        assert await store.read_stored_revision("lazy") is None
        await store.append("lazy", one_turn_log())
        assert [h.id for h in await store.list()] == ["lazy"]

    run(body())


def test_create_snapshots_meta(backend: BackendKit) -> None:
    """jsonl §15 case 84: mutating the caller's meta after create does not move the log."""

    async def body() -> None:
        store = backend.make()
        m = meta("snap", "/original")
        await store.create(m)
        m["cwd"] = "/mutated"
        m["createdAt"] = 5
        await store.append("snap", one_turn_log())
        loaded = await backend.make().load("snap")
        assert loaded.meta.cwd == "/original"
        assert loaded.meta.created_at == 1000

    run(body())


def test_create_rejects_non_lossless_meta(backend: BackendKit) -> None:
    """S-50: a header field that is not lossless JSON is an argument error; nothing is reserved."""

    async def body() -> None:
        store = backend.make()
        with pytest.raises(TypeError, match="session metadata must be losslessly JSON-serializable"):
            await store.create(meta("bad-meta", "/proj", agentPreset=float("nan")))
        await store.create(meta("bad-meta", "/proj"))

    run(body())


def test_create_accepts_session_header_value(backend: BackendKit) -> None:
    """R-09 variant: ``create`` takes a SessionHeader as well as a dict."""

    async def body() -> None:
        store = backend.make()
        await store.create(SessionHeader(version=0, id="typed", created_at=1000, cwd="/proj", agent_preset="coder"))
        await store.append("typed", one_turn_log())
        loaded = await store.load("typed")
        assert (loaded.meta.id, loaded.meta.cwd, loaded.meta.agent_preset) == ("typed", "/proj", "coder")

    run(body())
