"""The Zstandard frame container (jsonl-backend §9, §15.5 cases 50-65)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
import zstandard
from sessionkit import (
    ONE_TURN_LINES,
    artifact,
    completed_turn2,
    encode_log,
    header_line,
    meta,
    one_turn_log,
    open_turn2,
    plant,
    run,
    seqs_of,
    turn_start,
    types_of,
    wire,
    zstd_frames,
)

from persistence import JsonlSessionPersistence, SessionPersistenceError, SessionRollbackError, SessionStorageCorruptError
from persistence.jsonl.frames import MAGIC, compress_frame, decompress_prefix, scan_frames
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.usefixtures("fast_fsync")

HEADER_LINE = b'{"type":"session","version":0,"id":"s1","createdAt":1000,"cwd":"/proj","delegationDepth":0}\n'


def lines(events: list[dict[str, Any]]) -> bytes:
    return b"".join(js_dumps(e) + b"\n" for e in events)


def stored_one_turn(root: Path) -> Path:
    async def body() -> None:
        store = JsonlSessionPersistence(root)
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())

    run(body())
    return artifact(root, "/proj", "s1", "zstd")


def load_error(root: Path, session_id: str = "s1") -> SessionPersistenceError:
    async def body() -> SessionPersistenceError:
        with pytest.raises(SessionPersistenceError) as info:
            await JsonlSessionPersistence(root).load(session_id)
        return info.value

    return run(body())


# ---------------------------------------------------------------- structural scan


def test_case_50_scan_complete_frames() -> None:
    """§15 case 50."""
    assert scan_frames(b"") == ([], None)
    a, b = compress_frame(b"one\n"), compress_frame(b"two\n")
    assert scan_frames(a + b) == ([(0, len(a)), (len(a), len(a) + len(b))], None)
    assert scan_frames(a + b, max_frames=1) == ([(0, len(a))], None)
    assert a[4] & 0x04 and b[4] & 0x04
    # §9.1: descriptor 0x04 (checksum only, no content size), window descriptor 0x58.
    assert a[:6] == MAGIC + b"\x04\x58"


@pytest.mark.parametrize(
    ("data", "outcome"),
    [
        (MAGIC[:2], 0),
        (MAGIC, 0),
        (b"\0\0\0\0", "invalid frame magic at byte 0"),
        (MAGIC + b"\x08", "reserved frame-header bit at byte 4"),
        (MAGIC + b"\x10", "reserved frame-header bit at byte 4"),
        (MAGIC + b"\x00", 0),
        (MAGIC + bytes.fromhex("20000100"), 0),
        (MAGIC + bytes.fromhex("2000") + (5 << 3).to_bytes(3, "little") + b"ab", 0),
        (MAGIC + bytes.fromhex("2000070000"), "reserved block type at byte 6"),
    ],
    ids=[
        "half-magic",
        "magic",
        "zeros",
        "reserved-bit3",
        "reserved-bit4",
        "no-window",
        "short-block-header",
        "short-raw-block",
        "reserved-block-type",
    ],
)
def test_case_51_torn_or_corrupt(data: bytes, outcome: int | str) -> None:
    """§15 case 51."""
    if isinstance(outcome, int):
        assert scan_frames(data) == ([], outcome)
    else:
        with pytest.raises(SessionStorageCorruptError, match=f"^corrupt Zstandard session log: {outcome}$"):
            scan_frames(data)


@pytest.mark.parametrize(
    "frame",
    [
        MAGIC + bytes([0x00]) + b"\0" + b"\x01\x00\x00",
        MAGIC + bytes([0x21]) + b"\0" * 2 + b"\x01\x00\x00",
        MAGIC + bytes([0x42]) + b"\0" * 5 + b"\x01\x00\x00",
        MAGIC + bytes([0x83]) + b"\0" * 9 + b"\x01\x00\x00",
        MAGIC + bytes([0xE3]) + b"\0" * 12 + b"\x01\x00\x00",
        MAGIC + bytes.fromhex("20010B000041"),
        MAGIC + bytes.fromhex("2000000000010000"),
    ],
    ids=["0x00", "0x21", "0x42", "0x83", "0xE3", "rle", "two-blocks"],
)
def test_case_52_structural_frames(frame: bytes) -> None:
    """§15 case 52: header sizes follow the descriptor; nothing is validated beyond structure."""
    assert scan_frames(frame) == ([(0, len(frame))], None)
    assert scan_frames(frame[:-1]) == ([], 0)


def test_case_52_content_size_frame_minus_last_byte_is_torn() -> None:
    """§15 case 52: a ``0x24`` frame (single segment + checksum) minus its last byte is torn at 0."""
    frame = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True).compress(b"x\n")
    assert frame[4] == 0x24
    assert scan_frames(frame) == ([(0, len(frame))], None)
    assert scan_frames(frame[:-1]) == ([], 0)


def test_case_65_torn_frame_prefix_decodes() -> None:
    """§15 case 65 / §9.4: a frame missing its last checksum byte still yields its plaintext."""
    text = b"x" * 1000 + b"\n"
    f = compress_frame(text)
    assert scan_frames(f[:-1]) == ([], 0)
    assert decompress_prefix(f[:-1]) == text
    assert decompress_prefix(f[:-4]) == text
    assert decompress_prefix(b"\0\0\0\0garbage") == b""


# ---------------------------------------------------------------- written artifacts


def test_cases_53_54_56_written_frames(tmp_path: Path) -> None:
    """§15 cases 53 (layout), 54 (readRaw) and 56 (append adds one frame, prefix unchanged)."""
    path = stored_one_turn(tmp_path)
    data = path.read_bytes()
    assert data[:4] == bytes.fromhex("28B52FFD")
    assert not path.with_name("session.jsonl").exists()
    assert zstd_frames(data) == [HEADER_LINE, ONE_TURN_LINES.encode()]

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        raw = await store.read_raw("s1")
        assert raw is not None
        assert raw.filename == "session.jsonl"
        assert raw.content == (HEADER_LINE + ONE_TURN_LINES.encode()).decode()
        assert raw.meta.id == "s1"
        await store.append("s1", completed_turn2())

    run(body())
    after = path.read_bytes()
    assert after.startswith(data)
    assert len(scan_frames(after)[0]) == 3
    assert zstd_frames(after)[2] == lines(completed_turn2())
    assert after[len(data) :] == compress_frame(lines(completed_turn2()))


def test_case_55_zero_byte_artifact_read_raw(tmp_path: Path) -> None:
    """§15 case 55."""
    plant(tmp_path, "--proj--/s1", b"", "zstd")

    async def body() -> None:
        with pytest.raises(SessionPersistenceError, match=r"^empty or header-less Zstandard session log$"):
            await JsonlSessionPersistence(tmp_path).read_raw("s1")

    run(body())


def test_case_57_corrupt_event_frame_long_cwd(tmp_path: Path) -> None:
    """§15 case 57: listing decodes only frame 0 (here ~24 KB, several read chunks)."""
    cwd = "/" + "d" * 24000

    async def setup() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta("long", cwd))
        await store.append("long", one_turn_log())

    run(setup())
    path = artifact(tmp_path, cwd, "long", "zstd")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    event_frame_start = scan_frames(bytes(data))[0][1][0]

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        assert [h.id for h in await store.list()] == ["long"]
        with pytest.raises(
            SessionStorageCorruptError,
            match=rf"^corrupt Zstandard session log: frame at byte {event_frame_start} failed validation$",
        ):
            await store.load("long")

    run(body())


def _torn_turn2_file(root: Path) -> tuple[Path, bytes]:
    """One turn committed, then a torn multi-block frame holding turn/start 6, step/start 7 and a huge chunk line."""
    path = stored_one_turn(root)
    committed = path.read_bytes()
    noise = random.Random(7).randbytes(200_000).hex()
    huge = (
        js_dumps(
            {
                "type": "assistant/chunk",
                "seq": 8,
                "time": 9,
                "data": {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": noise}},
            }
        )
        + b"\n"
    )
    frame = compress_frame(lines(open_turn2()) + huge)
    path.write_bytes(committed + frame[: len(frame) * 6 // 10])
    return path, committed


def test_case_58_torn_multiblock_frame_recovers_complete_records(tmp_path: Path) -> None:
    """§15 case 58 / §11.4: truncate to the torn frame, then ONE frame with recovered records + closers."""
    path, committed = _torn_turn2_file(tmp_path)

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        inspected = wire((await store.inspect("s1")).events)
        assert seqs_of((await store.read_from("s1", 0)).events) == list(range(8))  # recovered, no closers
        loaded = wire((await store.load("s1")).events)
        assert loaded == inspected
        assert seqs_of(loaded) == list(range(10))
        assert loaded[6:8] == open_turn2()
        assert types_of(loaded)[8:] == ["step/end", "turn/end"]
        data = path.read_bytes()
        assert data.startswith(committed)
        frames, torn = scan_frames(data)
        assert torn is None and len(frames) == 3
        assert zstd_frames(data)[2] == lines(loaded[6:])
        reread = wire((await JsonlSessionPersistence(tmp_path).read_from("s1", 0)).events)
        assert reread == loaded

    run(body())


def test_case_59_stray_magic_bytes_are_cut(tmp_path: Path) -> None:
    """§15 case 59 / §9.2: 1-3 stray bytes are a torn frame; load truncates them (revision changes)."""
    path = stored_one_turn(tmp_path)
    committed = path.read_bytes()
    path.write_bytes(committed + MAGIC[:2])

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        before = await store.read_stored_revision("s1")
        assert wire((await store.inspect("s1")).events) == one_turn_log()
        assert await store.read_stored_revision("s1") == before
        assert wire((await store.load("s1")).events) == one_turn_log()
        assert await store.read_stored_revision("s1") != before

    run(body())
    assert path.read_bytes() == committed


def test_case_60_frame_missing_its_last_checksum_byte(tmp_path: Path) -> None:
    """§15 case 60."""
    path = stored_one_turn(tmp_path)
    committed = path.read_bytes()
    path.write_bytes(committed + compress_frame(lines(completed_turn2()))[:-1])

    async def body() -> None:
        loaded = wire((await JsonlSessionPersistence(tmp_path).load("s1")).events)
        assert loaded == one_turn_log() + completed_turn2()

    run(body())
    data = path.read_bytes()
    assert data.startswith(committed)
    assert scan_frames(data)[1] is None
    assert zstd_frames(data)[2] == lines(completed_turn2())


def test_bare_magic_after_open_turn_gets_closer_frame(tmp_path: Path) -> None:
    """§9.2 (verified upstream): complete frame + bare magic with an open turn -> truncate, then one closer frame."""
    path = stored_one_turn(tmp_path)

    async def setup() -> None:
        await JsonlSessionPersistence(tmp_path).append("s1", open_turn2())

    run(setup())
    committed = path.read_bytes()
    path.write_bytes(committed + MAGIC)

    async def body() -> None:
        loaded = wire((await JsonlSessionPersistence(tmp_path).load("s1")).events)
        assert types_of(loaded)[-2:] == ["step/end", "turn/end"]
        assert path.read_bytes() == committed + compress_frame(lines(loaded[8:]))

    run(body())


def test_case_61_complete_frame_with_torn_record(tmp_path: Path) -> None:
    """§15 case 61 (+ readRaw still returns the text)."""
    path = stored_one_turn(tmp_path)
    path.write_bytes(path.read_bytes() + compress_frame(b'{"type":"turn/start"'))
    err = load_error(tmp_path)
    assert str(err) == "corrupt Zstandard session log: complete frame contains a torn JSONL record"

    async def body() -> None:
        raw = await JsonlSessionPersistence(tmp_path).read_raw("s1")
        assert raw is not None and raw.content.endswith('{"type":"turn/start"')

    run(body())


@pytest.mark.parametrize(
    ("tail", "offset_from_end"),
    [(b"\0\0\0\0", 4), (b"\x50\x2a\x4d\x18" + b"\x04\x00\x00\x00abcd", 12), (b"garbage!", 8)],
    ids=["zeros", "skippable-frame", "garbage"],
)
def test_trailing_bytes_after_last_frame_are_corruption(tmp_path: Path, tail: bytes, offset_from_end: int) -> None:
    """§9.2: >= 4 bytes not starting with the magic are corruption (skippable frames included);
    list() still succeeds because it decodes only frame 0; the file is untouched."""
    path = stored_one_turn(tmp_path)
    data = path.read_bytes() + tail
    path.write_bytes(data)
    offset = len(data) - offset_from_end

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        assert [h.id for h in await store.list()] == ["s1"]
        for call in (store.inspect("s1"), store.load("s1"), store.read_from("s1", 0), store.read_raw("s1")):
            with pytest.raises(SessionStorageCorruptError, match=f"invalid frame magic at byte {offset}$"):
                await call

    run(body())
    assert path.read_bytes() == data


def test_lenient_frame_reading(tmp_path: Path) -> None:
    """§9.1: a record spanning two frames, an empty frame, a frame with a content size and a frame
    without checksum are all readable."""
    body_text = lines(one_turn_log())
    split = len(body_text) // 2
    content = (
        compress_frame(HEADER_LINE)
        + compress_frame(body_text[:split])
        + compress_frame(b"")
        + zstandard.ZstdCompressor(write_checksum=False, write_content_size=True).compress(body_text[split:])
    )
    plant(tmp_path, "--proj--/s1", content, "zstd")

    async def body() -> None:
        assert wire((await JsonlSessionPersistence(tmp_path).load("s1")).events) == one_turn_log()

    run(body())


def test_case_62_fsync_failure_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """§15 case 62 / §11.3: the file is byte-identical after a failed append and a retry succeeds."""
    path = stored_one_turn(tmp_path)
    before = path.read_bytes()
    real_fsync = os.fsync
    calls = {"n": 0}

    def failing_fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(5, "simulated fsync failure")
        real_fsync(fd)

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.load("s1")
        monkeypatch.setattr(os, "fsync", failing_fsync)
        with pytest.raises(OSError, match="simulated fsync failure"):
            await store.append("s1", completed_turn2())
        assert path.read_bytes() == before
        monkeypatch.setattr(os, "fsync", real_fsync)
        await store.append("s1", completed_turn2())
        assert wire((await JsonlSessionPersistence(tmp_path).load("s1")).events) == one_turn_log() + completed_turn2()

    run(body())


def test_failed_rollback_is_an_aggregate_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """§11.3: append failure + rollback failure -> ``failed to roll back append to "{path}"`` with both errors."""
    path = stored_one_turn(tmp_path)
    write_error = OSError(28, "simulated disk full")
    rollback_error = OSError(13, "simulated reopen failure")
    real_open = os.open

    def failing_fsync(fd: int) -> None:
        raise write_error

    def failing_open(p: Any, flags: int, *args: Any) -> int:
        if flags & os.O_RDWR and os.fspath(p) == str(path):
            raise rollback_error
        return real_open(p, flags, *args)

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.load("s1")
        monkeypatch.setattr(os, "fsync", failing_fsync)
        monkeypatch.setattr(os, "open", failing_open)
        with pytest.raises(SessionRollbackError) as info:
            await store.append("s1", completed_turn2())
        monkeypatch.undo()
        assert str(info.value) == f'failed to roll back append to "{path}"'
        assert info.value.errors == [write_error, rollback_error]

    run(body())


@pytest.mark.parametrize(
    "content",
    [b"", MAGIC, compress_frame(b'{"type":"turn/start"}\n')],
    ids=["empty", "bare-magic", "non-header-frame"],
)
def test_case_63_unlistable_artifacts_are_skipped(tmp_path: Path, content: bytes) -> None:
    """§15 case 63 (first half)."""
    plant(tmp_path, "--proj--/odd", content, "zstd")

    async def body() -> None:
        assert await JsonlSessionPersistence(tmp_path).list() == []

    run(body())


def test_case_63_64_first_frame_shape(tmp_path: Path) -> None:
    """§15 cases 63 (two-line first frame) and 64 (bare magic, empty first frame, corrupt header checksum)."""
    two_lines = compress_frame(HEADER_LINE + lines([turn_start(0, 1)]))
    plant(tmp_path, "--proj--/s1", two_lines, "zstd")
    assert str(load_error(tmp_path)) == "corrupt Zstandard session log: first frame is not exactly one header line"

    async def listing(pattern: str) -> None:
        with pytest.raises(SessionStorageCorruptError, match=pattern):
            await JsonlSessionPersistence(tmp_path).list()

    run(listing("first frame is not exactly one header line"))

    plant(tmp_path, "--proj--/s1", MAGIC, "zstd")
    assert str(load_error(tmp_path)) == "empty or header-less Zstandard session log"
    plant(tmp_path, "--proj--/s1", compress_frame(b"") + compress_frame(lines(one_turn_log())), "zstd")
    assert str(load_error(tmp_path)) == "corrupt Zstandard session log: first frame is not exactly one header line"
    bad_header = bytearray(compress_frame(HEADER_LINE))
    bad_header[-1] ^= 0xFF
    plant(tmp_path, "--proj--/s1", bytes(bad_header) + compress_frame(lines(one_turn_log())), "zstd")
    run(listing("^corrupt Zstandard session log: header frame failed validation$"))
    assert str(load_error(tmp_path)) == "corrupt Zstandard session log: frame at byte 0 failed validation"


def test_read_raw_omits_torn_final_frame(tmp_path: Path) -> None:
    """§12.7 / §16 point 6: zstd readRaw silently omits a torn final frame."""
    path, committed = _torn_turn2_file(tmp_path)

    async def body() -> None:
        raw = await JsonlSessionPersistence(tmp_path).read_raw("s1")
        assert raw is not None
        assert raw.content.encode() == b"".join(zstd_frames(committed))

    run(body())
    assert path.read_bytes() != committed  # untouched: the torn frame is still there


def test_encode_log_helper_matches_writer(tmp_path: Path) -> None:
    """Sanity check of the test helper used by the discovery tests: it writes what the backend writes."""
    path = stored_one_turn(tmp_path)
    assert path.read_bytes() == encode_log(header_line("s1", "/proj"), [one_turn_log()], "zstd")
