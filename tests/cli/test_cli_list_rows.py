"""``sessionscope list``: one bad session is one bad row (issue 21 item 7).

A header that is a decompression bomb, a first line that is not a header, a JSONL header naming
another session, a SQLite row that fails validation: each is one row with a status and a reason, the
others are listed as before (the same header JSON), and the exit code follows ``verify``'s policy
(0 only when every row is good; the rows are printed either way).  ``list`` and ``verify`` count the
same sessions.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zstandard
from sessionkit import WORK, encode_log, header_line, meta, one_turn_log, plant, run

from app.cli import main
from persistence import JsonlSessionPersistence, open_store
from persistence.jsonl import frames
from persistence.jsonl.paths import encode_segment

pytestmark = pytest.mark.usefixtures("fast_fsync")

MiB = 1024 * 1024
PROJECT = "--w--"  # the project folder of cwd /w


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _good_root(root: Path, compression: str, count: int) -> list[str]:
    ids = [f"s{i:02d}" for i in range(count)]

    async def body() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        for sid in ids:
            await store.create(meta(sid, "/w"))
            await store.append(sid, one_turn_log())
        await store.close()

    run(body())
    return ids


def _bomb_frame(size: int) -> bytes:
    co = zstandard.ZstdCompressor(level=3, write_checksum=True).compressobj()
    return b"".join(co.compress(bytes(MiB)) for _ in range(size // MiB)) + co.flush()


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(frames, "MAX_FRAME_PLAINTEXT_BYTES", MiB)
    return MiB


def test_a_bomb_header_and_a_corrupt_header_are_rows_of_their_own(
    tmp_path: Path, small_cap: int, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    ids = _good_root(root, "zstd", 28)
    bomb = plant(root, f"{PROJECT}/bomb", _bomb_frame(8 * small_cap) + frames.compress_frame(b"{}\n"), "zstd")
    garbage = plant(root, f"{PROJECT}/garbage", encode_log(b"this is not a header\n", [one_turn_log()], "zstd"), "zstd")
    code, out, err = _run(capsys, ["list", str(root), "--json"])
    assert (code, err) == (1, "")  # like verify: not every session is good
    rows = json.loads(out)
    assert len(rows) == 30
    good = [r for r in rows if "status" not in r]
    assert [r["id"] for r in good] == ids
    assert good[0] == {"version": 0, "id": "s00", "createdAt": 1000, "cwd": "/w", "delegationDepth": 0}  # unchanged shape
    bad = {r["id"]: r for r in rows if "status" in r}
    assert set(bad) == {"bomb", "garbage"}
    assert bad["bomb"]["status"] == "corrupt" and bad["bomb"]["path"] == str(bomb)
    assert f"decodes to more than {small_cap} bytes" in bad["bomb"]["reason"]
    assert bad["garbage"] == {
        "id": "garbage",
        "status": "corrupt",
        "reason": "corrupt session log: first line is not a session header",
        "path": str(garbage),
    }
    # verify counts the same 30 sessions.
    code, out, _err = _run(capsys, ["verify", str(root), "--json"])
    assert code == 1 and len(json.loads(out)["sessions"]) == 30


def test_text_rows_name_the_bad_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    _good_root(root, "none", 2)
    plant(root, f"{PROJECT}/garbage", b"not json\n", "none")
    code, out, err = _run(capsys, ["list", str(root)])
    assert (code, err) == (1, "")
    assert out.splitlines() == [  # the engine's list order: folder names byte by byte
        "garbage\t(corrupt: corrupt session log: first line is not a session header)",
        "s00\t/w\t1000",
        "s01\t/w\t1000",
    ]


def test_a_header_naming_another_session_is_a_bad_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    _good_root(root, "none", 1)
    # The folder encodes "moved" but the header says "s00" (copied by hand): upstream's list() fails the root.
    plant(root, f"{PROJECT}/{encode_segment('moved')}", encode_log(header_line("s00", "/w"), [one_turn_log()], "none"), "none")
    code, out, _err = _run(capsys, ["list", str(root), "--json"])
    assert code == 1
    rows = json.loads(out)
    assert [r["id"] for r in rows] == ["moved", "s00"]
    assert rows[0]["status"] == "corrupt" and 'header id "s00" and cwd identify' in rows[0]["reason"]
    assert "status" not in rows[1]


def test_a_good_root_still_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    _good_root(root, "zstd", 3)
    code, out, _err = _run(capsys, ["list", str(root), "--json"])
    assert code == 0 and [r["id"] for r in json.loads(out)] == ["s00", "s01", "s02"]


def test_a_sqlite_row_that_fails_validation_is_one_bad_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.sqlite"

    async def body() -> None:
        store = open_store(str(db), "sqlite")
        for sid in ("a", "b", "c"):
            await store.create(meta(sid, WORK))
            await store.append(sid, one_turn_log())
        await store.close()

    run(body())
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE sessions SET cwd = 'relative/path' WHERE id = 'b'")
    code, out, err = _run(capsys, ["list", str(db), "--json"])
    assert (code, err) == (1, "")
    rows: list[dict[str, Any]] = json.loads(out)
    assert [r["id"] for r in rows] == ["a", "b", "c"]
    assert rows[1] == {"id": "b", "status": "corrupt", "reason": "stored session cwd must be absolute", "path": None}
    assert "status" not in rows[0] and "status" not in rows[2]


def test_a_root_the_engine_refuses_is_still_a_root_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A flat file fails the whole root, for list as for verify (its rootError): the engine's layout error."""
    root = tmp_path / "root"
    _good_root(root, "none", 2)
    plant(root, PROJECT, encode_log(header_line("flat", "/w"), [one_turn_log()], "none"), "none", name="flat.jsonl")
    code, out, err = _run(capsys, ["list", str(root), "--json"])
    assert (code, err) == (1, "")
    error = json.loads(out)["error"]
    assert error["class"] == "Error" and "flat" in error["message"]
    code, out, _err = _run(capsys, ["verify", str(root), "--json"])
    assert code == 1 and json.loads(out)["rootError"]
