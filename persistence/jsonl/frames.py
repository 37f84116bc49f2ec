"""The zstd frame container: structural scan, per-batch frames, torn-tail decoding (jsonl-backend §9).

Decoding is bounded: a 32 KiB frame can declare 1 GiB of zeros, so every frame is decoded
through ``decompress_bounded``, which never holds much more than a per-frame cap of plaintext
and reports a frame past it as corruption instead of allocating it (issue 10 item 12).
"""

from __future__ import annotations

import threading
from itertools import chain

import zstandard

from persistence.errors import SessionStorageCorruptError

MAGIC = b"\x28\xb5\x2f\xfd"
_MAGIC_U32 = 0xFD2FB528
COMPRESSION_LEVEL = 3

# Most plaintext one frame may decode to: far above any real batch frame (upstream frames hold one
# write-behind batch; real ones decode to KiB, the fixtures' largest to 15 KiB).
MAX_FRAME_PLAINTEXT_BYTES = 64 * 1024 * 1024
# A frame may also decode to this multiple of its compressed size, so a fork's seed frame of a huge
# session (one frame for the whole parent log) stays readable: real JSONL compresses about 8x at level 3
# (the fixtures' frames: at most 8.6x), while a zero bomb reaches about 32,000x.
MAX_FRAME_EXPANSION_RATIO = 256
# RFC 8878 §3.1.1.2: no block decodes to more than Block_Maximum_Size = min(window, 128 KiB), and
# every block takes at least 3 header bytes plus 1 payload byte (raw size-0 blocks yield nothing).
_BLOCK_MAX_PLAINTEXT_BYTES = 128 * 1024
_MIN_BLOCK_BYTES = 4


def corrupt(detail: str) -> SessionStorageCorruptError:
    """A ``SessionStorageCorruptError`` for a damaged zstd log, with upstream's prefix."""
    return SessionStorageCorruptError("corrupt Zstandard session log: " + detail)


def compress_frame(plaintext: bytes) -> bytes:
    """One checksummed frame without a content size, byte-identical to upstream's streaming encoder."""
    c = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL, write_checksum=True).compressobj()
    return c.compress(plaintext) + c.flush()


def scan_frames(
    buf: bytes | memoryview, max_frames: int | None = None, bounds: list[int] | None = None
) -> tuple[list[tuple[int, int]], int | None]:
    """Complete frame ranges and the start of a torn final frame (never decompresses).

    ``bounds``, when given, receives per complete frame the most plaintext its block headers allow
    (raw and RLE blocks name their size, a compressed block yields at most 128 KiB), or -1 for a
    frame that declares a content size (``decode_frames`` then checks that frame on its own).
    """
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
        most = -1 if fcs_bytes else 0
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
            if most >= 0:
                most += _BLOCK_MAX_PLAINTEXT_BYTES if btype == 2 else bsize
            if last:
                break
        if checksum:
            if n - offset < 4:
                return frames, start
            offset += 4
        frames.append((start, offset))
        if bounds is not None:
            bounds.append(most)
        if max_frames is not None and len(frames) == max_frames:
            return frames, None
    return frames, None


def _frame_header_bytes(fhd: int) -> int:
    """Length of a frame header, magic included, from its descriptor byte."""
    single = fhd & 0x20
    fcs_flag = fhd >> 6
    did_bytes = (0, 1, 2, 4)[fhd & 0x03]
    fcs_bytes = (1 if single else 0) if fcs_flag == 0 else (1 << fcs_flag)
    return 5 + (0 if single else 1) + did_bytes + fcs_bytes


def _block_at(buf: bytes | bytearray | memoryview, offset: int) -> tuple[int, int, bool, bool] | None:
    """(end, most plaintext, exact, last) of the block whose header starts at ``offset``; None while the
    block is incomplete. A reserved block type is corruption (as in ``scan_frames``)."""
    if len(buf) - offset < 3:
        return None
    bh = buf[offset] | (buf[offset + 1] << 8) | (buf[offset + 2] << 16)
    btype = (bh >> 1) & 3
    if btype == 3:
        raise corrupt(f"reserved block type at byte {offset}")
    bsize = bh >> 3
    end = offset + 3 + (1 if btype == 1 else bsize)
    if end > len(buf):
        return None
    if btype == 2:  # compressed: only the format's block maximum is known before decoding
        return end, _BLOCK_MAX_PLAINTEXT_BYTES, False, bool(bh & 1)
    return end, bsize, True, bool(bh & 1)  # raw and RLE blocks name their regenerated size


def first_frame_end(buf: bytes | bytearray | memoryview, resume: int = 0) -> tuple[int | None, int]:
    """(end of the frame at the start of ``buf`` or None while it is incomplete, where to resume).

    For a file read a chunk at a time: pass the returned offset back with the longer prefix, so every
    block header is walked once in all (linear), not once per chunk. Structural damage raises the
    ``scan_frames`` messages.
    """
    n = len(buf)
    offset = resume
    if offset == 0:
        if n < 4:
            return None, 0
        if int.from_bytes(buf[0:4], "little") != _MAGIC_U32:
            raise corrupt("invalid frame magic at byte 0")
        if n < 5:
            return None, 0
        if buf[4] & 0x18:
            raise corrupt("reserved frame-header bit at byte 4")
        offset = _frame_header_bytes(buf[4])
        if n < offset:
            return None, 0
    checksum = 4 if buf[4] & 0x04 else 0
    while True:
        block = _block_at(buf, offset)
        if block is None:
            return None, offset
        end, _most, _exact, last = block
        if last:
            end += checksum
            return (end if end <= n else None), offset  # resume at this block: its checksum may still be due
        offset = end


def plaintext_cap(compressed_bytes: int) -> int:
    """Most plaintext a frame (or blob) of ``compressed_bytes`` may decode to before it counts as corrupt."""
    return max(MAX_FRAME_PLAINTEXT_BYTES, MAX_FRAME_EXPANSION_RATIO * compressed_bytes)


_local = threading.local()


def decompressor() -> zstandard.ZstdDecompressor:
    """This thread's decompressor (creating a context costs more than decoding a header frame)."""
    d = getattr(_local, "d", None)
    if d is None:
        d = _local.d = zstandard.ZstdDecompressor()
    return d


# Plaintext one ``decompress`` call may yield at most: the binding gathers a call's output twice
# (pieces, then their join), so big calls would double the peak above the cap.
_FEED_PLAINTEXT_BYTES = 4 * 1024 * 1024


def _walk_blocks(view: memoryview) -> list[tuple[int, int, bool]]:
    """(end, most plaintext, exact) of the whole blocks of the frame at the start of ``view``, as far as
    they can be walked (a damaged or torn structure just ends the list: the decoder judges the rest)."""
    n = len(view)
    if n < 5 or view[:4] != MAGIC or view[4] & 0x08:
        return []
    offset = _frame_header_bytes(view[4])
    blocks: list[tuple[int, int, bool]] = []
    while offset <= n:
        try:
            block = _block_at(view, offset)
        except SessionStorageCorruptError:
            break
        if block is None:
            break
        end, most, exact, last = block
        blocks.append((end, most, exact))
        if last:
            break
        offset = end
    return blocks


def _frame_bound(view: memoryview) -> int | None:
    """Most plaintext the frame filling ``view`` exactly can decode to (the sum of its blocks' bounds);
    None unless its blocks walk to a last block whose end (and checksum) is the end of ``view``."""
    n = len(view)
    if n < 5 or view[:4] != MAGIC or view[4] & 0x18:
        return None
    checksum = 4 if view[4] & 0x04 else 0
    offset = _frame_header_bytes(view[4])
    total = 0
    while True:
        try:
            block = _block_at(view, offset)
        except SessionStorageCorruptError:
            return None
        if block is None:
            return None
        end, most, _exact, last = block
        total += most
        if last:
            return total if end + checksum == n else None
        offset = end


def _declared_size(view: memoryview) -> int:
    try:
        return int(zstandard.frame_content_size(view))
    except zstandard.ZstdError:
        return -1  # no readable frame header: the decoder reports it


def decompress_bounded(data: bytes | bytearray | memoryview, cap: int) -> tuple[bytes, bool, int] | None:
    """Decode the zstd frame at the start of ``data`` without ever holding more than ``cap`` plaintext
    bytes (plus two blocks, 256 KiB); None as soon as its plaintext passes ``cap``.

    Returns (plaintext, whether the frame ended, input bytes the frame used). Input goes to the decoder
    in pieces whose worst-case output fits the room left: whole blocks whose sizes the block headers
    bound, and 4 bytes per 128 KiB of room where no header was walked (a block is at least 4 bytes and
    yields at most 128 KiB). ``zstandard.ZstdError`` propagates.
    """
    view = memoryview(data)
    n = len(view)
    dobj = decompressor().decompressobj()
    if _declared_size(view) > cap:
        # Refused unread. A smaller declared size proves nothing: with zstandard 0.25, a frame declaring
        # 60,000,000 bytes decoded to 1 GiB without an error, so it is bounded like any other.
        return None
    blocks = _walk_blocks(view)
    parts: list[bytes] = []
    produced = pos = i = 0
    while pos < n and not dobj.eof:
        room = cap - produced
        budget = min(room, _FEED_PLAINTEXT_BYTES)
        end, most = pos, 0
        while i < len(blocks) and most + blocks[i][1] <= budget:
            end, most = blocks[i][0], most + blocks[i][1]
            i += 1
        if end == pos and i < len(blocks):
            block_end, block_most, exact = blocks[i]
            if exact and block_most > room:
                return None  # a raw or RLE block names its size: no need to decode it
            end = block_end  # one compressed block past the room: its real output decides
            i += 1
        elif end == pos:
            end = pos + _MIN_BLOCK_BYTES * max(1, budget // _BLOCK_MAX_PLAINTEXT_BYTES)
        piece = dobj.decompress(view[pos:end])
        pos = min(end, n)
        produced += len(piece)
        if produced > cap:
            return None
        if piece:
            parts.append(piece)
    out = parts[0] if len(parts) == 1 else b"".join(parts)
    return out, dobj.eof, pos - len(dobj.unused_data) if dobj.eof else pos


def _decode_whole(view: memoryview, cap: int) -> bytes | None:
    """The frame's plaintext in one decoder call when its block headers prove it fits ``cap``; None when
    they do not, or when anything is off (the bounded path then decodes it and names the damage).

    Why: the bounded path's feeding loop cost ~25 us a frame, twice the decoding itself (904 frames of
    the 202k-event log: 37 ms against 12 ms, issue 25).  A frame whose raw/RLE sizes plus 128 KiB per
    compressed block stay under ``cap`` cannot yield more than ``cap`` (RFC 8878 block maximum), so it
    needs no bound; every real frame qualifies (a write batch decodes to KiB, ``cap`` is >= 64 MiB).
    """
    most = _frame_bound(view)
    if most is None or most > cap or _declared_size(view) > cap:
        return None
    dobj = decompressor().decompressobj()
    try:
        out = dobj.decompress(view)
    except zstandard.ZstdError:
        return None
    if not dobj.eof or dobj.unused_data:
        return None
    return out


def decode_frames(buf: bytes | bytearray | memoryview, ranges: list[tuple[int, int]], bounds: list[int] | None = None) -> bytes:
    """The plaintext of consecutive complete frames, joined, as ``decode_frame`` of each would give it.

    With the ``bounds`` ``scan_frames`` reported for ``ranges``: when every frame's bound is under its
    cap, the whole span goes through one decoder reading across frames (the same frame boundaries: the
    scan walked the very block headers the decoder reads, and each frame ended where its last block
    and checksum do).  Any decoder error sends it frame by frame, where the damaged frame is named.

    Why: a decoder per frame cost ~4 us of set-up plus ~2 us of bound walking a frame; the 904 frames
    of the 202k-event log spent 5 ms there, a third of ``read_raw`` (issue 25: "stream the
    decompressed bytes").
    """
    view = memoryview(buf)
    if not ranges:
        return b""
    if bounds is not None and len(ranges) > 1 and all_bounded(ranges, bounds):
        start, end = ranges[0][0], ranges[-1][1]
        flat = list(chain.from_iterable(ranges))
        if flat[1:-1:2] == flat[2::2]:  # each frame starts where the one before ended
            try:
                return decompressor().decompressobj(read_across_frames=True).decompress(view[start:end])
            except zstandard.ZstdError:
                pass  # named below, frame by frame
    if len(ranges) == 1:
        return decode_frame(view, *ranges[0])
    return b"".join([decode_frame(view, start, end) for start, end in ranges])


def all_bounded(ranges: list[tuple[int, int]], bounds: list[int]) -> bool:
    """Whether every frame of ``ranges`` has a bound (from ``scan_frames``) under its plaintext cap, so
    one decoder may read across them all without a frame decoding past what a bomb check allows."""
    if len(bounds) != len(ranges) or min(bounds) < 0:
        return False
    if max(bounds) <= MAX_FRAME_PLAINTEXT_BYTES:
        return True  # under every frame's cap (``plaintext_cap`` is never less)
    for (start, end), most in zip(ranges, bounds, strict=True):
        if most < 0 or most > max(MAX_FRAME_PLAINTEXT_BYTES, MAX_FRAME_EXPANSION_RATIO * (end - start)):
            return False
    return True


def decode_frame(buf: bytes | bytearray | memoryview, start: int, end: int, *, header: bool = False) -> bytes:
    """Plaintext of one complete frame; any decoder failure, or plaintext past the cap, is corruption.

    A header frame gets the flat cap only (no ratio allowance): a header is one short JSON line.
    """
    cap = MAX_FRAME_PLAINTEXT_BYTES if header else plaintext_cap(end - start)
    view = memoryview(buf)[start:end]
    out = _decode_whole(view, cap)
    if out is not None:
        return out
    what = "header frame" if header else f"frame at byte {start}"
    try:
        got = decompress_bounded(view, cap)
        if got is None:
            raise corrupt(f"{what} decodes to more than {cap} bytes")
        out, ended, used = got
        if not ended or used != end - start:
            raise zstandard.ZstdError("frame did not end where the scan said")
        return out
    except zstandard.ZstdError as err:
        raise corrupt(f"{what} failed validation") from err


def decompress_prefix(torn: bytes | bytearray | memoryview) -> bytes:
    """Whatever plaintext a torn final frame yields; decoder errors give nothing, plaintext past the cap
    is corruption (a torn tail is cut by repair: a bomb must not pass for one, nor be decoded)."""
    cap = plaintext_cap(len(torn))
    try:
        got = decompress_bounded(torn, cap)
    except zstandard.ZstdError:
        return b""
    if got is None:
        raise corrupt(f"torn final frame decodes to more than {cap} bytes")
    return got[0]
