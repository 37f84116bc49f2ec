"""``snapshots`` on a received source is lenient like ``list`` (issue 23 gap 5): a session whose header
cannot be listed (a tampered bundle's transcript) is a row with its reason and the exit code is 1, where
the engine's strict listing dropped it without a word and exited 0.  Good rows keep their revisions."""

from __future__ import annotations

import json
from pathlib import Path

import bundlekit as bk
import pytest
import zstandard
from sessionkit import encode_log, header_line, one_turn_log

from app.cli import main


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _broken_header(name: str, data: bytes) -> bytes:
    """The transcript's header line no longer a session header (a zstd transcript, so it still opens as one)."""
    if not name.startswith("session/"):
        return data
    plain = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return zstandard.ZstdCompressor().compress(plain.replace(b'"type":"session"', b'"type":"sessi"', 1))


def test_a_bundle_whose_header_is_damaged_is_a_row_with_its_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = bk.rewrite(bk.exported_bundle(tmp_path, "jsonl-zstd"), tmp_path / "bad.zip", change=_broken_header)
    code, out, _err = _run(capsys, ["snapshots", str(bad)])
    assert code == 1
    assert out.startswith("session.jsonl.zstd\t(corrupt: ") and "header" in out
    code, out, _err = _run(capsys, ["snapshots", str(bad), "--json"])
    (row,) = json.loads(out)
    assert code == 1 and row["status"] == "corrupt" and row["id"] == "session.jsonl.zstd" and "header" in row["reason"]


def test_a_case_folder_lists_good_rows_with_revisions_and_bad_rows_with_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = tmp_path / "case"
    case.mkdir()
    (case / "log.txt").write_bytes(encode_log(header_line("c", "/q"), [one_turn_log()], "none"))
    code, alone, _err = _run(capsys, ["snapshots", str(case / "log.txt")])
    assert code == 0 and alone.startswith("c\t") and len(alone.split("\t")[1].strip()) > 0
    bk.rewrite(bk.exported_bundle(tmp_path, "jsonl-zstd"), case / "bad.zip", change=_broken_header)
    code, out, _err = _run(capsys, ["snapshots", str(case)])
    assert code == 1
    assert "== log.txt — transcript\n" + alone in out  # the good row as the strict listing printed it
    assert "== bad.zip — support bundle\nsession.jsonl.zstd\t(corrupt: " in out
    code, out, _err = _run(capsys, ["snapshots", str(case), "--json"])
    parts = {p["part"]: p["result"] for p in json.loads(out)["parts"]}
    (good,) = parts["log.txt — transcript"]
    assert good["header"]["id"] == "c" and good["revision"] == alone.split("\t")[1].strip()
    (bad,) = parts["bad.zip — support bundle"]
    assert bad["status"] == "corrupt" and "revision" not in bad
