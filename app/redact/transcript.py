"""A session's transcript with its secrets replaced, re-encoded the way the engine writes it.

JSONL artifacts are redacted line by line and keep their shape: the same lines in the same zstd
frames (or plain lines), so the redacted transcript reads back through the engine with the same
events, seqs and types.  A line that holds no secret keeps its bytes; a line that does is parsed,
its string values redacted (``Redactor.value``) and re-encoded with the engine's ``js_dumps``; a
frame whose lines changed is stored again with the engine's ``stored_bytes``.  A packed run of
streaming deltas (a ``text-chunks`` / ``reasoning-chunks`` / ``tool-call-chunks`` row) is redacted
as one text, so a key streamed in pieces within a row is caught (``Redactor.pieces``).

A torn tail (an uncommitted last line or frame) stays torn, redacted.  Bytes that do not decode at
all (a damaged frame, structural damage) cannot be checked, so they are left out, and the caller is
told (the bundle manifest's ``problems``).

A SQLite session's rows are rendered as the JSONL transcript ``app.export.raw.write_rows`` makes (the
header line, then one event per line, packed runs expanded), from the redacted records.

May import: the standard library, orjson, ``app.redact``'s own modules and the public ``persistence``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from app.redact.redactor import Redactor
from persistence import EventType, PackedRun, RawDamage, SessionView, iter_raw, js_dumps, stored_bytes

ROW_PIECES = {"text-chunks": "texts", "reasoning-chunks": "texts", "tool-call-chunks": "args"}
LEFT_TORN = (RawDamage.TORN_LINE, RawDamage.TORN_FRAME)  # their text came as a provisional chunk


def _where(record: Any) -> str:
    if type(record) is not dict:
        return "a line"
    if record.get("type") == "session":
        return "header"
    seq = record.get("seq", record.get("seq0"))
    return f"seq {seq} {record.get('type')}"


def redact_record(record: Any, r: Redactor) -> Any:
    """One parsed transcript record (header, event or packed row), redacted; the same object when clean."""
    where = _where(record)
    if type(record) is dict and type(record.get("data")) is dict and record.get("type") in ROW_PIECES:
        data = record["data"]
        key = ROW_PIECES[record["type"]]
        parts = data.get(key)
        if type(parts) is list and all(type(p) is str for p in parts):
            new_parts = r.pieces(parts, where)
            if new_parts is not parts:
                record = {**record, "data": {**data, key: new_parts}}
    return r.value(record, where, top=True)


def redact_line(line: bytes, r: Redactor) -> bytes:
    """One transcript line: the same bytes when it holds no secret, else the redacted record in the
    engine's JSON (a line that is not JSON, e.g. a torn one, is redacted as text)."""
    text = line.decode("utf-8", "surrogateescape")
    if not r.might_hold(text) and "\\u" not in text:  # an escaped character could hide a trigger
        return line
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return r.text(text, "a damaged line").encode("utf-8", "surrogateescape")
    new = redact_record(record, r)
    return line if new is record else js_dumps(new)


def _trigger_lines(text: bytes, r: Redactor) -> list[int]:
    """The start offsets of the lines of ``text`` that hold a trigger (sorted)."""
    low = text.lower()
    starts: set[int] = set()
    for literal in r.line_triggers:
        i = low.find(literal)
        while i >= 0:
            starts.add(text.rfind(b"\n", 0, i) + 1)
            end = text.find(b"\n", i)
            if end < 0:
                break
            i = low.find(literal, end)
    return sorted(starts)


def _lines(text: bytes, r: Redactor) -> tuple[bytes, bool]:
    """Lines (``\\n``-separated) redacted; only the lines a trigger occurs in are decoded and parsed (most
    lines of a log hold none, so a 200k-line transcript costs a few ``find`` passes, not 200k parses)."""
    out: list[bytes] = []
    pos = 0
    for start in _trigger_lines(text, r):
        end = text.find(b"\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        new = redact_line(line, r)
        if new != line:
            out.append(text[pos:start])
            out.append(new)
            pos = end
    if not out:
        return text, False
    out.append(text[pos:])
    return b"".join(out), True


def redact_artifact(data: bytes, compression: str, r: Redactor) -> tuple[bytes, list[str]]:
    """A JSONL artifact's bytes (``compression``: "zstd" | "none") redacted; and what had to be left out."""
    out = bytearray()
    problems: list[str] = []
    for piece in iter_raw(data, compression):
        if isinstance(piece, RawDamage):
            if piece.kind not in LEFT_TORN:
                problems.append(f"left out of the redacted transcript (it cannot be decoded to check it): {piece.message}")
            continue
        if not piece.text and not piece.provisional:
            out += data[piece.file_start : piece.file_end]  # no line at all (an empty frame)
            continue
        plain, changed = _lines(piece.text, r)
        if piece.provisional:  # a torn tail stays torn: no final newline, or a frame without its end
            out += stored_bytes(plain, compression, torn=True)
        elif compression == "none" or changed:
            out += stored_bytes(plain + b"\n", compression)
        else:
            out += data[piece.file_start : piece.file_end]
    return bytes(out), problems


def redacted_rows(view: SessionView, r: Redactor) -> Iterator[bytes]:
    """A readable SQLite session as redacted JSONL lines (each with its newline), as ``write_rows`` lays them out."""
    assert view.header is not None
    yield js_dumps(redact_record(view.header.header_line(), r)) + b"\n"
    for item in view.stored.record_table().segments():
        if type(item) is PackedRun:
            members = item.members()
            key = "argumentsDelta" if item.kind == "tool-call-delta" else "text"
            where = f"seq {item.seq0} {EventType.ASSISTANT_CHUNK}"
            texts = r.pieces([m["data"]["chunk"][key] for m in members], where)
            for m, t in zip(members, texts, strict=True):
                m["data"]["chunk"][key] = t
            yield b"".join(js_dumps(redact_record(m, r)) + b"\n" for m in members)
        else:
            yield js_dumps(redact_record(item, r)) + b"\n"


__all__ = ["redact_artifact", "redact_line", "redact_record", "redacted_rows"]
