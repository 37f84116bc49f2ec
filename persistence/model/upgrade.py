"""The read pipeline's normalization: refusals, legacy upgrades, message checks, unknown types.

Order and texts follow persistence-contract §4 steps 2-6.  Storage is never rewritten by
these upgrades; they only shape what a reader sees.
"""

from __future__ import annotations

from typing import Any

from persistence.errors import SessionFormatUnsupportedError, SessionValidationError, version_refusal_message
from persistence.model.catalog import KNOWN_SESSION_EVENT_TYPES
from persistence.model.event_table import EventTable
from persistence.model.header import SESSION_FORMAT_VERSION
from persistence.model.jsontext import is_number, is_safe_integer, js_string
from persistence.model.packed_run import PackedRun
from persistence.model.validate import message_shape_problem

_SIMPLE_REASONS = frozenset({"completed", "blocked", "max-tokens", "interrupted"})
_FAILURE_KEYS = {"message", "code", "status", "providerRetryAfterMs", "requestId"}


_LEGACY_CANDIDATES = frozenset({"request/header-delta", "mode/set", "request/header"})


def legacy_refusal(session_id: str, event: Any) -> str | None:
    """The refusal text for retired vocabulary, or None (append and read share it)."""
    if not isinstance(event, dict):
        return None
    etype = event.get("type")
    if etype not in _LEGACY_CANDIDATES:
        return None
    seq = js_string(event.get("seq"))
    if etype == "request/header-delta":
        return f'session "{session_id}" contains unsupported legacy request/header-delta event at seq {seq}'
    if etype == "mode/set":
        return f'session "{session_id}" contains unsupported legacy mode/set event at seq {seq}'
    data = event.get("data")
    if isinstance(data, dict) and data.get("reason") == "fallback":
        return f'session "{session_id}" contains unsupported legacy request/header reason "fallback" at seq {seq}'
    return None


def check_identity_and_version(
    session_id: str, meta: dict[str, Any], raw_path: str | None, location: dict[str, str] | None
) -> None:
    """Refuse a log whose header names another id, or a format version this harness does not read."""
    if meta.get("id") != session_id:
        raise SessionValidationError(
            f'stored session identity mismatch: requested "{session_id}", header contains "{js_string(meta.get("id"))}"'
        )
    version = meta.get("version")
    if version != SESSION_FORMAT_VERSION or type(version) is bool:
        message = version_refusal_message(session_id, version)
        if raw_path is not None:
            message += f" (raw log: {raw_path})"
        raise SessionFormatUnsupportedError(message, location=location)


def _malformed(kind: str, seq: Any) -> SessionValidationError:
    return SessionValidationError(f"malformed pre-react-loop {kind} at seq {js_string(seq)}")


def _upgrade_turn_start(ev: dict[str, Any]) -> dict[str, Any]:
    data = ev.get("data")
    if not isinstance(data, dict) or "trigger" not in data:
        return ev
    trigger = data.get("trigger")
    turn: Any = data.get("turn")
    if (
        data.keys() != {"turn", "trigger"}
        or not (is_safe_integer(turn) and turn >= 1)
        or not isinstance(trigger, dict)
        or type(trigger.get("kind")) is not str
        or trigger.get("kind") == ""
    ):
        raise _malformed("turn/start", ev.get("seq"))
    return {**ev, "data": {"turn": turn}}


def _upgrade_turn_end(ev: dict[str, Any]) -> dict[str, Any]:
    data = ev.get("data")
    seq = ev.get("seq")
    if not isinstance(data, dict) or data.keys() != {"turn", "reason"}:
        raise _malformed("turn/end", seq)
    turn, reason = data["turn"], data["reason"]
    if not (is_safe_integer(turn) and turn >= 1) or not isinstance(reason, dict) or type(reason.get("kind")) is not str:
        raise _malformed("turn/end", seq)
    kind = reason["kind"]
    new_reason: dict[str, Any] | None = None
    if kind in _SIMPLE_REASONS:
        if reason.keys() != {"kind"}:
            raise _malformed("turn/end", seq)
    elif kind == "aborted":
        if "reason" not in reason:
            # Only a *bare* {kind:'aborted'} is the legacy shape; any other key without a nested
            # reason is malformed, not silently dropped (persistence-contract §4 step 5, R-18 b).
            if reason.keys() != {"kind"}:
                raise _malformed("turn/end", seq)
            new_reason = {"kind": "aborted", "reason": {"kind": "legacy"}}
    elif kind == "disposed":
        if reason.keys() != {"kind"}:
            raise _malformed("turn/end", seq)
        new_reason = {"kind": "aborted", "reason": {"kind": "disposed"}}
    elif kind == "error":
        if "error" in reason:
            pass
        elif "failure" in reason and reason.keys() == {"kind", "step", "failure"}:
            failure = reason["failure"]
            step = reason["step"]
            if (
                not (is_safe_integer(step) and step >= 0)
                or not isinstance(failure, dict)
                or not set(failure) <= _FAILURE_KEYS
                or type(failure.get("message")) is not str
                or type(failure.get("code")) is not str
                or ("status" in failure and not is_number(failure["status"]))
                or ("providerRetryAfterMs" in failure and not is_number(failure["providerRetryAfterMs"]))
                or ("requestId" in failure and type(failure["requestId"]) is not str)
            ):
                raise _malformed("turn/end", seq)
            new_reason = {"kind": "error", "error": failure}
        elif "message" in reason and set(reason) <= {"kind", "step", "message", "code"} and "step" in reason:
            if type(reason["message"]) is not str or ("code" in reason and type(reason["code"]) is not str):
                raise _malformed("turn/end", seq)
            new_reason = {"kind": "error", "error": {"message": reason["message"], "code": reason.get("code") or "UNKNOWN"}}
        else:
            raise _malformed("turn/end", seq)
    if new_reason is None:
        return ev
    return {**ev, "data": {"turn": turn, "reason": new_reason}}


def _legacy_id(session_id: str, seq: Any) -> str:
    return f"legacy-message:{session_id}:{js_string(seq)}"


def _upgrade_steering(ev: dict[str, Any], session_id: str) -> dict[str, Any]:
    data = ev.get("data")
    seq = ev.get("seq")
    if (
        isinstance(data, dict)
        and data.keys() == {"turn", "message"}
        and is_safe_integer(data["turn"])
        and isinstance(data["message"], dict)
    ):
        return {**ev, "type": "user/message", "data": data["message"]}
    if isinstance(data, dict) and data.keys() == {"turn", "content", "source"}:
        return {
            **ev,
            "type": "user/message",
            "data": {"content": data["content"], "source": data["source"], "id": _legacy_id(session_id, seq), "role": "user"},
        }
    raise _malformed("steering/message", seq)


def _upgrade_pre_identity(ev: dict[str, Any], session_id: str, ids_by_seq: dict[Any, Any]) -> dict[str, Any]:
    etype = ev["type"]
    data = ev.get("data")
    if not isinstance(data, dict):
        return ev
    seq = ev.get("seq")
    if etype == "user/message":
        if "id" not in data and "role" not in data and "message" not in data and "content" in data and "source" in data:
            return {**ev, "data": {**data, "id": _legacy_id(session_id, seq), "role": "user"}}
        return ev
    if "message" in data:
        return ev
    if etype == "assistant/message" and "content" in data and "provenance" in data:
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        prov = data["provenance"] if isinstance(data["provenance"], dict) else {}
        rest["message"] = {
            "id": _legacy_id(session_id, seq),
            "role": "assistant",
            "content": data["content"],
            "source": {**prov, "kind": "model"},
        }
        return {**ev, "data": rest}
    if etype == "tool/result" and "callId" in data and "content" in data and "isError" in data:
        op = ev.get("surfaceOp")
        mid = _legacy_id(session_id, seq)
        if isinstance(op, dict) and op.get("op") == "replace" and op.get("start") in ids_by_seq:
            mid = ids_by_seq[op.get("start")]
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        rest["message"] = {
            "id": mid,
            "role": "user",
            "content": [
                {"type": "tool-result", "toolCallId": data["callId"], "content": data["content"], "isError": data["isError"]}
            ],
            "source": {"kind": "tool", "callId": data["callId"]},
        }
        return {**ev, "data": rest}
    return ev


_MESSAGE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
_SPECIAL_TYPES = _MESSAGE_TYPES | _LEGACY_CANDIDATES | {"turn/start", "turn/end", "steering/message"}


def normalize_events(session_id: str, events: Any, raw_path: str | None, location: dict[str, str] | None) -> Any:
    """Steps 4-6 of the read pipeline; returns the (possibly upgraded) events.

    One pass over the log: retired vocabulary anywhere wins over an earlier upgrade or
    shape error (upstream checks it first), and unknown types are judged last, on the
    normalized events.  Records that need no upgrade are returned as the same objects; an
    ``EventTable`` comes back as a table, a packed run of chunk deltas passing in one step (a
    known type no upgrade touches).
    """
    is_table = isinstance(events, EventTable)
    items = events.items if is_table else events
    out = items
    copied = False
    ids_by_seq: dict[Any, Any] = {}
    deferred: SessionValidationError | None = None
    unknown: tuple[Any, Any] | None = None
    known = KNOWN_SESSION_EVENT_TYPES
    special = _SPECIAL_TYPES
    for i, ev in enumerate(items):
        if type(ev) is not dict:
            if type(ev) is PackedRun:
                continue
            if unknown is None:
                unknown = (None, None)
            continue
        etype = ev.get("type")
        if etype not in special:
            if unknown is None and etype not in known and ev.get("ignorable") is not True:
                unknown = (etype, ev.get("seq"))
            continue
        if etype in _LEGACY_CANDIDATES:
            refusal = legacy_refusal(session_id, ev)
            if refusal is not None:
                raise SessionValidationError(refusal)
        if deferred is not None:
            continue
        try:
            new = ev
            if etype == "turn/start":
                new = _upgrade_turn_start(ev)
            elif etype == "turn/end":
                new = _upgrade_turn_end(ev)
            elif etype == "steering/message":
                new = _upgrade_steering(ev, session_id)
                etype = "user/message"
            if etype in _MESSAGE_TYPES:
                new = _upgrade_pre_identity(new, session_id, ids_by_seq)
                # Upstream's read pipeline validates each stored event through snapshotSessionEvent,
                # whose subject is "session event at seq N" whatever the event's type.
                problem = message_shape_problem(new)
                if problem is not None:
                    raise SessionValidationError(f"session event at seq {js_string(new.get('seq'))} {problem}")
                msg = new["data"] if etype == "user/message" else new["data"]["message"]
                ids_by_seq[new.get("seq")] = msg["id"]
        except SessionValidationError as err:
            deferred = err
            continue
        if new is not ev:
            if not copied:
                out = list(items)
                copied = True
            out[i] = new
    if deferred is not None:
        raise deferred
    if unknown is not None:
        etype, seq = unknown
        message = (
            f'session "{session_id}" contains event type "{js_string(etype)}" (seq {js_string(seq)}) '
            "unknown to this harness and not marked ignorable; refusing to interpret the log \u2014 "
            "it was likely written by a newer harness"
        )
        if raw_path is not None:
            message += f" (raw log: {raw_path})"
        raise SessionFormatUnsupportedError(message, location=location)
    if is_table:
        return EventTable(out) if copied else events
    return out
