"""``sessionscope diff PATH_A [PATH_B] [--id-a ID] [--id-b ID]``: any two sessions, from any two sources (issue 23)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import comparekit as ck
import pytest
from sessionkit import artifact, run

from app.cli import main
from persistence import open_store

pytestmark = pytest.mark.usefixtures("fast_fsync")

A = ck.log(("set up the project", "done", ("bash",), 100), ("add a login page", "added", ("write_file",), 200))
B = ck.log(
    ("set up the project", "done", ("bash",), 100),
    ("add a login page", "added it differently", ("write_file", "bash"), 300),
)


def _write(path: Path, backend: str, sessions: dict[str, list[dict[str, Any]]]) -> None:
    async def body() -> None:
        store = open_store(str(path), backend)
        try:
            for sid, events in sessions.items():
                await store.create({"version": 0, "id": sid, "createdAt": 1000, "cwd": "/w/proj"})
                await store.append(sid, events)
        finally:
            await store.close()

    run(body())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    _write(folder, "jsonl-none", {"a": A, "b": B, "a2": list(A)})
    return folder


def test_two_sessions_of_one_root(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(root), "--id-a", "a", "--id-b", "b", "--json"]) == 1  # they differ: exit 1
    value = json.loads(capsys.readouterr().out)
    assert (value["a"]["session"], value["b"]["session"]) == ("a", "b")
    assert value["firstDifference"] == 1
    assert [r["status"] for r in value["rows"]] == ["same", "changed"]
    assert value["rows"][1]["toolsDiffer"] == [{"tool": "bash", "a": 0, "b": 1}]
    assert (value["a"]["tokens"]["input"], value["b"]["tokens"]["input"]) == (300, 400)
    assert main(["diff", str(root), "--id-a", "a", "--id-b", "a2"]) == 0  # the same turns: exit 0
    out = capsys.readouterr().out
    assert "2 same, 0 changed" in out


def test_text_names_the_first_difference_and_totals(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(root), "--id-a", "a", "--id-b", "b"]) == 1
    out = capsys.readouterr().out
    assert "First difference: row 2, turn #2 of A / #2 of B: same prompt, different run." in out
    assert "tool bash: 0 call(s) in A, 1 in B" in out
    tokens = next(line for line in out.splitlines() if line.startswith("tokens"))
    assert tokens.split()[1:] == ["330", "440"]  # input + output of each side


@pytest.mark.parametrize("backend", ["jsonl-zstd", "sqlite"])
def test_sessions_of_two_sources(root: Path, tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    store = other / "sessions.sqlite" if backend == "sqlite" else other
    if backend == "sqlite":
        other.mkdir()
    _write(store, backend, {"only": B})
    # The other source holds one session: its id may be left out.
    assert main(["diff", str(root), str(store), "--id-a", "a", "--json"]) == 1
    value = json.loads(capsys.readouterr().out)
    assert value["b"]["session"] == "only" and value["firstDifference"] == 1


def test_a_lone_transcript_file_against_a_root(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    received = tmp_path / "mail" / "customer log.txt"
    received.parent.mkdir()
    shutil.copyfile(artifact(root, "/w/proj", "b", "none"), received)
    before = received.read_bytes(), received.stat().st_mtime_ns
    assert main(["diff", str(received), str(root), "--id-b", "b", "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert value["identical"] is True and value["a"]["session"] == "b"
    assert (received.read_bytes(), received.stat().st_mtime_ns) == before  # a read never writes


def test_an_ambiguous_side_is_a_usage_error_naming_the_ids(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", str(root), "--id-b", "b"])
    assert code == 2
    err = capsys.readouterr().err
    assert "holds 3 sessions" in err and "a2" in err
