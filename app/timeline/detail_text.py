"""The full text of a timeline row, for the detail pane (Qt-free; the fold itself is ``persistence.timeline``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from persistence.timeline import TimelineNode, compact_json, content_text, get_path


def node_detail(node: TimelineNode, records: Sequence[dict[str, Any]], limit: int = 200_000) -> str:
    """Full readable text of a node, then the primary event as pretty JSON (for a detail pane)."""
    out: list[str] = []
    rec = records[node.index] if 0 <= node.index < len(records) else None
    data = rec.get("data") if isinstance(rec, dict) else None
    if node.kind in ("reasoning", "text", "block") and rec is not None:
        bi = node.key[2] if len(node.key) > 2 else -1
        content = get_path(data, "message", "content")
        if isinstance(content, list) and isinstance(bi, int) and 0 <= bi < len(content):
            out.append(content_text([content[bi]]))
    elif node.kind == "tool":
        args_text = ""
        if rec is not None and rec.get("type") == "tool/call":
            args_text = get_path(data, "arguments")
        else:
            content = get_path(data, "message", "content")
            for b in content if isinstance(content, list) else []:
                if isinstance(b, dict) and b.get("id") == node.key[-1]:
                    args_text = b.get("arguments")
        out.append(f"{node.label}\n\narguments:\n{_pretty_json_text(args_text)}")
        for child in node.children:
            if child.kind == "result":
                out.append("── result ──\n" + node_detail_text_only(child, records))
    elif node.kind in ("user", "context", "result", "annotation"):
        out.append(node_detail_text_only(node, records))
    elif node.kind in ("turn", "step", "group"):
        out.append(f"{node.label}: {node.summary}\n{node.info}")
        if node.usage is not None:
            u = node.usage
            out.append(f"tokens: input {u.input} · output {u.output} · cache read {u.cache_read} · "
                       f"cache write {u.cache_write} · reasoning {u.reasoning} · prompt-side {u.prompt}")
    elif node.kind in ("stream", "attempt"):
        parts = []
        for s in node.seqs:
            if 0 <= s < len(records):
                ch = get_path(records[s], "data", "chunk")
                t = get_path(ch, "text") or get_path(ch, "argumentsDelta")
                if isinstance(t, str):
                    parts.append(t)
        out.append("".join(parts))
    if node.flags:
        out.append("flags: " + ", ".join(sorted(node.flags)))
    if rec is not None:
        out.append(f"── event seq {node.seq} ({rec.get('type')}) ──\n" + json.dumps(rec, ensure_ascii=False, indent=2,
                                                                                  default=str))
    text = "\n\n".join(o for o in out if o)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters; see the Raw tab)"
    return text


def node_detail_text_only(node: TimelineNode, records: Sequence[dict[str, Any]]) -> str:
    rec = records[node.index] if 0 <= node.index < len(records) else None
    if rec is None:
        return node.summary
    data = rec.get("data")
    if rec.get("type") == "tool/result":
        text = content_text(get_path(data, "message", "content"))
        err = get_path(data, "error")
        if err is not None:
            text = f"error: {compact_json(err)}\n\n{text}"
        return text
    return content_text(get_path(data, "content"))


def _pretty_json_text(text: Any) -> str:
    if not isinstance(text, str):
        return compact_json(text, 100_000)
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text
