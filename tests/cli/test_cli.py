"""``sessionscope`` command line: ``--json`` results and the ``{"error": {"class", "message"}}`` failure shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessionkit import artifact, meta, one_turn_log, open_turn2, run

from app.cli import main
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.usefixtures("fast_fsync")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log() + open_turn2())

    run(body())
    return tmp_path


def _json_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, str]:
    assert main(argv) == 1
    out = capsys.readouterr().out
    payload = json.loads(out)
    assert list(payload) == ["error"]
    assert set(payload["error"]) == {"class", "message"}
    return payload["error"]


def test_json_error_not_found(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _json_error(capsys, ["inspect", str(root), "missing", "--json"]) == {
        "class": "Error",
        "message": 'session "missing" not found',
    }


def test_json_error_corruption_class(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = artifact(root, "/proj", "s1", "zstd")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    error = _json_error(capsys, ["load", str(root), "s1", "--json"])
    assert error["class"] == "Error"
    assert error["message"].startswith("corrupt Zstandard session log: frame at byte ")


def test_json_error_format_refusal_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        await store.create(meta("v9", "/proj", version=9))
        await store.append("v9", one_turn_log())

    run(body())
    error = _json_error(capsys, ["read-from", str(tmp_path), "v9", "0", "--json"])
    assert error["class"] == "SessionFormatUnsupportedError"
    assert "written by a newer harness" in error["message"]


def test_json_error_argument_class(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = _json_error(capsys, ["read-from", str(root), "s1", "-1", "--json"])
    assert error == {"class": "TypeError", "message": "readFrom fromSeq must be a non-negative safe integer, got -1"}


def test_error_without_json_goes_to_stderr(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(root), "missing"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == 'sessionscope: Error: session "missing" not found'


def test_json_results(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = artifact(root, "/proj", "s1", "zstd")
    before = path.read_bytes()
    assert main(["list", str(root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"version": 0, "id": "s1", "createdAt": 1000, "cwd": "/proj", "delegationDepth": 0}
    ]
    assert main(["inspect", str(root), "s1", "--json"]) == 0
    inspected = json.loads(capsys.readouterr().out)
    assert [e["type"] for e in inspected["events"]][-2:] == ["step/end", "turn/end"]
    assert path.read_bytes() == before  # inspect never writes
    assert main(["read-from", str(root), "s1", "6", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["events"] == open_turn2()
    assert main(["locate", str(root), "s1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"kind": "jsonl", "path": str(path)}
