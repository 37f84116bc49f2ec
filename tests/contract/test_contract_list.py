"""``list`` and ``list_snapshots``: lazy sessions, headers and revisions (persistence-contract §2.9, §2.10,
§9.7: R-23, R-24, jsonl-backend §15.7 cases 79, 93, 94).

Every test runs once per backend parameter of the ``backend`` fixture (tests/contract/conftest.py).
"""

from __future__ import annotations

import pytest
from contract_backends import BackendKit
from contract_logs import revision_of, stored_one_turn
from sessionkit import meta, one_turn_log, run, turn_start

pytestmark = pytest.mark.usefixtures("fast_fsync")


def test_R_23_lazy_session_absent_from_listings(backend: BackendKit) -> None:
    """R-23."""

    async def body() -> None:
        store = await stored_one_turn(backend, "real")
        await store.create(meta("lazy", "/proj"))
        assert [h.id for h in await store.list()] == ["real"]
        assert [s.header.id for s in await store.list_snapshots()] == ["real"]

    run(body())


def test_R_24_list_and_revisions(backend: BackendKit) -> None:
    """R-24 / jsonl §15 case 93 (same-storage half) / case 94."""

    async def body() -> None:
        store = await stored_one_turn(backend, "s1", "/proj")
        headers = await store.list()
        assert [(h.id, h.cwd, h.created_at, h.version) for h in headers] == [("s1", "/proj", 1000, 0)]
        a = await revision_of(store, "s1")
        b = await revision_of(store, "s1")
        assert a == b
        assert isinstance(a, str)
        assert await backend.make().read_stored_revision("s1") == a
        assert await revision_of(backend.make(), "s1") == a
        await store.append("s1", [turn_start(6, 2)])
        c = await revision_of(store, "s1")
        assert c != a
        assert await store.read_stored_revision("s1") == c

    run(body())


def test_list_headers_from_several_sessions(backend: BackendKit) -> None:
    """Contract §2.9: one header per materialized session (jsonl §15 case 79 in neutral form)."""

    async def body() -> None:
        store = backend.make()
        for sid, cwd in (("p1", "/projA"), ("p2", "/projB"), ("p3", None)):
            await store.create(meta(sid, cwd))
            await store.append(sid, one_turn_log())
        headers = {h.id: h.cwd for h in await backend.make().list()}
        assert headers == {"p1": "/projA", "p2": "/projB", "p3": None}

    run(body())
