"""Every failure of the command line in the typed form (issue 21 items 6 and 8).

A usage error (argparse's) is ``{"error": {"class", "message"}}`` on stdout under ``--json`` and one
``sessionscope: <class>: <message>`` line on stderr otherwise, exit 2, never the usage text.  A query
that starts with a dash is accepted after ``--``.  A root that does not exist is an error (exit 2, "no
session root at PATH") and nothing is created for it, not even a search index.  A failure that is not
the engine's own (an OS or codec error) still carries a clean message, and a fork refusal or a live
append of data that does not survive a JSON round trip reports the class upstream throws.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sessionkit import meta, one_turn_log, open_turn2, run

from app.cli import error_payload, main
from app.paths import CACHE_DIR_ENV
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.usefixtures("fast_fsync")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The search verb's index folder, private to the test."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"

    async def body() -> None:
        store = JsonlSessionPersistence(folder)
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())
        await store.create(meta("open", "/proj"))
        await store.append("open", one_turn_log() + open_turn2())
        await store.close()

    run(body())
    return folder


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of one in-process run; a usage error exits like argparse (SystemExit)."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def _typed(out: str) -> dict[str, str]:
    payload = json.loads(out)
    assert list(payload) == ["error"] and set(payload["error"]) == {"class", "message"}
    return payload["error"]


# ---------------------------------------------------------------- item 6: usage errors, "--"


def test_a_query_after_dashdash_may_start_with_a_dash(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["search", str(root), "--json", "--", "-foo"])
    assert (code, err) == (0, "")
    assert json.loads(out)["query"] == "-foo"
    # Options may come after the query too; after "--" even "--json" is query text.
    code, out, _err = _run(capsys, ["search", str(root), "--", "-foo", "--json"])
    assert code == 2 and "usage:" not in out
    code, out, err = _run(capsys, ["search", str(root), "--json", "--", "--json"])
    assert (code, err) == (0, "")
    assert json.loads(out)["query"] == "--json"


@pytest.mark.parametrize(
    ("argv", "phrase"),
    [
        (["search", "ROOT", "q", "-foo"], "unrecognized arguments: -foo"),
        (["search", "ROOT", "-foo"], "the following arguments are required: QUERY"),
        (["read-from", "ROOT", "s1", "notanumber"], "invalid int value: 'notanumber'"),
        (["list", "ROOT", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["frobnicate", "ROOT"], "invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_are_typed_under_json(root: Path, capsys: pytest.CaptureFixture[str], argv: list[str], phrase: str) -> None:
    argv = [str(root) if a == "ROOT" else a for a in argv]
    code, out, err = _run(capsys, [*argv, "--json"])
    assert (code, err) == (2, "")
    error = _typed(out)
    assert error["class"] == "TypeError"  # argument validation, as upstream's TypeError
    assert phrase in error["message"]
    assert "usage:" not in error["message"] and "\n" not in error["message"]


def test_usage_error_without_json_is_one_clean_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["search", str(root), "-foo"])
    assert (code, out) == (2, "")
    assert (
        err == "sessionscope: TypeError: search: the following arguments are required: QUERY (see sessionscope search --help)\n"
    )


def test_usage_error_in_a_subprocess_exits_2_with_one_line(root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "search", str(root), "q", "--json", "-foo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, CACHE_DIR_ENV: str(root.parent / "cache")},
    )
    assert done.returncode == 2 and done.stderr == ""
    assert "unrecognized arguments: -foo" in _typed(done.stdout)["message"]


# ---------------------------------------------------------------- item 6: clean messages, upstream's classes


def test_a_codec_error_is_a_clean_engine_error() -> None:
    with pytest.raises(UnicodeDecodeError) as info:
        b"ab\xffcd".decode("utf-8")
    payload = error_payload(info.value)["error"]
    assert payload["class"] == "Error"
    assert "codec" not in payload["message"]
    assert payload["message"] == "bytes that are not valid UTF-8 (0xff at byte 2)"


# ---------------------------------------------------------------- item 8: a root that does not exist


@pytest.mark.parametrize("verb", [["list"], ["verify"], ["snapshots"], ["inspect", "s1"], ["search", "needle"]])
def test_a_missing_root_is_an_error_and_nothing_is_created(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], verb: list[str]
) -> None:
    missing = tmp_path / "nowhere"
    argv = [verb[0], str(missing), *verb[1:]]
    code, out, err = _run(capsys, argv)
    assert (code, out) == (2, "")
    assert err == f"sessionscope: Error: no session root at {missing}\n"
    code, out, err = _run(capsys, [*argv, "--json"])
    assert (code, err) == (2, "")
    assert _typed(out) == {"class": "Error", "message": f"no session root at {missing}"}
    assert not os.path.lexists(missing)
    assert not [p for p in cache.rglob("*") if p.is_file()]  # no search index for it


def test_a_dangling_link_is_no_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "gone")
    code, _out, err = _run(capsys, ["list", str(link)])
    assert code == 2 and err == f"sessionscope: Error: no session root at {link}\n"
    assert not (tmp_path / "gone").exists()
