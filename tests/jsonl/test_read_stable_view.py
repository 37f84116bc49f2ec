"""``read_stable_view`` gives what ``read_stable`` gives, from a buffer reused across reads (issue 25 item 4).

Why: a plain ``read_raw`` now decodes its text straight from a kept buffer instead of a fresh ``bytes``
of the file's size (the page faults of that allocation were a third of the read).  A reused buffer
must never leak a previous, longer file's bytes, must serve two threads at once, and the header found
in it must be the bytes before the first newline, whatever the text's encoding.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from persistence.backend import CancelToken
from persistence.errors import SessionAbortedError
from persistence.jsonl import files
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
