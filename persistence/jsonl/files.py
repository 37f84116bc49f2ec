"""A transcript as a file: its revision, an absence probe, stable whole or suffix reads and the header line.

The lowest JSONL module: the reader, the writer, the backups and the lenient listing (``entries``) all
read transcripts through these functions, and none of them imports the others to do so.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from persistence.backend import CancelToken
from persistence.errors import SessionStorageCorruptError
from persistence.jsonl import frames
from persistence.jsonl.decode_into import decode_frames_into

HEADER_CHUNK = 8192  # bytes read per step while looking for the header line


def revision_of(st: os.stat_result) -> str:
    """A transcript's opaque revision: device, inode, size, mtime and ctime (any write changes it)."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def revision_stamp(revision: str) -> tuple[int, int, int, int, int]:
    """The (dev, ino, size, mtime_ns, ctime_ns) a ``revision_of`` text names."""
    dev, ino, size, mtime, ctime = (int(part) for part in revision.split(":"))
    return dev, ino, size, mtime, ctime


def exists(path: str) -> bool:
    """Open-probe: ENOENT is absence, every other failure propagates (absence is never assumed)."""
    try:
        # A stat answers the common "absent" case cheaply; anything present is then really opened.
        os.stat(path)
    except FileNotFoundError:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    os.close(fd)
    return True


def fsync_dir(path: str) -> None:
    """Make a folder's entries (a new or renamed file) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_stable(path: str, token: CancelToken) -> tuple[bytes, str]:
    """The whole file and its revision, re-read until no writer changed it during the read."""
    return read_stable_from(path, 0, token)


def read_stable_from(path: str, offset: int, token: CancelToken) -> tuple[bytes, str]:
    """The file's bytes from ``offset`` on and its revision, re-read until no writer changed it meanwhile."""
    while True:
        token.check()
        before = revision_of(os.stat(path))
        data = read_from(path, offset)
        after = revision_of(os.stat(path))
        if before == after:
            return data, after


# ``read_stable_view``'s reusable buffer.  Reading a plain 5 MB transcript into a fresh ``bytes`` costs
# ~1,200 page faults before a byte is copied; into a buffer kept from the last read, none: the 202k
# session's ``read_raw`` took ~3x less in a loop of reads (measured 2026-12-05, a loaded 2-core box).
# Kept only up to this size, so the process holds at most this much for it; a larger transcript, or a
# read while another thread holds the buffer, reads into a buffer of its own.
SCRATCH_KEEP_BYTES = 16 * 1024 * 1024
_scratch = bytearray()
_scratch_lock = threading.Lock()


@contextmanager
def read_stable_view(path: str, token: CancelToken) -> Iterator[tuple[memoryview, str]]:
    """The whole file as a read-only view and its revision, like ``read_stable``, without a new ``bytes``.

    The view is valid only inside the ``with``: its buffer is reused by the next read.  Callers copy
    what they keep (``str(view, ...)`` decodes straight from it).
    """
    owned = _scratch_lock.acquire(blocking=False)
    try:
        while True:
            token.check()
            st = os.stat(path)
            before = revision_of(st)
            # One byte more than the size stat'ed: a read that fills it met a file that grew meanwhile.
            want = st.st_size + 1
            buf = _scratch_of(want) if owned else bytearray(want)
            n = _read_into(path, buf, want)
            after = revision_of(os.stat(path))
            if before == after and n < want:
                with memoryview(buf) as whole:
                    view = whole[:n].toreadonly()
                try:
                    yield view, after
                finally:
                    view.release()
                return
    finally:
        if owned:
            _scratch_lock.release()


@contextmanager
def scratch_buffer(want: int) -> Iterator[bytearray]:
    """A buffer of at least ``want`` bytes, the kept one when it is free (see ``SCRATCH_KEEP_BYTES``).

    Its bytes past what the caller writes are left over from earlier reads: use only what you wrote.
    """
    owned = _scratch_lock.acquire(blocking=False)
    try:
        yield _scratch_of(want) if owned else bytearray(want)
    finally:
        if owned:
            _scratch_lock.release()


def _scratch_of(want: int) -> bytearray:
    """The kept buffer grown to ``want`` bytes, or a buffer of its own past the kept size (lock held)."""
    global _scratch
    if want > SCRATCH_KEEP_BYTES:
        return bytearray(want)
    if len(_scratch) < want:  # room for a followed session's next appends too
        _scratch = bytearray(min(SCRATCH_KEEP_BYTES, want + want // 4))
    return _scratch


# Plaintext room a zstd transcript's text is first decoded into, per compressed byte: JSONL compresses
# ~5x at level 3 (the 202k-event log: 0.95 MB to 5.0 MB; the fixtures' frames at most 8.6x).  Text
# that does not fit is decoded again into a bytes of its own; a transcript whose room would pass
# ``SCRATCH_KEEP_BYTES`` goes there directly.
ZSTD_TEXT_ROOM = 12


def transcript_text(path: str, compression: str, token: CancelToken) -> tuple[str, bytes]:
    """(the transcript's plaintext as lossy UTF-8, its bytes before the first newline) for ``read_raw``:
    a torn final zstd frame left out, a header-less zstd log refused (``SessionStorageCorruptError``).

    Decoded from the kept buffer (no bytes of the text's size); the header bytes are a copy.
    """
    if compression != "zstd":
        with read_stable_view(path, token) as (view, _rev):
            text = str(view, "utf-8", "replace")
            return text, first_line_of(view, text)
    data, _rev = read_stable(path, token)
    bounds: list[int] = []
    ranges, _torn = frames.scan_frames(data, bounds=bounds)
    if not ranges:
        raise SessionStorageCorruptError("empty or header-less Zstandard session log")
    room = len(data) * ZSTD_TEXT_ROOM
    if room <= SCRATCH_KEEP_BYTES:
        with scratch_buffer(room) as buf:
            n = decode_frames_into(data, ranges, bounds, buf)
            if n is not None:
                with memoryview(buf) as whole, whole[:n] as view:
                    text = str(view, "utf-8", "replace")
                    return text, first_line_of(view, text)
    plain = frames.decode_frames(data, ranges, bounds)  # one decoder across the frames when they allow
    nl = plain.find(b"\n")
    return plain.decode("utf-8", "replace"), plain if nl < 0 else plain[:nl]


def first_line_of(view: memoryview, text: str) -> bytes:
    """The bytes of ``view`` before its first newline (all of it without one); ``text`` is ``view`` decoded.

    ASCII text (``str.isascii`` is a flag, not a scan) finds the newline in ``text`` at the same index.
    """
    if text.isascii():
        nl = text.find("\n")
        return bytes(view if nl < 0 else view[:nl])
    step = HEADER_CHUNK
    for start in range(0, len(view), step):
        nl = bytes(view[start : start + step]).find(b"\n")
        if nl >= 0:
            return bytes(view[: start + nl])
    return bytes(view)


def _read_into(path: str, buf: bytearray, want: int) -> int:
    """Bytes of ``path`` read into ``buf[:want]`` (fewer only at the file's end)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        got = 0
        with memoryview(buf) as whole:
            while got < want:
                with whole[got:want] as rest:
                    n = os.readv(fd, [rest])
                if not n:
                    break
                got += n
        return got
    finally:
        os.close(fd)


def read_first_line(path: str, compression: str, *, limit: int | None = None) -> bytes | None:
    """The header record without its newline, reading 8 KiB at a time; None when the file ends
    (or ``limit`` bytes pass) before a complete first line/frame. Structural damage raises.

    Linear in the header's size: only the new bytes of each chunk are searched, and the frame's block
    headers are walked once (a 16 MB line took 9.8 s when every chunk re-scanned from byte 0). A header
    past ``frames.MAX_FRAME_PLAINTEXT_BYTES`` (a line, or a compressed frame) is corruption, refused
    before more of the file is read.
    """
    cap = frames.MAX_FRAME_PLAINTEXT_BYTES
    acc = bytearray()
    resume = 0
    fd = os.open(path, os.O_RDONLY)
    try:
        while limit is None or len(acc) < limit:
            chunk = os.read(fd, HEADER_CHUNK)
            if not chunk:
                return None
            searched = len(acc)
            acc += chunk
            if compression == "none":
                nl = acc.find(b"\n", searched)
                if nl > cap or (nl < 0 and len(acc) > cap):
                    raise SessionStorageCorruptError(f"corrupt session log: header line exceeds {cap} bytes")
                if nl >= 0:
                    return bytes(acc[:nl])
                continue
            end, resume = frames.first_frame_end(acc, resume)
            if end is None:
                # A real encoder stores an incompressible block raw: 3 header bytes per 128 KiB block
                # plus an 18-byte frame header and a 4-byte checksum is the most it adds to the plaintext.
                if len(acc) > cap + 3 * (cap // (128 * 1024) + 1) + 22:
                    raise frames.corrupt(f"header frame exceeds {cap} bytes")
                continue
            plain = frames.decode_frame(acc, 0, end, header=True)
            if not plain or plain[-1:] != b"\n" or b"\n" in plain[:-1]:
                raise frames.corrupt("first frame is not exactly one header line")
            return plain[:-1]
        return None
    finally:
        os.close(fd)


def read_from(path: str, offset: int) -> bytes:
    """The file's bytes from ``offset`` on, in one read (no revision check: the caller compares stats)."""
    with open(path, "rb") as f:
        if offset:
            f.seek(offset)
        return f.read()
