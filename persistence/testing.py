"""Damaged logs on purpose: the damage a crash, a flipped bit or another writer leaves, made to order.

Public and documented for tests and the demo, so neither hand-edits frames or lines: how a transcript
is laid out on disk (Zstandard frames, JSONL lines) stays the engine's.  Every function takes the path
of a JSONL transcript written by the engine (``session.jsonl.zstd`` or ``session.jsonl``, told apart by
the name) and rewrites it in place; none of them is for a user's log.

- ``tear_tail``: the last flush cut in half, as a crash mid-write leaves it (a torn tail);
- ``corrupt_middle``: one byte flipped inside a middle frame (its checksum fails) or a middle line
  made unparsable (a corrupt log);
- ``break_header``: the header record cut short (a log ``list()`` skips, which a viewer must show);
- ``rewrite_header``: the header record replaced (e.g. a newer format ``version``);
- ``last_record``: the last complete record, read back (e.g. to date a file like its last event).

May import: ``persistence.jsonl`` (frames), ``persistence.model`` (JSON text).
"""

from __future__ import annotations

from typing import Any

from persistence.jsonl import frames
from persistence.model.jsontext import js_dumps, js_loads


def _zstd(path: str) -> bool:
    return path.endswith(".zstd")


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _records(path: str, data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each complete frame (zstd) or line, newline included (plain)."""
    if _zstd(path):
        return frames.scan_frames(data)[0]
    out: list[tuple[int, int]] = []
    start = 0
    while True:
        nl = data.find(b"\n", start)
        if nl < 0:
            return out
        out.append((start, nl + 1))
        start = nl + 1


def tear_tail(path: str) -> int:
    """Cut the transcript's last frame (or line) in half; returns the bytes cut off."""
    data = _read(path)
    spans = _records(path, data)
    if len(spans) < 2:
        raise ValueError(f"{path}: nothing after the header to tear")
    start, end = spans[-1]
    keep = start + (end - start) // 2
    with open(path, "r+b") as f:
        f.truncate(keep)
    return len(data) - keep


def corrupt_middle(path: str) -> None:
    """Damage one record in the middle of the transcript: a flipped byte inside a middle zstd frame (its
    checksum fails), or, in a plain transcript, a middle line that is no longer JSON."""
    data = bytearray(_read(path))
    spans = _records(path, bytes(data))
    if len(spans) < 3:
        raise ValueError(f"{path}: too few records to damage one in the middle")
    start, end = spans[len(spans) // 2]
    if _zstd(path):
        data[(start + end) // 2] ^= 0x5A
    else:
        data[start:end] = b"{not json\n"
    _write(path, bytes(data))


def _replace_header(path: str, record: bytes) -> None:
    data = _read(path)
    spans = _records(path, data)
    if not spans:
        raise ValueError(f"{path}: no header record")
    first = frames.compress_frame(record) if _zstd(path) else record
    _write(path, first + data[spans[0][1] :])


def break_header(path: str) -> None:
    """Cut the header record short (an incomplete JSON object on the first line)."""
    _replace_header(path, b'{"type":"session","version":0,"id":\n')


def header_of(path: str) -> dict[str, Any]:
    """The transcript's header record as stored."""
    data = _read(path)
    spans = _records(path, data)
    if not spans:
        raise ValueError(f"{path}: no header record")
    plain = frames.decode_frame(data, *spans[0]) if _zstd(path) else data[: spans[0][1]]
    value = js_loads(plain.rstrip(b"\n"))
    if not isinstance(value, dict):
        raise ValueError(f"{path}: the first record is not an object")
    return value


def rewrite_header(path: str, **changes: Any) -> dict[str, Any]:
    """Replace header fields (e.g. ``version=1``, a newer format); returns the header written."""
    header = header_of(path)
    header.update(changes)
    _replace_header(path, js_dumps(header) + b"\n")
    return header


def last_record(path: str) -> dict[str, Any] | None:
    """The transcript's last complete record (a packed chunk row as stored), or None."""
    data = _read(path)
    spans = _records(path, data)
    if not spans:
        return None
    plain = frames.decode_frame(data, *spans[-1]) if _zstd(path) else data[spans[-1][0] : spans[-1][1]]
    lines = plain.rstrip(b"\n").rsplit(b"\n", 1)
    value = js_loads(lines[-1])
    return value if isinstance(value, dict) else None


__all__ = ["break_header", "corrupt_middle", "header_of", "last_record", "rewrite_header", "tear_tail"]
