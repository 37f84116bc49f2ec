"""``prepare`` reservations, repair commits, revision checks and the prepared-source LRU, for every backend
(persistence-contract §2.5, §6.5-§6.7, S-08/S-09, S-16..S-32, P-06/P-08/P-16).

Read counts come from a ``Probe`` between the coordinator and its storage (``load_stored`` calls).
Port notes: the Python pool keeps the prepared *source* (not the Session object), so a second
``prepare`` after a release rebuilds an equal Session without reading storage again.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from typing import Any

import pytest
from contract_backends import BackendKit
from contract_logs import TURN1, stored
from livekit import Probe, instrument, persistence_for, plain, run_virtual, settle, without_time
from sessionkit import WORK, completed_turn2, meta, one_turn_log, open_turn2, turn_end, turn_start, types_of

from persistence import (
    AbortSignal,
    CoordinatedPersistence,
    Session,
    SessionArgumentError,
    SessionConflictError,
    SessionNotFoundError,
    SessionPersistenceError,
    SessionStore,
)
from persistence.backend import CancelToken
from persistence.session import END_SEED

CLOSED_OPEN_TURN2 = [*TURN1, "turn/start", "step/start", "step/end", "turn/end"]


def external_appender(kit: BackendKit, session_id: str, events: list[dict[str, Any]], cwd: str | None = WORK) -> Any:
    """A hook action that appends ``events`` through a second instance's storage (another "process")."""
    other = kit.make()

    def append(*_args: Any) -> None:
        other.backend.append_batch(meta(session_id, cwd), events, True, CancelToken(), expected_next_seq=events[0]["seq"])

    return append


def deleter(kit: BackendKit, session_id: str, cwd: str | None = WORK) -> Any:
    """A hook action that removes the session's stored log out from under the coordinator."""

    def delete(*_args: Any) -> None:
        if kit.is_jsonl:
            located = kit.make().locate(meta(session_id, cwd))
            assert located is not None
            shutil.rmtree(os.path.dirname(located.path))
            return
        con = sqlite3.connect(kit.storage, timeout=5)
        try:
            with con:
                con.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
                con.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        finally:
            con.close()

    return delete


def cold(kit: BackendKit, **kwargs: Any) -> tuple[CoordinatedPersistence, Probe]:
    p = persistence_for(kit, **kwargs)
    return p, instrument(p)


# ---------------------------------------------------------------- reservation


def test_S_32_append_and_create_are_refused_while_a_preparation_is_reserved(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s32", one_turn_log())
        p, _ = cold(backend)
        prep = await p.prepare("s32")
        with pytest.raises(SessionConflictError, match='cannot append session "s32" while its persisted preparation is reserved'):
            await p.append("s32", completed_turn2())
        with pytest.raises(SessionPersistenceError, match='session "s32" already exists in this backend'):
            await p.create(meta("s32", WORK))
        prep.dispose()
        prep.dispose()  # idempotent
        await p.append("s32", completed_turn2())  # writable again
        assert [e.seq for e in (await backend.make().load("s32")).events] == list(range(8))

    run_virtual(body())


def test_prepare_is_a_context_manager_that_releases(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "ctx", one_turn_log())
        p, _ = cold(backend)
        with await p.prepare("ctx") as prep:
            assert p._reserved == {"ctx": "reserved"}
            assert prep.meta.id == "ctx" and prep.meta.cwd == WORK
            assert not prep.published
        assert p._reserved == {}
        await p.append("ctx", completed_turn2())

    run_virtual(body())


def test_prepared_session_is_the_stored_log_plus_one_end_seed(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "shape", one_turn_log())
        p, _ = cold(backend)
        with await p.prepare("shape") as prep:
            s = prep.session
            assert isinstance(s, Session)
            assert plain(s.events)[:6] == one_turn_log()
            assert types_of(s.events) == [*TURN1, END_SEED]
            assert s.first_live_seq == 6 and s.next_turn == 2
            assert s.header.id == "shape" and s.header.cwd == WORK

    run_virtual(body())


def test_P_08_publication_needs_the_reserved_session_object(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "p08", one_turn_log())
        p, _ = cold(backend)
        store = SessionStore(p)
        prep = await p.prepare("p08")
        # another Session object for the same id cannot be published while the reservation is held
        with pytest.raises(SessionPersistenceError, match='cannot publish session "p08": persisted state already owns'):
            await store.create("p08", meta={"cwd": WORK})
        assert not p.is_live("p08")
        impostor = Session(prep.session.raw_header, plain(prep.session.events), restore=True)
        with pytest.raises(SessionConflictError, match='session "p08" preparation is no longer reserved'):
            await p.attach_live(impostor, preparation=prep)
        await p.attach_live(prep.session, preparation=prep)  # publication consumes the reservation
        assert prep.published and p._reserved == {}
        prep.dispose()  # a no-op after publication
        assert p.is_live("p08") and p._reserved == {}
        prep.session.append("turn/start", {"turn": 2})
        prep.session.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
        await p.retire_live("p08")
        assert types_of((await backend.make().load("p08")).events) == [*TURN1, END_SEED, "turn/start", "turn/end"]

    run_virtual(body())


def test_S_16_publication_after_the_cursor_moved_is_refused(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s16", one_turn_log())
        p, _ = cold(backend)
        prep = await p.prepare("s16")
        p._states["s16"].cursor += 1  # tamper with the reserved state
        with pytest.raises(SessionConflictError, match='session "s16" preparation no longer matches its persistence state'):
            await p.attach_live(prep.session, preparation=prep)
        assert not p.is_live("s16")
        prep.dispose()

    run_virtual(body())


def test_S_30_a_second_prepare_waits_for_the_first_reservation(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s30", one_turn_log())
        p, probe = cold(backend)
        first = await p.prepare("s30")
        second = asyncio.ensure_future(p.prepare("s30"))
        await settle()
        assert not second.done()
        first.dispose()
        prep2 = await second
        assert without_time(prep2.session.events) == without_time(first.session.events)
        assert probe.calls["load_stored"] == 1
        prep2.dispose()

    run_virtual(body())


# ---------------------------------------------------------------- release to the LRU, repair commits, reads


def test_S_19_inspect_then_prepare_reads_once_and_release_returns_the_source(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s19", one_turn_log())
        p, probe = cold(backend)
        inspection = await p.inspect("s19")
        with await p.prepare("s19") as prep:
            assert plain(prep.session.events)[:6] == plain(inspection.events)
        with await p.prepare("s19") as again:
            assert without_time(again.session.events) == without_time(prep.session.events)
        assert probe.calls["load_stored"] == 1
        assert probe.calls["commit_repair"] == 0

    run_virtual(body())


def test_a_modified_unpublished_session_is_not_returned_to_the_pool(backend: BackendKit) -> None:
    """§6.6.3: release is reusable only while the Session still has its constructed event count."""

    async def body() -> None:
        await stored(backend, "modified", one_turn_log())
        p, probe = cold(backend)
        with await p.prepare("modified") as prep:
            prep.session.append("turn/start", {"turn": 2})  # a pre-publication append
        with await p.prepare("modified") as again:
            assert types_of(again.session.events) == [*TURN1, END_SEED]  # the stored log, re-read
        assert probe.calls["load_stored"] == 2

    run_virtual(body())


def test_S_27_prepare_commits_pending_repair_once_and_reads_once_more(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s27", [turn_start(0, 1)])
        p, probe = cold(backend)
        revision = await p.read_stored_revision("s27")
        inspection = await p.inspect("s27")
        assert types_of(inspection.events) == ["turn/start", "turn/end"]
        assert await p.read_stored_revision("s27") == revision
        assert probe.calls["commit_repair"] == 0
        with await p.prepare("s27") as prep:
            assert types_of(prep.session.events) == ["turn/start", "turn/end", END_SEED]
            assert prep.session.events[1].data["reason"] == {"kind": "interrupted"}
        assert await p.read_stored_revision("s27") != revision
        assert (probe.calls["load_stored"], probe.calls["commit_repair"]) == (2, 1)
        with await p.prepare("s27") as again:
            assert plain(again.session.events)[:2] == plain(prep.session.events)[:2]
        assert (probe.calls["load_stored"], probe.calls["commit_repair"]) == (2, 1)
        stored_now = plain((await backend.make().read_from("s27", 0)).events)
        assert types_of(stored_now) == ["turn/start", "turn/end"]

    run_virtual(body())


def test_S_28_an_external_append_right_after_the_repair_is_picked_up(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s28", [turn_start(0, 1)])
        p, probe = cold(backend)
        probe.after("commit_repair", external_appender(backend, "s28", [turn_start(2, 2), turn_end(3, 2)]))
        with await p.prepare("s28") as prep:
            assert types_of(prep.session.events) == ["turn/start", "turn/end", "turn/start", "turn/end", END_SEED]
            assert prep.session.next_turn == 3
        assert (probe.calls["load_stored"], probe.calls["commit_repair"]) == (2, 1)

    run_virtual(body())


def test_S_29_storage_deleted_right_after_the_repair_is_not_found(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s29", [turn_start(0, 1)])
        p, probe = cold(backend)
        probe.after("commit_repair", deleter(backend, "s29"))
        with pytest.raises(SessionNotFoundError, match='session "s29" not found'):
            await p.prepare("s29")
        assert (probe.calls["load_stored"], probe.calls["commit_repair"]) == (2, 1)
        assert p._reserved == {}

    run_virtual(body())


def test_prepare_detects_a_revision_change_between_read_and_reservation(backend: BackendKit) -> None:
    """§6.7: a source is used only if its revision is still current; otherwise read again."""

    async def body() -> None:
        await stored(backend, "moved", one_turn_log())
        p, probe = cold(backend)
        probe.after("load_stored", external_appender(backend, "moved", completed_turn2()))
        with await p.prepare("moved") as prep:
            assert types_of(prep.session.events) == [*TURN1, "turn/start", "turn/end", END_SEED]
        assert probe.calls["load_stored"] == 2

    run_virtual(body())


def test_S_20_inspect_reloads_after_an_external_append(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s20", one_turn_log())
        p, probe = cold(backend)
        first = await p.inspect("s20")
        assert len(first.events) == 6
        assert len((await p.inspect("s20")).events) == 6
        assert probe.calls["load_stored"] == 1
        await backend.make().append("s20", completed_turn2())
        second = await p.inspect("s20")
        assert [e.seq for e in second.events] == list(range(8))
        assert probe.calls["load_stored"] == 2
        assert len(first.events) == 6  # an earlier inspection never grows

    run_virtual(body())


def test_S_21_prepare_does_not_reuse_a_stale_inspection(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s21", one_turn_log())
        p, probe = cold(backend)
        await p.inspect("s21")
        await backend.make().append("s21", completed_turn2())
        with await p.prepare("s21") as prep:
            assert len(prep.session.events) == 9
            assert types_of(prep.session.events)[-3:] == ["turn/start", "turn/end", END_SEED]
        assert probe.calls["load_stored"] == 2

    run_virtual(body())


def test_load_after_an_external_append_is_fresh(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "fresh", one_turn_log())
        p, _ = cold(backend)
        assert len((await p.load("fresh")).events) == 6
        await backend.make().append("fresh", [*open_turn2()])
        loaded = await p.load("fresh")
        assert types_of(loaded.events) == CLOSED_OPEN_TURN2

    run_virtual(body())


def test_S_24_append_adopts_then_inspect_sees_it(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "s24", one_turn_log())
        p, probe = cold(backend)
        appending = asyncio.ensure_future(p.append("s24", [turn_start(6, 2)]))
        inspecting = asyncio.ensure_future(p.inspect("s24"))
        await appending
        inspection = await inspecting
        assert types_of(inspection.events) == [*TURN1, "turn/start", "turn/end"]  # 7 stored + 1 in-memory closer
        assert probe.calls["load_stored"] == 2
        assert len(plain((await backend.make().read_from("s24", 0)).events)) == 7

    run_virtual(body())


def test_S_23_inspect_and_append_in_the_same_step_run_in_call_order(backend: BackendKit) -> None:
    """Upstream reloads the inspection after the append (it is re-checked on the chain); the port
    runs the two in call order, so the inspection is the pre-append log.  Both are linearizable."""

    async def body() -> None:
        await stored(backend, "s23", one_turn_log())
        p, probe = cold(backend)
        inspecting = asyncio.ensure_future(p.inspect("s23"))
        appending = asyncio.ensure_future(p.append("s23", [turn_start(6, 2)]))
        inspection = await inspecting
        await appending
        assert [e.seq for e in inspection.events] in (list(range(6)), list(range(8)))
        assert probe.calls["load_stored"] == 2
        assert types_of((await p.inspect("s23")).events) == [*TURN1, "turn/start", "turn/end"]

    run_virtual(body())


# ---------------------------------------------------------------- cancellation of prepare (§2.5, §2.11)


def test_prepare_with_a_pre_aborted_signal_rejects_with_the_reason(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "abort0", one_turn_log())
        p, probe = cold(backend)
        reason = RuntimeError("user cancelled")
        with pytest.raises(RuntimeError) as info:
            await p.prepare("abort0", AbortSignal.aborted_with(reason))
        assert info.value is reason
        assert probe.calls["load_stored"] == 0 and p._reserved == {}

    run_virtual(body())


def test_prepare_aborted_during_the_read_rejects_and_reserves_nothing(backend: BackendKit) -> None:
    async def body() -> None:
        await stored(backend, "abort1", one_turn_log())
        p, probe = cold(backend)
        gate = probe.gate("load_stored")
        signal = AbortSignal()
        preparing = asyncio.ensure_future(p.prepare("abort1", signal))
        await gate.wait_entered()
        reason = RuntimeError("closed the dialog")
        signal.abort(reason)
        gate.open()
        with pytest.raises(RuntimeError) as info:
            await preparing
        assert info.value is reason
        assert p._reserved == {}
        with await p.prepare("abort1") as prep:
            assert len(prep.session.events) == 7

    run_virtual(body())


def test_an_aborted_prepare_still_completes_a_started_repair(backend: BackendKit) -> None:
    """§2.5: once the commit has started it runs to completion, then the call rejects."""

    async def body() -> None:
        await stored(backend, "abort2", [*one_turn_log(), *open_turn2()])
        p, probe = cold(backend)
        gate = probe.gate("commit_repair")
        signal = AbortSignal()
        preparing = asyncio.ensure_future(p.prepare("abort2", signal))
        await gate.wait_entered()
        reason = RuntimeError("too late")
        signal.abort(reason)
        gate.open()
        with pytest.raises(RuntimeError) as info:
            await preparing
        assert info.value is reason
        assert "commit_repair:done" in probe.lifecycle
        assert p._reserved == {}
        assert types_of(plain((await backend.make().read_from("abort2", 0)).events)) == CLOSED_OPEN_TURN2
        with await p.prepare("abort2") as prep:
            assert types_of(prep.session.events) == [*CLOSED_OPEN_TURN2, END_SEED]
        assert probe.calls["commit_repair"] == 1

    run_virtual(body())


# ---------------------------------------------------------------- the LRU of prepared sources


@pytest.mark.parametrize("size", [0, -1, 1.5, True, "5"])
def test_S_08_S_09_cache_size_must_be_a_positive_safe_integer(backend: BackendKit, size: Any) -> None:
    with pytest.raises(TypeError, match="preparedSessionCacheSize must be a positive safe integer") as info:
        persistence_for(backend, prepared_session_cache_size=size)
    assert isinstance(info.value, SessionArgumentError)


async def store_many(kit: BackendKit, count: int) -> list[str]:
    p = kit.make()
    ids = [f"lru-{i}" for i in range(count)]
    for sid in ids:
        await p.create(meta(sid, WORK))
        await p.append(sid, one_turn_log())
    return ids


def test_LRU_default_capacity_is_five(backend: BackendKit) -> None:
    async def body() -> None:
        ids = await store_many(backend, 6)
        p, probe = cold(backend)
        for sid in ids[:5]:
            await p.inspect(sid)
        for sid in ids[:5]:
            await p.inspect(sid)  # all five retained
        assert probe.calls["load_stored"] == 5
        await p.inspect(ids[5])  # evicts the least recently used: lru-0
        for sid in ids[1:6]:
            await p.inspect(sid)
        assert probe.calls["load_stored"] == 6
        await p.inspect(ids[0])
        assert probe.calls["load_stored"] == 7

    run_virtual(body())


def test_S_31_capacity_one_evicts_the_previous_source(backend: BackendKit) -> None:
    async def body() -> None:
        await store_many(backend, 2)
        p, probe = cold(backend, prepared_session_cache_size=1)
        for sid in ("lru-0", "lru-1", "lru-0"):
            await p.inspect(sid)
        assert probe.calls["load_stored"] == 3
        await p.inspect("lru-0")
        assert probe.calls["load_stored"] == 3

    run_virtual(body())


def test_P_06_LRU_counts_and_evicts_only_ready_entries(backend: BackendKit) -> None:
    async def body() -> None:
        ids = await store_many(backend, 7)
        p, probe = cold(backend)
        held = [await p.prepare(ids[0]), await p.prepare(ids[1])]  # reserved: neither counted nor evicted
        for sid in ids[2:7]:
            await p.inspect(sid)
        for sid in ids[2:7]:
            await p.inspect(sid)
        assert probe.calls["load_stored"] == 7  # five ready entries fit beside two reservations
        held[0].dispose()  # back to ready: six ready entries -> the oldest ready one (lru-2) goes
        with await p.prepare(ids[0]):
            pass
        assert probe.calls["load_stored"] == 7
        for sid in ids[3:7]:
            await p.inspect(sid)
        assert probe.calls["load_stored"] == 7
        await p.inspect(ids[2])
        assert probe.calls["load_stored"] == 8
        # the other reservation was never evicted: it still publishes
        await p.attach_live(held[1].session, preparation=held[1])
        held[1].session.append("turn/start", {"turn": 2})
        held[1].session.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
        await p.retire_live(ids[1])
        assert types_of((await backend.make().load(ids[1])).events) == [*TURN1, END_SEED, "turn/start", "turn/end"]

    run_virtual(body())


def test_P_01_concurrent_inspections_of_one_id_read_once(backend: BackendKit) -> None:
    async def body() -> None:
        await store_many(backend, 1)
        p, probe = cold(backend)
        results = await asyncio.gather(*(p.inspect("lru-0") for _ in range(4)))
        assert all(without_time(r.events) == without_time(one_turn_log()) for r in results)
        assert probe.calls["load_stored"] == 1

    run_virtual(body())


def test_P_16_an_inspected_id_cannot_be_published_by_a_new_session(backend: BackendKit) -> None:
    async def body() -> None:
        await store_many(backend, 1)
        p, _ = cold(backend)
        store = SessionStore(p)
        await p.inspect("lru-0")
        with pytest.raises(SessionPersistenceError, match=r"id collision|persisted state already owns"):
            await store.create("lru-0", meta={"cwd": WORK})
        assert not p.is_live("lru-0")
        assert len((await p.load("lru-0")).events) == 6

    run_virtual(body())


def test_a_reserved_source_is_not_handed_to_inspect_after_the_log_moved(backend: BackendKit) -> None:
    """S-22 (port form): while reserved, inspect answers from storage; the reservation survives."""

    async def body() -> None:
        await stored(backend, "s22", one_turn_log())
        p, _ = cold(backend)
        prep = await p.prepare("s22")
        inspection = await p.inspect("s22")
        assert len(inspection.events) == 6
        assert p._reserved == {"s22": "reserved"}
        await p.attach_live(prep.session, preparation=prep)
        assert p._reserved == {}
        await p.retire_live("s22")

    run_virtual(body())
