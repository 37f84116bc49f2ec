"""The in-memory ``Session`` (session-model §1.3, §2.2-§2.7, §5.1 and the §8 given/expect rules).

No storage here: these are the rules every live log obeys before persistence sees it.
Rule numbers refer to session-model §8 ("rule 13" = §8 item 13).
"""

from __future__ import annotations

import logging
import tracemalloc
from typing import Any

import pytest
from livekit import append_log, plain, without_time
from sessionkit import (
    assistant_message,
    completed_turn2,
    ev,
    meta,
    one_turn_log,
    step_end,
    step_start,
    tool_result,
    turn_end,
    turn_start,
    user_message,
)

from persistence import (
    Session,
    SessionArgumentError,
    SessionConflictError,
    SessionEvent,
    SessionPersistenceError,
    SessionValidationError,
)
from persistence.session import END_SEED


def fresh(session_id: str = "s", seed: Any = None, **extra: Any) -> Session:
    return Session(meta(session_id, "/w", **extra), seed, clock=lambda: 4242)


def user_data(text: str, msg_id: str = "u1") -> dict[str, Any]:
    return {"id": msg_id, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


# ---------------------------------------------------------------- header (rules 3-8)


@pytest.mark.parametrize(
    ("field", "value", "phrase"),
    [
        ("createdAt", -1, "createdAt must be a non-negative safe integer"),
        ("createdAt", 1.5, "createdAt must be a non-negative safe integer"),
        ("createdAt", "123", "createdAt must be a non-negative safe integer"),
        # 2**53 is outside the lossless int range of the port (§2.4), so the snapshot refuses it first
        ("createdAt", 2**53, "not losslessly JSON-serializable"),
        ("cwd", "relative/path", "cwd must be an absolute path"),
        ("seedLength", -1, "seedLength must be a non-negative safe integer"),
        ("seedLength", 0.5, "seedLength must be a non-negative safe integer"),
        ("seedLength", "1", "seedLength must be a non-negative safe integer"),
        ("origin", "fork", 'origin must be "subagent"'),
        ("delegationDepth", -1, "delegationDepth must be a non-negative safe integer"),
        ("delegationDepth", 0.5, "delegationDepth must be a non-negative safe integer"),
        ("agentPreset", 1, "agentPreset must be a string"),
        ("parentSession", 1, "parentSession must be a string"),
        ("version", 1, "header version must be 0"),
    ],
)
def test_rules_2_to_8_header_validation(field: str, value: Any, phrase: str) -> None:
    header = meta("s", "/w")
    header[field] = value
    with pytest.raises(SessionPersistenceError, match=phrase):
        Session(header)


def test_rules_4_to_6_accepted_header_values() -> None:
    s = Session(meta("s", "/w", seedLength=10, origin="subagent", delegationDepth=2, agentPreset="coder", parentSession="p"))
    assert s.header.seed_length == 10 and s.header.origin == "subagent" and s.header.delegation_depth == 2
    assert s.events == [] and s.first_live_seq == 0


@pytest.mark.parametrize("bad_id", [None, 5, ["s"]])
def test_rule_8_header_id_must_be_a_string(bad_id: Any) -> None:
    """§1.3: the id is a string; the port reads it from the header, so a non-string id is refused."""
    with pytest.raises(SessionPersistenceError, match="session header id must be a string"):
        Session({"version": 0, "id": bad_id, "createdAt": 1})


def test_header_must_be_lossless() -> None:
    with pytest.raises(SessionArgumentError, match="not losslessly JSON-serializable"):
        Session(meta("s", "/w", agentPreset=float("nan")))


# ---------------------------------------------------------------- append (§2.2, rules 10-12)


def test_append_builds_the_upstream_envelope_in_order() -> None:
    s = fresh()
    s.append("turn/start", {"turn": 1})
    e = s.append("user/message", user_data("hi"), surface_op="append", source_event_seqs=[0])
    assert list(e.wire) == ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]
    assert plain(e) == {
        "type": "user/message",
        "seq": 1,
        "time": 4242,
        "data": user_data("hi"),
        "sourceEventSeqs": [0],
        "surfaceOp": "append",
    }
    assert (s.seq, len(s.events)) == (2, 2)


@pytest.mark.parametrize(
    "bad",
    [float("nan"), float("inf"), -0.0, {1, 2}, (1, 2), object(), 2**53, b"x", {1: "a"}],
    ids=["nan", "inf", "neg-zero", "set", "tuple", "object", "unsafe-int", "bytes", "int-key"],
)
def test_rule_10_non_lossless_data_is_refused_and_nothing_is_logged(bad: Any) -> None:
    s = fresh()
    with pytest.raises(SessionArgumentError, match='session event "user/message" carries non-JSON-serializable data'):
        s.append("user/message", {**user_data("hi"), "extra": bad}, surface_op="append")
    assert s.seq == 0 and s.events == []


def test_rule_10_cyclic_data_is_refused() -> None:
    s = fresh()
    cyclic: dict[str, Any] = {"turn": 1}
    cyclic["self"] = cyclic
    with pytest.raises(SessionArgumentError, match="non-JSON-serializable data"):
        s.append("turn/start", cyclic)
    assert s.seq == 0


def test_non_lossless_surface_metadata_is_refused() -> None:
    s = fresh()
    with pytest.raises(SessionArgumentError, match="non-JSON-serializable surface metadata"):
        s.append("user/message", user_data("hi"), surface_op={"op": "replace", "start": float("nan"), "end": 0})
    assert s.seq == 0


def test_rule_11_logged_events_are_detached_and_frozen() -> None:
    s = fresh()
    data = user_data("original")
    returned = s.append("user/message", data, surface_op="append")
    data["content"][0]["text"] = "MUTATED"
    data["id"] = "changed"
    for event in (returned, s.events[0]):
        assert event.data["content"][0]["text"] == "original"
        with pytest.raises(TypeError):
            event.data["id"] = "x"  # type: ignore[index]
        with pytest.raises(TypeError):
            event.data["content"][0]["text"] = "x"  # type: ignore[index]
        with pytest.raises((TypeError, AttributeError)):
            event.data["content"].append({})  # type: ignore[attr-defined]
    # to_json hands out a detached copy; mutating it changes nothing
    copy = s.events[0].to_json()
    copy["data"]["id"] = "x"
    assert s.events[0].data["id"] == "u1"


def test_rule_12_deeply_nested_data_is_accepted() -> None:
    s = fresh()
    nested: Any = []
    for _ in range(5000):
        nested = [nested]
    s.append("plugin/deep", nested)
    assert s.seq == 1


@pytest.mark.parametrize(
    ("etype", "data", "phrase"),
    [
        ("request/header-delta", {"delta": {}}, "unsupported legacy request/header-delta"),
        ("request/header", {"reason": "fallback", "header": {}}, 'unsupported legacy request/header reason "fallback"'),
    ],
)
def test_S_51_S_52_legacy_vocabulary_is_refused_and_the_log_stays_empty(etype: str, data: Any, phrase: str) -> None:
    s = fresh()
    with pytest.raises(SessionValidationError, match=phrase) as info:
        s.append(etype, data)
    assert " at seq" not in str(info.value)  # the Session message has no seq (nothing was logged)
    assert s.seq == 0 and s.events == []


@pytest.mark.parametrize(
    ("etype", "data", "kwargs", "phrase"),
    [
        ("user/message", user_data("hi"), {}, "requires a surfaceOp marker"),
        ("turn/start", {"turn": 1}, {"surface_op": "append"}, "not surface-eligible and cannot carry surfaceOp"),
        ("turn/start", {"turn": 1}, {"source_event_seqs": [0]}, "not surface-eligible and cannot carry sourceEventSeqs"),
        ("user/message", user_data("hi"), {"surface_op": "prepend"}, "carries an invalid surfaceOp"),
        ("user/message", user_data("hi"), {"surface_op": {"op": "replace", "start": 0}}, "invalid replace surfaceOp"),
        (
            "user/message",
            user_data("hi"),
            {"surface_op": "append", "source_event_seqs": []},
            "must not be empty except on assistant/message",
        ),
        ("user/message", user_data("hi"), {"surface_op": "append", "source_event_seqs": [0, 0]}, "must not contain duplicates"),
        ("user/message", user_data("hi"), {"surface_op": "append", "source_event_seqs": [1]}, "must reference earlier events"),
        ("user/message", {"content": [], "source": {"kind": "user"}}, {"surface_op": "append"}, "lacks an identified message"),
        ("user/message", {**user_data("hi"), "role": "assistant"}, {"surface_op": "append"}, 'message must have role "user"'),
    ],
)
def test_rules_15_27_surface_and_shape_checks_on_append(etype: str, data: Any, kwargs: dict[str, Any], phrase: str) -> None:
    """Rules 15/27 + the [PY-DECISION] of §2.2: message shapes are validated on append too."""
    s = fresh()
    s.append("turn/start", {"turn": 1})
    with pytest.raises(SessionValidationError, match=phrase):
        s.append(etype, data, **kwargs)
    assert s.seq == 1  # a refusal leaves log and surface untouched


def test_rule_27_empty_sources_allowed_on_assistant_message() -> None:
    s = fresh()
    append_log(s, [turn_start(0, 1), step_start(1, 1, 1)])
    s.append("assistant/message", assistant_message(2, 1, 1)["data"], surface_op="append", source_event_seqs=[])
    assert s.events[2].source_event_seqs == ()


def test_rules_25_26_surface_replace() -> None:
    s = fresh()
    s.append("user/message", user_data("a", "m0"), surface_op="append")
    s.append("user/message", user_data("b", "m1"), surface_op="append")
    with pytest.raises(SessionValidationError, match="missing 1"):
        s.append("user/message", user_data("c", "m2"), surface_op={"op": "replace", "start": 0, "end": 1}, source_event_seqs=[0])
    with pytest.raises(SessionValidationError, match="start seq 5 not found in surface"):
        s.append(
            "user/message", user_data("c", "m2"), surface_op={"op": "replace", "start": 5, "end": 1}, source_event_seqs=[0, 1]
        )
    with pytest.raises(SessionValidationError, match="start seq 1 is after end seq 0"):
        s.append(
            "user/message", user_data("c", "m2"), surface_op={"op": "replace", "start": 1, "end": 0}, source_event_seqs=[0, 1]
        )
    s.append("user/message", user_data("c", "m2"), surface_op={"op": "replace", "start": 0, "end": 1}, source_event_seqs=[0, 1])
    assert s.seq == 3
    # the replaced nodes are gone from the surface: replacing them again fails
    with pytest.raises(SessionValidationError, match="not found in surface"):
        s.append("user/message", user_data("d", "m3"), surface_op={"op": "replace", "start": 0, "end": 0}, source_event_seqs=[0])


def test_rule_28_tool_result_replacement_may_change_only_content() -> None:
    s = fresh()
    append_log(s, [turn_start(0, 1), step_start(1, 1, 1), assistant_message(2, 1, 1, calls=["c1"])])
    s.append("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"})
    result = tool_result(4, 1, 1, "c1", "full", sourceEventSeqs=[3])
    append_log(s, [result])
    pruned = tool_result(5, 1, 1, "c1", "pruned")["data"]
    pruned["message"]["id"] = result["data"]["message"]["id"]
    flipped = tool_result(5, 1, 1, "c1", "pruned", is_error=True)["data"]
    flipped["message"]["id"] = result["data"]["message"]["id"]
    op = {"op": "replace", "start": 4, "end": 4}
    with pytest.raises(SessionValidationError, match="may change only content"):
        s.append("tool/result", flipped, surface_op=op, source_event_seqs=[4])
    s.append("tool/result", pruned, surface_op=op, source_event_seqs=[4])
    assert s.events[5].data["message"]["content"][0]["content"][0]["text"] == "pruned"


def test_rule_19_unknown_plugin_types_are_accepted_by_the_session() -> None:
    s = fresh(seed=[ev("plugin/event", 0, None)])
    s.append("plugin/other", None)
    assert [e.type for e in s.events] == ["plugin/event", END_SEED, "plugin/other"]


# ---------------------------------------------------------------- seeds (rules 13-22)


@pytest.mark.parametrize(
    "patch",
    [
        {"extra": 1},
        {"seq": "0"},
        {"seq": 0.5},
        {"seq": -1},
        {"time": "1"},
        {"time": 0.5},
        {"ignorable": False},
        {"ignorable": "yes"},
    ],
    ids=lambda p: "-".join(f"{k}={v!r}" for k, v in p.items()),
)
def test_rule_13_invalid_seed_envelopes(patch: dict[str, Any]) -> None:
    bad = {**turn_start(0, 1), **patch}
    with pytest.raises(SessionPersistenceError, match="seed event at index 0 has an invalid event envelope"):
        fresh(seed=[bad])


def test_rule_13_seed_without_data_and_ignorable_true() -> None:
    with pytest.raises(SessionPersistenceError, match="invalid event envelope"):
        fresh(seed=[{"type": "turn/start", "seq": 0, "time": 1}])
    s = fresh(seed=[ev("plugin/x", 0, None, ignorable=True)])
    assert s.events[0].ignorable is True
    assert plain(s.events[0])["ignorable"] is True


def test_rule_14_seed_must_be_contiguous() -> None:
    with pytest.raises(SessionPersistenceError, match="seed must be contiguous from 0"):
        fresh(seed=[turn_start(0, 1), turn_end(5, 1)])


def test_rule_15_seed_surface_rules() -> None:
    no_op = user_message(0, "hi")
    del no_op["surfaceOp"]
    with pytest.raises(SessionPersistenceError, match="requires a surfaceOp marker"):
        fresh(seed=[no_op])
    with pytest.raises(SessionPersistenceError, match="not surface-eligible"):
        fresh(seed=[{**turn_start(0, 1), "surfaceOp": "append"}])


def test_rule_18_legacy_seed_events_are_refused() -> None:
    with pytest.raises(SessionPersistenceError, match="unsupported legacy request/header-delta"):
        fresh(seed=[ev("request/header-delta", 0, {})])


def test_seed_must_be_lossless() -> None:
    with pytest.raises(SessionArgumentError, match="seed event at index 1 is not losslessly JSON-serializable"):
        fresh(seed=[turn_start(0, 1), ev("turn/end", 1, {"turn": 1, "reason": {"kind": float("inf")}})])


def test_rule_20_no_seed_means_no_marker_and_empty_seed_gets_one() -> None:
    assert fresh().events == [] and fresh().first_live_seq == 0
    s = fresh(seed=[])
    assert plain(s.events) == [{"type": END_SEED, "seq": 0, "time": 4242, "data": {}}]
    assert s.first_live_seq == 0


def test_rule_21_seed_gets_an_end_seed_marker_and_appends_continue_after_it() -> None:
    seed = one_turn_log()[:4]
    s = fresh(seed=seed)
    assert s.seq == 5 and s.first_live_seq == 4
    assert plain(s.events)[:4] == seed
    assert plain(s.events[4]) == {"type": END_SEED, "seq": 4, "time": 4242, "data": {}}
    s.append("step/end", {"turn": 1, "step": 1})
    assert [e.seq for e in s.events] == [0, 1, 2, 3, 4, 5]


def test_rule_22_a_seed_ending_in_end_seed_is_not_re_marked() -> None:
    seed = [*one_turn_log(), ev(END_SEED, 6, {})]
    s = fresh(seed=seed)
    assert s.seq == 7 and s.first_live_seq == 7
    assert [e.type for e in s.events].count(END_SEED) == 1


def test_seed_is_copied_at_construction() -> None:
    seed = one_turn_log()
    s = fresh(seed=seed)
    seed[1]["data"]["content"][0]["text"] = "MUTATED"
    seed.append(turn_start(6, 2))
    assert s.events[1].data["content"][0]["text"] == "hi"
    assert s.seq == 7


def test_seed_accepts_session_events() -> None:
    source = fresh(seed=one_turn_log())
    s = fresh("t", seed=list(source.events)[:6])
    assert plain(s.events)[:6] == one_turn_log()


# ---------------------------------------------------------------- observers (§2.2 step 7)


def test_observers_see_live_appends_only_in_order() -> None:
    s = fresh(seed=one_turn_log())
    seen: list[tuple[int, int]] = []
    remove = s.add_observer(lambda sess, e: seen.append((e.seq, sess.seq)))
    s.append("turn/start", {"turn": 2})
    s.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    # the seed and its end-seed marker are never notified; the event is in the log when observed
    assert seen == [(7, 8), (8, 9)]
    remove()
    remove()  # idempotent
    s.append("turn/start", {"turn": 3})
    assert seen == [(7, 8), (8, 9)]


def test_observer_failure_is_logged_and_contained(caplog: pytest.LogCaptureFixture) -> None:
    s = fresh()
    seen: list[int] = []

    def broken(_s: Session, _e: SessionEvent) -> None:
        raise RuntimeError("observer bug")

    s.add_observer(broken)
    s.add_observer(lambda _s, e: seen.append(e.seq))
    with caplog.at_level(logging.ERROR, logger="persistence.session"):
        e = s.append("turn/start", {"turn": 1})
    assert e.seq == 0 and s.seq == 1 and seen == [0]
    assert any("observer failed" in r.getMessage() for r in caplog.records)


def test_reentrant_append_from_an_observer_is_refused() -> None:
    s = fresh()
    errors: list[BaseException] = []

    def reenter(sess: Session, e: SessionEvent) -> None:
        try:
            sess.append("plugin/echo", {"of": e.seq})
        except SessionConflictError as err:
            errors.append(err)

    s.add_observer(reenter)
    s.append("turn/start", {"turn": 1})
    assert len(errors) == 1 and "cannot reenter" in str(errors[0])
    assert s.seq == 1
    s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})  # not stuck after the refusal
    assert s.seq == 2


# ---------------------------------------------------------------- snapshots (§2.5)


def test_events_snapshot_is_reused_and_never_grows() -> None:
    s = fresh()
    append_log(s, one_turn_log()[:3])
    snap = s.events
    assert s.events is snap  # reused until the next append
    s.append("assistant/message", one_turn_log()[3]["data"], surface_op="append")
    assert len(snap) == 3 and len(s.events) == 4
    assert s.events is not snap
    assert [e.seq for e in snap] == [0, 1, 2]
    with pytest.raises(IndexError):
        snap[3]
    assert without_time(snap) == without_time(one_turn_log()[:3])


def test_events_snapshot_is_O_1_in_memory() -> None:
    s = fresh()
    for _ in range(20_000):
        s.append("plugin/tick", 0)
    tracemalloc.start()
    try:
        s.append("plugin/tick", 1)
        before = tracemalloc.get_traced_memory()[0]
        snap = s.events
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(snap) == 20_001
    assert grown < 16_384, f"a snapshot of 20k events allocated {grown} bytes"


# ---------------------------------------------------------------- turn queries


def test_turn_and_step_queries_follow_the_log() -> None:
    s = fresh()
    assert (s.open_turn, s.open_step, s.is_turn_open, s.next_turn) == (None, None, False, 1)
    append_log(s, [turn_start(0, 1), user_message(1, "hi"), step_start(2, 1, 1)])
    assert (s.open_turn, s.open_step, s.is_turn_open, s.next_turn) == (1, 1, True, 2)
    append_log(s, [step_end(3, 1, 1), turn_end(4, 1)])
    assert (s.open_turn, s.open_step, s.is_turn_open, s.next_turn) == (None, None, False, 2)


def test_next_turn_continues_after_a_seed() -> None:
    s = fresh(seed=[*one_turn_log(), *completed_turn2()])
    assert s.next_turn == 3 and not s.is_turn_open
    # an open seeded turn stays open: the end-seed marker lands inside it (§5.1)
    t = fresh(seed=one_turn_log()[:3])
    assert t.is_turn_open and t.open_turn == 1 and t.events[-1].type == END_SEED
