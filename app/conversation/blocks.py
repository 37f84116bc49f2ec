"""A session's turns as blocks to read: built from the timeline's nodes and the records they stand for.

Why from the timeline's nodes: the fold (``app.timeline.fold``) already decides what a turn, a step,
a tool call and its result are, which closers are synthetic and where a damaged log stopped; reading
the records again here would be a second fold that could disagree.  Each block keeps the seqs of the
events it stands for, so the Conversation tab, the Timeline and the Raw tab select the same event.

Texts are whole (a row of the timeline shows one line); a block's text is cut at ``TEXT_LIMIT``
characters (the Raw tab has the rest) so one 2 MB tool result cannot stall a paint.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from app.records.errors import error_line
from app.records.fields import get_path
from app.records.summaries import compact_json, content_text
from app.timeline import ERROR, INTERRUPTED, OPEN, REPAIRED, SYNTHETIC, TimelineNode
from app.timeline.damaged import DAMAGE
from persistence import EventType

TEXT_LIMIT = 100_000  # characters of one block's text
# Kinds of block: a turn's header and closer, the prompt and context, a step's header, the answer,
# reasoning, a tool call (arguments, result, error), another event, and a damaged log's stop marker.
TURN, PROMPT, CONTEXT, STEP, ANSWER, REASONING, TOOL, EVENT, CLOSER = (
    "turn",
    "prompt",
    "context",
    "step",
    "answer",
    "reasoning",
    "tool",
    "event",
    "closer",
)
DAMAGE_BLOCK = DAMAGE
# Blocks an "error" walk lands on: the failed thing itself, not the step and turn headers that carry
# its flag up (those would make one failure three stops).
ERROR_KINDS = frozenset({TOOL, EVENT, CLOSER, ANSWER})


@dataclass(frozen=True, slots=True)
class Block:
    """One block of the conversation.

    ``title`` and ``meta`` make its header line ("Step 2" / "1.2 s · in 3.1k · out 210"); ``body`` is
    the prompt or answer (Markdown), the reasoning, a tool's arguments or an event's text; ``result``
    a tool's output (whole; the view folds it); ``error`` the line that explains a failure; ``note`` a
    closer's or damage's explanation.  ``seq`` is the event a selection lands on; ``seqs`` every event
    the block stands for.
    """

    kind: str
    key: tuple[Any, ...]
    seq: int
    seqs: tuple[int, ...]
    title: str
    meta: str = ""
    body: str = ""
    result: str = ""
    error: str = ""
    note: str = ""
    flags: frozenset[str] = frozenset()


def is_error_block(block: Block) -> bool:
    """A failure of its own (a failed tool, a failed attempt, an error turn end, an error event)."""
    return ERROR in block.flags and block.kind in ERROR_KINDS


def conversation_blocks(nodes: Iterable[TimelineNode], records: Sequence[dict[str, Any]]) -> list[Block]:
    """The blocks of the timeline's top-level ``nodes`` (turns, runs between turns, a damage marker), in order."""
    out: list[Block] = []
    for node in nodes:
        if node.kind == "turn":
            _turn(node, records, out)
        elif node.kind == "group":
            out.extend(_event(child) for child in node.children)
        elif node.kind == DAMAGE:
            out.append(_block(DAMAGE_BLOCK, node, node.label, meta=node.info, body=node.summary, note=_DAMAGE_NOTE))
        elif node.kind != "sentinel":
            _item(node, records, out)
    return out


def block_for_seq(blocks: Sequence[Block], seq: int) -> int:
    """Position of the block standing for event ``seq``: one that holds it, else the last starting before it (-1: none)."""
    best = -1
    for i, b in enumerate(blocks):
        if seq in b.seqs:
            if b.kind not in (TURN, STEP):
                return i
            best = i if best < 0 else best
    if best >= 0:
        return best
    starts = [b.seq for b in blocks]
    pos = bisect.bisect_right(starts, seq) - 1 if starts == sorted(starts) else -1
    return pos


# ---------------------------------------------------------------- turn and step


_DAMAGE_NOTE = "The log is damaged here: the blocks above are its readable part; the Raw tab shows every byte that decodes."


def _turn(node: TimelineNode, records: Sequence[dict[str, Any]], out: list[Block]) -> None:
    out.append(_block(TURN, node, node.label, meta=node.info))
    for child in node.children:
        if child.kind == "step":
            _step(child, records, out)
        else:
            _item(child, records, out)
    closer = _closer(node, records)
    if closer is not None:
        out.append(closer)


def _closer(node: TimelineNode, records: Sequence[dict[str, Any]]) -> Block | None:
    """How an unusual turn ended: interrupted (crash repair), closed in memory only, not closed, or an error."""
    end_seq = node.seqs[-1] if len(node.seqs) > 1 else node.seq
    key = ("closer", node.key)
    if OPEN in node.flags:
        note = "No turn/end: the turn is still running, or its writer crashed before closing it."
        return Block(CLOSER, key, end_seq, (end_seq,), "Turn not closed", note=note, flags=node.flags - {ERROR})
    if SYNTHETIC in node.flags:
        note = "These closers were added in memory when the log was read; they are NOT on disk (Repair writes them)."
        return Block(CLOSER, key, end_seq, (end_seq,), "Synthetic closer", note=note, flags=node.flags - {ERROR})
    if INTERRUPTED in node.flags:
        note = "Crash repair closed this turn: the harness recorded no outcome for what was running."
        return Block(CLOSER, key, end_seq, (end_seq,), "Turn closed as interrupted", note=note, flags=node.flags - {ERROR})
    rec = _record_of_seq(records, end_seq)
    if rec is not None and get_path(rec, "data", "reason", "kind") == "error":
        err = get_path(rec, "data", "reason", "error")
        text = error_line(None, err) or compact_json(err)
        return Block(CLOSER, key, end_seq, (end_seq,), "Turn ended with an error", error=text, flags=frozenset({ERROR}))
    return None


def _step(node: TimelineNode, records: Sequence[dict[str, Any]], out: list[Block]) -> None:
    meta = [m for m in (_step_duration(node, records), node.usage.short() if node.usage is not None else "") if m]
    if OPEN in node.flags:
        meta.append("not closed")
    if SYNTHETIC in node.flags:
        meta.append("synthetic closer")
    out.append(_block(STEP, node, node.label, meta=" · ".join(meta)))
    for child in node.children:
        _item(child, records, out)


def _step_duration(node: TimelineNode, records: Sequence[dict[str, Any]]) -> str:
    if OPEN in node.flags or len(node.seqs) < 2:
        return ""
    start = _record_of_seq(records, node.seq)
    end = _record_of_seq(records, node.seqs[-1])
    t0, t1 = (r.get("time") if r is not None else None for r in (start, end))
    if not isinstance(t0, (int, float)) or not isinstance(t1, (int, float)) or t1 < t0:
        return ""
    return format_duration(t1 - t0)


def format_duration(ms: float) -> str:
    """A step's duration as a reader says it: "420 ms", "3.4 s", "2 min 05 s"."""
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(int(ms // 1000), 60)
    return f"{minutes} min {seconds:02d} s"


# ---------------------------------------------------------------- items


def _item(node: TimelineNode, records: Sequence[dict[str, Any]], out: list[Block]) -> None:
    kind = node.kind
    if kind == "user":
        out.append(_block(PROMPT, node, "You" if "human" in node.flags else "User", body=_message_text(node, records)))
    elif kind == "context":
        out.append(_block(CONTEXT, node, f"Context · {node.info}" if node.info else "Context", body=_message_text(node, records)))
    elif kind == "text":
        out.append(_block(ANSWER, node, "Assistant", meta=node.info, body=_content_block(node, records) or node.summary))
    elif kind == "reasoning":
        out.append(_block(REASONING, node, "Reasoning", meta=node.info, body=_content_block(node, records) or node.summary))
    elif kind == "tool":
        out.append(_tool(node, records))
    elif kind == "usage":
        return  # a step's tokens are on its header
    else:
        out.append(_event(node))


def _event(node: TimelineNode) -> Block:
    error = node.summary if ERROR in node.flags else ""
    return _block(EVENT, node, node.label, meta=node.info, body="" if error else node.summary, error=error)


def _tool(node: TimelineNode, records: Sequence[dict[str, Any]]) -> Block:
    name = node.label.removeprefix("Tool · ")
    results = [c for c in node.children if c.kind == "result"]
    texts: list[str] = []
    error = ""
    for r in results:
        rec = records[r.index] if 0 <= r.index < len(records) else None
        data = rec.get("data") if rec is not None else None
        text = content_text(get_path(data, "message", "content"))
        texts.append(text)
        if ERROR in r.flags and REPAIRED not in r.flags and not error:  # a repair closer's note says it
            err = get_path(data, "error")
            line = error_line(text, err)
            code = get_path(err, "code")
            error = f"{line} ({code})" if line and code and str(code) not in line else line or (str(code) if code else "error")
    notes = [f"{c.label}: {c.summary}" for c in node.children if c.kind != "result"]
    if REPAIRED in node.flags:
        notes.append("Crash repair recorded this call's outcome: the harness never did.")
    if SYNTHETIC in node.flags:
        notes.append("Its result is a synthetic closer, added in memory when the log was read: NOT on disk.")
    # The status without the error text: the block shows that in full, in red, under the arguments.
    info = results[-1].info if results and results[-1].info else node.info
    meta = " · ".join(p for p in info.split(" · ") if not p.startswith("error")) or ("error" if error else info)
    seqs = tuple(dict.fromkeys([*node.seqs, *(s for r in results for s in r.seqs)]))
    return Block(
        TOOL,
        node.key,
        node.first_seq,
        seqs,
        name,
        meta=meta,
        body=_cut(_arguments_text(node, records)),
        result=_cut("\n".join(texts)),
        error=error,
        note="\n".join(notes),
        flags=node.flags,
    )


def _arguments_text(node: TimelineNode, records: Sequence[dict[str, Any]]) -> str:
    """A tool call's arguments as a reader wants them: one ``key: value`` per line, strings unquoted."""
    # The model's tool-call block (the node's key names its message's seq) is what the model asked for;
    # the tool/call event repeats it, and is read when the message is not in the log.
    args: Any = None
    msg_seq = node.key[1] if len(node.key) > 2 and isinstance(node.key[1], int) else -1
    content = get_path(_record_of_seq(records, msg_seq), "data", "message", "content")
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") == "tool-call" and b.get("id") == node.key[-1]:
            args = b.get("arguments")
    rec = records[node.index] if 0 <= node.index < len(records) else None
    if args is None and rec is not None and rec.get("type") == EventType.TOOL_CALL:
        args = get_path(rec, "data", "arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return args
    if isinstance(args, dict):
        return "\n".join(f"{k}: {v if isinstance(v, str) else compact_json(v, TEXT_LIMIT)}" for k, v in args.items())
    return "" if args is None else compact_json(args, TEXT_LIMIT)


# ---------------------------------------------------------------- texts


def _message_text(node: TimelineNode, records: Sequence[dict[str, Any]]) -> str:
    rec = records[node.index] if 0 <= node.index < len(records) else None
    if rec is None:
        return node.summary
    return _cut(content_text(get_path(rec, "data", "content"))) or node.summary


def _content_block(node: TimelineNode, records: Sequence[dict[str, Any]]) -> str:
    """The whole text of an assistant message's content block (``key[2]`` is its position)."""
    rec = records[node.index] if 0 <= node.index < len(records) else None
    bi = node.key[2] if len(node.key) > 2 else -1
    content = get_path(rec, "data", "message", "content") if rec is not None else None
    if isinstance(content, list) and isinstance(bi, int) and 0 <= bi < len(content):
        return _cut(content_text([content[bi]]))
    return ""


def _cut(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    return text[:TEXT_LIMIT] + f"\n… ({len(text) - TEXT_LIMIT:,} more characters: the Raw tab has them)"


def _record_of_seq(records: Sequence[dict[str, Any]], seq: int) -> dict[str, Any] | None:
    if 0 <= seq < len(records):
        rec = records[seq]
        if isinstance(rec, dict) and rec.get("seq") == seq:
            return rec
    return None


def _block(kind: str, node: TimelineNode, title: str, **fields: Any) -> Block:
    return Block(kind, node.key, node.first_seq, tuple(node.seqs), title, flags=node.flags, **fields)


__all__ = ["ERROR_KINDS", "TEXT_LIMIT", "Block", "block_for_seq", "conversation_blocks", "format_duration", "is_error_block"]
