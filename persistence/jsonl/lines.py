"""Header record parsing and the committed-region line scanner (jsonl-backend §5, §10)."""

from __future__ import annotations

import math
import re
from itertools import islice
from typing import Any

import orjson

from persistence.errors import SessionFormatUnsupportedError, SessionStorageCorruptError, version_refusal_message
from persistence.model.chunk_rows import ROW_TAGS, validate_row
from persistence.model.event_table import EventTable
from persistence.model.jsontext import (
    JsonTextError,
    has_big_digits,
    is_negative_zero,
    is_nonneg_safe_integer,
    is_number,
    js_loads,
    js_loads_keep_negative_zero,
    js_string,
)

_ROW_TAG_SET = frozenset(ROW_TAGS)
_HEADER_OPTIONAL = ("cwd", "parentSession", "seedLength", "origin")


class HeaderLessError(SessionStorageCorruptError):
    """A transcript without a complete header record (empty, or cut inside its first line/frame)."""

    pass


def _valid_count(v: Any) -> bool:
    return is_nonneg_safe_integer(v) and not is_negative_zero(v)


def is_header_line(v: Any) -> bool:
    """Whether a parsed first line is a session header record (upstream's header test)."""
    return (
        type(v) is dict
        and v.get("type") == "session"
        and is_number(v.get("version"))
        and type(v.get("id")) is str
        and _valid_count(v.get("createdAt"))
        and _valid_count(v.get("delegationDepth"))
        and ("origin" not in v or v["origin"] == "subagent")
        and ("agentPreset" not in v or type(v["agentPreset"]) is str)
    )


def _build_meta(v: dict[str, Any]) -> dict[str, Any]:
    if "sandboxMode" in v or "approvalPolicy" in v:
        raise SessionStorageCorruptError("session header uses retired policy baseline fields")
    meta: dict[str, Any] = {"version": _norm(v["version"]), "id": v["id"], "createdAt": _norm(v["createdAt"])}
    for key in _HEADER_OPTIONAL:
        if key in v:
            meta[key] = _norm(v[key])
    meta["delegationDepth"] = _norm(v["delegationDepth"])
    if "agentPreset" in v:
        meta["agentPreset"] = v["agentPreset"]
    return meta


def _norm(v: Any) -> Any:
    # 1e400 parses to infinity, which has no int: it stays a float (and fails validation as such).
    return int(v) if type(v) is float and math.isfinite(v) and v == int(v) and not is_negative_zero(v) else v


def parse_header_record(record: bytes, raw_path: str) -> dict[str, Any]:
    """Full header validation for the load path; ``record`` includes its newline."""
    if not record or record[-1:] != b"\n" or b"\n" in record[:-1]:
        raise HeaderLessError("empty or header-less session log")
    try:
        value = _parse_header_value(record[:-1])
    except JsonTextError:
        raise SessionStorageCorruptError("corrupt session log: header line is not valid JSON") from None
    if isinstance(value, dict):
        version = value.get("version")
        if is_number(version) and version != 0:
            sid = value.get("id")
            id_text = sid if isinstance(sid, str) else js_string(sid) if "id" in value else "undefined"
            raise SessionFormatUnsupportedError(
                version_refusal_message(id_text, version) + f" (raw log: {raw_path})",
                location={"kind": "jsonl", "path": raw_path},
            )
    if not is_header_line(value):
        raise SessionStorageCorruptError("corrupt session log: first line is not a session header")
    return _build_meta(value)


_MAYBE_NEGATIVE_ZERO = re.compile(rb"[:,\[]\s*-0(?:[.eE,\]}\s]|$)")


def _parse_header_value(line: bytes) -> Any:
    # Only a number token starting "-0" can be a negative zero; everything else takes the fast parser.
    if _MAYBE_NEGATIVE_ZERO.search(line):
        return js_loads_keep_negative_zero(line)
    return js_loads(line)


def parse_header_meta(line: bytes) -> dict[str, Any] | None:
    """Lightweight parse for listing and raw reads: None for anything that is not a header."""
    try:
        value = _parse_header_value(line)
    except JsonTextError:
        return None
    if not is_header_line(value):
        return None
    return _build_meta(value)


class LineScanner:
    """Feeds newline-terminated records; keeps the committed prefix and the first tolerated defect.

    Chunk rows stay packed (``events`` is an ``EventTable``).  The big-integer check that
    ``js_loads`` runs per line (a regex: ~20 % of a 202k read) runs once per fed buffer instead:
    a buffer without a 16-digit run cannot hold an integer orjson would read differently from JS.
    """

    __slots__ = ("_fragment", "committed_bytes", "events", "finished", "first_seq", "input_bytes", "issue", "line_no")

    def __init__(self, header_len: int, first_seq: int = 0) -> None:
        """``first_seq``: the seq the first record must carry (nonzero when resuming after a known prefix)."""
        self.first_seq = first_seq
        self.events = EventTable()
        self._fragment = b""
        self.input_bytes = header_len
        self.committed_bytes = header_len
        self.line_no = 0
        self.issue: SessionStorageCorruptError | None = None
        self.finished = False

    def write(self, chunk: bytes, start: int = 0) -> None:
        """Feed the next plaintext bytes, ``chunk[start:]``; complete lines are parsed into events as they
        arrive.  A ``start`` just past a newline spares the copy of the slice (a plain transcript after
        its header line: 5 MB of fresh pages on the 202k-event log)."""
        if self.finished:
            raise SessionStorageCorruptError("cannot write to a finished session log scanner")
        if start and (self._fragment or chunk[start - 1 : start] != b"\n"):
            chunk, start = chunk[start:], 0
        if len(chunk) <= start:
            return
        base = self.input_bytes - len(self._fragment)
        data = self._fragment + chunk if self._fragment else chunk
        pieces = data.split(b"\n")
        if start:
            del pieces[: data.count(b"\n", 0, start)]  # the whole lines before ``start``
        self._fragment = pieces.pop()
        done = 0
        if self.issue is None:
            # Without a 16-digit run no integer reads differently from JS: orjson itself parses.
            done = self._scan(pieces, base, js_loads if has_big_digits(data) else orjson.loads)
        for piece in islice(pieces, done, None):
            self._consume_after_issue(piece)
        self.input_bytes += len(chunk) - start

    def _scan(self, pieces: list[bytes], end: int, loads: Any) -> int:
        """Parse ``pieces`` (whole lines ending at ``end`` + their lengths) until the first tolerated
        defect; how many were consumed (the defective one included).

        One loop with its state in locals, the records handed to the table in bulk: the per-line
        method calls and attribute writes of the former loop cost ~6 ms of a 202k-event read (issue 25).
        """
        events = self.events
        expected = self.first_seq + len(events)
        new: list[Any] = []
        line_no = self.line_no
        committed = self.committed_bytes
        row_tags = _ROW_TAG_SET
        consumed = len(pieces)
        try:
            for k, line in enumerate(pieces):
                end += len(line) + 1
                line_no += 1
                try:
                    if not line:
                        raise JsonTextError("empty record")
                    try:
                        value = loads(line)
                    except orjson.JSONDecodeError:  # what orjson refuses, JSON.parse may still read
                        value = js_loads(line)
                    run = validate_row(value) if type(value) is dict and value.get("type") in row_tags else None
                except (JsonTextError, ValueError):
                    self.issue = SessionStorageCorruptError(f"corrupt session log: unparsable committed event at line {line_no}")
                    consumed = k + 1
                    break
                if run is not None:
                    # A row's members are contiguous by construction: one check suffices.
                    if run.seq0 == expected:
                        new.append(run)
                        expected += len(run.payload)
                        committed = end
                        continue
                    value = run.member(0)
                seq = value.get("seq") if type(value) is dict else _MISSING
                if value is None:
                    # Upstream crashes with a raw TypeError here; we report corruption instead (spec §16.1).
                    raise SessionStorageCorruptError(
                        f"corrupt session log: unparsable committed event at line {line_no} (null record)"
                    )
                kind = type(seq)
                if not ((kind is int or kind is float) and seq == expected):
                    got = "undefined" if seq is _MISSING else js_string(seq)
                    self.issue = SessionStorageCorruptError(
                        f"corrupt session log: seq gap in committed region at line {line_no} (expected {expected}, got {got})"
                    )
                    if type(value) is dict and value.get("type") == "turn/end":
                        raise self.issue
                    consumed = k + 1
                    break
                if kind is float:
                    value["seq"] = int(seq)
                new.append(value)
                expected += 1
                committed = end
        finally:
            self.line_no = line_no
            self.committed_bytes = committed
            events.extend_items(new)
        return consumed

    def _consume_after_issue(self, line: bytes) -> None:
        self.line_no += 1
        try:
            value = js_loads(line) if line else _raise_empty()
            if value is None:
                raise SessionStorageCorruptError(
                    f"corrupt session log: unparsable committed event at line {self.line_no} (null record)"
                )
            if type(value) is dict and value.get("type") in _ROW_TAG_SET:
                validate_row(value)
                return  # a row holds only chunk events, never a turn/end
        except (JsonTextError, ValueError):
            return
        if type(value) is dict and value.get("type") == "turn/end":
            assert self.issue is not None
            raise self.issue

    def finish(self) -> None:
        """No more input: what is left after the last newline stays uncommitted (a torn tail)."""
        self.finished = True


_MISSING = object()


def _raise_empty() -> Any:
    raise JsonTextError("empty record")
