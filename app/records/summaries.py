"""Short readable text of event payloads: one-line summaries, compact JSON, token counts, message text.

A row shows one line; the fold calls these for every event of a log (200k and more), so they read
only what a row needs.  Stdlib only.
"""

from __future__ import annotations

import json
import re
from typing import Any

SUMMARY_LIMIT = 200  # characters of a row's summary text


def compact_count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


_NON_SPACE = re.compile(r"\S")


def one_line(text: Any, limit: int = SUMMARY_LIMIT) -> str:
    """The first non-blank line, whitespace collapsed, cut at ``limit`` with an ellipsis.

    Only the head of a long text is split (a 100 KB reasoning block is summarised thousands of
    times when a big log is folded); " …" marks that more non-blank text follows the line.
    """
    if not isinstance(text, str):
        return ""
    window = text if len(text) <= 4 * limit + 256 else text[: 4 * limit + 256]
    offset = 0
    for raw in window.splitlines(keepends=True):
        offset += len(raw)
        line = " ".join(raw.split())
        if not line:
            continue
        if len(line) > limit:
            return line[: limit - 1] + "…"
        if offset >= len(window) and len(window) < len(text):
            return _one_line_whole(text, limit)  # the window cut this very line short
        more = _NON_SPACE.search(text, offset) is not None
        return line + (" …" if more and len(line) < limit - 2 else "")
    return _one_line_whole(text, limit) if len(window) < len(text) else ""


def _one_line_whole(text: str, limit: int) -> str:
    """``one_line`` by splitting the whole text: the reference the head-only pass must agree with."""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            more = line != " ".join(text.split())
            if len(line) > limit:
                return line[: limit - 1] + "…"
            return line + (" …" if more and len(line) < limit - 2 else "")
    return ""


def compact_json(value: Any, limit: int = SUMMARY_LIMIT) -> str:
    """``value`` as JSON without spaces, cut at ``limit`` characters with an ellipsis."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def content_text(content: Any) -> str:
    """Readable text of a message's content blocks (text, reasoning, nested tool-result content)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = (_block_text(block) for block in content if isinstance(block, dict))
    return "\n".join(p for p in parts if p)


def _block_text(block: dict[str, Any]) -> str:
    t = block.get("type")
    if t in ("text", "reasoning"):
        return str(block.get("text", ""))
    if t == "tool-result":
        return content_text(block.get("content"))
    if t == "image":
        att = block.get("attachment")
        if not isinstance(att, dict):
            att = {}
        return f"[image {att.get('name') or att.get('mediaType') or ''} {att.get('width')}×{att.get('height')}]"
    if t == "tool-call":
        return f"[tool call {block.get('name')}]"
    if t is not None:
        return f"[{t}]"
    return ""


def tool_arguments_summary(arguments: Any) -> str:
    """Tool arguments are raw model JSON text; show the most telling field when it parses."""
    if not isinstance(arguments, str):
        return compact_json(arguments)
    try:
        value = json.loads(arguments)
    except ValueError:
        return one_line(arguments)
    if isinstance(value, dict):
        for key in ("command", "path", "query", "pattern", "url", "description"):
            v = value.get(key)
            if isinstance(v, str) and v:
                return one_line(v)
        return compact_json(value)
    return compact_json(value)
