"""JSONL ``read_from`` after an append decodes only the new bytes, and answers exactly like a whole-file read.

Every case compares a store that already read the session (so it holds a tail mark) with a fresh
store reading the same bytes: results and refusals must be identical, whatever happened to the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk

from persistence import JsonlSessionPersistence
from persistence.jsonl.frames import compress_frame
from persistence.jsonl.storage import JsonlStorage

COMPRESSIONS = ["zstd", "none"]
SID = "s1"


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Sessions whose file was parsed whole (``JsonlStorage._whole``; a suffix read leaves this list alone)."""
    seen: list[str] = []
    original = JsonlStorage._whole

    def spy(self: JsonlStorage, path: str, session_id: str, data: bytes, revision: str) -> Any:
        seen.append(session_id)
        return original(self, path, session_id, data, revision)

    monkeypatch.setattr(JsonlStorage, "_whole", spy)
    yield seen


def _turn(seq: int, turn: int) -> list[dict[str, Any]]:
    return [sk.turn_start(seq, turn), sk.user_message(seq + 1, f"prompt {turn}", f"u{turn}"), sk.turn_end(seq + 2, turn)]


async def _write(root: Path, compression: str, events: list[dict[str, Any]], *, create: bool) -> None:
    store = JsonlSessionPersistence(root, compression=compression)
    try:
        if create:
            await store.create(sk.meta(SID, sk.WORK))
        await store.append(SID, events)
    finally:
        await store.close()


async def _fresh(root: Path, compression: str, seq: int) -> Any:
    store = JsonlSessionPersistence(root, compression=compression)
    try:
        return await _outcome(store, seq)
    finally:
        await store.close()


async def _outcome(store: JsonlSessionPersistence, seq: int) -> Any:
    try:
        rf = await store.read_from(SID, seq)
    except Exception as err:  # the refusal itself is part of the answer
        return ("error", type(err).__name__, str(err))
    return ("ok", rf.to_json())


def _path(root: Path, compression: str) -> Path:
    return sk.artifact(root, sk.WORK, SID, compression)


class Viewer:
    """A long-lived store that has read the session once (as the window does), then reads suffixes."""

    def __init__(self, root: Path, compression: str) -> None:
        self.root, self.compression = root, compression
        self.store = JsonlSessionPersistence(root, compression=compression)

    def read(self, seq: int) -> Any:
        return sk.run(_outcome(self.store, seq))

    def inspect(self) -> int:
        return len(sk.run(self.store.inspect(SID)).events)

    def close(self) -> None:
        sk.run(self.store.close())


@pytest.fixture
def viewer(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Viewer]:
    compression = request.param
    sk.run(_write(tmp_path, compression, _turn(0, 1), create=True))
    v = Viewer(tmp_path, compression)
    assert v.inspect() == 3
    yield v
    v.close()


def _same_as_fresh(v: Viewer, seq: int) -> Any:
    mine = v.read(seq)
    assert mine == sk.run(_fresh(v.root, v.compression, seq))
    return mine


@pytest.mark.parametrize("viewer", COMPRESSIONS, indirect=True)
def test_appends_are_read_without_decoding_the_whole_file(viewer: Viewer, full_reads: list[str]) -> None:
    for turn in range(2, 6):
        seq = 3 * (turn - 1)
        sk.run(_write(viewer.root, viewer.compression, _turn(seq, turn), create=False))
        before = len(full_reads)
        got = viewer.read(seq)
        assert len(full_reads) == before, "a whole-file read happened for a plain append"
        assert got[0] == "ok" and sk.seqs_of(got[1]["events"]) == [seq, seq + 1, seq + 2]
        assert got == sk.run(_fresh(viewer.root, viewer.compression, seq))
    # Reading from later than the mark also stays incremental; reading from earlier cannot.
    before = len(full_reads)
    assert _same_as_fresh(viewer, 14)[1]["events"][0]["seq"] == 14
    assert _same_as_fresh(viewer, 1)[1]["events"][0]["seq"] == 1
    assert len(full_reads) > before


@pytest.mark.parametrize("viewer", COMPRESSIONS, indirect=True)
def test_rewritten_replaced_or_truncated_files_are_read_whole(viewer: Viewer, full_reads: list[str]) -> None:
    path = _path(viewer.root, viewer.compression)
    original = path.read_bytes()
    # 1. Same inode, same length, different bytes before the mark: the check bytes catch it.
    tampered = bytearray(original)
    tampered[-20] = ord("Q") if tampered[-20] != ord("Q") else ord("R")
    with open(path, "r+b") as f:
        f.write(bytes(tampered))
    _same_as_fresh(viewer, 3)
    # 2. Replaced by another file (new inode) holding a longer log.
    path.unlink()
    sk.run(_write(viewer.root, viewer.compression, _turn(0, 1), create=True))
    sk.run(_write(viewer.root, viewer.compression, _turn(3, 2), create=False))
    viewer.inspect()
    fresh_file = path.read_bytes()
    other = path.with_name("other")
    other.write_bytes(fresh_file + (compress_frame(b"") if viewer.compression == "zstd" else b""))
    os.replace(other, path)
    n = len(full_reads)
    _same_as_fresh(viewer, 6)
    assert len(full_reads) > n
    # 3. Truncated below the mark.
    viewer.inspect()
    with open(path, "r+b") as f:
        f.truncate(len(fresh_file) - 5)
    _same_as_fresh(viewer, 3)


@pytest.mark.parametrize("viewer", COMPRESSIONS, indirect=True)
def test_torn_and_corrupt_appends_answer_like_a_whole_read(viewer: Viewer, full_reads: list[str]) -> None:
    path = _path(viewer.root, viewer.compression)
    sk.run(_write(viewer.root, viewer.compression, _turn(3, 2), create=False))
    viewer.read(3)
    good = path.read_bytes()
    line = b'{"type":"turn/start","seq":6,"time":9,"data":{"turn":3}}\n'
    # A torn tail (half a frame / half a line) after the mark.
    torn = compress_frame(line)[:-3] if viewer.compression == "zstd" else line[:-10]
    path.write_bytes(good + torn)
    got = _same_as_fresh(viewer, 6)
    assert got[0] == "ok"
    # Garbage that is corruption, not a torn tail.
    bad = (b"\x00\x00\x00\x00" + compress_frame(line)) if viewer.compression == "zstd" else b"{not json}\n" + line
    path.write_bytes(good + bad)
    _same_as_fresh(viewer, 6)
    # Restored: the viewer reads on normally.
    path.write_bytes(good + (compress_frame(line) if viewer.compression == "zstd" else line))
    assert _same_as_fresh(viewer, 6)[1]["events"][0]["seq"] == 6


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_an_unknown_event_is_refused_before_and_after_the_mark(tmp_path: Path, compression: str, full_reads: list[str]) -> None:
    sk.run(_write(tmp_path, compression, _turn(0, 1), create=True))
    v = Viewer(tmp_path, compression)
    try:
        v.inspect()
        path = _path(tmp_path, compression)
        line = b'{"type":"future/thing","seq":3,"time":9,"data":{}}\n'
        path.write_bytes(path.read_bytes() + (compress_frame(line) if compression == "zstd" else line))
        after = _same_as_fresh(v, 3)
        assert after[0] == "error" and after[1] == "SessionFormatUnsupportedError"
        # The refused read left no mark behind it: a later read from past it refuses too.
        assert _same_as_fresh(v, 4)[0] == "error"
    finally:
        v.close()
