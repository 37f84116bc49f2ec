"""``sessionscope search``'s logic (``run_search``) and the cache folder it writes to."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import searchkit as k
import sessionkit as sk

from app import paths
from app.search import run_search

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]


@pytest.fixture(params=["jsonl-zstd", "sqlite"])
def root(tmp_path: Path, request: pytest.FixtureRequest) -> str:
    backend = str(request.param)
    path = k.store_path(tmp_path, backend)
    k.run(k.write_session(path, backend, "s1", k.rich_log()))
    k.run(
        k.write_session(
            path, backend, "s2", [sk.turn_start(0, 1), sk.user_message(1, "order.ts in infra"), sk.turn_end(2, 1)], cwd="/w/infra"
        )
    )
    return path


def test_text_output_is_one_hit_per_line_and_the_count_goes_to_notes(root: str) -> None:
    out = run_search(root, "order.ts")
    assert out.code == 0
    lines = out.text.splitlines()
    assert len(lines) == 4
    fields = [line.split("\t") for line in lines]
    assert {(f[0], f[1], f[2]) for f in fields} == {
        ("s1", "1", "user"),
        ("s1", "13", "tool-call"),
        ("s1", "14", "error"),
        ("s2", "1", "user"),
    }
    assert all("order.ts" in f[3].lower() for f in fields)
    assert out.notes.splitlines()[-1] == "4 hits in 2 sessions"
    assert "created the search index" in out.notes


def test_filters_limit_and_json(root: str) -> None:
    out = run_search(root, "order.ts", project="infra", json=True)
    value = json.loads(out.text)
    assert (value["hits"], value["sessions"], value["exact"]) == (1, 1, True)
    assert value["results"][0]["session"] == "s2"
    assert value["results"][0]["hits"][0]["seq"] == 1 and value["results"][0]["hits"][0]["spans"]
    out = run_search(root, "order.ts", kind="tool-call,error")
    assert sorted(line.split("\t")[2] for line in out.text.splitlines()) == ["error", "tool-call"]
    out = run_search(root, "order.ts", limit=1)
    assert len(out.text.splitlines()) == 1 and out.notes.splitlines()[-1] == "4 hits in 2 sessions"


def test_no_hits_says_what_was_searched(root: str) -> None:
    out = run_search(root, "nothing-like-this", kind="user")
    assert (out.code, out.text) == (0, "")
    assert "No hits for 'nothing-like-this' in kind user" in out.notes


@pytest.mark.parametrize("query", ['"unclosed', "a OR", "(abc"])
def test_a_bad_query_exits_1_with_a_clear_message(root: str, query: str, private_cache: Path) -> None:
    out = run_search(root, query)
    assert out.code == 1 and out.text == ""
    assert out.notes.startswith("sessionscope search: ") and "Traceback" not in out.notes
    payload = json.loads(run_search(root, query, json=True).text)
    assert payload["error"]["class"] == "SearchQueryError" and payload["error"]["message"]
    assert not private_cache.exists()  # refused before anything was indexed


def test_a_bad_kind_or_limit_exits_1(root: str) -> None:
    out = run_search(root, "x", kind="toolcall")
    assert out.code == 1 and "unknown kind toolcall" in out.notes
    assert run_search(root, "abc", limit=0).code == 1


def test_reindex_rebuilds(root: str) -> None:
    assert run_search(root, "order.ts").code == 0
    out = run_search(root, "order.ts", reindex=True)
    assert out.code == 0 and "--reindex" in out.notes and out.report is not None and out.report.done == 2


def test_a_missing_root_exits_1(tmp_path: Path) -> None:
    out = run_search(str(tmp_path / "nope.sqlite"), "abc", backend="sqlite")
    assert out.code == 1 and "does not exist" in out.notes


def test_cache_dir_rules(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(paths.CACHE_DIR_ENV, str(tmp_path / "override"))
    assert paths.cache_dir() == str(tmp_path / "override")
    monkeypatch.delenv(paths.CACHE_DIR_ENV)
    monkeypatch.setattr(paths.sys, "platform", "linux")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir() == os.path.join(str(tmp_path / "xdg"), "sessionscope")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    assert paths.cache_dir() == os.path.join(str(tmp_path / "home"), ".cache", "sessionscope")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert paths.cache_dir() == os.path.join(str(tmp_path / "home"), ".cache", "sessionscope")
    monkeypatch.setattr(paths.sys, "platform", "darwin")
    assert paths.cache_dir() == os.path.join(str(tmp_path / "home"), "Library", "Caches", "SessionScope")
    monkeypatch.setattr(paths.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert paths.cache_dir() == os.path.join(str(tmp_path / "local"), "SessionScope", "Cache")
