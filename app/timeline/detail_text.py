"""The full text of a timeline row, for the detail pane: the row's whole content, then its event as JSON.

A row shows one line (``summaries``); the detail pane shows everything the row stands for, so the text
is built per node kind (``_BODIES``) from the records on demand, never stored in the nodes.
Stdlib and ``app.timeline`` only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from app.records.fields import get_path
from app.records.summaries import compact_json, content_text
from app.timeline.nodes import TimelineNode
from persistence import EventType

DETAIL_LIMIT = 200_000  # characters of detail text; the Raw tab shows the rest
PRETTY_JSON_LIMIT = 100_000  # characters of a non-text tool argument value


def node_detail(node: TimelineNode, records: Sequence[dict[str, Any]], limit: int = DETAIL_LIMIT) -> str:
    """Full readable text of a node, then the primary event as pretty JSON (for a detail pane)."""
    rec = records[node.index] if 0 <= node.index < len(records) else None
    body = _BODIES.get(node.kind)
    out: list[str] = body(node, rec, records) if body is not None else []
    if node.flags:
        out.append("flags: " + ", ".join(sorted(node.flags)))
    if rec is not None:
        out.append(
            f"── event seq {node.seq} ({rec.get('type')}) ──\n" + json.dumps(rec, ensure_ascii=False, indent=2, default=str)
        )
    text = "\n\n".join(o for o in out if o)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters; see the Raw tab)"
    return text


def node_detail_text_only(node: TimelineNode, records: Sequence[dict[str, Any]]) -> str:
    """The readable text of a message or tool-result row (no JSON), or its summary when its event is gone."""
    rec = records[node.index] if 0 <= node.index < len(records) else None
    if rec is None:
        return node.summary
    data = rec.get("data")
    if rec.get("type") == EventType.TOOL_RESULT:
        text = content_text(get_path(data, "message", "content"))
        err = get_path(data, "error")
        if err is not None:
            text = f"error: {compact_json(err)}\n\n{text}"
        return text
    return content_text(get_path(data, "content"))


# ---------------------------------------------------------------- one body per node kind

Body = Callable[[TimelineNode, "dict[str, Any] | None", Sequence[dict[str, Any]]], list[str]]


def _data(rec: dict[str, Any] | None) -> Any:
    return rec.get("data") if isinstance(rec, dict) else None


def _content_block(node: TimelineNode, rec: dict[str, Any] | None, records: Sequence[dict[str, Any]]) -> list[str]:
    """A block of an assistant message: its whole text (``key[2]`` is the block's position)."""
    if rec is None:
        return []
    bi = node.key[2] if len(node.key) > 2 else -1
    content = get_path(_data(rec), "message", "content")
    if isinstance(content, list) and isinstance(bi, int) and 0 <= bi < len(content):
        return [content_text([content[bi]])]
    return []


def _tool(node: TimelineNode, rec: dict[str, Any] | None, records: Sequence[dict[str, Any]]) -> list[str]:
    """A tool call: its arguments pretty-printed, then the text of its results."""
    data = _data(rec)
    args_text: Any = ""
    if rec is not None and rec.get("type") == EventType.TOOL_CALL:
        args_text = get_path(data, "arguments")
    else:
        content = get_path(data, "message", "content")
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("id") == node.key[-1]:
                args_text = b.get("arguments")
    out = [f"{node.label}\n\narguments:\n{_pretty_json_text(args_text)}"]
    for child in node.children:
        if child.kind == "result":
            out.append("── result ──\n" + node_detail_text_only(child, records))
    return out


def _message(node: TimelineNode, rec: dict[str, Any] | None, records: Sequence[dict[str, Any]]) -> list[str]:
    return [node_detail_text_only(node, records)]


def _container(node: TimelineNode, rec: dict[str, Any] | None, records: Sequence[dict[str, Any]]) -> list[str]:
    """A turn, step or group: its row text, and its token usage bucket by bucket."""
    out = [f"{node.label}: {node.summary}\n{node.info}"]
    if node.usage is not None:
        u = node.usage
        out.append(
            f"tokens: input {u.input} · output {u.output} · cache read {u.cache_read} · "
            f"cache write {u.cache_write} · reasoning {u.reasoning} · prompt-side {u.prompt}"
        )
    return out


def _chunk_run(node: TimelineNode, rec: dict[str, Any] | None, records: Sequence[dict[str, Any]]) -> list[str]:
    """A stream without message or a failed attempt: the text its chunks carried, joined."""
    parts = []
    for s in node.seqs:
        if 0 <= s < len(records):
            ch = get_path(records[s], "data", "chunk")
            t = get_path(ch, "text") or get_path(ch, "argumentsDelta")
            if isinstance(t, str):
                parts.append(t)
    return ["".join(parts)]


_BODIES: dict[str, Body] = {
    "reasoning": _content_block,
    "text": _content_block,
    "block": _content_block,
    "tool": _tool,
    "user": _message,
    "context": _message,
    "result": _message,
    "annotation": _message,
    "turn": _container,
    "step": _container,
    "group": _container,
    "stream": _chunk_run,
    "attempt": _chunk_run,
}


def _pretty_json_text(text: Any) -> str:
    if not isinstance(text, str):
        return compact_json(text, PRETTY_JSON_LIMIT)
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text
