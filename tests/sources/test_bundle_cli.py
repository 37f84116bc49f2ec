"""``sessionscope verify BUNDLE`` names a file that does not match the manifest even when the tampering
makes the session unreadable (a changed header line: the transcript is no longer recognisable as one),
with exit code 1, in text and in ``--json``; a hostile bundle is a typed one-line refusal, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import bundlekit as bk
import pytest

from app.cli import main


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _header_flip(name: str, data: bytes) -> bytes:
    # The first byte of a transcript: '{' of the JSONL header line, or the zstd magic.
    return bytes([data[0] ^ 0x01]) + data[1:] if name.startswith("session/") else data


@pytest.mark.parametrize("backend", bk.BACKENDS)
def test_verify_names_the_file_when_tampering_made_it_unreadable(
    tmp_path: Path, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    good = bk.exported_bundle(tmp_path, backend)
    (name,) = [n for n in bk.members(good) if n.startswith("session/")]
    bad = bk.rewrite(good, tmp_path / "bad.zip", change=_header_flip)
    code, out, err = _run(capsys, ["verify", str(bad)])
    assert code == 1 and f"{name}: its SHA-256 does not match the manifest" in out + err
    code, out, _err = _run(capsys, ["verify", str(bad), "--json"])
    doc = json.loads(out)
    assert code == 1 and f"{name}: its SHA-256 does not match the manifest" in json.dumps(doc)


def test_verify_of_a_hostile_bundle_is_a_one_line_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evil = bk.rewrite(bk.exported_bundle(tmp_path), tmp_path / "evil.zip", add={"../x": b"x"})
    code, out, err = _run(capsys, ["verify", str(evil)])
    assert code == 1 and out == ""
    assert err == "sessionscope: Error: evil.zip: refused: entry '../x' climbs out of the bundle (a '..' component)\n"
    assert not (tmp_path / "x").exists()


def test_verify_of_a_newer_bundle_says_to_upgrade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    newer = bk.rewrite(bk.exported_bundle(tmp_path), tmp_path / "new.zip", manifest=lambda m: {**m, "bundleVersion": 7})
    code, out, _err = _run(capsys, ["verify", str(newer), "--json"])
    error = json.loads(out)["error"]
    assert code == 1 and error["class"] == "Error" and "bundle version 7" in error["message"] and "upgrade" in error["message"]
