"""The viewer timeline: turn → step → items, derived from stored event records (session-model §6.3).

Pure and Qt-free: the desktop app adapts these nodes into a tree model, tests check them directly.

The fold works on *blocks*: a turn (``turn/start`` … ``turn/end``) or a run of standalone events
between turns.  Every block starts where the fold state is empty, so any block range can be derived
on its own and gives exactly the nodes a whole-log fold would give: that is what lets a viewer show
the tail of a 200k-event log first and derive older turns on demand.

Chunk runs never become rows of their own: an ``assistant/message`` is authoritative for a finished
step (§6.3), so the chunks it cites are folded into the node of the content block they streamed
(``chunk.index``).  Chunks no message cites are a failed attempt (before ``llm/retry``) or a stream
that ended without a message (cancelled or still live).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Node flags (a frozenset of these strings travels with every node).
ERROR = "error"
SYNTHETIC = "synthetic"  # an in-memory crash closer: inspect() adds it, nothing on disk
REPAIRED = "repaired"  # a crash-repair closer (TOOL_NOT_STARTED / TOOL_OUTCOME_UNKNOWN / turn interrupted)
INTERRUPTED = "interrupted"  # a turn that ended with reason "interrupted" (only crash repair writes that)
OPEN = "open"  # a turn/step with no end event
CANCELLED = "cancelled"  # assistant message cut mid-stream (interrupted: true) or a stream without message
HUMAN = "human"  # a direct human prompt (source.kind == "user")
SEED = "seed"  # the session/end-seed marker
PRUNED = "pruned"  # a surface replacement (compaction / prune): model-only annotation (§6.2)

REPAIR_CODES = frozenset({"TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN"})
REPAIR_LABELS = {"TOOL_OUTCOME_UNKNOWN": "outcome unknown (crash)", "TOOL_NOT_STARTED": "never started (crash)"}
SUMMARY_LIMIT = 200
CHECKPOINT_MASK = 1023


@dataclass(slots=True)
class Usage:
    """One usage sample (session-model §6.4): buckets are disjoint, inputTokens is uncached input."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    @classmethod
    def from_json(cls, u: Any) -> Usage | None:
        if not isinstance(u, dict):
            return None

        def num(key: str) -> int:
            v = u.get(key)
            return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0

        return cls(num("inputTokens"), num("outputTokens"), num("cacheReadTokens"), num("cacheWriteTokens"),
                   num("reasoningTokens"))

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input + other.input, self.output + other.output, self.cache_read + other.cache_read,
                     self.cache_write + other.cache_write, self.reasoning + other.reasoning)

    @property
    def prompt(self) -> int:
        """Prompt-side pressure of a request: uncached input + cache read + cache write."""
        return self.input + self.cache_read + self.cache_write

    def short(self) -> str:
        parts = [f"in {compact_count(self.input)}", f"out {compact_count(self.output)}"]
        if self.cache_read:
            parts.append(f"cache {compact_count(self.cache_read)}")
        if self.cache_write:
            parts.append(f"cache-write {compact_count(self.cache_write)}")
        return " · ".join(parts)


@dataclass(slots=True, eq=False)
class TimelineNode:
    """One row of the timeline tree.

    ``key`` is stable across re-derivations of the same events (a viewer merges a re-derived tail
    into what it shows by key).  ``seqs`` lists every event seq the row stands for, so a raw line
    can be mapped back to its row; ``index`` is the record index of the primary event (details).
    """

    kind: str
    key: tuple[Any, ...]
    label: str
    summary: str = ""
    info: str = ""
    seq: int = -1
    index: int = -1
    seqs: list[int] = field(default_factory=list)
    time: Any = None
    flags: frozenset[str] = frozenset()
    usage: Usage | None = None
    children: list[TimelineNode] = field(default_factory=list)
    parent: TimelineNode | None = field(default=None, repr=False)

    def add(self, child: TimelineNode) -> TimelineNode:
        child.parent = self
        self.children.append(child)
        return child

    def flag(self, *names: str) -> None:
        self.flags = self.flags | frozenset(names)

    def same_content(self, other: TimelineNode) -> bool:
        return (self.label, self.summary, self.info, self.flags, self.seq, len(self.seqs)) == (
            other.label, other.summary, other.info, other.flags, other.seq, len(other.seqs))

    def walk(self) -> Iterable[TimelineNode]:
        yield self
        for c in self.children:
            yield from c.walk()

    @property
    def first_seq(self) -> int:
        return self.seq if self.seq >= 0 else min(self.seqs, default=-1)


# ---------------------------------------------------------------- small text helpers


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
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            more = line != " ".join(text.split())
            if len(line) > limit:
                return line[: limit - 1] + "…"
            return line + (" …" if more and len(line) < limit - 2 else "")
    return ""


def compact_json(value: Any, limit: int = SUMMARY_LIMIT) -> str:
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
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        t = block.get("type")
        if t in ("text", "reasoning"):
            parts.append(str(block.get("text", "")))
        elif t == "tool-result":
            parts.append(content_text(block.get("content")))
        elif t == "image":
            att = block.get("attachment") if isinstance(block.get("attachment"), dict) else {}
            parts.append(f"[image {att.get('name') or att.get('mediaType') or ''} {att.get('width')}×{att.get('height')}]")
        elif t == "tool-call":
            parts.append(f"[tool call {block.get('name')}]")
        elif t is not None:
            parts.append(f"[{t}]")
    return "\n".join(p for p in parts if p)


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


def get_path(d: Any, *path: str) -> Any:
    """``d[path[0]][path[1]]…``, or None as soon as a level is not an object."""
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _seq_of(rec: dict[str, Any], fallback: int) -> int:
    s = rec.get("seq")
    return int(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else fallback


# ---------------------------------------------------------------- blocks


def block_starts(records: Sequence[dict[str, Any]], start: int = 0) -> list[int]:
    """Record indices where a top-level block starts (one cheap pass over ``type`` only).

    ``start`` must itself be a block start (the fold state is empty there).
    """
    starts: list[int] = []
    in_turn = False
    expecting = True  # the next event starts a block
    for i in range(start, len(records)):
        t = records[i].get("type")
        if t == "turn/start":
            starts.append(i)
            in_turn = True
            expecting = False
            continue
        if expecting:
            starts.append(i)
            expecting = False
        if t == "turn/end" and in_turn:
            in_turn = False
            expecting = True
    return starts


def block_spans(records: Sequence[dict[str, Any]], start: int = 0) -> list[tuple[int, int]]:
    starts = block_starts(records, start)
    if not starts:
        return []
    ends = [*starts[1:], len(records)]
    return list(zip(starts, ends, strict=True))


def tail_first_span(spans: Sequence[tuple[int, int]], min_events: int = 2000, max_blocks: int = 25) -> int:
    """Where a tail-first view starts: the newest blocks holding about ``min_events`` events."""
    if not spans:
        return 0
    first = len(spans) - 1
    end = spans[-1][1]
    while first > 0 and len(spans) - first < max_blocks and end - spans[first][0] < min_events:
        first -= 1
    return first


def span_containing(spans: Sequence[tuple[int, int]], index: int) -> int:
    """Position of the span holding record ``index`` (spans are contiguous and sorted)."""
    pos = bisect.bisect_right([s for s, _e in spans], index) - 1
    return max(0, pos)


# ---------------------------------------------------------------- the fold


@dataclass(slots=True)
class _Step:
    node: TimelineNode
    chunks: list[int] = field(default_factory=list)  # record indices of uncited chunks so far
    usage: Usage | None = None
    tools: dict[Any, TimelineNode] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    end_time: Any = None


@dataclass(slots=True)
class _Turn:
    node: TimelineNode
    steps: list[_Step] = field(default_factory=list)
    prompt: str = ""
    tools: dict[Any, TimelineNode] = field(default_factory=dict)


class _Fold:
    def __init__(self, records: Sequence[dict[str, Any]], stored_count: int) -> None:
        self.records = records
        self.stored_count = stored_count
        self.blocks: list[TimelineNode] = []
        self.turn: _Turn | None = None
        self.step: _Step | None = None
        self.loose: list[TimelineNode] = []  # standalone run between turns
        self.loose_start = -1

    # -------------------------------------------------------- helpers

    def _base_flags(self, i: int) -> frozenset[str]:
        return frozenset({SYNTHETIC}) if i >= self.stored_count else frozenset()

    def _node(self, kind: str, i: int, label: str, summary: str = "", *, key: tuple[Any, ...] | None = None,
              seqs: list[int] | None = None, info: str = "") -> TimelineNode:
        rec = self.records[i]
        seq = _seq_of(rec, i)
        return TimelineNode(kind, key or ("seq", seq), label, summary, info, seq, i,
                            seqs if seqs is not None else [seq], rec.get("time"), self._base_flags(i))

    def _container(self) -> TimelineNode | None:
        if self.step is not None:
            return self.step.node
        if self.turn is not None:
            return self.turn.node
        return None

    def _place(self, node: TimelineNode) -> None:
        parent = self._container()
        if parent is not None:
            parent.add(node)
            return
        if not self.loose:
            self.loose_start = node.index
        self.loose.append(node)

    def _flush_loose(self) -> None:
        if not self.loose:
            return
        if len(self.loose) == 1:
            self.blocks.append(self.loose[0])
        else:
            first = self.loose[0]
            kinds: list[str] = []
            for n in self.loose:
                if n.label not in kinds:
                    kinds.append(n.label)
            title = next((n.summary for n in self.loose if n.kind == "title"), "")
            group = TimelineNode("group", ("group", first.seq), "Between turns",
                                 (f"“{title}” · " if title else "") + ", ".join(kinds[:6]) + (" …" if len(kinds) > 6 else ""),
                                 f"{len(self.loose)} events", first.seq, first.index, [], first.time)
            for n in self.loose:
                group.add(n)
            self.blocks.append(group)
        self.loose = []

    # -------------------------------------------------------- turn / step

    def _open_turn(self, i: int, rec: dict[str, Any]) -> None:
        self._close_step(None)  # a step left open belongs to what came before this turn
        self._close_turn(None)
        self._flush_loose()
        n = get_path(rec, "data", "turn")
        node = self._node("turn", i, f"Turn {n}" if n is not None else "Turn", key=("turn", _seq_of(rec, i)))
        self.turn = _Turn(node)
        self.blocks.append(node)

    def _close_step(self, end_index: int | None) -> None:
        st = self.step
        if st is None:
            return
        self._flush_stream(st, final=True)
        node = st.node
        if end_index is None:
            node.flag(OPEN)
        else:
            end = self.records[end_index]
            node.seqs.append(_seq_of(end, end_index))
            st.end_time = end.get("time")
            if end_index >= self.stored_count:
                node.flag(SYNTHETIC)
        bits = []
        for kind, label in (("reasoning", "reasoning"), ("text", "text"), ("tool", "tool call")):
            c = st.counts.get(kind, 0)
            if c:
                bits.append(label if c == 1 else f"{c} {label}s")
        if not bits:
            bits.append("no model output")
        tools = [n.label.removeprefix("Tool · ") for n in node.children if n.kind == "tool"]
        if tools:
            bits.append(", ".join(dict.fromkeys(tools)))
        node.summary = " · ".join(bits)
        node.usage = st.usage
        info = []
        if OPEN in node.flags:
            info.append("not closed")
        if st.usage is not None:
            info.append(st.usage.short())
        if any(ERROR in c.flags for c in node.children):
            node.flag(ERROR)
        node.info = " · ".join(info)
        if self.turn is not None:
            self.turn.steps.append(st)
        self.step = None

    def _close_turn(self, end_index: int | None) -> None:
        tr = self.turn
        if tr is None:
            return
        self._close_step(None)
        node = tr.node
        reason = ""
        if end_index is None:
            node.flag(OPEN)
            reason = "not closed (running or crashed)"
        else:
            end = self.records[end_index]
            node.seqs.append(_seq_of(end, end_index))
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
            if end_index >= self.stored_count:
                node.flag(SYNTHETIC)
                reason += " · synthetic"
        total: Usage | None = None
        for st in tr.steps:
            if st.usage is not None:
                total = st.usage if total is None else total + st.usage
        node.usage = total
        n_steps = len(tr.steps)
        info = [reason, f"{n_steps} step" + ("" if n_steps == 1 else "s")]
        if total is not None:
            info.append(total.short())
        node.info = " · ".join(info)
        node.summary = tr.prompt or "(no human prompt)"
        if any(ERROR in c.flags for c in node.children):
            node.flag(ERROR)
        self.turn = None

    def _open_step(self, i: int, rec: dict[str, Any]) -> None:
        self._close_step(None)
        n = get_path(rec, "data", "step")
        node = self._node("step", i, f"Step {n}" if n is not None else "Step", key=("step", _seq_of(rec, i)))
        if self.turn is not None:
            self.turn.node.add(node)
        else:
            self._place(node)
        self.step = _Step(node)

    # -------------------------------------------------------- streams

    def _flush_stream(self, st: _Step, *, final: bool, retry_index: int | None = None) -> None:
        """Chunks no message cited: a failed attempt (retry) or a stream that never got its message."""
        if not st.chunks:
            return
        idxs = st.chunks
        st.chunks = []
        text_parts: list[str] = []
        for j in idxs:
            ch = get_path(self.records[j], "data", "chunk")
            if isinstance(ch, dict):
                if ch.get("type") in ("text-delta", "reasoning-delta") and isinstance(ch.get("text"), str):
                    text_parts.append(ch["text"])
                elif ch.get("type") == "tool-call-delta" and isinstance(ch.get("argumentsDelta"), str):
                    text_parts.append(ch["argumentsDelta"])
        seqs = [_seq_of(self.records[j], j) for j in idxs]
        if retry_index is not None:
            node = self._node("attempt", idxs[0], "Failed attempt", one_line("".join(text_parts)) or "(no output)",
                              key=("attempt", seqs[0]), seqs=seqs, info=f"{len(idxs)} chunks")
            node.flag(ERROR)
        else:
            node = self._node("stream", idxs[0], "Streamed (no message)", one_line("".join(text_parts)) or "(no output)",
                              key=("stream", seqs[0]), seqs=seqs, info=f"{len(idxs)} chunks")
            node.flag(CANCELLED)
        st.node.add(node)

    def _chunk(self, i: int, rec: dict[str, Any]) -> None:
        st = self.step
        if st is None:
            self._place(self._node("event", i, "assistant/chunk", compact_json(get_path(rec, "data", "chunk"))))
            return
        st.chunks.append(i)
        data = rec.get("data")
        ch = data.get("chunk") if type(data) is dict else None
        if type(ch) is dict and ch.get("type") == "usage":
            u = Usage.from_json(ch.get("usage"))
            if u is not None:
                st.usage = u

    # -------------------------------------------------------- surface events

    def _user(self, i: int, rec: dict[str, Any]) -> None:
        data = rec.get("data")
        source = get_path(data, "source")
        kind = get_path(source, "kind")
        text = content_text(get_path(data, "content"))
        replace = isinstance(rec.get("surfaceOp"), dict)
        if kind == "user":
            node = self._node("user", i, "User", one_line(text))
            node.flag(HUMAN)
            if self.turn is not None and not self.turn.prompt:
                self.turn.prompt = one_line(text, 160)
        else:
            what = str(kind or "context")
            if kind == "plugin":
                what = f"plugin:{get_path(source, 'plugin')}"
                form = get_path(source, "form")
                if form:
                    what += f" ({form})"
            summary = one_line(get_path(source, "summary")) or one_line(text)
            node = self._node("context", i, "Context", summary, info=what)
        if replace:
            node.kind = "annotation"
            node.label = "Compaction"
            node.summary = "context compacted here — model-only checkpoint: " + one_line(text, 120)
            node.flag(PRUNED)
        self._place(node)

    def _assistant(self, i: int, rec: dict[str, Any]) -> None:
        data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
        seq = _seq_of(rec, i)
        msg = data.get("message") if isinstance(data, dict) else None
        content = get_path(msg, "content")
        usage = Usage.from_json(data.get("usage"))
        st = self.step
        by_block: dict[Any, list[int]] = {}
        other_chunk_seqs: list[int] = []
        if st is not None:
            # Chunks of failed attempts were closed off at their llm/retry, so what is pending now is the
            # stream of this message (upstream cites exactly these seqs; we do not rely on the list).
            records = self.records
            for j in st.chunks:  # the hot loop of a big log: plain dict access, no helpers
                r = records[j]
                s = r.get("seq")
                if type(s) is not int:
                    s = _seq_of(r, j)
                d = r.get("data")
                ch = d.get("chunk") if type(d) is dict else None
                if type(ch) is dict:
                    idx, ctype = ch.get("index"), ch.get("type")
                else:
                    idx = ctype = None
                if idx is not None and ctype not in ("usage", "finish"):
                    by_block.setdefault(idx, []).append(s)
                else:
                    other_chunk_seqs.append(s)
            st.chunks = []
            if usage is not None:
                st.usage = usage
        interrupted = data.get("interrupted") is True
        made: list[TimelineNode] = []
        if isinstance(content, list):
            for bi, block in enumerate(content):
                if not isinstance(block, dict):
                    continue
                bt = block.get("type")
                chunk_seqs = by_block.get(bi, [])
                key = ("block", seq, bi)
                if bt == "reasoning":
                    node = self._node("reasoning", i, "Reasoning", one_line(block.get("text")), key=key,
                                      seqs=[seq, *chunk_seqs])
                elif bt == "text":
                    node = self._node("text", i, "Assistant", one_line(block.get("text")), key=key, seqs=[seq, *chunk_seqs])
                elif bt == "tool-call":
                    name = block.get("name")
                    node = self._node("tool", i, f"Tool · {name}", tool_arguments_summary(block.get("arguments")),
                                      key=("tool", seq, block.get("id")), seqs=[seq, *chunk_seqs], info="never started")
                    if st is not None:
                        st.tools[block.get("id")] = node
                    if self.turn is not None:
                        self.turn.tools[block.get("id")] = node
                else:
                    node = self._node("block", i, f"[{bt}]", compact_json(block), key=key, seqs=[seq, *chunk_seqs])
                if interrupted:
                    node.flag(CANCELLED)
                    node.info = "cancelled mid-stream"
                if st is not None and node.kind in ("reasoning", "text", "tool"):
                    st.counts[node.kind] = st.counts.get(node.kind, 0) + 1
                made.append(node)
        if not made:
            node = self._node("text", i, "Assistant", "(no content)", key=("block", seq, -1), seqs=[seq])
            if interrupted:
                node.flag(CANCELLED)
            made.append(node)
        for node in made:
            self._place(node)
        if usage is not None or other_chunk_seqs:
            u = usage or (st.usage if st is not None else None)
            finish = None
            for s in other_chunk_seqs:
                j = self._index_of_seq(s, i)
                ch = get_path(self.records[j], "data", "chunk")
                if isinstance(ch, dict) and ch.get("type") == "finish":
                    finish = get_path(ch, "reason", "kind")
            node = self._node("usage", i, "Usage", u.short() if u else "(no usage reported)",
                              key=("usage", seq), seqs=other_chunk_seqs or [seq],
                              info=f"finish: {finish}" if finish else "")
            if other_chunk_seqs:
                node.seq = other_chunk_seqs[0]
                node.index = self._index_of_seq(other_chunk_seqs[0], i)
            node.usage = u
            self._place(node)

    def _index_of_seq(self, seq: int, near: int) -> int:
        # seq == record index in a valid log; fall back to a short backwards scan otherwise.
        if 0 <= seq < len(self.records) and _seq_of(self.records[seq], -1) == seq:
            return seq
        for j in range(near, max(-1, near - 100_000), -1):
            if _seq_of(self.records[j], -1) == seq:
                return j
        return near

    def _find_tool(self, call_id: Any) -> TimelineNode | None:
        if self.step is not None and call_id in self.step.tools:
            return self.step.tools[call_id]
        if self.turn is not None:
            return self.turn.tools.get(call_id)
        return None

    def _tool_call(self, i: int, rec: dict[str, Any]) -> None:
        call_id = get_path(rec, "data", "callId")
        tool = self._find_tool(call_id)
        seq = _seq_of(rec, i)
        if tool is None:
            tool = self._node("tool", i, f"Tool · {get_path(rec, 'data', 'name')}",
                              tool_arguments_summary(get_path(rec, "data", "arguments")), key=("tool", seq, call_id))
            self._place(tool)
            if self.step is not None:
                self.step.tools[call_id] = tool
            if self.turn is not None:
                self.turn.tools[call_id] = tool
        else:
            tool.seqs.append(seq)
            tool.seq = seq
            tool.index = i
        tool.info = "no result recorded"

    def _tool_result(self, i: int, rec: dict[str, Any]) -> None:
        data = rec.get("data")
        msg = get_path(data, "message")
        blocks = get_path(msg, "content")
        first = blocks[0] if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict) else {}
        call_id = get_path(msg, "source", "callId") or first.get("toolCallId")
        is_error = first.get("isError") is True
        err = get_path(data, "error")
        code = get_path(err, "code")
        text = content_text(first.get("content")) if first else content_text(blocks)
        if isinstance(rec.get("surfaceOp"), dict):
            node = self._node("annotation", i, "Pruned", "tool output pruned (model-only replacement): " + one_line(text, 120))
            node.flag(PRUNED)
            self._place(node)
            return
        node = self._node("result", i, "Result", one_line(text) or "(empty)")
        meta = get_path(data, "meta")
        info: list[str] = []
        if is_error or err is not None:
            node.flag(ERROR)
            info.append(f"error {code}" if code else "error")
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
        node.info = " · ".join(info)
        tool = self._find_tool(call_id)
        if tool is None:
            self._place(node)
            return
        tool.add(node)
        status = "ok"
        if ERROR in node.flags:
            status = "error" + (f" {code}" if code else "")
            tool.flag(ERROR)
        if REPAIRED in node.flags:
            status = REPAIR_LABELS.get(code, str(code))
            tool.flag(REPAIRED)
        if SYNTHETIC in node.flags:
            tool.flag(SYNTHETIC)
            status += " · synthetic"
        tool.info = status

    # -------------------------------------------------------- everything else

    def _other(self, i: int, rec: dict[str, Any]) -> None:
        t = rec.get("type")
        data = rec.get("data")
        if t in ("approval/asked", "approval/decided") and get_path(data, "callId") is not None:
            tool = self._find_tool(get_path(data, "callId"))
            if tool is not None:
                summary = one_line(get_path(data, "question") or get_path(data, "outcome") or compact_json(data))
                tool.add(self._node("event", i, t, summary))
                return
        if t in ("tool/code-dispatch-start", "tool/code-dispatch"):
            tool = self._find_tool(get_path(data, "parentCallId"))
            if tool is not None:
                tool.add(self._node("event", i, f"{t} · {get_path(data, 'name') or ''}".rstrip(" ·"), compact_json(data)))
                return
        if t == "request/header":
            cfg = get_path(data, "header", "config")
            model = get_path(cfg, "model")
            node = self._node("request", i, "Request", f"{get_path(cfg, 'provider') or ''} {model or ''}".strip() or "header",
                              info=f"header · {get_path(data, 'reason')}")
        elif t == "request/context":
            cw = get_path(data, "contextWindow")
            what = f"{get_path(data, 'provider') or ''} {get_path(data, 'model') or ''}".strip()
            node = self._node("request", i, "Request", what,
                              info=f"context window {compact_count(cw)}" if isinstance(cw, int) else "context")
        elif t == "session/title":
            node = self._node("title", i, "Title", one_line(get_path(data, "title")))
        elif t == "session/end-seed":
            node = self._node("seed", i, "End of seed", "events above were inherited (fork / resume)")
            node.flag(SEED)
        elif t == "llm/retry":
            node = self._node("retry", i, "LLM retry", one_line(get_path(data, "failure", "message") or compact_json(data)))
            node.flag(ERROR)
            if self.step is not None:
                self._flush_stream(self.step, final=False, retry_index=i)
        elif t == "todo/write":
            todos = get_path(data, "todos")
            n = len(todos) if isinstance(todos, list) else 0
            done = sum(1 for x in todos if isinstance(x, dict) and x.get("status") == "completed") if n else 0
            node = self._node("event", i, "Todos", f"{done}/{n} done · " + "; ".join(
                one_line(get_path(x, "content"), 60) for x in (todos or [])[:3] if isinstance(x, dict)))
        elif t == "agent/inbox/spliced":
            ins = get_path(data, "inserted")
            n = len(ins) if isinstance(ins, list) else 0
            removed = get_path(data, "removedCount")
            summary = f"{get_path(data, 'target')}: +{n}" + (f" −{removed}" if removed else "")
            if n and isinstance(ins, list):
                summary += " · " + one_line(content_text(get_path(ins[0], "content")), 120)
            node = self._node("event", i, "Inbox", summary)
        else:
            node = self._node("event", i, str(t), compact_json(data))
            if rec.get("ignorable") is True:
                node.info = "ignorable"
        self._place(node)

    # -------------------------------------------------------- driver

    def run(self, start: int, end: int, checkpoint: Callable[[int], None] | None = None) -> list[TimelineNode]:
        records = self.records
        for i in range(start, end):
            if checkpoint is not None and not i & CHECKPOINT_MASK:
                checkpoint(i)
            rec = records[i]
            t = rec.get("type")
            if t == "turn/start":
                self._open_turn(i, rec)
            elif t == "turn/end" and self.turn is not None:
                self._close_step(None)
                self._close_turn(i)
            elif t == "step/start":
                self._open_step(i, rec)
            elif t == "step/end" and self.step is not None:
                self._close_step(i)
            elif t == "assistant/chunk":
                self._chunk(i, rec)
            elif t == "assistant/message":
                self._assistant(i, rec)
            elif t == "user/message":
                self._user(i, rec)
            elif t == "tool/call":
                self._tool_call(i, rec)
            elif t == "tool/result":
                self._tool_result(i, rec)
            else:
                self._other(i, rec)
        self._close_step(None)
        self._close_turn(None)
        self._flush_loose()
        return self.blocks


def derive(records: Sequence[dict[str, Any]], start: int = 0, end: int | None = None, *,
           stored_count: int | None = None, checkpoint: Callable[[int], None] | None = None) -> list[TimelineNode]:
    """Top-level timeline nodes for ``records[start:end]``; ``start``/``end`` must be block boundaries.

    Records at index ``>= stored_count`` are in-memory crash closers (``inspect`` adds them) and are
    flagged ``synthetic``.  ``checkpoint(index)`` is called every 1024 records: a caller on a worker
    thread reports progress, raises to cancel, or sleeps briefly to let a GUI thread have the GIL.
    """
    stop = len(records) if end is None else end
    return _Fold(records, len(records) if stored_count is None else stored_count).run(start, stop, checkpoint)


# ---------------------------------------------------------------- folds of the whole log


def latest_title(records: Sequence[dict[str, Any]]) -> str | None:
    """The session title (latest ``session/title`` wins, §6.5)."""
    for i in range(len(records) - 1, -1, -1):
        rec = records[i]
        if rec.get("type") == "session/title":
            title = get_path(rec, "data", "title")
            if isinstance(title, str):
                return title
    return None


__all__ = [
    "CANCELLED",
    "ERROR",
    "HUMAN",
    "INTERRUPTED",
    "OPEN",
    "PRUNED",
    "REPAIRED",
    "SEED",
    "SYNTHETIC",
    "TimelineNode",
    "Usage",
    "block_spans",
    "block_starts",
    "compact_count",
    "content_text",
    "derive",
    "latest_title",
    "one_line",
    "span_containing",
    "tail_first_span",
]
