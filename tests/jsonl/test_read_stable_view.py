"""``read_raw``'s text comes from a buffer reused across reads and equals what it was (issue 25 item 4).

Why: ``read_raw`` now decodes its text straight from a kept buffer (the file's bytes for a plain log,
the frames' plaintext for a zstd one) instead of a fresh ``bytes`` of that size: the page faults of
that allocation were a third of the read.  ``read_stable_view`` must give what ``read_stable`` gives,
``decode_frames_into`` what ``decode_frames`` gives, ``transcript_text`` what the former decoding gave.  A reused buffer
must never leak a previous, longer file's bytes, must serve two threads at once, and the header found
in it must be the bytes before the first newline, whatever the text's encoding.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from persistence.backend import CancelToken
from persistence.errors import SessionAbortedError, SessionStorageCorruptError
from persistence.jsonl import decode_into, files, frames
from persistence.jsonl.decode_into import decode_frames_into
from persistence.jsonl.files import first_line_of, read_stable, read_stable_view


def _view_of(path: Path) -> tuple[bytes, str, str]:
    with read_stable_view(str(path), CancelToken()) as (view, revision):
        return bytes(view), revision, str(view, "utf-8", "replace")


def test_equals_read_stable_and_never_shows_an_earlier_longer_file(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    for content in (b"x" * 100_000 + b"\n", b"short\n", b"", b"\xff\xfe torn \xe2\x82", b"y" * 3):
        path.write_bytes(content)
        data, revision, text = _view_of(path)
        assert (data, revision) == read_stable(str(path), CancelToken())
        assert text == content.decode("utf-8", "replace")


def test_a_file_over_the_kept_size_reads_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "SCRATCH_KEEP_BYTES", 64)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"z" * 1000)
    assert _view_of(path)[0] == b"z" * 1000


def test_the_view_is_read_only_and_released_after_the_block(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"abc\n")
    with read_stable_view(str(path), CancelToken()) as (view, _rev):
        assert view.readonly
    with pytest.raises(ValueError):
        view.tobytes()  # released: nobody keeps a window onto the next read's bytes


def test_two_threads_at_once_each_read_their_own_file(tmp_path: Path) -> None:
    paths = []
    for i in range(2):
        p = tmp_path / f"s{i}.jsonl"
        p.write_bytes(bytes([ord("a") + i]) * (50_000 + i))
        paths.append(p)
    inside = threading.Barrier(2)
    got: dict[int, bytes] = {}

    def read(i: int) -> None:
        with read_stable_view(str(paths[i]), CancelToken()) as (view, _rev):
            inside.wait(timeout=10)  # both hold a view at the same time: one of them is not the kept buffer
            got[i] = bytes(view)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {i: paths[i].read_bytes() for i in range(2)}


def test_a_cancelled_read_raises_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"abc\n")
    token = CancelToken()
    token.cancel("stop")
    with pytest.raises(SessionAbortedError), read_stable_view(str(path), token):
        pass


def test_a_file_that_grows_during_the_read_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"head\n")
    real = files._read_into
    calls = []

    def append_then_read(p: str, buf: bytearray, want: int) -> int:
        calls.append(want)
        if len(calls) == 1:
            with open(p, "ab") as f:
                f.write(b"appended meanwhile\n")
        return real(p, buf, want)

    monkeypatch.setattr(files, "_read_into", append_then_read)
    data, revision, _text = _view_of(path)
    assert data == b"head\nappended meanwhile\n"
    assert (data, revision) == read_stable(str(path), CancelToken())
    assert len(calls) == 2


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.text(max_size=20).map(lambda s: s.encode("utf-8")),
            st.sampled_from([b"\n", b"\xe2\x82", b"\xff", "é\n".encode(), b"\x00"]),
        ),
        max_size=12,
    ).map(b"".join)
)
def test_first_line_of_is_the_bytes_before_the_first_newline(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    nl = data.find(b"\n")
    with memoryview(data) as view:
        assert first_line_of(view, text) == (data if nl < 0 else data[:nl])


def test_first_line_of_finds_a_newline_past_one_chunk() -> None:
    data = "é".encode() * files.HEADER_CHUNK + b"\nrest"
    with memoryview(data) as view:
        assert first_line_of(view, data.decode()) == "é".encode() * files.HEADER_CHUNK


# ---------------------------------------------------------------- zstd text into the kept buffer


def _frame(plain: bytes, content_size: bool) -> bytes:
    c = zstandard.ZstdCompressor(level=3, write_checksum=True, write_content_size=content_size)
    if content_size:
        return c.compress(plain)
    obj = c.compressobj()
    return obj.compress(plain) + obj.flush()


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=6),
    sized=st.lists(st.booleans(), min_size=6, max_size=6),
    room=st.integers(0, 2000),
    flip=st.one_of(st.none(), st.tuples(st.integers(0, 5), st.floats(0, 1))),
)
@pytest.mark.parametrize("threads", ["one thread", "two threads"])
def test_decode_frames_into_writes_what_decode_frames_returns(
    threads: str, parts: list[bytes], sized: list[bool], room: int, flip: tuple[int, float] | None
) -> None:
    """Whatever it writes is ``decode_frames``' plaintext; None (never a part) when it cannot, so the
    caller's fallback decodes it (and names any damage) as before.  "two threads": every span is split
    between this thread and the helper, whatever its size (the halves' shares of the room too small,
    a damaged frame in either half)."""
    with (
        mock.patch.object(decode_into, "TWO_THREADS_MIN_BYTES", 0 if threads == "two threads" else 1 << 62),
        mock.patch.object(os, "cpu_count", lambda: 2),
    ):
        _decode_into_matches(parts, sized, room, flip)


def _decode_into_matches(parts: list[bytes], sized: list[bool], room: int, flip: tuple[int, float] | None) -> None:
    data = b"".join(_frame(p, c) for p, c in zip(parts, sized, strict=False))
    bounds: list[int] = []
    ranges, _torn = frames.scan_frames(data, bounds=bounds)
    if flip is not None:
        start, end = ranges[flip[0] % len(ranges)]
        buf = bytearray(data)
        buf[start + 4 + min(end - start - 5, int(flip[1] * (end - start - 4)))] ^= 0x21
        data = bytes(buf)
        bounds = []
        try:
            if frames.scan_frames(data, bounds=bounds)[0] != ranges:
                return  # the flip changed the structure: another log, not this property
        except SessionStorageCorruptError:
            return
    out = bytearray(b"\xee" * room)
    n = decode_frames_into(data, ranges, bounds, out)
    try:
        want = frames.decode_frames(data, ranges, bounds)
    except SessionStorageCorruptError:
        assert n is None
        return
    if n is not None:
        assert bytes(out[:n]) == want
    elif flip is None and len(ranges) > 1:
        # an intact multi-frame log is refused only for want of room, or a frame the scan could not bound
        assert len(want) > room or min(bounds) < 0


def _write_zstd(path: Path, plains: list[bytes]) -> None:
    path.write_bytes(b"".join(frames.compress_frame(p) for p in plains))


def _reference_text(path: Path, compression: str) -> tuple[str, bytes]:
    """``read_raw``'s text and header bytes as they were computed before the kept buffer."""
    data = path.read_bytes()
    if compression == "zstd":
        bounds: list[int] = []
        ranges, _torn = frames.scan_frames(data, bounds=bounds)
        if not ranges:
            raise SessionStorageCorruptError("empty or header-less Zstandard session log")
        data = frames.decode_frames(data, ranges, bounds)
    nl = data.find(b"\n")
    return data.decode("utf-8", "replace"), data if nl < 0 else data[:nl]


@pytest.mark.parametrize("keep", [16 * 1024 * 1024, 1, 300])
def test_transcript_text_equals_the_former_decoding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: int) -> None:
    monkeypatch.setattr(files, "SCRATCH_KEEP_BYTES", keep)  # 1 and 300: too small, the bytes path
    header = '{"type":"session","version":0,"id":"é"}\n'.encode()
    lines = [b'{"seq":%d,"t":"%s"}\n' % (i, ("x\xc3\xa9\xff" * i).encode("latin-1")) for i in range(40)]
    cases: dict[str, list[bytes]] = {
        "many": [header, *lines],
        "header only": [header],
        "no newline": [b'{"type":"session"}'],
        "compressible": [header, b'{"seq":0}\n' * 5000],  # more than ZSTD_TEXT_ROOM x its frames
    }
    token = CancelToken()
    for name, plains in cases.items():
        z, p = tmp_path / f"{name}.zstd", tmp_path / f"{name}.jsonl"
        _write_zstd(z, plains)
        p.write_bytes(b"".join(plains))
        assert files.transcript_text(str(z), "zstd", token) == _reference_text(z, "zstd"), name
        assert files.transcript_text(str(p), "none", token) == _reference_text(p, "none"), name
    torn = tmp_path / "torn.zstd"
    _write_zstd(torn, [header, *lines])
    with open(torn, "ab") as f:
        f.write(frames.compress_frame(b'{"seq":40}\n')[:-3])
    assert files.transcript_text(str(torn), "zstd", token) == _reference_text(torn, "zstd")
    empty = tmp_path / "empty.zstd"
    empty.write_bytes(b"")
    with pytest.raises(SessionStorageCorruptError, match="empty or header-less Zstandard session log"):
        files.transcript_text(str(empty), "zstd", token)
    damaged = tmp_path / "damaged.zstd"
    raw = bytearray(b"".join(frames.compress_frame(x) for x in [header, *lines]))
    raw[-1] ^= 1  # the last frame's checksum
    damaged.write_bytes(bytes(raw))
    with pytest.raises(SessionStorageCorruptError) as got:
        files.transcript_text(str(damaged), "zstd", token)
    with pytest.raises(SessionStorageCorruptError) as want:
        _reference_text(damaged, "zstd")
    assert str(got.value) == str(want.value)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_decodes_on_two_threads_of_its_own(tmp_path: Path) -> None:
    """The helper thread does not survive a fork: a child that used it before must start its own, not
    queue work to a thread that is not there (it would wait forever)."""
    plains = [b'{"n":%d,"text":"%s"}\n' % (i, b"x" * (i % 50)) for i in range(400)]
    path = tmp_path / "session.jsonl.zstd"
    _write_zstd(path, plains)
    data = path.read_bytes()
    bounds: list[int] = []
    ranges, _torn = frames.scan_frames(data, bounds=bounds)
    want = b"".join(plains)
    with mock.patch.object(decode_into, "TWO_THREADS_MIN_BYTES", 0), mock.patch.object(os, "cpu_count", lambda: 2):
        out = bytearray(len(want) * 2)
        assert decode_frames_into(data, ranges, bounds, out) == len(want)  # the parent's helper exists now
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only when its own decode finished right
            code = 1
            try:
                mine = bytearray(len(want) * 2)
                n = decode_frames_into(data, ranges, bounds, mine)
                code = 0 if n == len(want) and bytes(mine[:n]) == want else 1
            finally:
                os._exit(code)
        deadline = time.monotonic() + 30
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail("the forked child's decode never finished")
            time.sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == 0
