"""The command line never shows a traceback for bad input (issue 10 item 11).

Lone surrogates in ids, cwds and event text, 100k-deep nesting, non-UTF-8 bytes in argv and
10k-character ids each end as the data or as ``{"error": {"class", "message"}}`` with exit 1
(text mode: one line on stderr), and a failed verb writes nothing.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sessionkit import ev, meta, one_turn_log, run, user_message

from app.cli import main
from persistence import JsonlSessionPersistence
from persistence.model.jsontext import js_loads

pytestmark = pytest.mark.usefixtures("fast_fsync")

REPO = Path(__file__).resolve().parents[2]
ODD_ID = "s\ud800x"
ODD_CWD = "/proj\udc01"


def _deep(depth: int) -> list[Any]:
    root: list[Any] = []
    cur = root
    for _ in range(depth - 1):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    return root


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta(ODD_ID, ODD_CWD))
        log = one_turn_log()
        log[1] = user_message(1, "lone \udc00 half", "one-turn-user")
        await store.append(ODD_ID, log)
        await store.create(meta("parent", "/proj"))
        await store.append("parent", one_turn_log())

    run(body())
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, str]:
    code, out, err = _run(capsys, [*argv, "--json"])
    assert (code, err) == (1, "")
    payload = json.loads(out)
    assert list(payload) == ["error"] and set(payload["error"]) == {"class", "message"}
    return payload["error"]


# ---------------------------------------------------------------- lone surrogates


def test_json_output_keeps_lone_surrogates_as_escapes(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["list", str(root), "--json"])
    assert (code, err) == (0, "")
    assert "\\ud800" in out and "\\udc01" in out  # JSON escapes, as the engine writes them in its own files
    rows = {h["id"]: h for h in json.loads(out)}
    assert rows[ODD_ID]["cwd"] == ODD_CWD
    code, out, err = _run(capsys, ["inspect", str(root), ODD_ID, "--json"])
    assert (code, err) == (0, "")
    events = json.loads(out)["events"]
    assert events[1]["data"]["content"][0]["text"] == "lone \udc00 half"


def test_text_output_escapes_lone_surrogates(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["list", str(root)])
    assert (code, err) == (0, "")
    assert "s\\ud800x\t/proj\\udc01\t1000" in out.splitlines()
    code, out, err = _run(capsys, ["inspect", str(root), ODD_ID])
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "session s\\ud800x  (6 events)"


def test_error_naming_a_lone_surrogate_id(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _error(capsys, ["inspect", str(root), "no\ud800pe"]) == {"class": "Error", "message": 'session "no\ud800pe" not found'}
    code, out, err = _run(capsys, ["inspect", str(root), "no\ud800pe"])
    assert (code, out) == (1, "")
    assert err == 'sessionscope: Error: session "no\\ud800pe" not found\n'


def test_output_to_a_narrow_stdout_never_crashes(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stdout that cannot encode a character still gets every line (as escapes), never a traceback."""
    for argv, check in ((["inspect", str(root), ODD_ID, "--json"], "json"), (["list", str(root)], "text")):
        raw = io.BytesIO()
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii", errors="strict"))
        assert main(argv) == 0
        sys.stdout.flush()
        text = raw.getvalue().decode("ascii")
        if check == "json":
            assert json.loads(text)["meta"]["cwd"] == ODD_CWD
        else:
            assert "s\\ud800x\t/proj\\udc01\t1000" in text.splitlines()


# ---------------------------------------------------------------- deep nesting


def test_deeply_nested_event_data(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def body() -> None:
        store = JsonlSessionPersistence(root)
        await store.create(meta("deep", "/proj"))
        await store.append("deep", [ev("plugin/deep", 0, {"turn": _deep(100_000)}, ignorable=True)])

    run(body())
    for verb in (["inspect", str(root), "deep"], ["read-from", str(root), "deep", "0"]):
        code, out, err = _run(capsys, [*verb, "--json"])
        assert (code, err) == (0, "")
        assert out.count("[") == 100_000 + 1  # the nesting plus the events array
        if verb[0] == "inspect":  # parsing it back (iteratively: json.loads would recurse) is slow; once
            data = js_loads(out.strip())["events"][0]["data"]["turn"]
            depth = 0
            while data:
                data = data[0]
                depth += 1
            assert depth == 99_999
        code, out, err = _run(capsys, verb)  # the text line summarizes data["turn"] without recursing
        assert (code, err) == (0, "")
        assert "plugin/deep" in out


# ---------------------------------------------------------------- non-UTF-8 argv


def test_non_utf8_ids_are_refused_before_anything_is_written(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(root)
    bad = os.fsdecode(b"x\xff")  # how Python hands over argv bytes that are not UTF-8
    error = _error(capsys, ["fork", str(root), "parent", "--after-turn", "1", "--id", bad])
    assert error["class"] == "TypeError"
    assert error["message"] == "new session id is not valid UTF-8: b'x\\xff'"
    assert _error(capsys, ["inspect", str(root), bad])["message"] == "session id is not valid UTF-8: b'x\\xff'"
    code, out, err = _run(capsys, ["fork", str(root), "parent", "--after-turn", "1", "--id", bad])
    assert (code, out) == (1, "")
    assert err == "sessionscope: TypeError: new session id is not valid UTF-8: b'x\\xff'\n"
    assert _files(root) == before


def test_non_utf8_id_from_a_real_command_line(root: Path) -> None:
    before = _files(root)
    env = {k: v for k, v in os.environ.items() if k != "DSH_HOME"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "fork",
            os.fsencode(str(root)),
            b"parent",
            b"--after-turn",
            b"1",
            b"--id",
            b"x\xff",
            b"--json",
        ],
        cwd=REPO,
        capture_output=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == b""
    assert json.loads(done.stdout)["error"]["message"] == "new session id is not valid UTF-8: b'x\\xff'"
    assert _files(root) == before


def test_wtf8_argv_reaches_a_session_whose_id_has_a_lone_surrogate(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    as_argv = os.fsdecode(ODD_ID.encode("utf-8", "surrogatepass"))
    code, out, _err = _run(capsys, ["inspect", str(root), as_argv, "--json"])
    assert code == 0
    assert json.loads(out)["meta"]["id"] == ODD_ID


# ---------------------------------------------------------------- 10k-character ids


def test_ten_thousand_character_ids(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _files(root)
    long_id = "a" * 10_000
    shown = f"{long_id[:120]}\u2026[9800 characters]\u2026{long_id[-80:]}"
    # No such folder can exist, so the session is not found (or the file system says the name is too long).
    error = _error(capsys, ["inspect", str(root), long_id])
    assert error["class"] == "Error"
    assert error["message"] == f'session "{shown}" not found' or "File name too long" in error["message"]
    error = _error(capsys, ["fork", str(root), "parent", "--after-turn", "1", "--id", long_id])
    assert error["class"] == "Error"
    assert error["message"].startswith("[Errno 36] File name too long") and len(error["message"]) < 1000
    assert long_id not in error["message"]  # both ends of the path are kept, the middle is elided
    code, out, err = _run(capsys, ["fork", str(root), "parent", "--after-turn", "1", "--id", long_id])
    assert (code, out) == (1, "")
    assert err.startswith("sessionscope: Error: [Errno 36] File name too long") and err.count("\n") == 1
    assert _files(root) == before
