"""Write side of the event codec: scalar rows and bounded packed rows (spec §6.3, §6.6, §7.1-7.3) [compat].

Packed rows here are *not* the JSONL chunk rows of ``persistence.model.chunk_rows``: seq,
time and tag live in columns, the payload has no ``seq0/time0`` and a row holds 3..1024
members of at most 1 MiB of JSON.  Eligibility (``classify``) is shared with JSONL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from persistence.errors import SessionArgumentError
from persistence.model.chunk_rows import classify
from persistence.model.chunk_rows import continues as _continues
from persistence.model.jsontext import js_dumps
from persistence.sqlite.constants import (
    MAX_PACKED_DATA_BYTES,
    MAX_PACKED_ROW_MEMBERS,
    MIN_PACKED_ROW_MEMBERS,
    REASONING_TAG,
    TEXT_TAG,
    TOOL_TAG,
)
from persistence.sqlite.datacodec import encode_data
from persistence.sqlite.varint import encode_seqs

_KIND_TAG = {"text-delta": TEXT_TAG, "reasoning-delta": REASONING_TAG, "tool-call-delta": TOOL_TAG}

# (seq, type, time, data, source_event_seqs, surface_op, ignorable): the bind order of INSERT_EVENT.
EventRow = tuple[int, str, int, "str | bytes", "bytes | None", "str | None", "int | None"]


@dataclass(frozen=True, slots=True)
class PackedRecord:
    """One packed physical row in memory (never inferred from a dict's shape, spec §12.9)."""

    tag: str
    seq: int
    time: int
    serialized: bytes  # compact JSON payload, before compression
    members: int


def _int(v: Any) -> Any:
    # JS cannot tell 5.0 from 5; SQLite STRICT INTEGER columns want the int.
    return int(v) if type(v) is float and v.is_integer() else v


def _payload(kind: str, members: list[dict[str, Any]]) -> bytes:
    first = members[0]["data"]
    chunk = first["chunk"]
    times = [_int(m["time"]) for m in members]
    dt = [times[i + 1] - times[i] for i in range(len(times) - 1)]
    # Key order is part of the format (spec §6.6).
    data: dict[str, Any] = {"turn": first["turn"], "step": first["step"], "index": chunk["index"], "dt": dt}
    if kind == "tool-call-delta":
        data["id"] = chunk["id"]
        if "name" in chunk:
            data["name"] = chunk["name"]
        data["args"] = [m["data"]["chunk"]["argumentsDelta"] for m in members]
    else:
        data["texts"] = [m["data"]["chunk"]["text"] for m in members]
    return js_dumps(data)


def _packed(kind: str, members: list[dict[str, Any]], serialized: bytes) -> PackedRecord:
    return PackedRecord(_KIND_TAG[kind], _int(members[0]["seq"]), _int(members[0]["time"]), serialized, len(members))


def _emit_run(kind: str, run: list[dict[str, Any]], out: list[PackedRecord | dict[str, Any]]) -> None:
    """Bounded emission of one complete run (spec §7.3, the exact upstream partition)."""
    n = len(run)
    offset = 0
    while n - offset >= MIN_PACKED_ROW_MEMBERS:
        hi = min(n - offset, MAX_PACKED_ROW_MEMBERS)
        whole = _payload(kind, run[offset : offset + hi])
        if len(whole) <= MAX_PACKED_DATA_BYTES:
            out.append(_packed(kind, run[offset : offset + hi], whole))
            offset += hi
            continue
        best: tuple[int, bytes] | None = None
        lo_m, hi_m = MIN_PACKED_ROW_MEMBERS, hi - 1
        while lo_m <= hi_m:
            mid = (lo_m + hi_m) // 2
            candidate = _payload(kind, run[offset : offset + mid])
            if len(candidate) <= MAX_PACKED_DATA_BYTES:
                best = (mid, candidate)
                lo_m = mid + 1
            else:
                hi_m = mid - 1
        if best is None:
            out.append(run[offset])
            offset += 1
        else:
            out.append(_packed(kind, run[offset : offset + best[0]], best[1]))
            offset += best[0]
    out.extend(run[offset:])


def pack_batch(events: list[dict[str, Any]]) -> list[PackedRecord | dict[str, Any]]:
    """Records for one append batch; runs never extend into stored rows (spec §7.2)."""
    out: list[PackedRecord | dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    run_kind: str | None = None
    for ev in events:
        kind = classify(ev)
        if kind is not None and kind == run_kind and _continues(kind, run[-1], ev):
            run.append(ev)
            continue
        if run_kind is not None:
            _emit_run(run_kind, run, out)
        if kind is None:
            run, run_kind = [], None
            out.append(ev)
        else:
            run, run_kind = [ev], kind
    if run_kind is not None:
        _emit_run(run_kind, run, out)
    return out


def scalar_row(event: dict[str, Any]) -> EventRow:
    """A logical event as one scalar row; envelope keys other than the spec's are dropped (§6.3)."""
    if "data" not in event:
        raise SessionArgumentError(f"session event at seq {event.get('seq')!r} has no data")
    ses = event.get("sourceEventSeqs")
    surface = event.get("surfaceOp")
    return (
        _int(event.get("seq")),
        event.get("type"),  # type: ignore[return-value]  # STRICT TEXT rejects a non-string
        _int(event.get("time")),
        encode_data(js_dumps(event["data"])),
        None if ses is None else encode_seqs(ses),
        None if surface is None else js_dumps(surface).decode("utf-8"),
        1 if event.get("ignorable") is True else None,
    )


def packed_row(record: PackedRecord) -> EventRow:
    """The ``events`` row of a packed chunk record."""
    return (record.seq, record.tag, record.time, encode_data(record.serialized), None, None, 0)


def encode_batch(events: list[dict[str, Any]], *, pack: bool) -> list[EventRow]:
    """Physical rows for an append batch, built before the write lock is taken."""
    if not pack:
        return [scalar_row(ev) for ev in events]
    return [packed_row(r) if isinstance(r, PackedRecord) else scalar_row(r) for r in pack_batch(events)]
