"""The straight pass of ``scanRows`` (spec §7.4): event rows as writers store them, decoded in one loop.

Why: a full read of the 202k-event session (8,661 rows: 2,859 packed, 5,802 scalar) spent ~64 ms in
``rows.scan_rows`` against ~28 ms for ``orjson.loads`` of the same cells (the floor's parse): the
generic per-row checks (``_packed_fields``' predicates, the dataclass ``__init__`` of each run, one
16-digit scan per scalar cell, a call per row) were the rest.  This pass accepts only what needs none
of those decisions: a seq chain with no gap, scalar cells ``orjson`` parses, packed rows in writers'
form (exact keys, int turn/step/index, 3..1024 strings, non-negative deltas: ``deltas_proven``).

Anything else returns None and the caller runs the reference scan over the same rows from the start,
so a damaged or unusual log gets exactly the reference's events, torn point and error text.  Whatever
this pass accepts, the reference accepts as the same events (tests/sqlite/test_straight_scan.py).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import orjson

from persistence.errors import SessionStorageCorruptError
from persistence.model.chunk_rows import run_of_data
from persistence.model.jsontext import has_big_digits
from persistence.model.packed_run import PackedRun
from persistence.sqlite.constants import (
    MAX_PACKED_DATA_BYTES,
    MAX_PACKED_ROW_MEMBERS,
    MIN_PACKED_ROW_MEMBERS,
    REASONING_TAG,
    TEXT_TAG,
    TOOL_TAG,
)
from persistence.sqlite.datacodec import decode_scalar_data, packed_data_text, parse_json_text
from persistence.sqlite.errors import RowDecodeError
from persistence.sqlite.varint import decode_seqs

# Integers a JS double holds exactly: the reference keeps these as they are (``rows._js_number``).
_JS_EXACT_INT = 2**53
_KIND_OF_TAG = {TEXT_TAG: "text-delta", REASONING_TAG: "reasoning-delta", TOOL_TAG: "tool-call-delta"}
# Each code point is at most 4 UTF-8 bytes: a packed cell this short is within the 1 MiB bound unseen.
_SURE_PACKED_CHARS = MAX_PACKED_DATA_BYTES // 4
# Every digit becomes "0", anything else a space: a 16-digit run is then one substring (as in jsontext).
_DIGIT_MASK = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16

Item = dict[str, Any] | PackedRun


def _run(tag: Any, seq: int, time: int, data: Any, ses: Any, sop: Any) -> PackedRun | None:
    """A packed row in writers' form as its run; None for anything the reference must judge."""
    kind = _KIND_OF_TAG.get(tag)
    if kind is None or ses is not None or sop is not None:
        return None
    if type(data) is str:
        if len(data) > _SURE_PACKED_CHARS:
            return None
    else:
        try:
            data = packed_data_text(data, tag)
        except RowDecodeError:
            return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict:
        return None
    run = run_of_data(kind, seq, time, obj)
    if run is None or not MIN_PACKED_ROW_MEMBERS <= len(run) <= MAX_PACKED_ROW_MEMBERS:
        return None
    if not (-_JS_EXACT_INT <= min(run.turn, run.step, run.index) and max(run.turn, run.step, run.index) <= _JS_EXACT_INT):
        return None
    return run


def _digit_run_cells(texts: list[str]) -> set[int] | None:
    """The ``id`` of each text that holds a run of 16+ digits (the reference parses those with
    ``js_loads``, which rounds integers as JS does); None: every text must be checked on its own.

    One scan over all the texts joined by spaces (no run spans two) instead of one per cell: 5 ms of
    the 202k-event read was that check, cell by cell.  When the scan finds a run and the texts are ASCII
    (byte offsets are then character offsets), the runs are traced back to their cells, so one long
    number in a log does not send every other cell down the slow path.
    """
    joined = " ".join(texts)
    data = joined.encode("utf-8", "surrogatepass")
    if not has_big_digits(data):
        return set()
    if len(data) != len(joined):
        return None
    starts = list(accumulate((len(t) + 1 for t in texts), initial=0))
    masked = data.translate(_DIGIT_MASK)
    cells: set[int] = set()
    at = masked.find(_SIXTEEN_DIGITS)
    while at >= 0:
        k = bisect_right(starts, at) - 1
        cells.add(id(texts[k]))
        at = masked.find(_SIXTEEN_DIGITS, starts[k + 1])
    return cells


def straight_items(rows: Sequence[tuple[Any, ...]], base: int) -> list[Item] | None:
    """The items of ``rows`` (column-validated, ordered by seq) when every row is plain and the seqs
    run on from ``base`` without a gap; None otherwise (then nothing here decides anything)."""
    texts = [row[3] for row in rows if row[6] != 0 and type(row[3]) is str]
    texts += [row[5] for row in rows if type(row[5]) is str]
    flagged = _digit_run_cells(texts)
    everything = flagged is None  # each cell takes the reference's own check
    loads = orjson.loads
    items: list[Item] = []
    append = items.append
    expected = base
    try:
        for seq, etype, time, data, ses, sop, ign in rows:
            if seq != expected:
                return None
            if ign == 0:
                run = _run(etype, seq, time, data, ses, sop)
                if run is None:
                    return None
                append(run)
                expected += len(run.payload)
                continue
            if everything or type(data) is not str or (flagged and id(data) in flagged):
                value = decode_scalar_data(data)
            else:
                try:
                    value = loads(data)
                except orjson.JSONDecodeError:
                    return None
            event = {"type": etype, "seq": seq, "time": time, "data": value}
            if ses is not None:
                event["sourceEventSeqs"] = decode_seqs(ses)
            if sop is not None:
                if everything or type(sop) is not str or (flagged and id(sop) in flagged):
                    event["surfaceOp"] = parse_json_text(sop)
                else:
                    try:
                        event["surfaceOp"] = loads(sop)
                    except orjson.JSONDecodeError:
                        return None
            if ign == 1:
                event["ignorable"] = True
            append(event)
            expected += 1
    except (RowDecodeError, SessionStorageCorruptError):
        return None  # the reference meets the same row and says what it is
    return items
