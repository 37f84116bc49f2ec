"""What a repair's cut destroys, record by record (issue 24 item 8).

A repair preview said only "damaged tail after byte/row 4893 will be cut": the user could not tell which
events of which turn are lost.  ``CutFacts.lost`` lists them, decoded leniently from the very bytes (or rows)
the cut removes: a record that parses is given whole; one the write stopped inside (a torn line) or whose
bytes are damaged keeps what can still be read of it (its seq and type, when they precede the damage).
Records a repair re-appends (the complete lines of a torn zstd frame) are not lost and are left out.

Pure functions of bytes and values; may import only the standard library and ``persistence.model.jsontext``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from persistence.model.jsontext import JsonTextError, js_loads

# Leading fields of a record cut off mid-way: the writer emits "type" and "seq" before "data".
_SEQ = re.compile(rb'"seq0?"\s*:\s*(\d{1,15})')
_TYPE = re.compile(rb'"type"\s*:\s*"([^"\\]{1,80})"')


@dataclass(frozen=True, slots=True)
class LostRecord:
    """One record in a cut region that a repair does not keep."""

    seq: int | None  # None when not even the seq can be read
    type: str | None
    record: dict[str, Any] | None  # the whole event when it decodes; None for a torn or damaged one
    complete: bool  # False: the write stopped inside it, or its bytes (row) are damaged


def salvage(text: bytes) -> LostRecord:
    """What can be read of a record that does not parse: its seq and type, when present."""
    seq = _SEQ.search(text)
    etype = _TYPE.search(text)
    return LostRecord(
        int(seq.group(1)) if seq else None,
        etype.group(1).decode("utf-8", "replace") if etype else None,
        None,
        False,
    )


def lost_lines(plain: bytes, next_seq: int) -> tuple[LostRecord, ...]:
    """The records of a cut JSONL region (``plain``: its decoded text) that a repair loses.

    A complete line that parses with a seq below ``next_seq`` is one the read already kept (re-appended by
    the repair); every other non-empty line is lost: a parsing record past the kept ones whole, anything
    else salvaged.  The last line without a newline is the torn write."""
    out: list[LostRecord] = []
    lines = plain.split(b"\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        whole = i < len(lines) - 1  # followed by a newline
        value: Any = None
        if whole:
            try:
                value = js_loads(line)
            except (JsonTextError, ValueError):
                value = None
        if type(value) is dict:
            seq = value.get("seq0") if "seq0" in value else value.get("seq")
            seq = seq if type(seq) is int and seq >= 0 else None
            if seq is not None and seq < next_seq:
                continue  # recovered: the repair appends it again
            etype = value.get("type")
            out.append(LostRecord(seq, etype if isinstance(etype, str) else None, value, True))
        else:
            out.append(salvage(line))
    return tuple(out)


__all__ = ["LostRecord", "lost_lines", "salvage"]
