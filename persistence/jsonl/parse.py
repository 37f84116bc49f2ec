"""A transcript's bytes as records: the whole log, a tail long enough to show, or the lines after a mark.

Pure functions over bytes already read (``files``): the reader, the backups and anything else that
holds a transcript's bytes (a lone file, a backup copy) parse them the same way, so every read refuses
exactly what the others refuse (jsonl-backend §6-§10).
"""

from __future__ import annotations

from typing import Any

from persistence.backend import StoredLog, TornMarker
from persistence.errors import SessionStorageCorruptError
from persistence.jsonl import frames
from persistence.jsonl.lines import HeaderLessError, LineScanner, parse_header_record
from persistence.jsonl.tail_marks import TailMark
from persistence.model.chunk_rows import ROW_TAGS
from persistence.model.event_table import EventTable
from persistence.model.jsontext import JsonTextError, js_loads
from persistence.model.repair import has_turn_start

# Plaintext handed to the line scanner per call when frames are decoded one by one: a write batch's
# frame decodes to a few KiB, and one scanner call per frame cost ~8 us of fixed work (904 frames of the
# 202k-event log); a MiB a call keeps that off the profile.
FEED_BYTES = 1 << 20


def parse_log(data: bytes, path: str, compression: str) -> tuple[dict[str, Any], EventTable, TornMarker | None, int, int]:
    """(meta, events, torn, committed file offset, committed event count) of a whole transcript."""
    if compression == "zstd":
        return _parse_zstd(data, path)
    nl = data.find(b"\n")
    if nl < 0:
        raise HeaderLessError("empty or header-less session log")
    meta = parse_header_record(data[: nl + 1], path)
    events, torn, committed = scan_lines(data, nl + 1, 0)
    return meta, events, torn, committed, len(events)


def _parse_zstd(data: bytes, path: str) -> tuple[dict[str, Any], EventTable, TornMarker | None, int, int]:
    view = memoryview(data)
    bounds: list[int] = []
    ranges, torn_start = frames.scan_frames(data, bounds=bounds)  # bytes index faster than a memoryview (0.6 vs 1.0 ms)
    if not ranges:
        raise HeaderLessError("empty or header-less Zstandard session log")
    meta, header_len = zstd_meta(view, ranges[0], path)
    events, torn, committed, count = scan_frames_records(view, ranges[1:], torn_start, 0, header_len, bounds[1:])
    if torn is None and len(ranges) == 1:
        committed = ranges[0][1]  # a header-only log: the boundary is the end of the header frame
    return meta, events, torn, committed, count


def parse_tail(
    data: bytes, path: str, compression: str, min_events: int
) -> tuple[dict[str, Any], EventTable, TornMarker | None, int] | None:
    """(meta, events, torn, first seq) of a tail holding ``min_events`` committed events and a
    ``turn/start``; None when only the whole log would do."""
    if compression != "zstd":
        nl = data.find(b"\n")
        if nl < 0:
            return None
        meta = parse_header_record(data[: nl + 1], path)
        got = tail_of_lines(data, nl + 1, min_events)
        return None if got is None else (meta, *got)
    view = memoryview(data)
    ranges, torn_start = frames.scan_frames(view)
    if len(ranges) < 2:
        return None
    meta, _header_len = zstd_meta(view, ranges[0], path)
    body = ranges[1:]
    k = 2
    while k < len(body):  # whole frames from the end: each is decoded once per attempt
        chosen = body[len(body) - k :]
        first_seq = first_seq_of(frames.decode_frame(view, *chosen[0]))
        if first_seq is not None:
            events, torn, _committed, count = scan_frames_records(view, chosen, torn_start, first_seq, 0)
            if count >= min_events and has_turn_start(events, 0, count):
                return meta, events, torn, first_seq
        k *= 4
    # Few, large frames (a fork's seed is one): decompress them (cheap) and cut inside the text.
    plain = b"".join(frames.decode_frame(view, start, end) for start, end in body)
    got = tail_of_lines(plain, 0, min_events)
    if got is None or got[1] is not None:
        return None  # a complete frame ending mid-record is corruption: the whole read reports it
    events, _torn, first_seq = got
    torn = None
    if torn_start is not None:
        recovered, _t, _c = scan_lines(frames.decompress_prefix(view[torn_start:]), 0, first_seq + len(events))
        events = events + recovered
        torn = TornMarker(torn_start, recovered.records())
    return meta, events, torn, first_seq


def zstd_meta(view: memoryview, header_range: tuple[int, int], path: str) -> tuple[dict[str, Any], int]:
    """The header of a zstd log and its plaintext length."""
    first = frames.decode_frame(view, *header_range)
    if not first or first[-1:] != b"\n" or b"\n" in first[:-1]:
        raise frames.corrupt("first frame is not exactly one header line")
    return parse_header_record(first, path), len(first)


def count_intact_records(plain: bytes, next_seq: int) -> tuple[int, int | None]:
    """(how many lines of ``plain`` parse as records with a seq >= ``next_seq``, the first such seq)."""
    count, first = 0, None
    for line in plain.split(b"\n"):
        if not line.strip():
            continue
        seq = first_seq_of(line)
        if seq is not None and seq >= next_seq:
            count += 1
            first = seq if first is None else first
    return count, first


def first_seq_of(plain: bytes) -> int | None:
    """The seq of the first record in ``plain`` (a packed chunk row starts at its ``seq0``)."""
    end = plain.find(b"\n")
    try:
        value = js_loads(plain[: end if end >= 0 else len(plain)])
    except (JsonTextError, ValueError):
        return None
    if type(value) is not dict:
        return None
    seq = value.get("seq0") if value.get("type") in ROW_TAGS else value.get("seq")
    return seq if type(seq) is int and seq >= 0 else None


def tail_of_lines(data: bytes, floor: int, min_events: int) -> tuple[EventTable, TornMarker | None, int] | None:
    """(events, torn, first seq) of the shortest line-aligned suffix of ``data[floor:]`` (widened 4x at a
    time) that holds ``min_events`` committed events and a ``turn/start``; None when only all of it would."""
    window = 1 << 16
    while len(data) - window > floor:
        cut = data.find(b"\n", len(data) - window)
        start = cut + 1
        if cut >= 0 and start < len(data):
            end = data.find(b"\n", start)
            first_seq = first_seq_of(data[start : end + 1 if end >= 0 else len(data)])
            if first_seq is not None:
                events, torn, _committed = scan_lines(data, start, first_seq)
                if len(events) >= min_events and has_turn_start(events):
                    return events, torn, first_seq
        window *= 4  # one huge record at the end, an unreadable first line, or too few events
    return None


def stored_log(
    path: str, meta: dict[str, Any], events: EventTable, revision: str, torn: TornMarker | None, **extra: Any
) -> StoredLog:
    """A ``StoredLog`` of the transcript at ``path`` (its location is that path)."""
    return StoredLog(meta, events, revision, torn, raw_path=path, location={"kind": "jsonl", "path": path}, **extra)


def tail_mark(revision: str, check: bytes, offset: int, next_seq: int, meta: dict[str, Any]) -> TailMark:
    """The mark a later suffix read starts from: file identity (from ``revision``), offset, next seq, check bytes."""
    dev, ino = revision.split(":", 2)[:2]
    return TailMark((int(dev), int(ino)), offset, next_seq, check, meta)


def scan_lines(data: bytes, start: int, first_seq: int) -> tuple[EventTable, TornMarker | None, int]:
    """Plain records of ``data[start:]``: (events, torn marker, committed offset in ``data``)."""
    scanner = LineScanner(start, first_seq)
    if start > len(data) // 2:
        scanner.write(data[start:])  # a tail: copying it costs less than splitting what precedes it
    else:
        scanner.write(data, start)
    scanner.finish()
    torn = TornMarker(scanner.committed_bytes, []) if scanner.committed_bytes < len(data) else None
    return scanner.events, torn, scanner.committed_bytes


def _feed_frames(scanner: LineScanner, view: memoryview, ranges: list[tuple[int, int]], bounds: list[int] | None) -> None:
    """Hand the plaintext of ``ranges`` to ``scanner`` as if frame by frame, in order.

    The whole span is decoded in one call when ``bounds`` allow it (``frames.decode_frames``); when a
    frame is damaged, the frames before it are scanned first, so a record error there is still the
    one raised (the order a frame-at-a-time read has), then the damaged frame's error.
    """
    if bounds is not None:
        try:
            plain = frames.decode_frames(view, ranges, bounds)
        except SessionStorageCorruptError:
            plain = None  # the careful loop below finds which error comes first
        if plain is not None:
            scanner.write(plain)
            return
    batch: list[bytes] = []
    size = 0
    for start, end in ranges:
        try:
            piece = frames.decode_frame(view, start, end)
        except SessionStorageCorruptError:
            if batch:
                scanner.write(b"".join(batch))
            raise
        batch.append(piece)
        size += len(piece)
        if size >= FEED_BYTES:
            scanner.write(b"".join(batch))
            batch, size = [], 0
    if batch:
        scanner.write(b"".join(batch))


def scan_frames_records(
    view: memoryview,
    ranges: list[tuple[int, int]],
    torn_start: int | None,
    first_seq: int,
    plain_start: int,
    bounds: list[int] | None = None,
) -> tuple[EventTable, TornMarker | None, int, int]:
    """Records of complete event frames (plus what a torn last frame yields).

    Returns (events, torn marker, committed offset in ``view``, committed event count); records
    recovered from a torn frame follow the committed ones in ``events``.  ``bounds``: what
    ``frames.scan_frames`` reported for ``ranges`` (lets the span decode in one call).
    """
    scanner = LineScanner(plain_start, first_seq)
    _feed_frames(scanner, view, ranges, bounds)
    if scanner.committed_bytes != scanner.input_bytes:
        raise frames.corrupt("complete frame contains a torn JSONL record")
    if torn_start is None:
        scanner.finish()
        committed = ranges[-1][1] if ranges else 0
        return scanner.events, None, committed, len(scanner.events)
    complete = len(scanner.events)
    scanner.write(frames.decompress_prefix(view[torn_start:]))
    scanner.finish()
    return scanner.events, TornMarker(torn_start, scanner.events[complete:].records()), torn_start, complete
