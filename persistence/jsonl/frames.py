"""The zstd frame container: structural scan, per-batch frames, torn-tail decoding (jsonl-backend §9)."""

from __future__ import annotations

import threading

import zstandard

from persistence.errors import SessionStorageCorruptError

MAGIC = b"\x28\xb5\x2f\xfd"
_MAGIC_U32 = 0xFD2FB528
COMPRESSION_LEVEL = 3


def corrupt(detail: str) -> SessionStorageCorruptError:
    return SessionStorageCorruptError("corrupt Zstandard session log: " + detail)


def compress_frame(plaintext: bytes) -> bytes:
    """One checksummed frame without a content size, byte-identical to upstream's streaming encoder."""
    c = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL, write_checksum=True).compressobj()
    return c.compress(plaintext) + c.flush()


def scan_frames(buf: bytes | memoryview, max_frames: int | None = None) -> tuple[list[tuple[int, int]], int | None]:
    """Complete frame ranges and the start of a torn final frame (never decompresses)."""
    frames: list[tuple[int, int]] = []
    n = len(buf)
    offset = 0
    while offset < n:
        start = offset
        if n - offset < 4:
            return frames, start
        if int.from_bytes(buf[offset : offset + 4], "little") != _MAGIC_U32:
            raise corrupt(f"invalid frame magic at byte {offset}")
        offset += 4
        if offset == n:
            return frames, start
        fhd = buf[offset]
        offset += 1
        if fhd & 0x18:
            raise corrupt(f"reserved frame-header bit at byte {offset - 1}")
        fcs_flag = fhd >> 6
        single = fhd & 0x20
        checksum = fhd & 0x04
        did_bytes = (0, 1, 2, 4)[fhd & 0x03]
        fcs_bytes = (1 if single else 0) if fcs_flag == 0 else (1 << fcs_flag)
        rest = (0 if single else 1) + did_bytes + fcs_bytes
        if n - offset < rest:
            return frames, start
        offset += rest
        while True:
            if n - offset < 3:
                return frames, start
            bh = buf[offset] | (buf[offset + 1] << 8) | (buf[offset + 2] << 16)
            offset += 3
            last = bh & 1
            btype = (bh >> 1) & 3
            bsize = bh >> 3
            if btype == 3:
                raise corrupt(f"reserved block type at byte {offset - 3}")
            payload = 1 if btype == 1 else bsize
            if n - offset < payload:
                return frames, start
            offset += payload
            if last:
                break
        if checksum:
            if n - offset < 4:
                return frames, start
            offset += 4
        frames.append((start, offset))
        if max_frames is not None and len(frames) == max_frames:
            return frames, None
    return frames, None


_local = threading.local()


def _decompressor() -> zstandard.ZstdDecompressor:
    # Creating a decompressor context costs more than decoding a header frame; one per thread.
    d = getattr(_local, "d", None)
    if d is None:
        d = _local.d = zstandard.ZstdDecompressor()
    return d


def decode_frame(buf: bytes | memoryview, start: int, end: int, *, header: bool = False) -> bytes:
    """Plaintext of one complete frame; any decoder failure is corruption."""
    try:
        d = _decompressor().decompressobj()
        out = d.decompress(bytes(buf[start:end]))
        if not d.eof or d.unused_data:
            raise zstandard.ZstdError("frame did not end where the scan said")
        return out
    except zstandard.ZstdError as err:
        if header:
            raise corrupt("header frame failed validation") from err
        raise corrupt(f"frame at byte {start} failed validation") from err


def decompress_prefix(torn: bytes | memoryview) -> bytes:
    """Whatever plaintext a torn final frame yields; decoder errors give nothing."""
    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(bytes(torn))
    except zstandard.ZstdError:
        return b""
