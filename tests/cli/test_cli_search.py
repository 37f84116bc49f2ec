"""``sessionscope search ROOT QUERY`` and the window launcher's ``--seq`` / ``sessionscope://`` arguments."""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path
from typing import Any

import pytest
from sessionkit import meta, one_turn_log, run, user_message

from app.cli import main
from app.cli import run as cli_run
from app.links import make_link
from app.paths import CACHE_DIR_ENV
from persistence import JsonlSessionPersistence, open_store

pytestmark = pytest.mark.usefixtures("fast_fsync")


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The verb's index goes to tmp_path, never to the user's cache."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def _events(prompt: str, command: str) -> list[dict[str, Any]]:
    log = one_turn_log()
    user = next(i for i, e in enumerate(log) if e["type"] == "user/message")
    log[user] = user_message(log[user]["seq"], prompt)
    for i, e in enumerate(log):
        if e["type"] == "tool/call":
            log[i] = {**e, "data": {**e["data"], "name": "bash", "arguments": json.dumps({"command": command})}}
    return log


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"

    async def body() -> None:
        store = JsonlSessionPersistence(folder)
        await store.create(meta("s1", "/home/dev/webshop"))
        await store.append("s1", _events("Why is `npm run build` so slow?", "npm run build -- --profile"))
        await store.create(meta("s2", "/home/dev/parser"))
        await store.append("s2", _events("Read src/models/order.ts please", "cat src/models/order.ts"))
        await store.close()

    run(body())
    return folder


def test_prints_one_hit_per_line(root: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(root), "order.ts"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines
    for line in lines:
        session, seq, kind, snippet = line.split("\t")
        assert session == "s2" and (seq == "-" or seq.isdigit()) and kind and "order.ts" in snippet.lower()
    assert "hits in 1 session" in err or "hit in 1 session" in err
    assert "created the search index" in err
    # The index is in the cache folder, never in the root.
    assert glob.glob(str(cache / "**" / "*.sqlite"), recursive=True)
    assert not [p for p in root.rglob("*.sqlite*")]


def test_phrase_kind_project_limit_and_json(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(root), '"npm run build"', "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert value["sessions"] == 1 and value["results"][0]["session"] == "s1"
    assert value["summary"].endswith("in 1 session")
    kinds = {h["kind"] for h in value["results"][0]["hits"]}
    assert "user" in kinds
    assert main(["search", str(root), "npm", "--kind", "user", "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert {h["kind"] for r in value["results"] for h in r["hits"]} == {"user"}
    assert main(["search", str(root), "order.ts OR npm", "--project", "parser", "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert [r["session"] for r in value["results"]] == ["s2"]
    assert main(["search", str(root), "order.ts OR npm", "--limit", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1


def test_bad_query_is_exit_1_with_one_clear_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for query, said in (
        ('"npm run', "unclosed quote"),
        ("order.ts AND", "ends with an operator"),
        ("(build", "unclosed parenthesis"),
    ):
        assert main(["search", str(root), query]) == 1
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith("sessionscope search: ") and said in err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["search", str(root), '"npm run', "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["error"]["class"] == "SearchQueryError" and "unclosed quote" in payload["error"]["message"]
    assert main(["search", str(root), "npm", "--kind", "bogus"]) == 1
    assert "unknown kind bogus" in capsys.readouterr().err
    assert main(["search", str(root), "npm", "--limit", "0"]) == 1
    assert "--limit" in capsys.readouterr().err


def test_no_hits_says_what_was_searched(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(root), "zebrafish", "--kind", "tool-call"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "No hits for 'zebrafish'" in err and "tool-call" in err


def test_reindex_rebuilds_and_appends_are_found(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(root), "order.ts"]) == 0
    capsys.readouterr()

    async def append() -> None:
        store = JsonlSessionPersistence(root)
        await store.create(meta("s3", "/home/dev/new"))
        await store.append("s3", _events("the zebrafish deploy", "echo zebrafish"))
        await store.close()

    run(append())
    assert main(["search", str(root), "zebrafish"]) == 0
    assert {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()} == {"s3"}
    assert main(["search", str(root), "zebrafish", "--reindex"]) == 0
    out, err = capsys.readouterr()
    assert {line.split("\t")[0] for line in out.splitlines()} == {"s3"}
    assert "rebuild" in err or "--reindex" in err


def test_sqlite_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store" / "sessions.sqlite"
    path.parent.mkdir()

    async def body() -> None:
        store = open_store(str(path), "sqlite")
        await store.create(meta("q1", "/srv/infra"))
        await store.append("q1", _events("terraform apply on the staging bucket", "terraform apply"))
        await store.close()

    run(body())
    assert main(["search", str(path), "staging bucket", "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert value["results"][0]["session"] == "q1"
    assert main(["search", str(path), '"npm run', "--backend", "sqlite"]) == 1


def test_a_root_that_cannot_be_opened_is_the_usual_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bogus = tmp_path / "not-a-store.sqlite"
    bogus.write_bytes(b"plain text, not a database" * 10)
    assert main(["search", str(bogus), "x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sessionscope: ") and "Traceback" not in err


# ---------------------------------------------------------------- the window launcher's arguments


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    calls: list[argparse.Namespace] = []
    monkeypatch.setattr(cli_run, "launch_gui", lambda args: calls.append(args) or 0)
    return calls


def test_seq_opens_the_window_at_the_event(launched: list[argparse.Namespace]) -> None:
    assert main(["--root", "/r", "--session", "s1", "--seq", "12"]) == 0
    (args,) = launched
    assert (args.root, args.session, args.seq) == ("/r", "s1", 12)


def test_seq_needs_a_session(launched: list[argparse.Namespace], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--root", "/r", "--seq", "12"])
    assert exc.value.code == 2 and "--seq needs --session" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--root", "/r", "--session", "s", "--seq", "-1"])
    assert not launched


def test_a_link_as_the_only_argument_opens_the_window_there(launched: list[argparse.Namespace]) -> None:
    url = make_link("/home/ana/.dsh/sessions", "5f31cbc4-6d33", 412)
    assert main([url]) == 0
    (args,) = launched
    assert (args.root, args.session, args.seq, args.demo, args.screenshot) == (
        "/home/ana/.dsh/sessions",
        "5f31cbc4-6d33",
        412,
        False,
        None,
    )


def test_a_bad_link_is_exit_1_with_a_message(launched: list[argparse.Namespace], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessionscope://open?root=%2Fr&seq=3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sessionscope: cannot open the link: ") and "session id" in err
    assert main(["sessionscope://open?root=%2Fr&session=s&seq=x"]) == 1
    assert "seq must be" in capsys.readouterr().err
    assert main(["sessionscope://open?root=%2Fr&session=s", "--demo"]) == 2
    assert not launched
