"""A pasted id finds the event that carries it (issue 23, "Find any id"), on every backend.

Ids come from error reports: message ids (user, assistant, tool result), tool-call ids, retry and
request ids, approval and command ids, session ids.  They hold ``-``, ``_``, ``.`` and ``:``; a pasted
id matches as one whole substring, never as loose pieces spread over an event or a session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import searchkit as k
import sessionkit as sk

from app.cli import main

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]

USER_ID = "3f2a9c1e-7b44-4d0a-9e5f-0c1d2e3f4a5b"
ASSISTANT_ID = "msg_01HZX.final:7"
CALL_ID = "call_00_1tI3wUTPHroWmaPXR15NVFdT"
RESULT_ID = "tool-result-call_00_1tI3wUTPHroWmaPXR15NVFdT-5"
RETRY_ID = "retry:9d8c-77"
REQUEST_ID = "req_7f3a2b1c9d8e"
APPROVAL_ID = "appr-5511-xy"
CHILD_ID = "child-session-0b1e"
SESSION_ID = "sess-4c21-aa90"

# The id, the seq of the event that carries it, and the kind its hit has.
CARRIERS: dict[str, tuple[int | None, str]] = {
    USER_ID: (1, "user"),
    ASSISTANT_ID: (3, "assistant"),
    CALL_ID: (4, "tool-call"),
    RESULT_ID: (5, "tool-result"),
    RETRY_ID: (6, "error"),
    REQUEST_ID: (6, "error"),
    APPROVAL_ID: (7, "meta"),
    CHILD_ID: (8, "meta"),
    SESSION_ID: (None, "meta"),
}


def _log() -> list[dict[str, Any]]:
    return [
        sk.turn_start(0, 1),
        sk.user_message(1, "please run the tests", msg_id=USER_ID),
        sk.step_start(2, 1, 1),
        sk.assistant_message(3, 1, 1, "running them", calls=[CALL_ID], msg_id=ASSISTANT_ID),
        sk.ev("tool/call", 4, {"turn": 1, "step": 1, "callId": CALL_ID, "name": "bash", "arguments": '{"command":"pytest"}'}),
        {**sk.tool_result(5, 1, 1, CALL_ID, "3 passed", sourceEventSeqs=[4])},
        sk.ev(
            "llm/retry",
            6,
            {
                "retryId": RETRY_ID,
                "turn": 1,
                "step": 1,
                "provider": "mock",
                "mode": "always",
                "policyKey": "default",
                "retry": 1,
                "delayMs": 10,
                "failure": {"message": "overloaded", "code": "overloaded", "requestId": REQUEST_ID},
            },
        ),
        sk.ev("approval/asked", 7, {"id": APPROVAL_ID, "toolName": "bash", "callId": CALL_ID}),
        sk.ev("tool-workflow/agent-start", 8, {"runId": "run-1", "childId": CHILD_ID, "label": "helper"}),
        sk.step_end(9, 1, 1),
        sk.turn_end(10, 1),
    ]


def _other_log() -> list[dict[str, Any]]:
    """A session holding the pieces of the ids around ``-`` and ``_`` apart, and a sibling call id."""
    pieces = " ".join(USER_ID.split("-")) + " " + " ".join(CALL_ID.split("_")) + " req 7f3a2b1c9d8e"
    return [
        sk.turn_start(0, 1),
        sk.user_message(1, pieces, msg_id="8a8a8a8a-0000-4000-8000-000000000000"),
        sk.ev(
            "tool/call",
            2,
            {"turn": 1, "step": 1, "callId": "call_00_1tI3wUTPHroWmaPXR15NVFdX", "name": "bash", "arguments": "{}"},
        ),
        sk.turn_end(3, 1),
    ]


@pytest.fixture(params=k.BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path, backend: str) -> str:
    path = k.store_path(tmp_path, backend)
    k.run(k.write_session(path, backend, SESSION_ID, _log()))
    k.run(k.write_session(path, backend, "other", _other_log(), cwd="/w/other"))
    return path


def _search(root: str, backend: str, queries: list[str]) -> dict[str, set[tuple[str, int | None, str]]]:
    async def go() -> dict[str, set[tuple[str, int | None, str]]]:
        indexer = await k.indexed(root, backend)
        try:
            s = indexer.searcher()
            return {q: {(h.session_id, h.seq, h.kind) for h in s.search(q).hits} for q in queries}
        finally:
            await indexer.aclose()

    return k.run(go())


def test_every_id_kind_finds_the_event_that_carries_it(root: str, backend: str) -> None:
    got = _search(root, backend, list(CARRIERS))
    for ident, (seq, kind) in CARRIERS.items():
        hits = got[ident]
        assert (SESSION_ID, seq, kind) in hits, ident
        assert {h[0] for h in hits} == {SESSION_ID}, ident  # never the session holding its pieces apart


def test_a_call_id_finds_its_call_and_its_result(root: str, backend: str) -> None:
    hits = _search(root, backend, [CALL_ID])[CALL_ID]
    seqs = {h[1] for h in hits}
    assert {4, 5}.issubset(seqs)  # the tool/call and the tool/result that answers it
    assert all(h[0] == SESSION_ID for h in hits)


def test_a_partial_id_does_not_produce_a_wrong_session(root: str, backend: str) -> None:
    head = CALL_ID[:-1]  # shared with the other session's sibling call id
    tail_less = USER_ID[:23]  # only this session's message id starts so
    got = _search(root, backend, [head, tail_less, f'"{USER_ID}"', "7f3a2b1c9d8e-zz"])
    assert {h[0] for h in got[head]} == {SESSION_ID, "other"}  # both really hold it
    assert {h[0] for h in got[tail_less]} == {SESSION_ID}
    assert {(h[0], h[1]) for h in got[f'"{USER_ID}"']} == {(SESSION_ID, 1)}  # quoted: the same as bare
    assert got["7f3a2b1c9d8e-zz"] == set()  # an id nobody has finds nothing, not its pieces


def test_sessionscope_search_finds_each_id(root: str, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    for ident, (seq, kind) in CARRIERS.items():
        assert main(["search", root, ident, "--json"]) == 0, ident
        value = json.loads(capsys.readouterr().out)
        assert [r["session"] for r in value["results"]] == [SESSION_ID], ident
        found = {(h["seq"], h["kind"]) for h in value["results"][0]["hits"]}
        assert (seq, kind) in found, ident
