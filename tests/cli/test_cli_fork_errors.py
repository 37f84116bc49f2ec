"""A fork the command line refuses reports upstream's class, ``SessionForkError`` (issue 21 item 6).

Upstream's ``SessionStore.fork`` throws ``SessionForkError``; ours said ``Error``.  The refusal of a
turn that is not a completed one is upstream's ``INVALID_BOUNDARY``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessionkit import meta, one_turn_log, run

from app.cli import main
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.usefixtures("fast_fsync")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"

    async def body() -> None:
        store = JsonlSessionPersistence(folder)
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())
        await store.close()

    run(body())
    return folder


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _typed(out: str) -> dict[str, str]:
    payload = json.loads(out)
    assert list(payload) == ["error"] and set(payload["error"]) == {"class", "message"}
    return payload["error"]


def test_a_fork_refusal_reports_session_fork_error(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = _run(capsys, ["fork", str(root), "s1", "--after-turn", "7", "--json"])
    assert code == 1
    error = _typed(out)
    assert error["class"] == "SessionForkError"
    assert error["message"] == 'session "s1" has no completed turn 7 (completed: 1)'
    code, out, err = _run(capsys, ["fork", str(root), "s1", "--after-turn", "7"])
    assert (code, out) == (1, "")
    assert err.startswith("sessionscope: SessionForkError: ")
