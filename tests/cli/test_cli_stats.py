"""``sessionscope stats PATH [ID]``: the Stats tab's numbers on the command line (issue 23)."""

from __future__ import annotations

import json
from pathlib import Path

import comparekit as ck
import pytest
from sessionkit import run

from app.cli import main
from app.insight import fold_stats
from app.paths import DATA_DIR_ENV
from persistence import open_store

pytestmark = pytest.mark.usefixtures("fast_fsync")

LOG = ck.log(
    ("set up the project", "done", ("bash",), 100),
    ("add a login page", "added", ("write_file", "bash", "bash"), 250),
)


@pytest.fixture(params=["jsonl-none", "sqlite"])
def store_path(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    backend = str(request.param)
    path = tmp_path / "store" / "sessions.sqlite" if backend == "sqlite" else tmp_path / "root"
    path.parent.mkdir(parents=True, exist_ok=True)

    async def body() -> None:
        store = open_store(str(path), backend)
        try:
            await store.create({"version": 0, "id": "s1", "createdAt": 1000, "cwd": "/w"})
            await store.append("s1", LOG)
        finally:
            await store.close()

    run(body())
    return path


def test_json_is_the_stats_tab_fold(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(store_path), "s1", "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    want = fold_stats(LOG)
    assert {k: value[k] for k in want.to_summary()} == json.loads(json.dumps(want.to_summary()))
    assert (value["session"], value["status"], value["cost"]) == ("s1", "ok", None)
    assert value["turns"] == 2 and value["toolCalls"] == 4 and value["tools"] == {"bash": [3, 0], "write_file": [1, 0]}
    assert value["tokens"]["input"] == 350
    assert [t["toolCalls"] for t in value["perTurn"]] == [1, 3]


def test_text_groups_the_numbers_as_the_tab_does(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(store_path), "s1"]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines()]
    assert lines[0] == "Untitled session — s1 · ok"
    for section in ("Activity", "Time", "Tokens", "Tools"):
        assert section in lines
    assert lines[lines.index("Activity") + 1].split() == ["Events", str(len(LOG))]
    assert "Tool calls  4" in " ".join(lines).replace("   ", "  ")
    tools = lines[lines.index("Tools") + 1 :]
    assert tools[0].split()[:2] == ["bash", "3"] and tools[1].split()[:2] == ["write_file", "1"]
    assert any(line.split()[:2] == ["Input", "350"] for line in lines)


def test_a_price_table_adds_the_cost(
    store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv(DATA_DIR_ENV, str(data))
    from app.insight import prices_path

    Path(prices_path()).write_text(
        json.dumps({"currency": "USD", "models": {"mock/mock": {"input": 1.0, "output": 2.0}}}), encoding="utf-8"
    )
    assert main(["stats", str(store_path), "s1", "--json"]) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert cost is not None and cost["currency"] == "USD" and cost["amount"] > 0


def test_an_unknown_session_is_not_found(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(store_path), "nope"]) == 1
    assert 'session "nope" not found' in capsys.readouterr().err
