"""The timeline of a log the engine refuses: its decodable prefix, then one row saying what stopped it.

Why: a corrupt log has no ``view`` events (the engine refuses it whole, as upstream does), yet the
turns before the damage are what a support engineer reads first.  The engine's lenient decoder
(``persistence.iter_raw``, the same one search reads damaged logs with, see ``app.search.damaged``)
yields the decodable text and the damage in file order; this module folds the events up to the
first thing that breaks the log and words that thing for the marker row.

What stops the prefix (the first that applies, in file order):
- a damaged piece of the artifact (a zstd frame that fails to decode, undecodable bytes, a torn tail);
- a line that is not JSON, or not an object;
- an event whose ``seq`` is not the next one (a gap or a repeat): after it, seqs no longer say order.
When none applies, the engine refused the log for a reason the bytes do not show (an event of an
invalid shape, say): every readable event is shown and the row quotes the engine's reason.

Events after the damage are not folded (their turns would start mid-way); the row says how many
lines still decode after it, and the Raw tab shows them.

Stdlib (``damaged_timeline_of_file`` reads the artifact, for a worker thread), ``app.timeline`` and the
public ``persistence`` package; ``packed_row`` is the one reader of
a packed chunk row outside the engine, shared with search so both read such rows alike.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from app.glossary import CUT_TURN_INFO, OPEN_TURN_INFO, noun, plural
from app.search.damaged import packed_row
from app.timeline.nodes import ERROR, OPEN, TimelineNode
from app.timeline.spans import Span, derive_tail
from persistence import EventTable, PackedRun, RawChunk, RawDamage, ReadablePrefix, iter_raw

DAMAGE = "damage"  # node kind and flag of the marker row
_ENGINE_PREFIX = re.compile(r"^corrupt (Zstandard )?session log: (frame at byte \d+ )?")


@dataclass(frozen=True, slots=True)
class Stop:
    """What ended the decodable prefix, worded for the marker row."""

    what: str  # "frame 3 at byte 2,465 failed validation (checksum or compressed data damaged)"
    file_offset: int  # the artifact byte where it starts (-1: the bytes do not show it)
    lines_after: int  # lines that still decode after it (the Raw tab shows them)
    raw_line: int = -1  # its line in the Raw tab (decoded lines and marker lines, from 0); -1: not a line
    after_text: str | None = None  # the marker row's Info instead of the lines count (a SQLite store's rows)


@dataclass(frozen=True, slots=True)
class DamagedTimeline:
    """The fold of a damaged log's decodable prefix: ``nodes`` are the blocks ``spans[first:]``."""

    records: EventTable
    spans: list[Span]
    first: int
    nodes: list[TimelineNode]
    stop: Stop


def stop_node(stop: Stop) -> TimelineNode:
    """The red "Stopped here" row for ``stop`` (a fresh node: a model owns the nodes it shows)."""
    if stop.after_text is not None:
        after = stop.after_text
    elif stop.lines_after:
        after = f"{plural(stop.lines_after, 'more line')} {noun(stop.lines_after, 'decodes', 'decode')} after it (Raw tab, F8)"
    else:
        after = "nothing decodes after it"
    return TimelineNode(DAMAGE, (DAMAGE,), "■ Stopped here", stop.what, after, flags=frozenset({ERROR, DAMAGE}))


def damaged_timeline(
    data: bytes | memoryview, compression: str, reason: str, cancelled: Callable[[], bool] | None = None
) -> DamagedTimeline:
    """The timeline of a log's readable prefix (``reason``: what the engine said of the log)."""
    items, stop = decodable_prefix(data, compression, reason, cancelled)
    records = EventTable(items)
    spans, first, nodes = derive_tail(records, len(records))
    if nodes and nodes[-1].kind == "turn" and OPEN in nodes[-1].flags:
        # Not "running or crashed": the log goes on, but nothing after the damage can be folded.
        nodes[-1].info = nodes[-1].info.replace(OPEN_TURN_INFO, CUT_TURN_INFO)
    return DamagedTimeline(records, spans, first, nodes, stop)


def damaged_timeline_of_prefix(prefix: ReadablePrefix, reason: str) -> DamagedTimeline:
    """The timeline of a refused SQLite session's rows before its first damaged one (the engine's
    ``readable_prefix``); ``reason`` (the engine's verdict) words the row when no row shows damage."""
    records = prefix.events
    spans, first, nodes = derive_tail(records, len(records))
    if nodes and nodes[-1].kind == "turn" and OPEN in nodes[-1].flags and prefix.stop is not None:
        nodes[-1].info = nodes[-1].info.replace(OPEN_TURN_INFO, CUT_TURN_INFO)
    if prefix.stop is None:
        stop = Stop(f"every stored row decodes; the engine refused the session: {reason}", -1, 0, after_text="")
    else:
        rows = prefix.stop.rows_after
        stop = Stop(prefix.stop.why, -1, 0, after_text=f"{rows:,} stored row(s) from there on are not shown")
    return DamagedTimeline(records, spans, first, nodes, stop)


def damaged_timeline_of_file(
    path: str, compression: str, reason: str, cancel: threading.Event | None = None
) -> DamagedTimeline | None:
    """``damaged_timeline`` of the artifact at ``path`` (None when it cannot be read; the Raw tab says why).

    For a worker thread: it reads the whole file.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return damaged_timeline(data, compression, reason, None if cancel is None else cancel.is_set)


def decodable_prefix(
    data: bytes | memoryview, compression: str, reason: str, cancelled: Callable[[], bool] | None = None
) -> tuple[list[dict[str, Any] | PackedRun], Stop]:
    """(the events before the first damage, in file order; what stopped them)."""
    items: list[dict[str, Any] | PackedRun] = []
    expected: int | None = None
    what: str | None = None
    where = raw_line = -1
    after = 0
    for frame, piece, line_no, line, offset in _lines(data, compression, cancelled):
        if what is not None:
            after += 1 if line else 0
            continue
        if piece is not None:
            # The Raw tab shows a marker line in its place, after the ``line_no`` lines before it.
            what, where, raw_line = _damage_phrase(piece, frame), piece.file_offset, line_no
            continue
        raw_line = line_no - 1  # no marker line comes before the first damage; kept only if this line stops it
        if not line.strip():
            continue
        at = _Where(line_no, frame if compression == "zstd" else -1, offset)
        try:
            value = json.loads(line)
        except ValueError:  # invalid JSON or invalid UTF-8
            what, where = f"{at} is not valid JSON", offset
            continue
        if not isinstance(value, dict):
            what, where = f"{at} is not a JSON object", offset
            continue
        if line_no == 1:
            if value.get("type", "session") != "session" or "id" not in value:
                what, where = f"{at} is not a session header line", offset
            continue
        got: Any
        item: dict[str, Any] | PackedRun
        if "seq0" in value and (run := packed_row(value)) is not None:
            got, size, item = run.seq0, len(run), run
        else:
            got, size, item = value.get("seq"), 1, value
        if type(got) is not int or not isinstance(value.get("type"), str):
            what, where = f"{at} is not an event (no type or seq)", offset
            continue
        if expected is not None and got != expected:
            what, where = f"{at}: seq gap, expected {expected:,}, got {got:,}", offset
            continue
        expected = got + size
        items.append(item)
    if what is None:
        what = "the engine refused the log: " + reason if reason else "the log ends here"
        raw_line = -1
    return items, Stop(what, where, after, raw_line)


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a line is, worded only if it stops the prefix (most lines never are)."""

    line: int
    frame: int  # -1: a plain log, where the byte offset is exact
    offset: int

    def __str__(self) -> str:
        if self.line == 1:
            return "the session header (line 1)"
        return f"line {self.line:,}" + (f" of frame {self.frame}" if self.frame >= 0 else f" (byte {self.offset:,})")


def _lines(
    data: bytes | memoryview, compression: str, cancelled: Callable[[], bool] | None
) -> Iterator[tuple[int, RawDamage | None, int, bytes, int]]:
    """(frame number, damage or None, line number, line, file offset) in file order.

    Frames and lines count from 1 (the header is line 1, and frame 1 of a zstd log); a line's file
    offset is exact in a plain log and the offset of its frame in a zstd one.
    """
    frame = 0
    line_no = 0
    last_start = -1
    for piece in iter_raw(data, compression, cancelled=cancelled):
        start = piece.file_offset if isinstance(piece, RawDamage) else piece.file_start
        if start != last_start:  # a torn frame's decodable part and its damage are one frame
            frame += 1
            last_start = start
        if isinstance(piece, RawDamage):
            yield frame, piece, line_no, b"", piece.file_offset
            continue
        if not isinstance(piece, RawChunk) or not piece.text:
            continue
        pos = 0
        for line in piece.text.split(b"\n"):
            line_no += 1
            yield frame, None, line_no, line, piece.file_start + (pos if compression != "zstd" else 0)
            pos += len(line) + 1


def _damage_phrase(d: RawDamage, frame: int) -> str:
    """The damage in a few words, with the frame and byte where it starts."""
    detail = _ENGINE_PREFIX.sub("", d.message.split(": ", 1)[1] if ": " in d.message else d.message)
    at = f"byte {d.file_offset:,}"
    if d.kind == RawDamage.BAD_FRAME:
        detail = _ENGINE_PREFIX.sub("", d.message.split("failed to decode: ", 1)[-1])
        if detail == "failed validation":
            # zstd only says the frame did not validate: a checksum mismatch or damaged compressed data.
            detail = "failed validation (checksum mismatch or damaged data)"
        return f"frame {frame} at {at} {detail}"
    if d.kind == RawDamage.UNDECODABLE:
        return f"undecodable bytes from {at} on ({detail})"
    if d.kind == RawDamage.UNDECODABLE_TORN_FRAME:
        return f"an undecodable incomplete frame at {at} ({detail})"
    if d.kind == RawDamage.TORN_FRAME:
        return f"an incomplete final frame at {at} (torn tail)"
    if d.kind == RawDamage.TORN_LINE:
        return f"an incomplete final line at {at} (torn tail)"
    return f"{d.message} at {at}"


__all__ = ["DAMAGE", "DamagedTimeline", "Stop", "damaged_timeline", "damaged_timeline_of_file", "decodable_prefix", "stop_node"]
