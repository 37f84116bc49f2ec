"""Validation of headers, envelopes, message shapes and the surface fold (session-model §1-§2).

Everything here works on engine-owned plain records (dicts straight from the parser) so
that validating a 200k-event log does not allocate wrapper objects.
"""

from __future__ import annotations

import posixpath
from typing import Any

from persistence.errors import SessionValidationError
from persistence.model.catalog import SURFACE_EVENT_TYPES
from persistence.model.event_table import EventTable
from persistence.model.header import SESSION_FORMAT_VERSION
from persistence.model.jsontext import (
    is_negative_zero,
    is_nonneg_safe_integer,
    is_safe_integer,
    js_string,
    json_quote,
)
from persistence.model.packed_run import PackedRun

ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"})


def _fail(message: str) -> SessionValidationError:
    return SessionValidationError(message)


# ---------------------------------------------------------------- header


def _nonneg_int_not_negzero(v: Any) -> bool:
    return is_nonneg_safe_integer(v) and not is_negative_zero(v)


def validate_header(header: Any, session_id: str) -> None:
    """Full header validation of the Session constructor (session-model §1.3, first failure wins)."""
    if not isinstance(header, dict):
        raise _fail("session header is not a plain JSON record")
    version = header.get("version")
    if version != SESSION_FORMAT_VERSION or type(version) is bool:
        raise _fail(f"session header version must be {SESSION_FORMAT_VERSION}, got {js_string(version)}")
    if header.get("id") != session_id:
        raise _fail(f"session header id {json_quote(str(header.get('id')))} does not match session id {json_quote(session_id)}")
    if not _nonneg_int_not_negzero(header.get("createdAt")):
        raise _fail("session header createdAt must be a non-negative safe integer")
    if "cwd" in header:
        cwd = header.get("cwd")
        if type(cwd) is not str:
            raise _fail("session header cwd must be a string")
        if not posixpath.isabs(cwd):
            raise _fail(f"session header cwd must be an absolute path, got {json_quote(cwd)}")
    if "parentSession" in header and type(header["parentSession"]) is not str:
        raise _fail("session header parentSession must be a string")
    if "seedLength" in header and not _nonneg_int_not_negzero(header["seedLength"]):
        raise _fail("session header seedLength must be a non-negative safe integer")
    if "origin" in header and header["origin"] != "subagent":
        raise _fail('session header origin must be "subagent"')
    if "delegationDepth" in header and not _nonneg_int_not_negzero(header["delegationDepth"]):
        raise _fail("session header delegationDepth must be a non-negative safe integer")
    if "agentPreset" in header and type(header["agentPreset"]) is not str:
        raise _fail("session header agentPreset must be a string")


# ---------------------------------------------------------------- message shapes


def _nonempty_str(v: Any) -> bool:
    return type(v) is str and v != ""


def message_of(event: dict[str, Any]) -> Any:
    """The message object a message event carries (None when it has none)."""
    data = event.get("data")
    if event.get("type") == "user/message":
        return data
    return data.get("message") if isinstance(data, dict) else None


def validate_message_shape(event: dict[str, Any], subject: str) -> None:
    """Identified-message checks for the three surface types (session-model §2.3 step 3)."""
    problem = message_shape_problem(event)
    if problem is not None:
        raise _fail(f"{subject} {problem}")


def message_shape_problem(event: dict[str, Any]) -> str | None:
    """What ``validate_message_shape`` would say after its subject, or None when the shape is valid.

    For a hot loop: the subject (a seq or an index as text) is formatted only when there is a problem
    (1,693 messages on the 202k-event log each formatted one, issue 25).
    """
    etype = event.get("type")
    msg = message_of(event)
    if not isinstance(msg, dict) or not _nonempty_str(msg.get("id")):
        return "lacks an identified message"
    role = "assistant" if etype == "assistant/message" else "user"
    if msg.get("role") != role:
        return f'message must have role "{role}"'
    source = msg.get("source")
    if not isinstance(source, dict) or not _nonempty_str(source.get("kind")):
        return "message has invalid source"
    content = msg.get("content")
    if type(content) is not list:
        return "message has invalid content"
    if etype == "assistant/message":
        if source.get("kind") != "model" or not _nonempty_str(source.get("provider")) or not _nonempty_str(source.get("model")):
            return "message must have model source"
    elif etype == "tool/result":
        if source.get("kind") != "tool" or not _nonempty_str(source.get("callId")):
            return "message must have tool source"
        if (
            len(content) != 1
            or not isinstance(content[0], dict)
            or content[0].get("type") != "tool-result"
            or type(content[0].get("content")) is not list
        ):
            return "message must contain one tool-result block"
        if content[0].get("toolCallId") != source.get("callId"):
            return "message has mismatched tool call ids"
    return None


def validate_request_header(event: dict[str, Any], subject: str) -> None:
    """Refuse a ``request/header`` event without a provider/model configuration."""
    data = event.get("data")
    header = data.get("header") if isinstance(data, dict) else None
    config = header.get("config") if isinstance(header, dict) else None
    if not isinstance(config, dict) or not _nonempty_str(config.get("provider")) or not _nonempty_str(config.get("model")):
        raise _fail(f"{subject} lacks provider/model")
    if "reasoningEffort" in config and not _nonempty_str(config["reasoningEffort"]):
        raise _fail(f"{subject} has invalid reasoningEffort")
    if isinstance(header, dict) and "adapterDefaults" in header:
        ad = header["adapterDefaults"]
        if (
            type(ad) is not dict
            or not set(ad) <= {"reasoningEffort", "maxTokens"}
            or any(v is not True or k not in config for k, v in ad.items())
        ):
            raise _fail(f"{subject} has invalid adapterDefaults")


# ---------------------------------------------------------------- envelope and surface


def _valid_surface_op(op: Any) -> str | None:
    if op == "append" and type(op) is str:
        return None
    if type(op) is not dict:
        return "carries an invalid surfaceOp"
    if op.keys() != {"op", "start", "end"} or op.get("op") != "replace":
        return "carries an invalid replace surfaceOp"
    if not (is_nonneg_safe_integer(op["start"]) and is_nonneg_safe_integer(op["end"])):
        return "carries an invalid replace surfaceOp"
    return None


class SurfaceFold:
    """Incremental surface fold: which surface events the model currently sees (session-model §2.7)."""

    __slots__ = ("_by_seq", "nodes")

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self._by_seq: dict[int, dict[str, Any]] = {}

    def copy(self) -> SurfaceFold:
        """An independent fold in the same state (an incremental read continues a copy, never the original)."""
        out = SurfaceFold()
        out.nodes = list(self.nodes)
        out._by_seq = dict(self._by_seq)
        return out

    def plan(self, event: dict[str, Any], expected_seq: int) -> None:
        """Raise the upstream reason text when ``event`` cannot be applied; else apply it."""
        etype = event.get("type")
        seq = event.get("seq")
        if seq != expected_seq:
            raise _fail(f"session event seq {js_string(seq)} is not contiguous; expected {expected_seq}")
        has_op = "surfaceOp" in event
        has_sources = "sourceEventSeqs" in event
        if etype not in SURFACE_EVENT_TYPES:
            if has_op:
                raise _fail(f'session event "{etype}" is not surface-eligible and cannot carry surfaceOp')
            if has_sources:
                raise _fail(f'session event "{etype}" is not surface-eligible and cannot carry sourceEventSeqs')
            return
        if not has_op:
            raise _fail(f'session event "{etype}" is surface-eligible and requires a surfaceOp marker')
        op = event["surfaceOp"]
        reason = _valid_surface_op(op)
        if reason is not None:
            raise _fail(f'session event "{etype}" {reason}')
        sources = event.get("sourceEventSeqs")
        if has_sources:
            if type(sources) is not list:
                raise _fail(f'session event "{etype}" sourceEventSeqs must be an array when present')
            if not sources and etype != "assistant/message":
                raise _fail(f'session event "{etype}" sourceEventSeqs must not be empty except on assistant/message')
            if not all(is_nonneg_safe_integer(s) for s in sources):
                raise _fail(f'session event "{etype}" sourceEventSeqs must densely contain non-negative safe integers')
            if len(set(sources)) != len(sources):
                raise _fail(f'session event "{etype}" sourceEventSeqs must not contain duplicates')
            if any(s >= seq for s in sources):
                raise _fail(f'session event "{etype}" sourceEventSeqs must reference earlier events')
        if op == "append":
            self.nodes.append(seq)
            self._by_seq[seq] = event
            return
        start, end = int(op["start"]), int(op["end"])
        try:
            ps = self.nodes.index(start)
        except ValueError:
            raise _fail(f"surface replace: start seq {start} not found in surface") from None
        try:
            pe = self.nodes.index(end)
        except ValueError:
            raise _fail(f"surface replace: end seq {end} not found in surface") from None
        if ps > pe:
            raise _fail(f"surface replace: start seq {start} is after end seq {end}")
        shadowed = self.nodes[ps : pe + 1]
        cited = set(sources or [])
        missing = [s for s in shadowed if s not in cited]
        if missing:
            raise _fail(
                "surface replace: sourceEventSeqs must include every shadowed surface node; missing "
                + ", ".join(str(m) for m in missing)
            )
        if etype == "tool/result":
            if len(shadowed) != 1:
                raise _fail("tool/result surface replacement must rewrite exactly one current node")
            target = self._by_seq.get(shadowed[0])
            if target is None or target.get("type") != "tool/result":
                raise _fail("tool/result surface replacement must target a current tool/result")
            if _strip_tool_content(target.get("data")) != _strip_tool_content(event.get("data")):
                raise _fail("tool/result surface replacement may change only content")
        self.nodes[ps : pe + 1] = [seq]
        self._by_seq[seq] = event


def _strip_tool_content(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    out = dict(data)
    msg = out.get("message")
    if isinstance(msg, dict):
        msg = dict(msg)
        content = msg.get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict):
            block = dict(content[0])
            block.pop("content", None)
            msg["content"] = [block, *content[1:]]
        out["message"] = msg
    return out


_PLAIN_KEYS = frozenset({"type", "seq", "time", "data"})
_INT_ONLY = {int}
# Types a plain envelope does not settle (one set lookup instead of three tests per event).
_CHECKED_TYPES = frozenset(SURFACE_EVENT_TYPES) | {"request/header", "request/header-delta"}
_MAX = 2**53 - 1


def validate_seed_events(
    events: EventTable | list[Any], *, shapes_checked: int = 0, fold: SurfaceFold | None = None, start: int = 0
) -> SurfaceFold:
    """The Session constructor's per-event checks on a restored log (session-model §2.3).

    A packed run is one step: its members are plain ``assistant/chunk`` events whose envelope,
    seqs and times its row validation already proved, so only its place in the seq chain is left.
    ``shapes_checked``: the first events whose message shapes the read pipeline's
    ``normalize_events`` already validated with this same function (their check is not repeated:
    3,342 calls on a 202k-event log).
    ``fold`` and ``start``: continue a log whose first ``start`` events were checked into ``fold`` (an
    incremental read checks only the appended events; ``events`` are then those, from seq ``start``).
    """
    fold = SurfaceFold() if fold is None else fold
    plain = _PLAIN_KEYS
    items = events.items if isinstance(events, EventTable) else events
    i = start
    for ev in items:
        # Fast path: the overwhelming majority are plain log-only events with int fields.
        if type(ev) is dict and ev.keys() == plain:
            etype = ev["type"]
            seq = ev["seq"]
            tm = ev["time"]
            if (
                type(etype) is str
                and type(seq) is int
                and seq == i
                and type(tm) is int
                and -_MAX <= tm <= _MAX
                and etype not in _CHECKED_TYPES
            ):
                i += 1
                continue
        elif type(ev) is PackedRun:
            if ev.seq0 != i:
                raise _fail(f"seed event at index {i} has seq {ev.seq0} (expected {i}); seed must be contiguous from 0")
            i += len(ev.payload)  # the tuple's C length, not PackedRun.__len__ (2,859 Python calls a read)
            continue
        if i < shapes_checked and type(ev) is dict and _appended_surface(ev, i, fold):
            i += 1
            continue
        _validate_one(ev, i, fold, i < shapes_checked)
        i += 1
    return fold


def _appended_surface(ev: dict[str, Any], i: int, fold: SurfaceFold) -> bool:
    """Fold in a surface event whose shape is already checked and that appends to the surface with int
    fields, in one straight pass; False (the fold untouched) for anything else, which ``_validate_one``
    then judges and names.  Whatever this takes, ``_validate_one`` takes the same way.

    Why: the generic envelope and ``plan`` checks cost ~2 us a message (1,693 on the 202k-event log).
    """
    etype = ev.get("type")
    seq = ev.get("seq")
    tm = ev.get("time")
    op = ev.get("surfaceOp")
    if (
        type(etype) is not str
        or etype not in SURFACE_EVENT_TYPES
        or type(op) is not str
        or op != "append"
        or type(seq) is not int
        or seq != i
        or type(tm) is not int
        or not -_MAX <= tm <= _MAX
        or "ignorable" in ev
        or "data" not in ev
        or not ENVELOPE_KEYS.issuperset(ev.keys())
    ):
        return False
    if "sourceEventSeqs" in ev:
        sources = ev["sourceEventSeqs"]
        if type(sources) is not list:
            return False
        if not sources:
            if etype != "assistant/message":
                return False
        elif not _earlier_distinct_seqs(sources, seq):
            return False
    fold.nodes.append(seq)
    fold._by_seq[seq] = ev
    return True


def _earlier_distinct_seqs(sources: list[Any], seq: int) -> bool:
    """Whether ``sources`` (not empty) are distinct ints (not bools) in ``0 <= s < seq``.

    One and two sources, what real messages carry (a tool result its call; an assistant message its
    turn start and last chunk), are judged without building sets: 0.16 against 0.62 us, on the 1,356
    messages with sources of the 202k-event log (issue 25).
    """
    n = len(sources)
    if n == 1:
        s = sources[0]
        return type(s) is int and 0 <= s < seq
    if n == 2:
        a, b = sources
        return type(a) is int and type(b) is int and a != b and 0 <= a < seq and 0 <= b < seq
    if set(map(type, sources)) != _INT_ONLY or min(sources) < 0 or max(sources) >= seq:
        return False
    return len(set(sources)) == len(sources)


def _validate_one(ev: Any, i: int, fold: SurfaceFold, shape_checked: bool = False) -> None:
    if type(ev) is not dict:
        raise _fail(f"seed event at index {i} has an invalid event envelope")
    etype = ev.get("type")
    if etype == "request/header-delta":
        raise _fail(f"seed event at index {i} uses unsupported legacy request/header-delta format")
    if (
        not ENVELOPE_KEYS.issuperset(ev.keys())
        or type(etype) is not str
        or "data" not in ev
        or not is_nonneg_safe_integer(ev.get("seq"))
        or not is_safe_integer(ev.get("time"))
        or ("ignorable" in ev and ev["ignorable"] is not True)
    ):
        raise _fail(f"seed event at index {i} has an invalid event envelope")
    if etype in SURFACE_EVENT_TYPES:
        if not shape_checked:
            validate_message_shape(ev, f"seed {etype} at index {i}")
    elif etype == "request/header":
        validate_request_header(ev, f"seed request/header at index {i}")
        data = ev.get("data")
        if isinstance(data, dict) and data.get("reason") == "fallback":
            raise _fail(f'seed event at index {i} uses unsupported legacy request/header reason "fallback"')
    if ev["seq"] != i:
        raise _fail(f"seed event at index {i} has seq {js_string(ev['seq'])} (expected {i}); seed must be contiguous from 0")
    if etype in SURFACE_EVENT_TYPES or "surfaceOp" in ev or "sourceEventSeqs" in ev:
        try:
            fold.plan(ev, i)
        except SessionValidationError as err:
            raise _fail(f"invalid seed event at index {i}: {err.message}") from None
