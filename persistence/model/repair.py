"""Crash repair: synthetic closers for an interrupted turn (session-model §4.4).

The two texts below are on-disk data written by upstream; they must stay byte-exact.
"""

from __future__ import annotations

from typing import Any

from persistence.model.event_table import EventTable

TOOL_OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external "
    "state or ask the user. Do not retry blindly."
)
TOOL_NOT_STARTED_TEXT = "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."


def _get(d: Any, key: str) -> Any:
    return d.get(key) if isinstance(d, dict) else None


def _since_last_turn_boundary(events: Any) -> list[Any]:
    """The items from the last ``turn/start``/``turn/end`` on (everything, when there is none).

    Both reset the whole fold state, so ``open_turn_state`` of this suffix equals that of the full
    log; on a 200k-event log that spares a full pass for every load.  Items of an ``EventTable``
    may be packed runs: the fold skips them (chunk deltas never change turn state).
    """
    items = events.items if isinstance(events, EventTable) else events
    for i in range(len(items) - 1, -1, -1):
        ev = items[i]
        if type(ev) is dict and ev.get("type") in ("turn/start", "turn/end"):
            return items[i:] if i else items
    return items


def has_turn_start(events: Any, start: int = 0, end: int | None = None) -> bool:
    """Whether ``events[start:end]`` holds a ``turn/start`` (a span a viewer can fold on its own)."""
    if isinstance(events, EventTable):
        return any(ev.get("type") == "turn/start" for _i, ev in events.scalars(start, end))
    stop = len(events) if end is None else end
    return any(type(events[i]) is dict and events[i].get("type") == "turn/start" for i in range(start, stop))


def open_turn_state(events: Any) -> tuple[Any, Any, dict[Any, dict[str, Any]]]:
    """(open turn, open step, pending calls) after scanning ``events`` (a list or an ``EventTable``)."""
    items = _since_last_turn_boundary(events)
    open_turn: Any = None
    open_step: Any = None
    pending: dict[Any, dict[str, Any]] = {}
    for ev in items:
        if type(ev) is not dict:
            continue  # a packed run of chunk deltas
        t = ev.get("type")
        if t == "turn/start":
            open_turn = _get(ev.get("data"), "turn")
            open_step = None
            pending.clear()
        elif t == "turn/end":
            open_turn = None
            open_step = None
            pending.clear()
        elif t == "step/start":
            open_step = _get(ev.get("data"), "step")
        elif t == "step/end":
            open_step = None
            pending.clear()
        elif t == "assistant/message":
            data = ev.get("data")
            content = _get(_get(data, "message"), "content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool-call":
                        cid = block.get("id")
                        # Re-registering keeps the id's position and forgets its call seq.
                        pending[cid] = {"step": _get(data, "step")}
        elif t == "tool/call":
            cid = _get(ev.get("data"), "callId")
            if cid in pending:
                pending[cid]["call_seq"] = ev.get("seq")
        elif t == "tool/result":
            cid = _get(_get(_get(ev.get("data"), "message"), "source"), "callId")
            pending.pop(cid, None)
    return open_turn, open_step, pending


def has_open_turn(events: Any) -> bool:
    """Whether the log ends inside a turn (a crash left it open)."""
    return bool(events) and open_turn_state(events)[0] is not None


def interrupted_turn_closers(events: Any) -> list[dict[str, Any]]:
    """The synthetic events that close an interrupted turn (tool results, step/turn ends); [] when balanced."""
    if not events:
        return []
    open_turn, open_step, pending = open_turn_state(events)
    if open_turn is None:
        return []
    last = events[-1]
    seq = int(last["seq"]) + 1
    time = last["time"]
    out: list[dict[str, Any]] = []
    for call_id, info in pending.items():
        recorded = "call_seq" in info and info["call_seq"] is not None
        if recorded:
            name, code, text = "ToolOutcomeUnknownError", "TOOL_OUTCOME_UNKNOWN", TOOL_OUTCOME_UNKNOWN_TEXT
        else:
            name, code, text = "ToolNotStartedError", "TOOL_NOT_STARTED", TOOL_NOT_STARTED_TEXT
        ev: dict[str, Any] = {
            "type": "tool/result",
            "seq": seq,
            "time": time,
            "data": {
                "turn": open_turn,
                "step": info["step"],
                "message": {
                    "id": f"interrupted-tool-result-{call_id}-{seq}",
                    "role": "user",
                    "source": {"kind": "tool", "callId": call_id},
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": call_id,
                            "isError": True,
                            "content": [{"type": "text", "text": text}],
                        }
                    ],
                },
                "error": {"name": name, "code": code},
            },
            "surfaceOp": "append",
        }
        if recorded:
            ev["sourceEventSeqs"] = [info["call_seq"]]
        out.append(ev)
        seq += 1
    if open_step is not None:
        out.append({"type": "step/end", "seq": seq, "time": time, "data": {"turn": open_turn, "step": open_step}})
        seq += 1
    out.append({"type": "turn/end", "seq": seq, "time": time, "data": {"turn": open_turn, "reason": {"kind": "interrupted"}}})
    return out
