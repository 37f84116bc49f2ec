"""Small backend-specific expectations that the neutral contract suite deliberately leaves out
(persistence-contract §2.1, §2.2, §2.9; fixtures README "Observed upstream behaviour")."""

from __future__ import annotations

import pytest
from contract_backends import BackendKit
from sessionkit import assistant_message, meta, one_turn_log, run, step_start, tool_call, turn_start, wire

from persistence import SessionPersistenceError

pytestmark = pytest.mark.usefixtures("fast_fsync")


def _store_two(backend: BackendKit) -> None:
    async def body() -> None:
        store = backend.make()
        for sid in ("zeta", "alpha"):
            await store.create(meta(sid, "/proj"))
            await store.append(sid, one_turn_log())

    run(body())


def test_delegation_depth_in_listed_headers(backend: BackendKit) -> None:
    """JSONL headers always carry ``delegationDepth`` (0 by default); SQLite omits it when never set."""
    _store_two(backend)

    async def body() -> None:
        store = backend.make()
        listed = [h.to_json() for h in await store.list()]
        inspected = (await store.inspect("alpha")).meta.to_json()
        if backend.is_jsonl:
            assert all(h["delegationDepth"] == 0 for h in listed)
            assert inspected["delegationDepth"] == 0
        else:
            assert all("delegationDepth" not in h for h in listed)
            assert "delegationDepth" not in inspected

    run(body())


def test_list_order(backend: BackendKit) -> None:
    """JSONL lists in byte order of directory names; SQLite in insertion (rowid) order."""
    _store_two(backend)
    ids = [h.id for h in run(backend.make().list())]
    assert ids == (["alpha", "zeta"] if backend.is_jsonl else ["zeta", "alpha"])


def test_raw_artifacts_and_locate(backend: BackendKit) -> None:
    """JSONL exposes raw artifacts and a per-session location; SQLite does neither."""
    _store_two(backend)

    async def body() -> None:
        store = backend.make()
        location = store.locate(meta("alpha", "/proj"))
        if backend.is_jsonl:
            assert store.supports_raw_artifacts is True
            assert location is not None and location.kind == "jsonl"
            assert location.path.endswith(f"/--proj--/alpha/session.jsonl{'.zstd' if backend.compression == 'zstd' else ''}")
            assert await store.read_raw("missing") is None
            raw = await store.read_raw("alpha")
            assert raw is not None and raw.filename == "session.jsonl"
        else:
            assert store.supports_raw_artifacts is False
            assert location is None
            with pytest.raises(SessionPersistenceError, match="this session persistence backend does not expose raw artifacts"):
                await store.read_raw("alpha")

    run(body())


def test_event_key_order(backend: BackendKit) -> None:
    """The JSONL writer keeps the caller's key order and the closers' ``surfaceOp, sourceEventSeqs`` order;
    SQLite rebuilds ``type, seq, time, data, sourceEventSeqs?, surfaceOp?`` on read."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("order", "/proj"))
        odd = {"time": 1, "seq": 0, "data": {"turn": 1}, "type": "turn/start"}
        await store.append(
            "order", [odd, step_start(1, 1, 1), assistant_message(2, 1, 1, text=None, calls=["c"]), tool_call(3, 1, 1, "c")]
        )
        events = wire((await backend.make().inspect("order")).events)
        # In-memory closers (inspect) are built as ``…, surfaceOp, sourceEventSeqs`` by every backend.
        assert list(events[4]) == ["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"]
        await store.load("order")
        stored = wire((await backend.make().inspect("order")).events)
        if backend.is_jsonl:
            assert list(stored[0]) == ["time", "seq", "data", "type"]
            assert list(stored[4]) == ["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"]
        else:
            assert list(stored[0]) == ["type", "seq", "time", "data"]
            assert list(stored[4]) == ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]
        assert stored == events
        assert events[0] == turn_start(0, 1)

    run(body())
