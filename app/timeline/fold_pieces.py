"""The fold's pieces: the state it keeps per open turn and step (``FoldTurn``, ``FoldStep``), the key it
gives a JSON value, and the texts of the rows it composes (a run of events between turns, a step's
summary, why a turn ended, a tool result's info and a tool's status once its result is in).

Stdlib and ``app.timeline``/``app.records`` only (never Qt).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.glossary import OPEN_TURN_INFO
from app.records import Tokens
from app.records.fields import get_path, seq_of
from app.records.summaries import compact_json, one_line
from app.timeline.nodes import ERROR, INTERRUPTED, OPEN, REPAIR_CODES, REPAIR_LABELS, REPAIRED, SYNTHETIC, TimelineNode
from persistence import PackedRun


def hkey(value: Any) -> Any:
    """``value`` as a dict key.  The engine accepts a log whose ``callId`` or chunk ``index`` is a JSON
    list or object (upstream validates neither), and a dict key must be hashable: such a value is keyed
    by its text, so the fold shows the log instead of failing on it."""
    return ("json", compact_json(value)) if isinstance(value, (list, dict)) else value


@dataclass(slots=True)
class FoldStep:
    node: TimelineNode
    # Uncited chunks so far: a record index, or (first index, run) for a packed run of deltas.
    chunks: list[int | tuple[int, PackedRun]] = field(default_factory=list)
    usage: Tokens | None = None
    tools: dict[Any, TimelineNode] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    end_time: Any = None


@dataclass(slots=True)
class FoldTurn:
    node: TimelineNode
    steps: list[FoldStep] = field(default_factory=list)
    prompt: str = ""
    tools: dict[Any, TimelineNode] = field(default_factory=dict)


def between_turns(loose: list[TimelineNode]) -> TimelineNode:
    """The group row of a run of standalone events between turns."""
    first = loose[0]
    kinds: list[str] = []
    for n in loose:
        if n.label not in kinds:
            kinds.append(n.label)
    title = next((n.summary for n in loose if n.kind == "title"), "")
    group = TimelineNode(
        "group",
        ("group", first.seq),
        "Between turns",
        (f"“{title}” · " if title else "") + ", ".join(kinds[:6]) + (" …" if len(kinds) > 6 else ""),
        f"{len(loose)} events",
        first.seq,
        first.index,
        [],
        first.time,
    )
    for n in loose:
        group.add(n)
    return group


def step_summary(st: FoldStep) -> str:
    """What a step produced: counts of reasoning/text/tool-call blocks, then the tools it called."""
    bits = []
    for kind, label in (("reasoning", "reasoning"), ("text", "text"), ("tool", "tool call")):
        c = st.counts.get(kind, 0)
        if c:
            bits.append(label if c == 1 else f"{c} {label}s")
    if not bits:
        bits.append("no model output")
    tools = [n.label.removeprefix("Tool · ") for n in st.node.children if n.kind == "tool"]
    if tools:
        bits.append(", ".join(dict.fromkeys(tools)))
    return " · ".join(bits)


def result_info(node: TimelineNode, failed: bool, code: Any, meta: Any, why: str = "") -> str:
    """The info text of a tool result; flags the node ``error`` / ``repaired``."""
    info: list[str] = []
    if failed:
        node.flag(ERROR)
        info.append(error_text(code, why))
    if code in REPAIR_CODES:
        node.flag(REPAIRED)
        info = [REPAIR_LABELS[code]]
    if isinstance(meta, dict):
        if "exitCode" in meta:
            info.append(f"exit {meta['exitCode']}")
        if "durationMs" in meta:
            info.append(f"{meta['durationMs']} ms")
    if SYNTHETIC in node.flags:
        info.append("synthetic")
    return " · ".join(info)


def error_text(code: Any, why: str) -> str:
    """An error's Info text, the cause first (a narrow cell keeps it), then the code: "error: AssertionError: … · CODE"."""
    if why:
        return f"error: {why}" + (f" · {code}" if code and str(code) not in why else "")
    return f"error {code}" if code else "error"


def tool_status(tool: TimelineNode, result: TimelineNode, code: Any, why: str = "") -> str:
    """A tool row's info once its result is in; the tool takes the result's error/repaired/synthetic flags."""
    status = "ok"
    if ERROR in result.flags:
        status = error_text(code, why)
        tool.flag(ERROR)
    if REPAIRED in result.flags:
        status = REPAIR_LABELS.get(code, str(code))
        tool.flag(REPAIRED)
    if SYNTHETIC in result.flags:
        tool.flag(SYNTHETIC)
        status += " · synthetic"
    return status


def turn_end_reason(node: TimelineNode, end: dict[str, Any] | None, end_index: int | None, stored_count: int) -> str:
    """Why the turn ended (``end``: its ``turn/end`` record at ``end_index``, None while open), as the row
    says it; flags the turn node and records the end event's seq."""
    if end is None or end_index is None:
        node.flag(OPEN)
        return OPEN_TURN_INFO
    node.seqs.append(seq_of(end, end_index))
    kind = get_path(end, "data", "reason", "kind")
    reason = str(kind) if kind else "ended"
    if kind == "interrupted":
        node.flag(INTERRUPTED, REPAIRED)
        reason = "interrupted (crash)"
    elif kind == "aborted":
        why = get_path(end, "data", "reason", "reason", "kind")
        reason = f"aborted ({why})" if why else "aborted"
    elif kind == "error":
        node.flag(ERROR)
        msg = get_path(end, "data", "reason", "error", "message")
        reason = f"error: {one_line(msg, 80)}" if msg else "error"
    if end_index >= stored_count:
        node.flag(SYNTHETIC)
        reason += " · synthetic"
    return reason
