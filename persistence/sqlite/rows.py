"""Read side of the event codec: row validation, row decoding and ``scanRows`` (spec §6.2-6.7, §7.4).

Two failure families, kept apart on purpose:
* column-type errors (``stored <col> must ...``, out-of-range integers) reject the whole
  read, like node:sqlite does while fetching;
* decode failures (``RowDecodeError``) become a torn tail or, before the last decodable
  ``turn/end``, the "corrupt session log" error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import orjson

from persistence.errors import SessionStorageCorruptError
from persistence.model.chunk_rows import TEXT_DATA_KEYS, TOOL_DATA_KEYS, TOOL_DATA_KEYS_NAMED
from persistence.model.event_table import EventTable
from persistence.model.jsontext import MAX_SAFE_INTEGER, JsonTextError, all_strings, js_loads
from persistence.model.packed_run import PackedRun
from persistence.sqlite.constants import (
    MAX_PACKED_ROW_MEMBERS,
    MIN_PACKED_ROW_MEMBERS,
    PACKED_TAG_SET,
    REASONING_TAG,
    TOOL_TAG,
)
from persistence.sqlite.datacodec import decode_scalar_data, packed_data_text, parse_json_text
from persistence.sqlite.errors import JsRangeError, RowDecodeError, range_error
from persistence.sqlite.straight_scan import straight_items
from persistence.sqlite.varint import decode_seqs

EVENT_COLUMNS = "seq, type, time, data, source_event_seqs, surface_op, ignorable"
# A fetched row: (seq, type, time, data, source_event_seqs, surface_op, ignorable).
Row = tuple[Any, ...]

JS_EXACT_INT = 2**53
_INT_ONLY = {int}
_STR_ONLY = {str}


@dataclass(frozen=True, slots=True)
class ScanResult:
    """The events of the rows that decode, and where a torn tail starts."""

    preserved: EventTable  # packed rows stay packed
    torn_from: int | None  # physical seq of the first torn row, None when the tail is clean


def check_int_range(row: Sequence[Any]) -> None:
    """Refuse an integer column a JS number cannot hold (upstream's RangeError)."""
    for value in row:
        if type(value) is int and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise range_error(value)


def _column_error(row: Row) -> str | None:
    seq, etype, time, data, ses, sop, ign = row
    if type(seq) is not int:
        return "stored seq must be a safe integer"
    if seq < 0:
        return "stored seq must be non-negative"
    if type(etype) is not str:
        return "stored type must be a string"
    if not etype:
        return "stored type must not be empty"
    if type(time) is not int:
        return "stored time must be a safe integer"
    if type(data) is not str and type(data) is not bytes:
        return "stored data must be a string or blob"
    if ses is not None and type(ses) is not bytes:
        return "stored source_event_seqs must be a blob or null"
    if sop is not None and type(sop) is not str:
        return "stored surface_op must be a string or null"
    if ign is not None and (type(ign) is not int or ign not in (0, 1)):
        return "stored event ignorable must be 0, 1, or null"
    return None


_NONE = type(None)
_DATA_TYPES = frozenset({str, bytes})
_SES_TYPES = frozenset({_NONE, bytes})
_SOP_TYPES = frozenset({_NONE, str})
_IGN_TYPES = frozenset({_NONE, int})
_IGN_VALUES = frozenset({None, 0, 1})


def _columns_plainly_valid(rows: Sequence[Row]) -> bool:
    """Whether every row passes every column check, judged a column at a time in C (set/min/max).

    A 202k-event session is ~8.5k rows; checking them row by row in Python cost ~13 ms per read.  Any
    doubt returns False and the row-by-row pass below finds the first problem in upstream's order.
    """
    if not rows:
        return True
    seq, etype, time, data, ses, sop, ign = zip(*rows, strict=True)
    return (
        set(map(type, seq)) == _INT_ONLY
        and min(seq) >= 0
        and max(seq) <= MAX_SAFE_INTEGER
        and set(map(type, etype)) == _STR_ONLY
        and "" not in etype
        and set(map(type, time)) == _INT_ONLY
        and -MAX_SAFE_INTEGER <= min(time)
        and max(time) <= MAX_SAFE_INTEGER
        and set(map(type, data)) <= _DATA_TYPES
        and set(map(type, ses)) <= _SES_TYPES
        and set(map(type, sop)) <= _SOP_TYPES
        and set(map(type, ign)) <= _IGN_TYPES
        and set(ign) <= _IGN_VALUES
    )


def validate_event_rows(rows: Sequence[Row]) -> None:
    """Column checks for every fetched row; out-of-range integers win, as node:sqlite throws first."""
    if _columns_plainly_valid(rows):
        return
    for i, row in enumerate(rows):
        check_int_range(row)
        problem = _column_error(row)
        if problem is not None:
            for later in rows[i + 1 :]:
                check_int_range(later)
            raise SessionStorageCorruptError(problem)


def _bad(tag: str, why: str) -> RowDecodeError:
    return RowDecodeError(f"malformed {tag} storage row: {why}")


def _is_number(v: object) -> bool:
    return type(v) is int or type(v) is float


def _js_number(v: Any) -> Any:
    # orjson keeps integers up to 2**64 exact; JSON.parse would already have rounded them to a double.
    return float(v) if type(v) is int and not -JS_EXACT_INT <= v <= JS_EXACT_INT else v


def _safe_ints(values: list[Any]) -> list[int] | None:
    """``values`` as ints when every one is a JS safe integer (integral floats count), else None."""
    if not values or set(map(type, values)) == _INT_ONLY:
        if values and (max(values) > MAX_SAFE_INTEGER or min(values) < -MAX_SAFE_INTEGER):
            return None
        return values
    out = []
    for v in values:
        if type(v) is int and -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
            out.append(v)
        elif type(v) is float and v.is_integer() and abs(v) <= MAX_SAFE_INTEGER:
            out.append(int(v))
        else:
            return None
    return out


def _parse_packed(text: str, tag: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return js_loads(text)
    except (JsonTextError, RecursionError) as err:
        raise _bad(tag, f"invalid JSON: {err}") from None


def _packed_fields(tag: Any, seq: int, time: int, data: Any, ses: Any, sop: Any) -> tuple[dict[str, Any], list[str], list[int]]:
    """Validate a packed row (§6.2, §6.7, in upstream's order) -> (payload object, member strings, time deltas)."""
    if tag not in PACKED_TAG_SET:
        raise _bad(tag, "packed discriminator requires a chunk tag")
    if ses is not None or sop is not None:
        raise _bad(tag, "packed surface fields must be null")
    obj = _parse_packed(packed_data_text(data, tag), tag)
    if not isinstance(obj, (dict, list)):
        raise _bad(tag, "data must be an object")
    is_tool = tag == TOOL_TAG
    fields_error = "invalid tool-call data fields" if is_tool else "invalid text data fields"
    if not isinstance(obj, dict):  # a JSON array is an "object" to JS but never has the right keys
        raise _bad(tag, fields_error)
    keys = obj.keys()
    if is_tool:
        if keys != TOOL_DATA_KEYS and keys != TOOL_DATA_KEYS_NAMED:
            raise _bad(tag, fields_error)
        if type(obj["id"]) is not str or ("name" in obj and type(obj["name"]) is not str):
            raise _bad(tag, "id and optional name must be strings")
    elif keys != TEXT_DATA_KEYS:
        raise _bad(tag, fields_error)
    if not (_is_number(obj["turn"]) and _is_number(obj["step"]) and _is_number(obj["index"])):
        raise _bad(tag, "turn/step/index must be numbers")
    field = "args" if is_tool else "texts"
    payload = obj[field]
    if (
        type(payload) is not list
        or not MIN_PACKED_ROW_MEMBERS <= len(payload) <= MAX_PACKED_ROW_MEMBERS
        or not all_strings(payload)
    ):
        raise _bad(tag, f"{field} must contain {MIN_PACKED_ROW_MEMBERS}..{MAX_PACKED_ROW_MEMBERS} strings")
    dt = obj["dt"]
    if type(dt) is not list:
        raise _bad(tag, "dt must be an array of safe integers")
    hi = lo = 0
    if set(map(type, dt)) <= _INT_ONLY:  # the common case, checked in C: one max and one min per row
        if dt:
            hi, lo = max(dt), min(dt)
            if hi > MAX_SAFE_INTEGER or lo < -MAX_SAFE_INTEGER:
                raise _bad(tag, "dt must be an array of safe integers")
    else:
        dt = _safe_ints(dt)
        if dt is None:
            raise _bad(tag, "dt must be an array of safe integers")
        if dt:
            hi, lo = max(dt), min(dt)
    n = len(payload)
    if len(dt) != n - 1:
        raise _bad(tag, "dt length must match the member count")
    if seq + n - 1 > MAX_SAFE_INTEGER:
        raise _bad(tag, "member seqs exceed safe integers")
    # Member times lie within time + k*min(dt) .. time + k*max(dt): when those bounds are safe, so is
    # every time, and the exact sums are left to whoever builds the members (chunk_rows.validate_row).
    if dt:
        span = n - 1
        if not (-MAX_SAFE_INTEGER <= time + span * min(lo, 0) and time + span * max(hi, 0) <= MAX_SAFE_INTEGER):
            times = list(accumulate(dt, initial=time))
            if max(times) > MAX_SAFE_INTEGER or min(times) < -MAX_SAFE_INTEGER:
                raise _bad(tag, "member times exceed safe integers")
    return obj, payload, dt


def packed_last_seq(tag: Any, seq: int, time: int, data: Any, ses: Any, sop: Any) -> int:
    """Validate a packed row without expanding it (span selection only needs its extent)."""
    return seq + len(_packed_fields(tag, seq, time, data, ses, sop)[1]) - 1


def packed_run(tag: Any, seq: int, time: int, data: Any, ses: Any, sop: Any) -> PackedRun:
    """Validate a packed row once and keep it packed (§6.6): its members are built on access."""
    obj, payload, dt = _packed_fields(tag, seq, time, data, ses, sop)
    turn, step, index = _js_number(obj["turn"]), _js_number(obj["step"]), _js_number(obj["index"])
    if tag == TOOL_TAG:
        return PackedRun("tool-call-delta", seq, time, tuple(dt), turn, step, index, tuple(payload), obj["id"], obj.get("name"))
    kind = "reasoning-delta" if tag == REASONING_TAG else "text-delta"
    return PackedRun(kind, seq, time, tuple(dt), turn, step, index, tuple(payload))


def expand_packed(tag: Any, seq: int, time: int, data: Any, ses: Any, sop: Any) -> list[dict[str, Any]]:
    """Validate a packed row and expand it into its member events (§6.6)."""
    return packed_run(tag, seq, time, data, ses, sop).members()


def decode_scalar(row: Row) -> dict[str, Any]:
    """The event of one scalar (not packed) row."""
    seq, etype, time, data, ses, sop, ign = row
    event = {"type": etype, "seq": seq, "time": time, "data": decode_scalar_data(data)}
    # Fixed read order (spec §6.3): sourceEventSeqs, surfaceOp, ignorable.
    if ses is not None:
        event["sourceEventSeqs"] = decode_seqs(ses)
    if sop is not None:
        event["surfaceOp"] = parse_json_text(sop)
    if ign == 1:
        event["ignorable"] = True
    return event


def decode_row(row: Row) -> list[dict[str, Any]]:
    """The events of one row (a packed row expands into its members)."""
    if row[6] == 0:
        return expand_packed(row[1], row[0], row[2], row[3], row[4], row[5])
    return [decode_scalar(row)]


def _turn_end_from(rows: Sequence[Row], start: int) -> bool:
    """Reverse pass of scanRows, lazily: does a decodable logical turn/end exist at index >= start?"""
    for j in range(len(rows) - 1, start - 1, -1):
        row = rows[j]
        if row[1] == "turn/end" and row[6] != 0:
            try:
                decode_scalar(row)
            except RowDecodeError:
                continue
            return True
    return False


def corrupt_row(seq: int) -> SessionStorageCorruptError:
    """The corruption error for a committed row that does not decode."""
    return SessionStorageCorruptError(f"corrupt session log: invalid committed physical row at seq {seq}")


def decode_any_row(row: Row) -> list[dict[str, Any]]:
    """The events of one stored row, packed or scalar; ``RowDecodeError`` when it is damaged."""
    if row[6] == 0:
        return expand_packed(row[1], row[0], row[2], row[3], row[4], row[5])
    return [decode_scalar(row)]


def _decode_item(row: Row) -> dict[str, Any] | PackedRun:
    if row[6] == 0:
        return packed_run(row[1], row[0], row[2], row[3], row[4], row[5])
    return decode_scalar(row)


def readable_rows(rows: Sequence[Row]) -> tuple[EventTable, tuple[int, str, int] | None]:
    """The decodable rows from seq 0 on, up to the first that does not decode or does not continue the
    seq chain: (events, None) or (events, (its seq, why, rows from it on)).  Lenient, for viewers of a
    refused log: unlike ``scan_rows`` nothing after the stop decides anything."""
    events = EventTable()
    expected = 0
    for i, row in enumerate(rows):
        seq = row[0]
        cell = _column_error(row)
        if cell is None:
            try:
                check_int_range(row)
            except JsRangeError as err:  # a JS number cannot hold one of its integers
                cell = str(err)
        if cell is not None:
            return events, (seq, f"the row at seq {seq} is damaged ({cell})", len(rows) - i)
        try:
            item = _decode_item(row)
        except (RowDecodeError, SessionStorageCorruptError) as err:  # the latter: a data frame that decompresses past the cap
            return events, (seq, f"the row at seq {seq} does not decode ({err})", len(rows) - i)
        if seq != expected:
            gap = f"seq {seq} follows seq {expected - 1}" if expected else f"the first row has seq {seq}, not 0"
            return events, (seq, f"{gap}: the seq chain breaks there", len(rows) - i)
        if type(item) is PackedRun:
            events.append_run(item)
            expected += len(item)
        else:
            events.append(item)  # type: ignore[arg-type]
            expected += 1
    return events, None


def scan_rows(rows: Sequence[Row], base: int) -> ScanResult:
    """Rows ordered by seq -> the contiguous logical prefix from ``base`` plus the torn point (§7.4).

    A log as writers store it takes the straight pass (``straight_scan``, ~2x faster); any row that
    pass leaves undecided sends the whole scan here, to the reference (``scan_rows_reference``).
    """
    items = straight_items(rows, base)
    if items is not None:
        return ScanResult(EventTable.adopt(items), None)
    return scan_rows_reference(rows, base)


def scan_rows_reference(rows: Sequence[Row], base: int) -> ScanResult:
    """``scan_rows`` row by row: every decision and error text of spec §7.4, in upstream's order."""
    preserved = EventTable()
    expected = base
    for i, row in enumerate(rows):
        try:
            item = _decode_item(row)
        except RowDecodeError:
            if _turn_end_from(rows, i + 1):
                raise corrupt_row(row[0]) from None
            return ScanResult(preserved, row[0])
        if row[0] != expected:
            # A packed row's members are contiguous by construction, so only its start can break the chain.
            contains_end = row[6] != 0 and row[1] == "turn/end"
            if contains_end or _turn_end_from(rows, i + 1):
                raise corrupt_row(row[0])
            return ScanResult(preserved, row[0])
        if type(item) is PackedRun:
            preserved.append_run(item)
            expected += len(item)
        else:
            preserved.append(item)  # type: ignore[arg-type]
            expected += 1
    return ScanResult(preserved, None)
