"""How a standalone event looks as a timeline row: one small function per event type, in a table.

"Standalone" means the event is not part of the turn/step/message/tool structure the fold builds
(requests, titles, the seed marker, retries, todos, inbox splices, and any type this viewer does not
know).  Each function reads only the record, so it is pure; the fold adds position, seqs and flags
such as ``synthetic``.  Stdlib and ``app.timeline`` only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.records.fields import get_path
from app.records.summaries import compact_count, compact_json, content_text, one_line
from app.timeline.nodes import ERROR, SEED
from persistence import EventType


@dataclass(frozen=True, slots=True)
class EventRow:
    """The text of one row: ``kind`` picks its colour, ``flags`` are added to the fold's own."""

    kind: str
    label: str
    summary: str
    info: str = ""
    flags: tuple[str, ...] = ()


def _request_header(data: Any) -> EventRow:
    cfg = get_path(data, "header", "config")
    model = get_path(cfg, "model")
    return EventRow(
        "request",
        "Request",
        f"{get_path(cfg, 'provider') or ''} {model or ''}".strip() or "header",
        f"header · {get_path(data, 'reason')}",
    )


def _request_context(data: Any) -> EventRow:
    cw = get_path(data, "contextWindow")
    what = f"{get_path(data, 'provider') or ''} {get_path(data, 'model') or ''}".strip()
    return EventRow("request", "Request", what, f"context window {compact_count(cw)}" if isinstance(cw, int) else "context")


def _title(data: Any) -> EventRow:
    return EventRow("title", "Title", one_line(get_path(data, "title")))


def _end_seed(data: Any) -> EventRow:
    return EventRow("seed", "End of seed", "events above were inherited (fork / resume)", flags=(SEED,))


def _retry(data: Any) -> EventRow:
    return EventRow("retry", "LLM retry", one_line(get_path(data, "failure", "message") or compact_json(data)), flags=(ERROR,))


def _todos(data: Any) -> EventRow:
    todos = get_path(data, "todos")
    n = len(todos) if isinstance(todos, list) else 0
    done = sum(1 for x in todos if isinstance(x, dict) and x.get("status") == "completed") if n else 0
    return EventRow(
        "event",
        "Todos",
        f"{done}/{n} done · " + "; ".join(one_line(get_path(x, "content"), 60) for x in (todos or [])[:3] if isinstance(x, dict)),
    )


def _inbox(data: Any) -> EventRow:
    ins = get_path(data, "inserted")
    n = len(ins) if isinstance(ins, list) else 0
    removed = get_path(data, "removedCount")
    summary = f"{get_path(data, 'target')}: +{n}" + (f" −{removed}" if removed else "")
    if n and isinstance(ins, list):
        summary += " · " + one_line(content_text(get_path(ins[0], "content")), 120)
    return EventRow("event", "Inbox", summary)


EVENT_ROWS: dict[str, Callable[[Any], EventRow]] = {
    EventType.REQUEST_HEADER: _request_header,
    EventType.REQUEST_CONTEXT: _request_context,
    EventType.SESSION_TITLE: _title,
    EventType.SESSION_END_SEED: _end_seed,
    EventType.LLM_RETRY: _retry,
    EventType.TODO_WRITE: _todos,
    EventType.AGENT_INBOX_SPLICED: _inbox,
}


def event_row(rec: dict[str, Any]) -> EventRow:
    """The row of a standalone event; a type without its own function shows its payload as JSON."""
    t = rec.get("type")
    data = rec.get("data")
    try:
        build = EVENT_ROWS.get(t)  # type: ignore[arg-type]
    except TypeError:  # an unhashable "type" (a damaged payload) is an unknown type
        build = None
    if build is not None:
        return build(data)
    return EventRow("event", str(t), compact_json(data), "ignorable" if rec.get("ignorable") is True else "")
