"""``sessionscope show PATH [ID]``: a session's conversation as text to read in a terminal.

Why: ``raw`` prints records and ``stats`` numbers; someone handed a session on a server (or in a
support ticket) wants to read what happened — the prompts, the answers, each tool call with its
arguments, what it returned, and why it failed — without a window.  The blocks are the Conversation
tab's own (``app.conversation.conversation_blocks`` over the timeline's fold, ``app.timeline.derive``),
so the terminal and the window tell a turn the same way.  Long results are folded to
``FOLD_LINES`` lines (``--full`` unfolds them and shows reasoning); a failure is marked ``error:``
with its text.  Colours (ANSI) only on a terminal and never when ``NO_COLOR`` is set, unless
``--color always``; piped output is plain text.

A damaged log is read as far as the engine can (``readable_prefix``: corrupt and unsupported logs
alike); a log that is not whole (torn, crashed, corrupt, unsupported) ends in a marked
``stopped here: …`` line saying why.  A crashed turn is shown as it is on disk (no in-memory closers).

May import ``app.conversation``, ``app.timeline``, ``app.records``, ``app.glossary``, the standard
library and the public engine; never Qt.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Any, TextIO

from app.conversation import Block, conversation_blocks
from app.glossary import EVENT, TURN, plural, status_name
from app.records import latest_title
from app.timeline import derive
from persistence import CoordinatedPersistence, EventTable, not_found

FOLD_LINES = 4  # lines of a tool result (or a long prompt or answer) shown before "… N more lines"
TEXT_FOLD_LINES = 40  # lines of a prompt or an answer shown before folding
COLOR_CHOICES = ("auto", "always", "never")

# ANSI SGR codes by role: one place, so the renderer never spells an escape.
_STYLES = {
    "heading": "1",
    "turn": "1;36",
    "prompt": "1;34",
    "answer": "1;32",
    "tool": "1;33",
    "dim": "2",
    "error": "1;31",
    "stop": "1;37;41",
    "closer": "35",
}


@dataclass(frozen=True, slots=True)
class ShowReport:
    """One session told as blocks, and how it ends when its log is not whole."""

    session_id: str
    status: str
    title: str | None
    cwd: str | None
    events: int  # the events the blocks stand for (a damaged log's readable part)
    turns: int
    blocks: tuple[Block, ...]
    stop: str | None  # "stopped here: …" (without the words) for a log that is not whole; None when it is


async def show(store: CoordinatedPersistence, args: argparse.Namespace) -> ShowReport:
    view = await store.view(args.id)
    if view.status == "missing":
        raise not_found(args.id)
    meta: dict[str, Any] = {}
    records: Any
    if view.readable:
        # What is on disk: a crashed turn's would-be closers are the engine's, in memory only.
        records = view.stored.record_table()
        if view.header is not None:
            meta = view.header.to_json()
        stop = None if view.status == "ok" else f"{status_name(view.status)}: {view.reason}"
    else:
        prefix = await store.readable_prefix(args.id)
        records = prefix.events if prefix is not None else EventTable()
        meta = prefix.meta if prefix is not None else {}
        if prefix is not None and prefix.stop is not None:
            why = f"{prefix.stop.why} ({plural(prefix.stop.rows_after, 'stored record')} from there on)"
        else:
            why = f"the engine refuses the log: {view.reason}"
        stop = f"{status_name(view.status)} log: {why}"
    nodes = derive(records, stored_count=len(records))
    blocks = tuple(conversation_blocks(nodes, records))
    cwd = meta.get("cwd")
    return ShowReport(
        args.id,
        view.status,
        latest_title(records),
        cwd if isinstance(cwd, str) else None,
        len(records),
        sum(1 for n in nodes if n.kind == "turn"),
        blocks,
        stop,
    )


# ---------------------------------------------------------------- colour


def use_colour(choice: str, stream: TextIO | None = None) -> bool:
    """ANSI colours: ``always``, ``never``, or (``auto``) on a terminal when ``NO_COLOR`` is unset or empty."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    out = sys.stdout if stream is None else stream
    isatty = getattr(out, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


class _Paint:
    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, role: str, text: str) -> str:
        if not self.on or not text:
            return text
        return f"\x1b[{_STYLES[role]}m{text}\x1b[0m"


# ---------------------------------------------------------------- text


def _indent(text: str, pad: str) -> list[str]:
    return [pad + line if line else pad.rstrip() for line in text.split("\n")]


def _fold(text: str, limit: int, full: bool, pad: str, paint: _Paint) -> list[str]:
    """``text``'s lines (its first ``limit`` unless ``full``), then how many more there are."""
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    if full or len(lines) <= limit:
        return _indent("\n".join(lines), pad) if lines else []
    more = len(lines) - limit
    return [*_indent("\n".join(lines[:limit]), pad), pad + paint("dim", f"… {plural(more, 'more line')} (--full shows all)")]


def _header(title: str, meta: str, role: str, paint: _Paint) -> str:
    return paint(role, title) + (paint("dim", f" · {meta}") if meta else "")


def block_lines(b: Block, full: bool, paint: _Paint) -> list[str]:
    """The lines of one block; a failure's text always shows, marked ``error:``."""
    kind = b.kind
    out: list[str] = []
    if kind == "turn":
        out += ["", paint("turn", f"━━ {b.title} ━━") + (paint("dim", f"  {b.meta}") if b.meta else "")]
    elif kind == "step":
        out.append("  " + _header(b.title, b.meta, "dim", paint))
    elif kind in ("prompt", "context"):
        out.append("  " + _header(f"▸ {b.title}", b.meta, "prompt", paint))
        out += _fold(b.body, TEXT_FOLD_LINES, full, "    ", paint)
    elif kind == "answer":
        out.append("  " + _header("◆ Assistant", b.meta, "answer", paint))
        out += _fold(b.body, TEXT_FOLD_LINES, full, "    ", paint)
    elif kind == "reasoning":
        n = len(b.body.rstrip("\n").split("\n")) if b.body.strip() else 0
        if full:
            out.append("  " + _header("◇ Reasoning", b.meta, "dim", paint))
            out += [paint("dim", line) for line in _indent(b.body.rstrip("\n"), "    ")]
        else:
            out.append("  " + paint("dim", f"◇ Reasoning ({plural(n, 'line')}; --full shows it)"))
    elif kind == "tool":
        out.append("  " + _header(f"⚙ {b.title}", b.meta, "tool", paint))
        out += _indent(b.body, "      ") if b.body else []
        if b.result.strip():
            out.append("    " + paint("dim", "→ result"))
            out += _fold(b.result, FOLD_LINES, full, "      ", paint)
        if b.note:
            out += [paint("dim", line) for line in _indent(b.note, "    ")]
    elif kind == "closer":
        out.append("  " + paint("closer", f"↳ {b.title}") + (paint("dim", f" — {b.note}") if b.note else ""))
    elif kind == "damage":
        out.append("  " + paint("error", f"■ {b.title}") + (paint("dim", f" — {b.meta}") if b.meta else ""))
        out += _indent(b.body, "    ") if b.body else []
    else:  # another event: a title, a retry, a compaction …
        out.append(
            "  " + _header(f"· {b.title}", b.meta, "dim", paint) + (f"  {b.body}" if b.body and "\n" not in b.body else "")
        )
    if b.error:
        first, *rest = b.error.split("\n")
        out.append("    " + paint("error", "error:") + f" {first}")
        out += _indent("\n".join(rest), "           ") if rest else []
    return out


def render_show(report: ShowReport, *, full: bool = False, colour: bool = False) -> str:
    """The whole text ``show`` prints (ends with a newline)."""
    paint = _Paint(colour)
    title = report.title or "Untitled session"
    lines = [
        paint("heading", title) + paint("dim", f" — {report.session_id} · {status_name(report.status)}"),
        paint("dim", " · ".join(x for x in (report.cwd, plural(report.turns, TURN), plural(report.events, EVENT)) if x)),
    ]
    for b in report.blocks:
        lines += block_lines(b, full, paint)
    if report.stop is not None:
        mark = (
            paint("stop", " ■ stopped here ") + " " + paint("error", report.stop) if colour else f"■ stopped here: {report.stop}"
        )
        lines += ["", mark]
    return "\n".join(lines).rstrip("\n") + "\n"


def show_text(report: ShowReport, args: argparse.Namespace) -> str:
    text = render_show(report, full=bool(getattr(args, "full", False)), colour=use_colour(getattr(args, "color", "auto")))
    return text.rstrip("\n")  # the command line ends the output with its own newline


def show_json(report: ShowReport) -> dict[str, Any]:
    return {
        "session": report.session_id,
        "status": report.status,
        "title": report.title,
        "cwd": report.cwd,
        "events": report.events,
        "turns": report.turns,
        "stoppedHere": report.stop,
        "blocks": [
            {
                "kind": b.kind,
                "seq": b.seq,
                "title": b.title,
                "meta": b.meta,
                "body": b.body,
                "result": b.result,
                "error": b.error,
                "note": b.note,
            }
            for b in report.blocks
        ],
    }


__all__ = [
    "COLOR_CHOICES",
    "FOLD_LINES",
    "ShowReport",
    "block_lines",
    "render_show",
    "show",
    "show_json",
    "show_text",
    "use_colour",
]
