"""``decode_frames_into``: a transcript's frames decoded into a caller's buffer, on two cores when it pays.

Why a buffer: ``read_raw`` decodes its text straight from a buffer kept across reads; a fresh 5 MB of
plaintext cost ~1,200 page faults, a third of the 202k-event log's decode (issue 25).

Why two threads: zstd frames are independent and the binding releases the GIL while it decodes, so
the second half of the frames (split at the frame boundary nearest the middle of the compressed
bytes) is decoded by a helper thread while this one decodes the first: 6.8 -> 4.0 ms for the 202k
log's 904 frames on 2 cores, against ``read_raw``'s target of 1.2x upstream (issue 25 item 4).
Upstream writes frames without a content size, so where the first half's plaintext ends is known
only once it is decoded: the second half goes to the back of the buffer, at the share of the room
its compressed bytes have, and is moved into place after (one ``memmove``, ~0.3 ms for 2.5 MB).
Either half not fitting its share sends the whole span through one thread, as before.

Below ``TWO_THREADS_MIN_BYTES`` of compressed input, or on one core, one thread decodes: handing
work to the helper costs ~50-100 us.  The helper is one thread for the process, started on first
use; reads on several threads queue on it, each still decoding its first half itself.  A forked child
starts its own (the parent's thread does not survive a fork; work queued to it would wait forever).
"""

from __future__ import annotations

import bisect
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain

import zstandard

from persistence.jsonl.frames import all_bounded, decompressor

TWO_THREADS_MIN_BYTES = 256 * 1024  # compressed bytes: below, the handoff costs more than it saves

_helper: ThreadPoolExecutor | None = None
_helper_lock = threading.Lock()


def decode_frames_into(buf: bytes, ranges: list[tuple[int, int]], bounds: list[int], out: bytearray) -> int | None:
    """``frames.decode_frames(buf, ranges, bounds)`` written into ``out`` instead of a new ``bytes``: how
    many bytes it wrote; None when the frames do not take the one-stream path (at least two frames,
    each bounded, each starting where the one before ended), the decoder refuses them, or their
    plaintext does not fit ``out`` (``decode_frames`` then decodes them, and names any damage)."""
    if len(ranges) < 2 or not all_bounded(ranges, bounds):
        return None
    flat = list(chain.from_iterable(ranges))
    if flat[1:-1:2] != flat[2::2]:
        return None
    start, end = ranges[0][0], ranges[-1][1]
    if end - start >= TWO_THREADS_MIN_BYTES and (os.cpu_count() or 1) >= 2:
        n = _halves_into(buf, ranges, out)
        if n is not None:
            return n
    return _span_into(buf, start, end, out, 0, len(out))


def _halves_into(buf: bytes, ranges: list[tuple[int, int]], out: bytearray) -> int | None:
    start, end = ranges[0][0], ranges[-1][1]
    starts = [s for s, _e in ranges]
    k = min(max(bisect.bisect_left(starts, (start + end) // 2), 1), len(ranges) - 1)
    split = starts[k]
    back = len(out) * (split - start) // (end - start)  # the second half's plaintext goes from here
    second: Future[int | None] = _helper_pool().submit(_span_into, buf, split, end, out, back, len(out))
    try:
        first = _span_into(buf, start, split, out, 0, back)
    finally:
        rest = second.result()  # the helper writes into ``out``: never leave while it does
    if first is None or rest is None:
        return None
    with memoryview(out) as whole:
        whole[first : first + rest] = whole[back : back + rest]  # overlapping moves are memmove
    return first + rest


def _span_into(buf: bytes, start: int, end: int, out: bytearray, at: int, limit: int) -> int | None:
    """Decode ``buf[start:end]`` (whole frames) into ``out[at:limit]``: bytes written, or None when the
    decoder refuses them or their plaintext does not fit."""
    got = 0
    with memoryview(buf) as whole, whole[start:end] as span, memoryview(out) as dest_all, dest_all[at:limit] as dest:
        try:
            reader = decompressor().stream_reader(span, read_across_frames=True)
            with reader:
                while got < len(dest):
                    with dest[got:] as rest:
                        n = reader.readinto(rest)
                    if not n:
                        return got
                    got += n
                return None if reader.read(1) else got  # a full buffer: more plaintext does not fit
        except zstandard.ZstdError:
            return None


def _helper_pool() -> ThreadPoolExecutor:
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sessionscope-zstd")
        return _helper


def _after_fork_in_child() -> None:
    global _helper, _helper_lock
    _helper, _helper_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
