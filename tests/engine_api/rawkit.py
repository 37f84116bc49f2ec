"""Small damaged artifacts built byte by byte (no store involved), shared by the raw-decoding tests."""

from __future__ import annotations

from persistence import js_dumps
from persistence.jsonl.frames import compress_frame

HEADER = {"type": "session", "version": 0, "id": "raw-1", "createdAt": 1, "cwd": "/work"}


def user_event(seq: int) -> dict[str, object]:
    return {"type": "user/message", "seq": seq, "time": 100 + seq, "data": {"id": f"m{seq}", "content": f"hello {seq}"}}


def user_lines(*seqs: int) -> bytes:
    return b"".join(js_dumps(user_event(s)) + b"\n" for s in seqs)


_HEADER_LINE = js_dumps(HEADER) + b"\n"


def _bad_checksum(frame: bytes) -> bytes:
    return frame[:-1] + bytes([frame[-1] ^ 0xFF])


# name -> (artifact bytes, compression)
LOGS: dict[str, tuple[bytes, str]] = {
    # a zstd log whose last frame was cut short (a torn write)
    "zstd-torn": (
        compress_frame(_HEADER_LINE)
        + compress_frame(user_lines(0, 1))
        + compress_frame(user_lines(2))
        + compress_frame(user_lines(3, 4))[:-3],
        "zstd",
    ),
    # a zstd log with a frame that fails its checksum, a good frame, then bytes that are no frame at all
    "zstd-damaged": (
        compress_frame(_HEADER_LINE)
        + _bad_checksum(compress_frame(user_lines(0, 1)))
        + compress_frame(user_lines(2))
        + b"GARBAGE!",
        "zstd",
    ),
    # a raw log whose last line has no newline (a torn write)
    "raw-torn": (_HEADER_LINE + user_lines(0, 1) + js_dumps(user_event(2))[:25], "none"),
    # a raw log with undecodable bytes and an empty line in the middle, then a torn tail
    "raw-damaged": (_HEADER_LINE + user_lines(0) + b"\xff\xfe not json\n\n" + user_lines(1) + b'{"type":"us', "none"),
}
