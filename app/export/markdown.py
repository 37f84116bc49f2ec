"""The Markdown export: the session's facts, then its turns with prompts, replies, tool calls and results.

Written entry by entry as the transcript is walked (``app.export.transcript``), so memory stays flat
whatever the log's size.  Messages are Markdown already (the model writes it) and go in as they are;
tool arguments and results go in fenced blocks whose fence is longer than any backtick run inside,
so a payload can never close its block early; long payloads are cut with a note.

May import: the standard library and ``app.export``'s own modules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TextIO

from app.export.document import CONTEXT_TEXT_CHARS, TOOL_TEXT_CHARS, DocumentInfo, duration, one_line_text, truncated
from app.export.transcript import Entry, Note, Prompt, Reply, Stream, ToolCall, ToolResult, TurnClose, TurnOpen

_BACKTICKS = re.compile(r"`{3,}")


def _fence(text: str) -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _fenced(text: str, lang: str = "") -> str:
    fence = _fence(text)
    return f"{fence}{lang}\n{text}\n{fence}\n"


def _quoted(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n")) + "\n"


def _cell(text: str) -> str:
    return one_line_text(text).replace("|", "\\|")


def write_markdown(out: TextIO, info: DocumentInfo, entries: Iterable[Entry]) -> None:
    """Write the whole document to ``out`` (entries are consumed as they come)."""
    w = out.write
    w(f"# {_cell(info.title)}\n\n| | |\n|---|---|\n")
    for label, value in info.facts():
        w(f"| {label} | {_cell(value)} |\n")
    w(f"\n*Exported by SessionScope {info.version}.*\n")
    for e in entries:
        if type(e) is TurnOpen:
            w(f"\n---\n\n## Turn {one_line_text(str(e.turn if e.turn is not None else e.number))}\n\n")
        elif type(e) is TurnClose:
            detail = f": {one_line_text(e.detail)}" if e.detail else ""
            took = f" · {duration(e.duration_ms)}" if e.duration_ms is not None else ""
            w(f"*Turn {one_line_text(str(e.turn))} {e.reason}{detail}{took}*\n")
        elif type(e) is Prompt:
            if e.human:
                w(f"**User**\n\n{e.text}\n\n")
            else:
                text, note = truncated(e.text, CONTEXT_TEXT_CHARS)
                w(f"**{e.label}**\n\n{_quoted(text)}")
                w(f"\n*{note}*\n\n" if note else "\n")
        elif type(e) is Reply:
            cancelled = " *(cancelled mid-stream)*" if e.interrupted else ""
            if e.kind == "text":
                w(f"**Assistant**{cancelled}\n\n{e.text}\n\n")
            elif e.kind == "reasoning":
                w(f"**Reasoning**{cancelled}\n\n{_quoted(e.text)}\n")
            else:
                w(f"**[{e.kind}]**\n\n{_fenced(e.text, 'json')}\n")
        elif type(e) is ToolCall:
            text, note = truncated(e.arguments, TOOL_TEXT_CHARS)
            w(f"**Tool call · {_cell(e.name)}** (`{_cell(e.call_id)}`)\n\n{_fenced(text, 'json')}")
            w(f"*{note}*\n\n" if note else "\n")
        elif type(e) is ToolResult:
            status = f" · error{' ' + e.code if e.code else ''}" if e.is_error else ""
            text, note = truncated(e.text, TOOL_TEXT_CHARS)
            w(f"**Result · {_cell(e.name)}**{status}\n\n{_fenced(text)}")
            w(f"*{note}*\n\n" if note else "\n")
        elif type(e) is Stream:
            w(f"**Streamed, no message** ({e.chunks:,} chunks; cancelled or crashed)\n\n{_quoted(e.text)}\n")
        elif type(e) is Note:
            w(_quoted(f"**{e.label}:** {e.text}") + "\n")


__all__ = ["write_markdown"]
