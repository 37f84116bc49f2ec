"""``sessionscope raw`` streams bytes (issue 12) and prints exactly what it printed before.

The reference is the verb as it was: ``read_raw`` (a ``str``), a final newline when the text lacks
one, written through ``write_out``; failures through ``report_error``.  Both run against the same
stores and streams, and their stdout/stderr bytes and exit codes must be equal: JSONL in both
encodings, invalid UTF-8, a character split across zstd frames, torn tails, refusals, SQLite, and
streams that are not UTF-8.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from sessionkit import artifact, encode_log, header_line, one_turn_log, user_message

from app.cli import main
from app.cli.output import report_error, write_out
from app.cli.raw_stream import newline_chunks, utf8_as_read_raw_writes_it
from persistence import CoordinatedPersistence, not_found, open_store

pytestmark = pytest.mark.usefixtures("fast_fsync")

SID = "s1"
CWD = "/proj"
BAD_UTF8 = b"\xff\xfe|\xed\xa0\x80|\xe2\x82|\xc3|\xf4\x90\x80\x80|\xe2\x9c\x93"  # + one valid check mark


def old_raw(argv: list[str]) -> int:
    """The ``raw`` verb before issue 12: the whole text as a str, then ``write_out``."""
    root, sid = argv[1], argv[2]

    async def read() -> Any:
        store = open_store(root, None, read_only=True, create=False)
        try:
            artifact = await store.read_raw(sid)
            if artifact is None:
                raise not_found(sid)
            return artifact
        finally:
            await store.close()

    try:
        text = asyncio.run(read()).content
    except Exception as err:
        return report_error(argparse.Namespace(json=False), err)
    write_out(sys.stdout, text if text.endswith("\n") else text + "\n")
    return 0


def captured(monkeypatch: pytest.MonkeyPatch, fn: Callable[[], int], encoding: str = "utf-8") -> tuple[int, bytes, bytes]:
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding=encoding, newline="\n")
    stderr = io.TextIOWrapper(err, encoding=encoding, errors="backslashreplace", newline="\n")
    with monkeypatch.context() as m:
        m.setattr(sys, "stdout", stdout)
        m.setattr(sys, "stderr", stderr)
        code = fn()
        stdout.flush()
        stderr.flush()
    return code, out.getvalue(), err.getvalue()


def same_as_before(
    monkeypatch: pytest.MonkeyPatch, root: Path, sid: str = SID, encoding: str = "utf-8", *, streamed: bool = True
) -> tuple[int, bytes]:
    """Run the verb and the old verb; equal output, and ``streamed``: the new one never asked for a str."""
    argv = ["raw", str(root), sid]
    calls: list[str] = []
    read_raw = CoordinatedPersistence.read_raw

    async def counted(self: CoordinatedPersistence, session_id: str, signal: Any = None) -> Any:
        calls.append(session_id)
        return await read_raw(self, session_id, signal)

    with monkeypatch.context() as m:
        m.setattr(CoordinatedPersistence, "read_raw", counted)
        now = captured(monkeypatch, lambda: main(argv), encoding)
    before = captured(monkeypatch, lambda: old_raw(argv), encoding)
    assert now == before
    assert (not calls) is streamed  # refusals are read_raw's own, through read_raw itself
    return now[0], now[1]


def plant_log(root: Path, compression: str, parts: list[Any], header: Any = None) -> Path:
    path = artifact(root, CWD, SID, compression)
    path.parent.mkdir(parents=True, exist_ok=True)
    for d in (path.parent, path.parent.parent):
        os.chmod(d, 0o700)
    path.write_bytes(encode_log(header_line(SID, CWD) if header is None else header, parts, compression))
    os.chmod(path, 0o600)
    return path


ENCODINGS = ["zstd", "none"]


@pytest.mark.parametrize("compression", ENCODINGS)
def test_a_healthy_session_prints_the_same_bytes_without_read_raw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: str
) -> None:
    plant_log(tmp_path, compression, [one_turn_log()[:3], [user_message(3, "ünïcødé ✓ \U0001f600")]])
    code, out = same_as_before(monkeypatch, tmp_path)
    assert code == 0 and "✓ \U0001f600".encode() in out and out.endswith(b"\n")

    def no_str(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the text verb decoded the transcript to a str")

    monkeypatch.setattr(CoordinatedPersistence, "read_raw", no_str)
    assert captured(monkeypatch, lambda: main(["raw", str(tmp_path), SID]))[:2] == (0, out)


@pytest.mark.parametrize("compression", ENCODINGS)
@pytest.mark.parametrize("encoding", ["utf-8", "ascii", "latin-1"])
def test_invalid_utf8_is_replaced_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: str, encoding: str
) -> None:
    line = b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"note":"' + BAD_UTF8 + b'"}}\n'
    plant_log(tmp_path, compression, [line, b"not json at all \xe2\x82\n", b"ends mid-sequence \xf0\x9f\x98"])
    code, out = same_as_before(monkeypatch, tmp_path, encoding=encoding)
    assert code == 0
    if encoding == "utf-8":
        assert "\ufffd".encode() in out and "✓".encode() in out and b"\xff" not in out
    else:
        assert b"\\ufffd" in out  # the stream cannot encode U+FFFD: an escape, as write_out always did


def test_a_character_split_across_zstd_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plant_log(tmp_path, "zstd", [b"split \xe2\x9c", b"\x93 joined\n", b"\xe2", b"\x82 broken\n"])
    code, out = same_as_before(monkeypatch, tmp_path)
    assert code == 0 and "split ✓ joined\n".encode() in out and "\ufffd broken".encode() in out


@pytest.mark.parametrize("compression", ENCODINGS)
def test_torn_tails_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: str) -> None:
    path = plant_log(tmp_path, compression, [one_turn_log()])
    data = path.read_bytes()
    torn = encode_log(b"", [b'{"type":"turn/start","seq":6,"time":7,"data":{"tu'], compression)
    path.write_bytes(data + torn[: len(torn) - 3] if compression == "zstd" else data + torn)
    code, out = same_as_before(monkeypatch, tmp_path)
    assert code == 0
    assert (b'"seq":6' in out) is (compression == "none")  # a torn frame is left out; a torn line is text


@pytest.mark.parametrize("compression", ENCODINGS)
def test_refusals_print_the_same_error_and_nothing_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: str
) -> None:
    plant_log(tmp_path, compression, [one_turn_log()])
    assert same_as_before(monkeypatch, tmp_path, sid="absent", streamed=False) == (1, b"")
    # A header for another id, then a header line the engine cannot represent.
    for header in (header_line("other", CWD), b'{"type":"session","version":1e400,"id":"s1","createdAt":1}\n'):
        plant_log(tmp_path, compression, [one_turn_log()], header=header)
        assert same_as_before(monkeypatch, tmp_path, streamed=False) == (1, b"")


def test_a_bad_later_frame_fails_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = plant_log(tmp_path, "zstd", [one_turn_log()[:3], one_turn_log()[3:]])
    data = bytearray(path.read_bytes())
    data[-2] ^= 0xFF  # the last frame's checksum
    path.write_bytes(bytes(data))
    code, out = same_as_before(monkeypatch, tmp_path, streamed=False)
    assert (code, out) == (1, b"")


def test_sqlite_refuses_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.sqlite"

    async def write() -> None:
        store = open_store(str(db), "sqlite")
        try:
            await store.create({"id": SID, "createdAt": 1, "cwd": CWD})
            await store.append(SID, one_turn_log())
        finally:
            await store.close()

    asyncio.run(write())
    code, out = same_as_before(monkeypatch, db, streamed=False)
    assert (code, out) == (1, b"")


_BYTES = st.lists(
    st.sampled_from([b"\n", b"a", b"\xe2", b"\x9c", b"\x93", b"\xff", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80", b"\xc3\xa9"]),
    max_size=40,
).map(b"".join)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_BYTES, max_size=6), st.integers(1, 12))
def test_chunks_at_newlines_write_what_one_decode_of_the_whole_would(pieces: list[bytes], size: int) -> None:
    whole = b"".join(pieces)
    chunks = list(newline_chunks(pieces, size))
    assert b"".join(chunks) == whole
    assert all(c.endswith(b"\n") for c in chunks[:-1]) and all(chunks)
    assert b"".join(map(utf8_as_read_raw_writes_it, chunks)) == whole.decode("utf-8", "replace").encode("utf-8")
    assert "".join(c.decode("utf-8", "replace") for c in chunks) == whole.decode("utf-8", "replace")
