"""The JS class upstream throws, for every backend (issue 21 item 6).

``upstream_class_of`` is what the command line and the conformance replay report.  Upstream's
``SessionStore.fork`` throws ``SessionForkError`` (its own name, not ``Error``); a live ``Session``
refuses data that does not survive a JSON round trip (``-0``, ``NaN``) with a plain ``Error``, while the
persistence coordinator's ``append`` refuses the same data with a ``TypeError`` (persistence-contract
§12.1, verified against the oracle).  Python callers may still catch the live refusal as the argument
error (``SessionArgumentError``) it is.
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_backends import BackendKit
from livekit import append_log, live, run_virtual
from sessionkit import WORK, one_turn_log, open_turn2, run, user_message

from persistence import SessionArgumentError, SessionForkError, upstream_class_of
from persistence.session import Session

NOT_ROUND_TRIPPING: dict[str, Any] = {"negative-zero": -0.0, "nan": float("nan")}


@pytest.mark.parametrize("case", sorted(NOT_ROUND_TRIPPING))
def test_live_append_of_data_that_does_not_round_trip_is_upstreams_plain_error(backend: BackendKit, case: str) -> None:
    async def body() -> None:
        async with live(backend) as store:
            s = await store.create("s", meta={"cwd": WORK})
            refusal = 'session event "turn/start" carries non-JSON-serializable data'
            with pytest.raises(SessionArgumentError, match=refusal) as info:
                s.append("turn/start", {"turn": 1, "x": NOT_ROUND_TRIPPING[case]})
            assert upstream_class_of(info.value) == "Error"
            assert s.seq == 0

    run_virtual(body())


def test_a_seed_that_does_not_round_trip_is_upstreams_plain_error() -> None:
    seed = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "x": -0.0}}]
    with pytest.raises(SessionArgumentError, match="seed event at index 0 is not losslessly JSON-serializable") as info:
        Session({"version": 0, "id": "s", "createdAt": 1}, seed=seed)
    assert upstream_class_of(info.value) == "Error"


def test_a_header_that_does_not_round_trip_is_upstreams_plain_error() -> None:
    with pytest.raises(SessionArgumentError, match="session header is not losslessly JSON-serializable") as info:
        Session({"version": 0, "id": "s", "createdAt": 1, "agentPreset": float("nan")})
    assert upstream_class_of(info.value) == "Error"


def test_coordinator_append_of_negative_zero_stays_a_type_error(backend: BackendKit) -> None:
    """The persistence boundary is upstream's ``TypeError`` (unchanged): only the live Session's refusal is ``Error``."""

    async def body() -> None:
        store = backend.make()
        await store.create({"version": 0, "id": "nz", "createdAt": 1000, "cwd": WORK})
        bad = user_message(0, "hi")
        bad["data"]["extra"] = -0.0
        with pytest.raises(TypeError) as info:
            await store.append("nz", [bad])
        assert upstream_class_of(info.value) == "TypeError"

    run(body())


def test_fork_refusals_report_session_fork_error(backend: BackendKit) -> None:
    async def body() -> None:
        async with live(backend) as store:
            src = await store.create("src", meta={"cwd": WORK})
            append_log(src, one_turn_log() + open_turn2())
            for kwargs, code in (
                ({"boundary": len(src.events) - 1}, "OPEN_TURN"),
                ({"boundary": -1}, "INVALID_BOUNDARY"),
                ({"boundary": 0, "new_id": "src"}, "SESSION_ALREADY_EXISTS"),
            ):
                with pytest.raises(SessionForkError) as info:
                    await store.fork("src", **kwargs)
                assert info.value.code == code
                assert upstream_class_of(info.value) == "SessionForkError"
            with pytest.raises(SessionForkError) as missing:
                await store.fork("nowhere")
            assert upstream_class_of(missing.value) == "SessionForkError"

    run_virtual(body())
