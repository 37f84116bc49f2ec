"""Live sessions through the coordinator, for every backend (persistence-contract §3, §6.8, §9.9-§9.12).

Port notes (the Python engine has no cordis context, so there is no ``session/created`` event,
HMR or plugin scope): a live Session is published by ``SessionStore.create/fork/resume``, which
awaits ``attach_live``; a refused publication therefore raises from ``create`` instead of from
the first flush.  "Disposing a scope" is ``SessionStore.dispose``/``close``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from contract_backends import BackendKit
from contract_logs import TURN1
from livekit import (
    append_log,
    instrument,
    live,
    persistence_for,
    plain,
    run_virtual,
    settle,
    stored_events,
    without_time,
    writer_of,
)
from sessionkit import (
    OTHER,
    WORK,
    completed_turn2,
    meta,
    one_turn_log,
    run,
    step_start,
    turn_end,
    turn_start,
    types_of,
    user_message,
)

from persistence import (
    Session,
    SessionConflictError,
    SessionNotFoundError,
    SessionPersistenceError,
    SessionStore,
)
from persistence.session import END_SEED

COLLISION = r"id collision|already has a persisted log|do not match this live session|persisted state already owns"


def completed_reason(events: Any) -> Any:
    last = plain(events)[-1]
    assert last["type"] == "turn/end"
    return last["data"]["reason"]


async def stored_via_public_api(
    kit: BackendKit, session_id: str, events: list[dict[str, Any]], cwd: str | None = WORK, **extra: Any
) -> None:
    """Persist ``events`` with the public ``create`` + ``append`` of a throwaway instance."""
    p = kit.make()
    await p.create(meta(session_id, cwd, **extra))
    await p.append(session_id, events)


# ---------------------------------------------------------------- §9.9 live load / inspect


def test_R_26_flushed_live_session_loads(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("r26", meta={"cwd": WORK})
            append_log(s, one_turn_log())
            assert await store.flush("r26") is True
            loaded = await store.persistence.load("r26")
            assert len(loaded.events) == 6 and loaded.meta.cwd == WORK
            assert without_time(loaded.events) == without_time(one_turn_log())
            assert loaded.events == s.events  # the live snapshot, not a re-read
        cold = await backend.make().load("r26")
        assert without_time(cold.events) == without_time(one_turn_log())

    run_virtual(body())


def test_R_27_live_open_turn_is_never_loaded_or_repaired(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            probe = instrument(store.persistence)
            s = await store.create("r27", meta={"cwd": WORK})
            append_log(s, one_turn_log()[:1])
            await store.flush("r27")
            with pytest.raises(
                SessionConflictError,
                match='cannot load session "r27" while its live turn is open; use the live Session or wait for the turn to close',
            ):
                await store.persistence.load("r27")
            append_log(s, one_turn_log()[1:])
            await store.flush("r27")
            await store.dispose("r27")
            loaded = await store.persistence.load("r27")
            assert types_of(loaded.events) == TURN1
            assert completed_reason(loaded.events) == {"kind": "completed"}
            assert probe.calls["commit_repair"] == 0  # no interruption closers were ever written
        assert types_of(await stored_events(backend, "r27")) == TURN1

    run_virtual(body())


def test_R_28_load_called_before_publication_observes_the_live_open_turn(backend: BackendKit) -> None:
    """The load is issued first but has not run yet; once it runs, the id is live: live path, no repair."""

    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            await p.create(meta("r28", WORK))  # ownerless state of this instance (cursor 1)
            await p.append("r28", [turn_start(0, 1)])
            probe = instrument(p)
            pending_load = asyncio.ensure_future(p.load("r28"))
            s = await store.create("r28", seed=[turn_start(0, 1)], meta={"cwd": WORK, "createdAt": 1000})
            with pytest.raises(SessionConflictError, match="live turn is open"):
                await pending_load
            s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await store.flush("r28")
            loaded = await p.load("r28")
            assert types_of(loaded.events) == ["turn/start", END_SEED, "turn/end"]
            assert completed_reason(loaded.events) == {"kind": "completed"}
            assert probe.calls["commit_repair"] == 0
        assert types_of(await stored_events(backend, "r28")) == ["turn/start", END_SEED, "turn/end"]

    run_virtual(body())


def test_R_29_empty_live_session_is_not_found(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            await store.create("r29", meta={"cwd": WORK})
            assert await store.flush("r29") is True
            with pytest.raises(SessionNotFoundError, match='session "r29" not found'):
                await store.persistence.load("r29")
            assert await store.persistence.list() == []

    run_virtual(body())


def test_R_30_seed_length_without_seed_round_trips(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("r30", meta={"cwd": WORK, "seedLength": 3})
            append_log(s, one_turn_log())
            await store.flush("r30")
            await store.dispose("r30")
            assert (await store.persistence.load("r30")).meta.seed_length == 3
        assert (await backend.make().load("r30")).meta.seed_length == 3

    run_virtual(body())


def test_R_31_lineage_meta_survives_parallel_flushes(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("r31", meta={"cwd": WORK, "parentSession": "root", "delegationDepth": 2})
            append_log(s, one_turn_log())
            results = await asyncio.gather(store.flush("r31"), store.flush("r31"), store.persistence.flush_live("r31"))
            assert results[:2] == [True, True]
            await store.dispose("r31")
            loaded = await store.persistence.load("r31")
            assert (loaded.meta.parent_session, loaded.meta.delegation_depth) == ("root", 2)
            assert len(loaded.events) == 6

    run_virtual(body())


def test_R_32_accepted_events_are_frozen_and_caller_mutation_is_ignored(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("r32", meta={"cwd": WORK})
            s.append("turn/start", {"turn": 1})
            data = {"id": "m1", "role": "user", "content": [{"type": "text", "text": "original"}], "source": {"kind": "user"}}
            logged = s.append("user/message", data, surface_op="append")
            with pytest.raises(TypeError):
                logged.data["content"][0]["text"] = "changed"  # type: ignore[index]
            data["content"][0]["text"] = "MUTATED"
            s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await store.flush("r32")
            loaded = await store.persistence.load("r32")
            assert loaded.events[1].data["content"][0]["text"] == "original"
        cold = await backend.make().load("r32")
        assert cold.events[1].data["content"][0]["text"] == "original"

    run_virtual(body())


def test_R_33_live_load_and_inspect_results_are_frozen(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("r33", meta={"cwd": WORK})
            append_log(s, one_turn_log())
            await store.flush("r33")
            for result in (await store.persistence.load("r33"), await store.persistence.inspect("r33")):
                message = result.events[1]
                assert message.type == "user/message"
                with pytest.raises(TypeError):
                    message.data["id"] = "x"  # type: ignore[index]
                with pytest.raises(TypeError):
                    message.data["content"][0]["text"] = "x"  # type: ignore[index]
            assert s.events[1].data["id"] == "one-turn-user"

    run_virtual(body())


def test_R_34_events_appended_while_the_seed_write_is_in_flight_are_stored_once(backend: BackendKit) -> None:
    """The observer is installed before the first await: nothing lost or doubled (cursor filter)."""

    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            probe = instrument(p)
            s = Session({"version": 0, "id": "r34", "createdAt": 1000, "cwd": WORK}, one_turn_log()[:2])
            gate = probe.gate("append_batch")
            attach = asyncio.ensure_future(p.attach_live(s))
            await gate.wait_entered()  # the seed (+ end-seed) is being written
            append_log(s, [step_start(3, 1, 1)])
            s.append("step/end", {"turn": 1, "step": 1})
            s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            gate.open()
            await attach
            await p.flush_live("r34")
            loaded = await p.load("r34")
            assert [e.seq for e in loaded.events] == list(range(6))
            assert types_of(loaded.events) == ["turn/start", "user/message", END_SEED, "step/start", "step/end", "turn/end"]
            assert probe.committed_seqs() == list(range(6))
            await p.retire_live("r34")

    run_virtual(body())


def test_R_34_events_appended_before_the_suffix_is_taken_are_stored_once(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            probe = instrument(p)
            s = Session({"version": 0, "id": "r34b", "createdAt": 1000, "cwd": WORK})
            gate = probe.gate("read_stored_revision")  # the collision probe runs before the suffix is taken
            attach = asyncio.ensure_future(p.attach_live(s))
            await gate.wait_entered()
            append_log(s, one_turn_log()[:3])
            gate.open()
            await attach
            await p.flush_live("r34b")
            assert probe.committed_seqs() == [0, 1, 2]
            assert [e.seq for e in (await p.inspect("r34b")).events] == [0, 1, 2]
            await p.retire_live("r34b")
        assert [e["seq"] for e in await stored_events(backend, "r34b")] == [0, 1, 2]

    run_virtual(body())


def test_R_35_attaching_the_same_session_again_changes_nothing(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("r35", meta={"cwd": WORK})
            append_log(s, one_turn_log()[:3])
            await store.flush("r35")
            try:
                await store.persistence.attach_live(s)
            except SessionConflictError:
                pass  # the port refuses a second attach; upstream treats re-announcement as a no-op
            assert store.persistence.is_live("r35")
            await store.flush("r35")
            assert [e.seq for e in (await store.persistence.inspect("r35")).events] == [0, 1, 2]
        assert [e["seq"] for e in await stored_events(backend, "r35")] == [0, 1, 2]

    run_virtual(body())


def test_live_load_waits_for_the_initial_seed_write(backend: BackendKit) -> None:
    """§3.2: load of a live id flushes "through the write path (waits for initialization ...)";
    a failed seed write must reject the load instead of handing out a snapshot that is not durable."""

    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            probe = instrument(p)
            gate = probe.gate("append_batch")
            creating = asyncio.ensure_future(store.create("seeded", seed=one_turn_log(), meta={"cwd": WORK}))
            await gate.wait_entered()
            assert p.is_live("seeded")
            loading = asyncio.ensure_future(p.load("seeded"))
            await settle()
            boom = OSError("disk full while writing the seed")
            gate.fail(boom)
            with pytest.raises(OSError, match="disk full while writing the seed"):
                await creating
            with pytest.raises((OSError, SessionPersistenceError)):
                await loading
            assert not p.is_live("seeded") and store.get("seeded") is None
            assert await p.list() == []

    run_virtual(body())


def test_failed_publication_never_writes_its_queued_events_later(backend: BackendKit) -> None:
    """Events appended while a refused publication was initializing die with it (no orphaned window).

    Real time on purpose: the orphan's window must close *after* the next session took the id.
    """

    async def body() -> None:
        async with live(backend, delay_ms=400) as store:
            p = store.persistence
            probe = instrument(p)
            s = Session({"version": 0, "id": "orphan", "createdAt": 1000, "cwd": WORK}, one_turn_log()[:1])
            gate = probe.gate("append_batch")
            attach = asyncio.ensure_future(p.attach_live(s))
            await gate.wait_entered()
            s.append("user/message", one_turn_log()[1]["data"], surface_op="append")  # opens a window
            gate.fail(OSError("seed write failed"))
            with pytest.raises(OSError, match="seed write failed"):
                await attach
            assert not p.is_live("orphan") and "orphan" not in p._states
            # the id is free again: a new live session publishes its first turn (seq 0-1) at once ...
            s2 = await store.create("orphan", meta={"cwd": WORK})
            s2.append("turn/start", {"turn": 1})
            s2.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await store.flush("orphan")
            # ... and the refused session's user/message (its seq 2) must not follow it into that log
            await asyncio.sleep(0.6)
            assert probe.attempted == [[0, 1], [0, 1]]
            assert types_of((await p.inspect("orphan")).events) == ["turn/start", "turn/end"]
            await store.dispose("orphan")
        assert types_of(await stored_events(backend, "orphan")) == ["turn/start", "turn/end"]

    run(body())


def test_S_26_inspect_of_a_live_open_turn_is_the_live_snapshot_without_flushing(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            s = await store.create("s26", meta={"cwd": WORK})
            probe = instrument(p)
            s.append("turn/start", {"turn": 1})
            inspection = await p.inspect("s26")
            assert inspection.events is s.events  # the live events object itself
            assert inspection.meta == s.header
            assert types_of(inspection.events) == ["turn/start"]
            assert writer_of(store, "s26").pending  # nothing was flushed
            assert probe.calls == {}  # no storage access at all
            with pytest.raises(SessionConflictError, match="live turn is open"):
                await p.load("s26")

    run_virtual(body())


def test_S_14_prepare_of_a_live_id_is_refused(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("s14", meta={"cwd": WORK})
            append_log(s, one_turn_log())
            await store.flush("s14")
            with pytest.raises(SessionConflictError, match='cannot prepare session "s14" while it is live'):
                await store.persistence.prepare("s14")
            with pytest.raises(SessionPersistenceError, match="already live"):
                await store.resume("s14")
            assert store.persistence._reserved == {}
            assert len((await store.persistence.load("s14")).events) == 6  # the live path answers

    run_virtual(body())


def test_crash_repair_never_touches_a_live_session(backend: BackendKit) -> None:
    """§3.1: load/inspect/prepare/diagnose of a live id with a durable open turn write nothing."""

    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            probe = instrument(p)
            s = await store.create("crashy", meta={"cwd": WORK})
            append_log(s, one_turn_log())
            append_log(s, [turn_start(6, 2), step_start(7, 2, 1)])
            await store.flush("crashy")
            revision = await p.read_stored_revision("crashy")
            with pytest.raises(SessionConflictError, match="live turn is open"):
                await p.load("crashy")
            assert types_of((await p.inspect("crashy")).events)[-2:] == ["turn/start", "step/start"]
            with pytest.raises(SessionConflictError, match="while it is live"):
                await p.prepare("crashy")
            diagnosis = await p.diagnose("crashy")  # a read-only classification is allowed
            assert diagnosis.status == "open-turn"
            assert probe.calls["commit_repair"] == 0
            assert await p.read_stored_revision("crashy") == revision
            # the live loop closes its own turn; nothing synthetic was ever stored
            s.append("step/end", {"turn": 2, "step": 1})
            s.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
            await store.dispose("crashy")
            assert probe.calls["commit_repair"] == 0
        stored = await stored_events(backend, "crashy")
        assert types_of(stored)[6:] == ["turn/start", "step/start", "step/end", "turn/end"]
        assert stored[-1]["data"]["reason"] == {"kind": "completed"}

    run_virtual(body())


def test_repair_is_cold_only_after_retirement(backend: BackendKit) -> None:
    """A session disposed mid-turn is cold: the next load commits the closers (once)."""

    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            probe = instrument(p)
            s = await store.create("retired", meta={"cwd": WORK})
            append_log(s, [turn_start(0, 1), step_start(1, 1, 1)])
            await store.dispose("retired")
            loaded = await p.load("retired")
            assert types_of(loaded.events) == ["turn/start", "step/start", "step/end", "turn/end"]
            assert completed_reason(loaded.events) == {"kind": "interrupted"}
            assert probe.calls["commit_repair"] == 1
            await p.load("retired")
            assert probe.calls["commit_repair"] == 1

    run_virtual(body())


# ---------------------------------------------------------------- §9.10 seeds and ownerless claims


def test_R_36_seeded_create_persists_seed_and_marker_once(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            probe = instrument(store.persistence)
            s = await store.create("r36", seed=one_turn_log(), meta={"cwd": WORK})
            assert s.first_live_seq == 6
            await store.flush("r36")
            loaded = await store.persistence.load("r36")
            assert types_of(loaded.events) == [*TURN1, END_SEED]
            assert loaded.events[6].seq == 6
            assert plain(loaded.events)[:6] == one_turn_log()  # seed events keep their own times
            revision = await store.persistence.read_stored_revision("r36")
            await store.flush("r36")
            assert await store.persistence.read_stored_revision("r36") == revision
            assert probe.committed == [[0, 1, 2, 3, 4, 5, 6]]  # one atomic materialization

    run_virtual(body())


def test_empty_seed_persists_only_the_marker_and_no_seed_persists_nothing(backend: BackendKit) -> None:
    """§0.4 / session-model §5.1: ``seed=[]`` gives ``[session/end-seed@0]``; no seed stays lazy."""

    async def body() -> None:
        async with live(backend) as store:
            await store.create("marked", seed=[], meta={"cwd": WORK})
            await store.create("lazy", meta={"cwd": WORK})
            assert await store.flush("marked") and await store.flush("lazy")
            assert [h.id for h in await store.persistence.list()] == ["marked"]
        assert [(e["type"], e["seq"], e["data"]) for e in await stored_events(backend, "marked")] == [(END_SEED, 0, {})]

    run_virtual(body())


def test_R_37_a_loaded_log_can_be_continued_by_a_live_session_seeded_with_it(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as first:
            s = await first.create("r37", meta={"cwd": WORK})
            append_log(s, one_turn_log())
        async with live(backend) as second:
            loaded = await second.persistence.load("r37")
            s2 = await second.create("r37", seed=list(loaded.events), meta={"cwd": WORK, "createdAt": loaded.meta.created_at})
            assert await second.flush("r37")
            append_log(s2, [turn_start(7, 2), turn_end(8, 2)])
            await second.flush("r37")
        reloaded = await backend.make().load("r37")
        assert [e.seq for e in reloaded.events] == list(range(9))
        assert reloaded.events[6].type == END_SEED
        assert types_of(reloaded.events).count(END_SEED) == 1

    run_virtual(body())


def test_R_38_lazy_public_create_is_claimed_by_a_live_session(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            await store.persistence.create(meta("lazy-claim", WORK))
            await store.create("lazy-claim", seed=one_turn_log(), meta={"cwd": WORK})
            assert await store.flush("lazy-claim") is True
            loaded = await store.persistence.load("lazy-claim")
            assert [e.seq for e in loaded.events] == list(range(7))
            assert loaded.events[-1].type == END_SEED

    run_virtual(body())


def test_R_39_a_loaded_id_refuses_a_live_session_with_a_different_log(backend: BackendKit) -> None:
    async def body() -> None:
        await stored_via_public_api(backend, "r39", one_turn_log())
        async with live(backend) as store:
            await store.persistence.load("r39")
            with pytest.raises(SessionPersistenceError, match=COLLISION):
                await store.create("r39", seed=[], meta={"cwd": WORK})
            assert not store.persistence.is_live("r39") and store.get("r39") is None
        assert plain(await stored_events(backend, "r39")) == one_turn_log()

    run_virtual(body())


def test_R_40_claiming_with_exactly_the_stored_log_appends_nothing(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as first:
            await first.create("r40", seed=one_turn_log(), meta={"cwd": WORK})
        before = await stored_events(backend, "r40")
        assert types_of(before) == [*TURN1, END_SEED]
        async with live(backend) as second:
            probe = instrument(second.persistence)
            loaded = await second.persistence.load("r40")
            s = await second.create("r40", seed=list(loaded.events), meta={"cwd": WORK})
            assert s.seq == 7  # the seed already ends with its marker
            assert await second.flush("r40") is True
            assert probe.calls["append_batch"] == 0
        assert await stored_events(backend, "r40") == before

    run_virtual(body())


def test_R_41_a_claim_keeps_the_durable_header(backend: BackendKit) -> None:
    async def body() -> None:
        await stored_via_public_api(backend, "claim", one_turn_log())
        async with live(backend) as store:
            p = store.persistence
            loaded = await p.load("claim")
            seed = [*plain(loaded.events), *completed_turn2()]
            await store.create("claim", seed=seed, meta={"cwd": WORK, "createdAt": 2000})
            await store.flush("claim")
            live_view = await p.load("claim")
            assert [e.seq for e in live_view.events] == list(range(9))
            assert live_view.events[-1].type == END_SEED
            assert live_view.meta.created_at == 1000
            await store.dispose("claim")
            assert (await p.load("claim")).meta.created_at == 1000
        assert (await backend.make().load("claim")).meta.created_at == 1000

    run_virtual(body())


@pytest.mark.parametrize("case", ["R_42_created_elsewhere", "R_43_stored_elsewhere", "R_44_created_without_cwd"])
def test_R_42_R_43_R_44_a_live_session_never_claims_another_cwd(backend: BackendKit, case: str) -> None:
    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            seed = one_turn_log()
            if case == "R_42_created_elsewhere":
                await p.create(meta("cwd-claim", OTHER))
            elif case == "R_43_stored_elsewhere":
                await p.create(meta("cwd-claim", OTHER))
                await p.append("cwd-claim", one_turn_log())
                seed = plain((await p.load("cwd-claim")).events)
            else:
                await p.create(meta("cwd-claim"))
            with pytest.raises(SessionPersistenceError, match=r"different cwd|id collision"):
                await store.create("cwd-claim", seed=seed, meta={"cwd": WORK})
            assert not p.is_live("cwd-claim") and store.get("cwd-claim") is None
        listed = {h.id: h.cwd for h in await backend.make().list()}
        assert listed == ({"cwd-claim": OTHER} if case == "R_43_stored_elsewhere" else {})

    run_virtual(body())


# ---------------------------------------------------------------- §9.11/§9.12 teardown, collisions, reuse


def test_R_46_backend_teardown_drains_unflushed_events(backend: BackendKit) -> None:
    async def body() -> None:
        p = persistence_for(backend)
        store = SessionStore(p, write_batch_max_delay_ms=2147483647)  # the window never closes by itself
        s = await store.create("r46", meta={"cwd": WORK})
        append_log(s, one_turn_log()[:3])
        assert writer_of(store, "r46").pending
        await p.close()  # teardown of the backend while the session is live
        assert not p.is_live("r46")
        loaded = await backend.make().load("r46")
        assert types_of(loaded.events)[:3] == ["turn/start", "user/message", "step/start"]

    run_virtual(body())


def test_R_50_a_new_live_session_never_overwrites_a_persisted_id(backend: BackendKit) -> None:
    async def body() -> None:
        await stored_via_public_api(backend, "r50", one_turn_log())
        async with live(backend) as store:
            with pytest.raises(SessionPersistenceError, match=COLLISION):
                await store.create("r50", meta={"cwd": WORK})
            assert store.get("r50") is None and not store.persistence.is_live("r50")
            assert store.persistence._states.get("r50") is None
        assert plain(await stored_events(backend, "r50")) == one_turn_log()

    run_virtual(body())


def test_R_51_an_abandoned_lazy_id_can_be_reused(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            await store.create("r51", meta={"cwd": WORK})
            assert await store.flush("r51") is True
            await store.dispose("r51")
            s = await store.create("r51", meta={"cwd": WORK})
            assert await store.flush("r51") is True
            s.append("turn/start", {"turn": 1})
            s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await store.flush("r51")
            assert [e.seq for e in (await store.persistence.load("r51")).events] == [0, 1]

    run_virtual(body())


def test_R_52_disposal_drains_and_the_id_is_then_fenced(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("r52", meta={"cwd": WORK})
            s.append("turn/start", {"turn": 1})
            s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            await store.dispose("r52")
            assert [h.id for h in await store.persistence.list()] == ["r52"]
            assert [e.seq for e in (await store.persistence.load("r52")).events] == [0, 1]
            with pytest.raises(SessionPersistenceError, match=COLLISION):
                await store.create("r52", meta={"cwd": WORK})
            assert not store.persistence.is_live("r52")

    run_virtual(body())


def test_S_56_retirement_releases_every_bookkeeping_entry(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            p = store.persistence
            for i in range(3):
                s = await store.create(f"s56-{i}", meta={"cwd": WORK})
                append_log(s, one_turn_log())
                await store.flush(f"s56-{i}")
            for i in range(3):
                await store.dispose(f"s56-{i}")
            assert p._live == {} and p._states == {} and p._reserved == {}
            assert store.ids() == []

    run_virtual(body())


def test_S_03_failed_initialization_refuses_publication_and_leaves_no_timer(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend, delay_ms=2147483647) as store:
            p = store.persistence
            probe = instrument(p)
            boom = OSError("initialization read failed")
            probe.fail("read_stored_revision", boom)
            with pytest.raises(OSError) as info:
                await store.create("s03", meta={"cwd": WORK})
            assert info.value is boom
            assert store.get("s03") is None and not p.is_live("s03") and "s03" not in p._states
            assert await store.flush("s03") is False
            s = await store.create("s03", meta={"cwd": WORK})  # nothing was reserved by the failure
            s.append("turn/start", {"turn": 1})
            assert await store.flush("s03")
            assert not writer_of(store, "s03").window_armed

    run_virtual(body())


def test_S_43_a_failed_retirement_is_retried_by_teardown_and_close_comes_last(backend: BackendKit) -> None:
    async def body() -> None:
        p = persistence_for(backend)
        probe = instrument(p)
        store = SessionStore(p, write_batch_max_delay_ms=2147483647)
        s = await store.create("s43", meta={"cwd": WORK})
        append_log(s, one_turn_log())
        probe.fail("append_batch", OSError("retirement drain failed"))
        with pytest.raises(OSError, match="retirement drain failed"):
            await store.dispose("s43")
        assert p.is_live("s43")  # the live entry keeps its pending events for teardown
        assert len(writer_of(store, "s43").pending) == 6
        await p.close()
        assert probe.lifecycle[-4:] == ["append_batch:start", "append_batch:done", "close:start", "close:done"]
        assert [e.seq for e in (await backend.make().load("s43")).events] == list(range(6))

    run_virtual(body())


def test_S_44_teardown_waits_for_an_in_flight_retirement_write(backend: BackendKit) -> None:
    async def body() -> None:
        p = persistence_for(backend)
        probe = instrument(p)
        store = SessionStore(p, write_batch_max_delay_ms=2147483647)
        s = await store.create("s44", meta={"cwd": WORK})
        append_log(s, one_turn_log())
        gate = probe.gate("append_batch")
        disposing = asyncio.ensure_future(store.dispose("s44"))
        await gate.wait_entered()
        closing = asyncio.ensure_future(p.close())
        await settle()
        assert not closing.done()
        gate.open()
        await asyncio.gather(disposing, closing)
        assert probe.lifecycle[-4:] == ["append_batch:start", "append_batch:done", "close:start", "close:done"]

    run_virtual(body())


def test_S_45_teardown_waits_for_a_public_append_still_running(backend: BackendKit) -> None:
    async def body() -> None:
        p = persistence_for(backend)
        probe = instrument(p)
        await p.create(meta("s45", WORK))
        gate = probe.gate("append_batch")
        appending = asyncio.ensure_future(p.append("s45", one_turn_log()))
        await gate.wait_entered()
        closing = asyncio.ensure_future(p.close())
        await settle()
        gate.open()
        await asyncio.gather(appending, closing)
        assert probe.lifecycle[-4:] == ["append_batch:start", "append_batch:done", "close:start", "close:done"]
        assert len((await backend.make().load("s45")).events) == 6

    run_virtual(body())


def test_live_user_message_content_round_trips_exactly(backend: BackendKit) -> None:
    """Live appends are stored verbatim (only ``time`` comes from the clock)."""

    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("exact", meta={"cwd": WORK})
            append_log(s, one_turn_log())
            append_log(s, [turn_start(6, 2), user_message(7, 'über \u2028 \U0001f600 lone \ud800 "q"', "m-2")])
            s.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
        assert await stored_events(backend, "exact") == plain(s.events)

    run_virtual(body())


def test_S_56_per_id_chains_are_released_after_quiescence(backend: BackendKit) -> None:
    """S-56: once every operation for an id settled, no chain entry is kept for it."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("s56", WORK))
        await store.append("s56", one_turn_log())
        results = await asyncio.gather(store.inspect("s56"), store.read_from("s56", 2), store.load("s56"))
        assert len(results[0].events) == 6 and len(results[1].events) == 4
        with pytest.raises(SessionNotFoundError):
            await store.inspect("missing")
        assert store._locks == {} and store._lock_users == {}

    run(body())
