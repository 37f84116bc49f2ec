"""A JSONL transcript's stored bytes and its plaintext lines, in both directions, for callers that
stream or rewrite a transcript's bytes (``sessionscope raw``, a redacted copy) without knowing how
the engine stores them (Zstandard frames or plain lines).

May import: ``persistence.jsonl.frames``, ``persistence.artifact`` (``RawBytes``).
"""

from __future__ import annotations

from persistence.artifact import RawBytes
from persistence.jsonl import frames


def complete_plaintext(raw: RawBytes) -> tuple[bytes, ...]:
    """The plaintext of ``raw`` in pieces, each ending at a record boundary: the complete frames of a
    zstd transcript (a torn final frame is left out, as ``read_raw`` does; a damaged frame raises
    ``SessionStorageCorruptError``), or the bytes themselves of a plain one."""
    if raw.compression != "zstd":
        return (raw.data,)
    view = memoryview(raw.data)
    ranges, _torn = frames.scan_frames(view)
    return tuple(frames.decode_frame(view, start, end) for start, end in ranges)


def stored_bytes(plain: bytes, compression: str, *, torn: bool = False) -> bytes:
    """How a transcript of ``compression`` stores ``plain`` (whole JSONL lines, newline included):
    one checksummed frame (byte-identical to upstream's encoder) or the lines as they are.  ``torn``:
    as a crash mid-write leaves them (a frame without its last bytes; ``plain`` without its newline)."""
    if compression == "none":
        return plain
    frame = frames.compress_frame(plain)
    return frame[:-2] if torn else frame


__all__ = ["complete_plaintext", "stored_bytes"]
