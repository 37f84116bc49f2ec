"""The command line over sources (issue 23): every reading verb takes a source, the id is optional for a
one-session source, received files are never written (no byte, no mtime), a tampered bundle fails
``verify``, and ``sessionscope PATH`` opens the window on it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sessionkit import encode_log, header_line, one_turn_log, open_turn2
from sourcekit import BACKENDS, bundle_of, fingerprint, own_store, skip_without_bundles, tamper, transcript_bytes

from app.cli import main


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _case_folder(tmp_path: Path, backend: str, with_bundle: bool) -> Path:
    """A case folder as a customer sends it: the backend's own store, a renamed transcript, a bundle."""
    case = tmp_path / "case"
    case.mkdir()
    own_store(case / "their-store", backend, {"a": one_turn_log()})
    (tmp_path / "scratch").mkdir()
    (case / "transcript(1).zst").write_bytes(transcript_bytes(tmp_path / "scratch", backend, "b", one_turn_log()))
    (case / "customer log.txt").write_bytes(encode_log(header_line("c", "/q"), [one_turn_log(), open_turn2()], "none"))
    if with_bundle:
        source = own_store(tmp_path / "sender", backend, {"d": one_turn_log()})
        bundle_of(source, "d", case / "case.zip")
    return case


READ_VERBS: list[list[str]] = [
    ["list"],
    ["snapshots"],
    ["verify"],
    ["search", "hello"],
    ["inspect", "ID"],
    ["read-from", "ID", "2"],
    ["raw", "ID"],
    ["locate", "ID"],
    ["backups", "ID"],
    ["stats", "ID"],
    ["repair", "ID", "--dry-run", "--quiet-seconds", "0"],
    ["export", "ID", "--format", "md", "-o", "OUT"],
    ["export", "ID", "--format", "bundle", "-o", "OUT"],
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_read_verb_changes_a_byte_or_an_mtime(tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    case = _case_folder(tmp_path, backend, with_bundle=_bundles())
    ids = ["a", "b", "c"] + (["d"] if _bundles() else [])
    sources = [(str(case), sid) for sid in ids] + [(str(case / "customer log.txt"), None)]
    if _bundles():
        sources.append((str(case / "case.zip"), None))
    before = fingerprint(case)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    errors: list[tuple[str, str | None, str]] = []
    for n, (path, sid) in enumerate(sources):
        for verb in READ_VERBS:
            argv = [verb[0], path]
            for token in verb[1:]:
                if token == "ID":
                    if sid is not None:
                        argv.append(sid)
                elif token == "OUT":
                    argv.append(str(out_dir / f"{n}-{verb[0]}-{len(os.listdir(out_dir))}"))
                else:
                    argv.append(token)
            code, out, err = _run(capsys, [*argv, "--json"])
            assert code in (0, 1), (argv, out, err)
            doc = json.loads(out)
            if isinstance(doc, dict) and "error" in doc:
                errors.append((verb[0], sid, doc["error"]["message"]))
            assert fingerprint(case) == before, argv
    # The one refusal is the engine's own: a SQLite session has no raw transcript to print.
    expected = [("raw", "a", "this session persistence backend does not expose raw artifacts")] if backend == "sqlite" else []
    assert errors == expected


def _bundles() -> bool:
    import importlib.util

    return importlib.util.find_spec("app.sources.bundle") is not None


def test_the_id_is_optional_for_a_one_session_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lone = tmp_path / "customer log.txt"
    lone.write_bytes(encode_log(header_line("s1", "/p"), [one_turn_log()], "none"))
    code, out, _err = _run(capsys, ["inspect", str(lone), "--json"])
    assert code == 0 and json.loads(out)["meta"]["id"] == "s1"
    code, out, _err = _run(capsys, ["raw", str(lone)])
    assert code == 0 and out.encode() == lone.read_bytes()
    code, out, _err = _run(capsys, ["read-from", str(lone), "3", "--json"])
    assert code == 0 and [e["seq"] for e in json.loads(out)["events"]] == [3, 4, 5]


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_sessions_and_no_id_is_a_typed_error_listing_them(
    tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = own_store(tmp_path, backend, {"first": one_turn_log(), "second": one_turn_log()})
    code, out, err = _run(capsys, ["inspect", str(store), "--json"])
    assert (code, err) == (2, "")
    error = json.loads(out)["error"]
    assert error["class"] == "TypeError"
    assert "holds 2 sessions; name one: " in error["message"] and "first" in error["message"] and "second" in error["message"]
    code, out, err = _run(capsys, ["inspect", str(store)])
    assert code == 2 and out == "" and err.startswith("sessionscope: TypeError: ") and "first" in err


@pytest.mark.parametrize(
    "verb",
    [["load"], ["repair", "--force"], ["restore", "--backup", "x"], ["fork", "--after-turn", "1"], ["resume", "--print"]],
)
def test_a_verb_that_writes_is_refused_on_a_received_file(
    tmp_path: Path, verb: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    lone = tmp_path / "t.zst"
    lone.write_bytes(encode_log(header_line("s1", "/p"), [one_turn_log(), open_turn2()], "zstd"))
    before = fingerprint(tmp_path)
    code, out, _err = _run(capsys, [verb[0], str(lone), "s1", *verb[1:], "--json"])
    assert code == 1
    error = json.loads(out)["error"]
    assert "opened read-only" in error["message"] and f"{verb[0]} would write into it" in error["message"]
    assert fingerprint(tmp_path) == before


@skip_without_bundles
@pytest.mark.parametrize("backend", BACKENDS)
def test_verify_of_a_tampered_bundle_exits_1_naming_the_file(
    tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = own_store(tmp_path, backend, {"s1": one_turn_log()})
    bundle = bundle_of(store, "s1", tmp_path / "case.zip")
    code, out, _err = _run(capsys, ["verify", str(bundle)])
    assert code == 0 and "bundle case.zip: verified" in out
    name = tamper(bundle)
    code, out, _err = _run(capsys, ["verify", str(bundle)])
    assert code == 1
    assert f"{name}: its SHA-256 does not match the manifest" in out
    code, out, _err = _run(capsys, ["verify", str(bundle), "--json"])
    doc = json.loads(out)
    assert code == 1 and doc["bundles"][0]["ok"] is False
    assert any(p.startswith(f"{name}: its SHA-256 does not match the manifest") for p in doc["bundles"][0]["problems"])


def test_a_path_as_the_first_argument_opens_the_window_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import app.gui.launch

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(app.gui.launch, "run_app", lambda **kw: calls.append(kw) or 0)
    lone = tmp_path / "customer log.txt"
    lone.write_bytes(encode_log(header_line("s1", "/p"), [one_turn_log()], "none"))
    shot = tmp_path / "shot.png"
    assert main([str(lone), "--screenshot", str(shot)]) == 0
    assert calls[-1]["source"] == str(lone) and calls[-1]["screenshot"] == str(shot)
    monkeypatch.chdir(tmp_path)
    assert main(["customer log.txt"]) == 0  # a relative path that exists
    assert calls[-1]["source"] == "customer log.txt"
    code, _out, err = _run(capsys, [str(tmp_path / "absent" / "case.zip")])
    assert code == 2 and "no session root at" in err and len(calls) == 2


def test_diff_in_a_case_folder_runs_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = tmp_path / "case"
    case.mkdir()
    (case / "one.txt").write_bytes(encode_log(header_line("c", "/q"), [one_turn_log()], "none"))
    (case / "two.zst").write_bytes(encode_log(header_line("d", "/q"), [one_turn_log(), open_turn2()], "zstd"))
    code, out, _err = _run(capsys, ["diff", str(case), "--id-a", "c", "--id-b", "d", "--json"])
    doc = json.loads(out)
    assert code == 1 and "parts" not in doc and "error" not in doc  # one comparison, not one per part
    code, text, _err = _run(capsys, ["diff", str(case), "--id-a", "c", "--id-b", "d"])
    assert code == 1 and "== " not in text


def test_a_damaged_part_of_a_case_folder_is_reported_and_the_others_still_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = tmp_path / "case"
    case.mkdir()
    (case / "broken.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    (case / "log.txt").write_bytes(encode_log(header_line("c", "/q"), [one_turn_log()], "none"))
    for verb in (["list"], ["snapshots"], ["search", "hi"]):
        code, out, _err = _run(capsys, [verb[0], str(case), *verb[1:]])
        assert code == 1, verb
        assert "== broken.db — SQLite store\nerror: Error: file is not a database\n" in out, verb
        assert "== log.txt — transcript\nc\t" in out, verb
        code, out, _err = _run(capsys, [verb[0], str(case), *verb[1:], "--json"])
        parts = {p["part"]: p for p in json.loads(out)["parts"]}
        assert code == 1 and parts["broken.db — SQLite store"]["error"]["message"] == "file is not a database"
        assert "error" not in parts["log.txt — transcript"] and "result" in parts["log.txt — transcript"]
