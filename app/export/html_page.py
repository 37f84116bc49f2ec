"""The HTML export: one self-contained page (inline CSS, no script, no external resource) that any
browser shows, with tool calls, results, reasoning and injected context collapsible (``<details>``).

Safety: a transcript holds whatever a model, a tool or a web page put there (``<script>``,
``javascript:`` URLs, ``onerror=`` attributes).  Every string that comes from the log goes through
``html.escape`` (quotes included) and lands in element text, never in an attribute, a URL or a
style; the page makes no link at all.  A Content-Security-Policy meta tag (no script, no fetch, only
the page's own inline style) is a second wall should a bug ever let markup through.

Written entry by entry as the transcript is walked (``app.export.transcript``): memory stays flat.

May import: the standard library and ``app.export``'s own modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import TextIO

from app.export.document import CONTEXT_TEXT_CHARS, TOOL_TEXT_CHARS, DocumentInfo, duration, one_line_text, truncated
from app.export.transcript import Entry, Note, Prompt, Reply, Stream, ToolCall, ToolResult, TurnClose, TurnOpen

SUMMARY_CHARS = 120  # characters of a tool call's arguments shown on its collapsed line

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; base-uri 'none'"

STYLE = """
:root { color-scheme: light dark; --fg: #1d2126; --muted: #5f6b76; --bg: #ffffff; --panel: #f4f6f8;
  --border: #d8dee4; --user: #e8f1fb; --accent: #2f6feb; --error: #c62828; --note: #fff8e1; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ed; --muted: #9aa5b1; --bg: #16191d; --panel: #1f242a; --border: #333a42;
    --user: #1c2b3d; --accent: #6ea1ff; --error: #ff6b6b; --note: #2e2a1c; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 62rem; padding: 1.5rem; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .75rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 0 0 .5rem; display: flex; gap: .75rem; align-items: baseline; }
h2 .end { font-weight: normal; font-size: .85rem; color: var(--muted); }
table.facts { border-collapse: collapse; font-size: .9rem; margin-bottom: 1rem; }
table.facts th { text-align: left; color: var(--muted); font-weight: normal; padding: .15rem 1rem .15rem 0; vertical-align: top; }
table.facts td { padding: .15rem 0; overflow-wrap: anywhere; }
section.turn { border-top: 1px solid var(--border); padding: 1rem 0; }
.msg { margin: .6rem 0; padding: .5rem .75rem; border-radius: 6px; }
.msg .who { font-size: .8rem; font-weight: 600; color: var(--muted); margin-bottom: .2rem; }
.user { background: var(--user); }
.assistant { background: var(--panel); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .4rem 0; border: 1px solid var(--border); border-radius: 6px; background: var(--panel); }
details > summary { cursor: pointer; padding: .35rem .75rem; font-size: .9rem; overflow-wrap: anywhere; }
details > summary .args { color: var(--muted); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
details.error > summary { color: var(--error); }
details > .text, details > pre { margin: 0; padding: .5rem .75rem; border-top: 1px solid var(--border); }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.cut { font-size: .8rem; color: var(--muted); padding: 0 .75rem .5rem; }
.note { margin: .5rem 0; padding: .35rem .75rem; border-left: 3px solid var(--accent); background: var(--note);
  font-size: .9rem; }
.note b { font-weight: 600; }
.end-line { font-size: .85rem; color: var(--muted); }
footer { margin-top: 2rem; font-size: .8rem; color: var(--muted); }
"""


def _t(text: str) -> str:
    """Transcript text as inert HTML text."""
    return escape(text, quote=True)


def write_html(out: TextIO, info: DocumentInfo, entries: Iterable[Entry]) -> None:
    """Write the whole page to ``out`` (entries are consumed as they come)."""
    w = out.write
    w(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_t(info.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n"
        f'<h1>{_t(info.title)}</h1>\n<table class="facts">\n'
    )
    for label, value in info.facts():
        w(f"<tr><th>{_t(label)}</th><td>{_t(value)}</td></tr>\n")
    w("</table>\n</header>\n<main>\n")
    in_turn = False
    for e in entries:
        if type(e) is TurnOpen:
            if in_turn:
                w("</section>\n")
            in_turn = True
            w(f'<section class="turn">\n<h2>Turn {_t(one_line_text(str(e.turn if e.turn is not None else e.number)))}</h2>\n')
        elif type(e) is TurnClose:
            detail = f": {one_line_text(e.detail)}" if e.detail else ""
            took = f" · {duration(e.duration_ms)}" if e.duration_ms is not None else ""
            w(f'<div class="end-line">Turn {_t(one_line_text(str(e.turn)))} {_t(e.reason)}{_t(detail)}{_t(took)}</div>\n')
            if in_turn:
                w("</section>\n")
                in_turn = False
        elif type(e) is Prompt:
            if e.human:
                w(f'<div class="msg user"><div class="who">User</div><div class="text">{_t(e.text)}</div></div>\n')
            else:
                text, note = truncated(e.text, CONTEXT_TEXT_CHARS)
                cut = f'<div class="cut">{_t(note)}</div>' if note else ""
                w(f'<details class="context"><summary>{_t(e.label)}</summary><div class="text">{_t(text)}</div>{cut}</details>\n')
        elif type(e) is Reply:
            cancelled = " (cancelled mid-stream)" if e.interrupted else ""
            if e.kind == "text":
                w(
                    f'<div class="msg assistant"><div class="who">Assistant{_t(cancelled)}</div>'
                    f'<div class="text">{_t(e.text)}</div></div>\n'
                )
            elif e.kind == "reasoning":
                w(
                    f'<details class="reasoning"><summary>Reasoning{_t(cancelled)}</summary>'
                    f'<div class="text">{_t(e.text)}</div></details>\n'
                )
            else:
                w(f'<details class="block"><summary>[{_t(e.kind)}]</summary><pre>{_t(e.text)}</pre></details>\n')
        elif type(e) is ToolCall:
            text, note = truncated(e.arguments, TOOL_TEXT_CHARS)
            head = one_line_text(e.arguments[: SUMMARY_CHARS * 4])[:SUMMARY_CHARS]
            cut = f'<div class="cut">{_t(note)}</div>' if note else ""
            w(
                f'<details class="tool"><summary>Tool call · {_t(e.name)} <span class="args">{_t(head)}</span></summary>'
                f"<pre>{_t(text)}</pre>{cut}</details>\n"
            )
        elif type(e) is ToolResult:
            status = f" · error{' ' + e.code if e.code else ''}" if e.is_error else ""
            text, note = truncated(e.text, TOOL_TEXT_CHARS)
            cut = f'<div class="cut">{_t(note)}</div>' if note else ""
            cls = "result error" if e.is_error else "result"
            w(
                f'<details class="{cls}"><summary>Result · {_t(e.name)}{_t(status)}</summary>'
                f"<pre>{_t(text)}</pre>{cut}</details>\n"
            )
        elif type(e) is Stream:
            w(
                f'<details class="stream"><summary>Streamed, no message ({e.chunks:,} chunks; cancelled or crashed)</summary>'
                f'<div class="text">{_t(e.text)}</div></details>\n'
            )
        elif type(e) is Note:
            w(f'<div class="note"><b>{_t(e.label)}:</b> <span class="text">{_t(e.text)}</span></div>\n')
    if in_turn:
        w("</section>\n")
    w(f"</main>\n<footer>Exported by SessionScope {_t(info.version)}.</footer>\n</body>\n</html>\n")


__all__ = ["CSP", "write_html"]
