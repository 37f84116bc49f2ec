"""What the command line says of a received bundle names the file inside the bundle (issue 23 gap 3):
``bad.zip: session/session.jsonl.zstd``, never the temporary extraction in the cache folder (a path that
is gone once the command ends).  Errors, text and ``--json`` alike; a case folder's bundle by its path
in the folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import bundlekit as bk
import pytest
import zstandard

from app.cli import main
from app.sources import open_source
from app.sources.bundle import extractions_root

MEMBER = "session/session.jsonl.zstd"


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _edit_transcript(old: bytes, new: bytes):  # type: ignore[no-untyped-def]
    def change(name: str, data: bytes) -> bytes:
        if not name.startswith("session/"):
            return data
        plain = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        return zstandard.ZstdCompressor().compress(plain.replace(old, new, 1))

    return change


def _no_extraction_path(text: str) -> None:
    assert str(extractions_root()) not in text and f"{os.sep}bundles{os.sep}" not in text, text


def test_a_tampered_header_error_names_the_file_inside_the_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = bk.rewrite(
        bk.exported_bundle(tmp_path, "jsonl-zstd"),
        tmp_path / "bad.zip",
        change=_edit_transcript(b'"type":"session"', b'"type":"sessi"'),
    )
    code, out, err = _run(capsys, ["raw", str(bad)])
    assert code == 1 and out == ""
    assert f'invalid header line in "bad.zip: {MEMBER}"' in err
    _no_extraction_path(err)
    code, out, err = _run(capsys, ["raw", str(bad), "--json"])
    assert code == 1 and f"bad.zip: {MEMBER}" in json.loads(out)["error"]["message"]
    _no_extraction_path(out)
    code, out, _err = _run(capsys, ["list", str(bad), "--json"])
    (row,) = json.loads(out)
    assert row["path"] == f"bad.zip: {MEMBER}"


def test_a_refused_version_cites_the_bundle_member_as_its_raw_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    newer = bk.rewrite(
        bk.exported_bundle(tmp_path, "jsonl-zstd"), tmp_path / "new.zip", change=_edit_transcript(b'"version":0', b'"version":99')
    )
    code, out, _err = _run(capsys, ["verify", str(newer)])
    assert code == 1 and f"(raw log: new.zip: {MEMBER})" in out
    _no_extraction_path(out)
    case = tmp_path / "case"
    (case / "mail").mkdir(parents=True)
    newer.rename(case / "mail" / "new.zip")
    code, out, _err = _run(capsys, ["verify", str(case)])
    assert code == 1 and f"(raw log: mail/new.zip: {MEMBER})" in out
    _no_extraction_path(out)


def test_shown_leaves_other_paths_alone(tmp_path: Path) -> None:
    src = open_source(bk.exported_bundle(tmp_path, "jsonl-zstd"))
    try:
        (part,) = src.parts
        assert src.shown(f'in "{part.store_path}" and /elsewhere/x') == f'in "s1.zip: {MEMBER}" and /elsewhere/x'
        assert src.shown(str(part.store_path.parent)) == "s1.zip"
    finally:
        from app.sources import close_source

        close_source(src)
