"""``source_event_seqs`` codec: LEB128 first value, then ZigZag LEB128 deltas (spec §6.4) [compat].

The decoder has a fast path for the common shape, a run of +1 deltas (consecutive source seqs):
each is the single byte 0x02, so a run is found by one C-level regex match and emitted as a
``range``, instead of about 0.25 us of bytecode per value.  ``decode_seqs_plain`` is the one-value-
at-a-time decoder the fast path must equal (output and errors alike; a property test holds them equal).
"""

from __future__ import annotations

import re
from typing import Any

from persistence.errors import SessionArgumentError
from persistence.model.jsontext import MAX_SAFE_INTEGER
from persistence.sqlite.errors import RowDecodeError

_PREFIX = "malformed source_event_seqs storage value: "
_MAX_DELTA = 2 * MAX_SAFE_INTEGER


def _put(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def encode_seqs(seqs: Any) -> bytes:
    """Encode a list of non-negative safe integers; an empty list is a zero-length blob (never NULL)."""
    if type(seqs) is not list:
        raise SessionArgumentError("sourceEventSeqs must contain non-negative safe integers")
    values: list[int] = []
    for v in seqs:
        # bool is an int subclass; JS Number.isSafeInteger(true) is false.
        if type(v) is float and v.is_integer():
            v = int(v)
        if type(v) is not int or not 0 <= v <= MAX_SAFE_INTEGER:
            raise SessionArgumentError("sourceEventSeqs must contain non-negative safe integers")
        values.append(v)
    out = bytearray()
    prev = 0
    for i, v in enumerate(values):
        if i == 0:
            _put(out, v)
        else:
            d = v - prev
            _put(out, d << 1 if d >= 0 else ((-d) << 1) - 1)
        prev = v
    return bytes(out)


# A run of +1 deltas: ZigZag(+1) == 2, one canonical single-byte varint each.
_PLUS_ONE = 2
_PLUS_ONE_RUN = re.compile(b"\x02+")


def decode_seqs(blob: bytes) -> list[int]:
    """The seq list a varint blob encodes (``sourceEventSeqs``); raises on a malformed blob."""
    return _decode(blob, True)


def decode_seqs_plain(blob: bytes) -> list[int]:
    """``decode_seqs`` one varint at a time (the reference its fast path is tested against)."""
    return _decode(blob, False)


def _decode(blob: bytes, fast: bool) -> list[int]:
    out: list[int] = []
    n = len(blob)
    pos = 0
    prev = 0
    while pos < n:
        if fast and out and blob[pos] == _PLUS_ONE:
            end = pos + 1
            if end < n and blob[end] == _PLUS_ONE:  # a run: worth the regex call (about 0.3 us)
                run = _PLUS_ONE_RUN.match(blob, pos)
                assert run is not None  # blob[pos] is 0x02
                end = run.end()
            last = prev + (end - pos)
            if last > MAX_SAFE_INTEGER:
                # The plain decoder fails at the first value past the limit, with this message.
                raise RowDecodeError(_PREFIX + "decoded seq is out of range")
            out.extend(range(prev + 1, last + 1))
            prev = last
            pos = end
            continue
        value = 0
        shift = 0
        start = pos
        while True:
            if pos >= n:
                raise RowDecodeError(_PREFIX + "truncated varint")
            byte = blob[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                if byte == 0 and pos - start > 1:
                    raise RowDecodeError(_PREFIX + "non-canonical varint")
                break
            shift += 7
            if shift > 56:
                raise RowDecodeError(_PREFIX + "varint is out of range")
        if not out:
            if value > MAX_SAFE_INTEGER:
                raise RowDecodeError(_PREFIX + "varint is out of range")
            current = value
        else:
            if value > _MAX_DELTA:
                raise RowDecodeError(_PREFIX + "varint is out of range")
            current = prev + (value >> 1 if value & 1 == 0 else -((value + 1) >> 1))
        if not 0 <= current <= MAX_SAFE_INTEGER:
            raise RowDecodeError(_PREFIX + "decoded seq is out of range")
        out.append(current)
        prev = current
    return out
