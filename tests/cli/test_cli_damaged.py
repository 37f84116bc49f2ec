"""The command line on damaged logs (issue 24 items 5 and 10): ``stats`` counts a refused log's readable
part and names it by its title, on every backend, corrupt and unsupported alike."""

from __future__ import annotations

import json
from pathlib import Path

import damagedkit as dk
import pytest

from app.cli import main


@pytest.fixture(params=dk.BACKENDS)
def damaged(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    storage = dk.storage_of(str(request.param), tmp_path)
    dk.build_damaged(str(request.param), storage)
    return storage


@pytest.mark.parametrize("sid", [dk.CORRUPT, dk.UNSUPPORTED])
def test_stats_counts_a_damaged_sessions_readable_part(damaged: Path, sid: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(["stats", str(damaged), sid, "--json"])
    value = json.loads(capsys.readouterr().out)
    readable = dk.READABLE_EVENTS if sid == dk.CORRUPT else dk.READABLE_EVENTS + len(dk.later_turn())
    assert value["status"] == ("corrupt" if sid == dk.CORRUPT else "unsupported")
    assert value["events"] == readable and value["toolCalls"] == 1 and value["title"] == dk.TITLE[sid]
    main(["stats", str(damaged), sid])
    assert capsys.readouterr().out.splitlines()[0].startswith(dk.TITLE[sid])


def test_list_names_a_damaged_session_by_its_title(damaged: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["list", str(damaged), "--long", "--json"])
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    for sid, status in ((dk.CORRUPT, "corrupt"), (dk.UNSUPPORTED, "unsupported")):
        assert (rows[sid]["title"], rows[sid]["status"], rows[sid]["cwd"]) == (dk.TITLE[sid], status, dk.CWD)
    main(["list", str(damaged), "--long"])
    table = capsys.readouterr().out
    assert dk.TITLE[dk.CORRUPT] in table and dk.TITLE[dk.UNSUPPORTED] in table
