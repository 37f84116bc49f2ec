"""Read normalization and validation: legacy upgrades, malformed records, versions and unknown event
types (persistence-contract §4, §9.5: R-16..R-21, jsonl-backend §15.7 cases 13, 91).

Every test runs once per backend parameter of the ``backend`` fixture (tests/contract/conftest.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from contract_backends import BackendKit
from contract_logs import stored_one_turn
from sessionkit import (
    PRE_REACT_TURN_END_REASONS,
    STEERING_MESSAGE_ID,
    ev,
    meta,
    pre_identity_log,
    pre_react_loop_log,
    run,
    turn_end,
    turn_start,
    types_of,
    user_message,
    wire,
)

from persistence import SessionFormatUnsupportedError, SessionPersistenceCorruptionError, SessionPersistenceError
from persistence.errors import upstream_class_of

pytestmark = pytest.mark.usefixtures("fast_fsync")


def test_R_16_pre_identity_messages_get_legacy_ids(backend: BackendKit) -> None:
    """R-16 (the derive-messages half needs the live Session: not built)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("pre-id", "/proj"))
        await store.append("pre-id", pre_identity_log())
        prefix = "legacy-message:pre-id:"
        for result in (await store.inspect("pre-id"), await backend.make().load("pre-id")):
            ids = []
            for event in result.events:
                if event.type == "user/message":
                    ids.append(event.data["id"])
                    message = event.data
                elif event.type in ("assistant/message", "tool/result"):
                    ids.append(event.data["message"]["id"])
                    message = event.data["message"]
                else:
                    continue
                with pytest.raises(TypeError):
                    message["id"] = "changed"  # type: ignore[index]
                with pytest.raises(TypeError):
                    message["content"][0]["text"] = "changed"  # type: ignore[index]
            assert ids == [prefix + "1", prefix + "3", prefix + "5", prefix + "5"]
            events = wire(result.events)
            assert events[3]["data"]["message"]["role"] == "assistant"
            assert events[3]["data"]["message"]["source"] == {"provider": "mock", "model": "mock", "kind": "model"}
            assert events[6]["data"]["message"]["content"][0]["content"] == [{"type": "text", "text": "pruned"}]
        tail = await store.read_from("pre-id", 6)
        first = wire(tail.events)[0]
        assert (first["type"], first["seq"], first["data"]["message"]["id"]) == ("tool/result", 6, prefix + "5")

    run(body())


def test_R_17_pre_react_loop_shapes_are_upgraded(backend: BackendKit) -> None:
    """R-17 (the derive-messages half needs the live Session: checked on the user/message events instead)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("react", "/proj"))
        await store.append("react", pre_react_loop_log())
        expected_reasons = [norm for _stored, norm in PRE_REACT_TURN_END_REASONS]
        results = [await store.inspect("react"), await store.read_from("react", 0), await backend.make().load("react")]
        for result in results:
            events = wire(result.events)
            assert "steering/message" not in types_of(events)
            starts = [e["data"] for e in events if e["type"] == "turn/start"]
            assert starts == [{"turn": n} for n in range(1, 8)]
            ends = [e["data"] for e in events if e["type"] == "turn/end"]
            assert [d["reason"] for d in ends] == expected_reasons
            assert all(set(d) == {"turn", "reason"} for d in ends)
            texts = [e["data"]["content"][0]["text"] for e in events if e["type"] == "user/message"]
            assert texts == ["old prompt", "old steering"]
        suffix = wire((await store.read_from("react", 3)).events)
        assert (suffix[0]["type"], suffix[0]["seq"], suffix[0]["data"]["id"]) == ("user/message", 3, STEERING_MESSAGE_ID)
        assert all("step" not in e["data"] for e in suffix if e["type"] == "turn/end")

        await store.create(meta("flat", "/proj"))
        await store.append(
            "flat",
            [
                ev(
                    "steering/message",
                    0,
                    {"turn": 1, "content": [{"type": "text", "text": "flat steering"}], "source": {"kind": "user"}},
                    surfaceOp="append",
                )
            ],
        )
        flat = wire((await store.inspect("flat")).events)[0]
        assert flat["type"] == "user/message"
        assert (flat["data"]["id"], flat["data"]["role"]) == ("legacy-message:flat:0", "user")

        await store.create(meta("ext", "/proj"))
        await store.append("ext", [turn_start(0, 1), turn_end(1, 1, "extension-reason")])
        assert wire((await store.inspect("ext")).events)[1]["data"] == {"turn": 1, "reason": {"kind": "extension-reason"}}

    run(body())


def test_R_18a_wrong_role_is_corruption(backend: BackendKit) -> None:
    """R-18 (a)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("role", "/proj"))
        bad = user_message(0, "hi")
        bad["data"]["role"] = "assistant"
        await store.append("role", [bad])
        for call in (store.inspect("role"), store.load("role")):
            with pytest.raises(SessionPersistenceCorruptionError) as info:
                await call
            assert 'message must have role "user"' in str(info.value)
            assert str(info.value).startswith('stored session "role" failed validation: ')
            assert upstream_class_of(info.value) == "SessionPersistenceCorruptionError"

    run(body())


_MSG = {"id": "m", "role": "user", "content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}}


MALFORMED_SINGLE_EVENTS: dict[str, tuple[dict[str, Any], str]] = {
    "turn-start-null-trigger": (ev("turn/start", 0, {"turn": 1, "trigger": None}), "malformed pre-react-loop turn/start"),
    "steering-extra-key": (
        ev("steering/message", 0, {"turn": 1, "message": _MSG, "extra": 1}, surfaceOp="append"),
        "malformed pre-react-loop steering/message",
    ),
    "steering-null-data": (ev("steering/message", 0, None, surfaceOp="append"), "malformed pre-react-loop steering/message"),
    "completed-extra-key": (
        ev("turn/end", 0, {"turn": 1, "reason": {"kind": "completed", "extra": 1}}),
        "malformed pre-react-loop turn/end",
    ),
    "null-reason": (ev("turn/end", 0, {"turn": 1, "reason": None}), "malformed pre-react-loop turn/end"),
    "top-level-step": (
        ev("turn/end", 0, {"turn": 1, "step": 1, "reason": {"kind": "completed"}}),
        "malformed pre-react-loop turn/end",
    ),
    "aborted-extra-key": (
        ev("turn/end", 0, {"turn": 1, "reason": {"kind": "aborted", "extra": 1}}),
        "malformed pre-react-loop turn/end",
    ),
    "disposed-extra-key": (
        ev("turn/end", 0, {"turn": 1, "reason": {"kind": "disposed", "extra": 1}}),
        "malformed pre-react-loop turn/end",
    ),
    "error-negative-step": (
        ev("turn/end", 0, {"turn": 1, "reason": {"kind": "error", "step": -1, "failure": {"message": "m", "code": "C"}}}),
        "malformed pre-react-loop turn/end",
    ),
    "error-numeric-code": (
        ev("turn/end", 0, {"turn": 1, "reason": {"kind": "error", "step": 1, "message": "m", "code": 5}}),
        "malformed pre-react-loop turn/end",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED_SINGLE_EVENTS))
def test_R_18b_malformed_legacy_shapes_are_refused(backend: BackendKit, case: str) -> None:
    """R-18 (b): refused by inspect (wrapped as corruption) and read_from (unwrapped); append accepts them."""
    event, phrase = MALFORMED_SINGLE_EVENTS[case]

    async def body() -> None:
        store = backend.make()
        await store.create(meta("mal", "/proj"))
        await store.append("mal", [copy.deepcopy(event)])
        with pytest.raises(SessionPersistenceCorruptionError, match=phrase):
            await store.inspect("mal")
        with pytest.raises(SessionPersistenceError, match=phrase) as info:
            await store.read_from("mal", 0)
        assert not isinstance(info.value, SessionPersistenceCorruptionError)
        assert f"{phrase} at seq 0" in str(info.value)

    run(body())


def test_R_18c_tool_result_without_message(backend: BackendKit) -> None:
    """R-18 (c)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("nomsg", "/proj"))
        await store.append("nomsg", [ev("tool/result", 0, {"message": None}, surfaceOp="append")])
        with pytest.raises(SessionPersistenceCorruptionError, match="lacks an identified message"):
            await store.inspect("nomsg")

    run(body())


def test_R_18d_ignorable_unknown_event_passes(backend: BackendKit) -> None:
    """R-18 (d) / session-model §8 rule 19."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("plug", "/proj"))
        event = ev("plugin/test", 0, None, ignorable=True)
        await store.append("plug", [event])
        assert wire((await store.inspect("plug")).events) == [event]
        assert wire((await store.read_from("plug", 0)).events) == [event]
        assert (await store.inspect("plug")).events[0].ignorable is True

    run(body())


@pytest.mark.parametrize("etype", ["user/message", "assistant/message"])
def test_R_18e_empty_message_data_is_refused_by_read_from(backend: BackendKit, etype: str) -> None:
    """R-18 (e)."""

    async def body() -> None:
        store = backend.make()
        await store.create(meta("emptydata", "/proj"))
        await store.append("emptydata", [ev(etype, 0, {}, surfaceOp="append")])
        with pytest.raises(SessionPersistenceError, match="lacks an identified message"):
            await store.read_from("emptydata", 0)

    run(body())


def test_R_19_newer_version_is_refused(backend: BackendKit) -> None:
    """R-19 / jsonl §15 case 13 / session-model §8 rule 46."""

    async def body() -> None:
        await stored_one_turn(backend, "v99", "/proj", version=99)
        store = backend.make()
        for call in (store.load("v99"), store.inspect("v99"), store.read_from("v99", 0)):
            with pytest.raises(
                SessionFormatUnsupportedError, match=r"uses log format v99, .*written by a newer harness.*upgrade the harness"
            ) as info:
                await call
            assert upstream_class_of(info.value) == "SessionFormatUnsupportedError"
        # list() does not refuse foreign versions (jsonl §16 point 7).
        assert [h.version for h in await store.list()] == [99]

    run(body())


def test_R_20_older_version_is_refused(backend: BackendKit) -> None:
    """R-20."""

    async def body() -> None:
        await stored_one_turn(backend, "vneg", "/proj", version=-1)
        with pytest.raises(SessionFormatUnsupportedError, match=r"older than the supported v0.*no upgrade path"):
            await backend.make().load("vneg")

    run(body())


def test_R_21_unknown_event_type(backend: BackendKit) -> None:
    """R-21 / jsonl §15 case 91 / session-model §8 rule 19."""

    async def body() -> None:
        store = await stored_one_turn(backend, "future")
        await store.append("future", [ev("future/event", 6, {"x": 1})])
        for call in (store.load("future"), store.inspect("future"), store.read_from("future", 0)):
            with pytest.raises(SessionFormatUnsupportedError, match=r'event type "future/event" \(seq 6\).*not marked ignorable'):
                await call
        kept = await stored_one_turn(backend, "future-ok")
        ignorable = ev("future/event", 6, {"x": 1}, ignorable=True)
        await kept.append("future-ok", [ignorable])
        loaded = await backend.make().load("future-ok")
        assert wire(loaded.events)[6] == ignorable

    run(body())
