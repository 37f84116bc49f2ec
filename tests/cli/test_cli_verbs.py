"""The verb table of ``sessionscope``: how each verb opens its store comes from the table, nowhere else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sessionkit import meta, one_turn_log, open_turn2, run

import app.cli.run as cli_run
from app.cli import main
from app.cli.verbs import VERBS, VERBS_BY_NAME
from persistence import JsonlSessionPersistence, open_store

pytestmark = pytest.mark.usefixtures("fast_fsync")

READ_ONLY = {
    "list",
    "snapshots",
    "inspect",
    "read-from",
    "raw",
    "locate",
    "backups",
    "verify",
    "search",
    "export",
    "diff",
    "stats",
    "show",
}
WRITABLE = {"load", "repair", "restore", "fork", "resume"}


def test_the_table_names_every_verb_once() -> None:
    names = [v.name for v in VERBS]
    assert names == [
        "list",
        "snapshots",
        "inspect",
        "read-from",
        "raw",
        "locate",
        "load",
        "repair",
        "backups",
        "restore",
        "fork",
        "resume",
        "verify",
        "search",
        "export",
        "diff",
        "stats",
        "show",
    ]
    assert set(VERBS_BY_NAME) == READ_ONLY | WRITABLE
    assert {v.name for v in VERBS if v.read_only} == READ_ONLY
    assert [v.name for v in VERBS if v.read_only_if] == ["repair"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log() + open_turn2())

    run(body())
    return tmp_path


def test_each_verb_opens_its_store_as_the_table_says(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    opened: list[tuple[bool, bool]] = []

    def recording_open_store(path: Any, backend: Any = None, **kw: Any) -> Any:
        opened.append((kw["read_only"], kw["create"]))
        return open_store(path, backend, **kw)

    monkeypatch.setattr(cli_run, "open_store", recording_open_store)
    argvs = {
        "list": [],
        "snapshots": [],
        "verify": [],
        "inspect": ["s1"],
        "read-from": ["s1", "0"],
        "raw": ["s1"],
        "locate": ["s1"],
        "backups": ["s1"],
        "load": ["s1"],
        "fork": ["s1", "--after-turn", "1", "--id", "c"],
        "resume": ["s1", "--print", "--force"],
        "restore": ["s1", "--backup", "/nowhere"],
    }
    for name, rest in argvs.items():
        opened.clear()
        main([name, str(root), *rest])
        assert opened == [(name in READ_ONLY, False)], name
    opened.clear()
    main(["repair", str(root), "s1", "--dry-run"])
    main(["repair", str(root), "s1", "--force"])
    assert opened == [(True, False), (False, False)]
    capsys.readouterr()
