"""The fold: turn → step → items, derived from stored event records (session-model §6.3).

One pass over the records, one handler per event type (``_HANDLERS``, a dispatch table); events
outside the turn/step/message/tool structure become rows through ``event_rows``.

The fold works on *blocks*: a turn (``turn/start`` … ``turn/end``) or a run of standalone events
between turns.  Every block starts where the fold state is empty, so any block range can be derived
on its own and gives exactly the nodes a whole-log fold would give: that is what lets a viewer show
the tail of a 200k-event log first and derive older turns on demand (``app.timeline.spans``).

Chunk runs never become rows of their own: an ``assistant/message`` is authoritative for a finished
step (§6.3), so the chunks it cites are folded into the node of the content block they streamed
(``chunk.index``).  Chunks no message cites are a failed attempt (before ``llm/retry``) or a stream
that ended without a message (cancelled or still live).

Stdlib and ``app.timeline`` only (never Qt: the window adapts these nodes in ``app.gui.models``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.records import Tokens
from app.records.errors import error_line
from app.records.fields import get_path, seq_of
from app.records.summaries import compact_json, content_text, one_line, tool_arguments_summary
from app.records.walk import walk
from app.timeline.event_rows import event_row
from app.timeline.fold_pieces import (
    FoldStep,
    FoldTurn,
    between_turns,
    hkey,
    result_info,
    step_summary,
    tool_status,
    turn_end_reason,
)
from app.timeline.nodes import (
    CANCELLED,
    ERROR,
    HUMAN,
    OPEN,
    PRUNED,
    REPAIR_CODES,
    SYNTHETIC,
    TimelineNode,
)
from persistence import EventType, PackedRun

CHECKPOINT_MASK = 1023  # ``checkpoint`` runs every 1024 records: ~0.6 ms of folding on a 200k-event log
SEEK_BACK_LIMIT = 100_000  # records scanned backwards for a seq that is not its own index (a damaged log)


class _Fold:
    def __init__(self, records: Sequence[dict[str, Any]], stored_count: int) -> None:
        self.records = records
        self.stored_count = stored_count
        self.blocks: list[TimelineNode] = []
        self.turn: FoldTurn | None = None
        self.step: FoldStep | None = None
        self.loose: list[TimelineNode] = []  # standalone run between turns
        self.loose_start = -1

    # -------------------------------------------------------- helpers

    def _base_flags(self, i: int) -> frozenset[str]:
        return frozenset({SYNTHETIC}) if i >= self.stored_count else frozenset()

    def _node(
        self,
        kind: str,
        i: int,
        label: str,
        summary: str = "",
        *,
        key: tuple[Any, ...] | None = None,
        seqs: list[int] | None = None,
        info: str = "",
    ) -> TimelineNode:
        rec = self.records[i]
        seq = seq_of(rec, i)
        return TimelineNode(
            kind,
            key or ("seq", seq),
            label,
            summary,
            info,
            seq,
            i,
            seqs if seqs is not None else [seq],
            rec.get("time"),
            self._base_flags(i),
        )

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
        self.blocks.append(self.loose[0] if len(self.loose) == 1 else between_turns(self.loose))
        self.loose = []

    def _find_tool(self, call_id: Any) -> TimelineNode | None:
        call_id = hkey(call_id)
        if self.step is not None and call_id in self.step.tools:
            return self.step.tools[call_id]
        if self.turn is not None:
            return self.turn.tools.get(call_id)
        return None

    def _index_of_seq(self, seq: int, near: int) -> int:
        # seq == record index in a valid log; fall back to a short backwards scan otherwise.
        if 0 <= seq < len(self.records) and seq_of(self.records[seq], -1) == seq:
            return seq
        for j in range(near, max(-1, near - SEEK_BACK_LIMIT), -1):
            if seq_of(self.records[j], -1) == seq:
                return j
        return near

    # -------------------------------------------------------- turn / step

    def _open_turn(self, i: int, rec: dict[str, Any]) -> None:
        self._close_step(None)  # a step left open belongs to what came before this turn
        self._close_turn(None)
        self._flush_loose()
        n = get_path(rec, "data", "turn")
        node = self._node("turn", i, f"Turn {n}" if n is not None else "Turn", key=("turn", seq_of(rec, i)))
        self.turn = FoldTurn(node)
        self.blocks.append(node)

    def _end_turn(self, i: int, rec: dict[str, Any]) -> None:
        if self.turn is None:
            self._standalone(i, rec)  # a turn/end with no turn open is shown as it is
            return
        self._close_step(None)
        self._close_turn(i)

    def _open_step(self, i: int, rec: dict[str, Any]) -> None:
        self._close_step(None)
        n = get_path(rec, "data", "step")
        node = self._node("step", i, f"Step {n}" if n is not None else "Step", key=("step", seq_of(rec, i)))
        if self.turn is not None:
            self.turn.node.add(node)
        else:
            self._place(node)
        self.step = FoldStep(node)

    def _end_step(self, i: int, rec: dict[str, Any]) -> None:
        if self.step is None:
            self._standalone(i, rec)  # a step/end with no step open is shown as it is
            return
        self._close_step(i)

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
            node.seqs.append(seq_of(end, end_index))
            st.end_time = end.get("time")
            if end_index >= self.stored_count:
                node.flag(SYNTHETIC)
        node.summary = step_summary(st)
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
        reason = turn_end_reason(node, None if end_index is None else self.records[end_index], end_index, self.stored_count)
        total: Tokens | None = None
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

    # -------------------------------------------------------- streams

    def _flush_stream(self, st: FoldStep, *, final: bool, retry_index: int | None = None) -> None:
        """Chunks no message cited: a failed attempt (retry) or a stream that never got its message."""
        if not st.chunks:
            return
        entries = st.chunks
        st.chunks = []
        text_parts: list[str] = []
        seqs: list[int] = []
        for e in entries:
            if isinstance(e, tuple):
                run = e[1]
                text_parts.append(run.text())
                seqs.extend(range(run.seq0, run.seq0 + len(run)))
                continue
            rec = self.records[e]
            ch = get_path(rec, "data", "chunk")
            if isinstance(ch, dict):
                if ch.get("type") in ("text-delta", "reasoning-delta") and isinstance(ch.get("text"), str):
                    text_parts.append(ch["text"])
                elif ch.get("type") == "tool-call-delta" and isinstance(ch.get("argumentsDelta"), str):
                    text_parts.append(ch["argumentsDelta"])
            seqs.append(seq_of(rec, e))
        head = entries[0]
        first = head[0] if isinstance(head, tuple) else head
        if retry_index is not None:
            node = self._node(
                "attempt",
                first,
                "Failed attempt",
                one_line("".join(text_parts)) or "(no output)",
                key=("attempt", seqs[0]),
                seqs=seqs,
                info=f"{len(seqs)} chunks",
            )
            node.flag(ERROR)
        else:
            node = self._node(
                "stream",
                first,
                "Streamed (no message)",
                one_line("".join(text_parts)) or "(no output)",
                key=("stream", seqs[0]),
                seqs=seqs,
                info=f"{len(seqs)} chunks",
            )
            node.flag(CANCELLED)
        st.node.add(node)

    def _chunk(self, i: int, rec: dict[str, Any]) -> None:
        st = self.step
        if st is None:
            self._place(self._node("event", i, EventType.ASSISTANT_CHUNK, compact_json(get_path(rec, "data", "chunk"))))
            return
        st.chunks.append(i)
        data = rec.get("data")
        ch = data.get("chunk") if type(data) is dict else None
        if type(ch) is dict and ch.get("type") == "usage":
            u = Tokens.from_usage(ch.get("usage"))
            if u is not None:
                st.usage = u

    def _chunk_run(self, i: int, run: PackedRun) -> None:
        """A packed run of deltas (never usage or finish chunks): one entry, however long."""
        if self.step is None:
            for k in range(len(run)):  # chunks outside a step are rows of their own (rare)
                self._chunk(i + k, run.member(k))
            return
        self.step.chunks.append((i, run))

    def _take_stream(self, st: FoldStep) -> tuple[dict[Any, list[int]], list[int]]:
        """The step's pending chunks, as seqs by content-block index plus the rest (usage, finish, unindexed).

        Chunks of failed attempts were closed off at their llm/retry, so what is pending is the stream
        of the message being folded (upstream cites exactly these seqs; we do not rely on the list).
        """
        by_block: dict[Any, list[int]] = {}
        other_chunk_seqs: list[int] = []
        records = self.records
        for j in st.chunks:  # the hot loop of a big log: plain dict access, no helpers
            if isinstance(j, tuple):
                run = j[1]
                by_block.setdefault(run.index, []).extend(range(run.seq0, run.seq0 + len(run)))
                continue
            r = records[j]
            s = r.get("seq")
            if type(s) is not int:
                s = seq_of(r, j)
            d = r.get("data")
            ch = d.get("chunk") if type(d) is dict else None
            if type(ch) is dict:
                idx, ctype = ch.get("index"), ch.get("type")
            else:
                idx = ctype = None
            if idx is not None and ctype not in ("usage", "finish"):
                by_block.setdefault(hkey(idx), []).append(s)
            else:
                other_chunk_seqs.append(s)
        st.chunks = []
        return by_block, other_chunk_seqs

    # -------------------------------------------------------- messages

    def _user(self, i: int, rec: dict[str, Any]) -> None:
        data = rec.get("data")
        source = get_path(data, "source")
        kind = get_path(source, "kind")
        text = content_text(get_path(data, "content"))
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
        if isinstance(rec.get("surfaceOp"), dict):  # a replacement: compaction of what the model sees
            node.kind = "annotation"
            node.label = "Compaction"
            node.summary = "context compacted here — model-only checkpoint: " + one_line(text, 120)
            node.flag(PRUNED)
        self._place(node)

    def _assistant(self, i: int, rec: dict[str, Any]) -> None:
        payload = rec.get("data")
        data: dict[str, Any] = payload if isinstance(payload, dict) else {}
        seq = seq_of(rec, i)
        msg = data.get("message")
        usage = Tokens.from_usage(data.get("usage"))
        st = self.step
        by_block: dict[Any, list[int]] = {}
        other_chunk_seqs: list[int] = []
        if st is not None:
            by_block, other_chunk_seqs = self._take_stream(st)
            if usage is not None:
                st.usage = usage
        interrupted = data.get("interrupted") is True
        for node in self._content_nodes(i, seq, get_path(msg, "content"), by_block, interrupted):
            self._place(node)
        if usage is not None or other_chunk_seqs:
            self._place(self._usage_node(i, seq, usage, other_chunk_seqs))

    def _content_nodes(
        self, i: int, seq: int, content: Any, by_block: dict[Any, list[int]], interrupted: bool
    ) -> list[TimelineNode]:
        """One node per content block of an assistant message (its streamed chunks folded in)."""
        st = self.step
        made: list[TimelineNode] = []
        if isinstance(content, list):
            for bi, block in enumerate(content):
                if not isinstance(block, dict):
                    continue
                node = self._block_node(i, seq, bi, block, [seq, *by_block.get(bi, [])])
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
        return made

    def _block_node(self, i: int, seq: int, bi: int, block: dict[str, Any], seqs: list[int]) -> TimelineNode:
        bt = block.get("type")
        key = ("block", seq, bi)
        if bt == "reasoning":
            return self._node("reasoning", i, "Reasoning", one_line(block.get("text")), key=key, seqs=seqs)
        if bt == "text":
            return self._node("text", i, "Assistant", one_line(block.get("text")), key=key, seqs=seqs)
        if bt == "tool-call":
            node = self._node(
                "tool",
                i,
                f"Tool · {block.get('name')}",
                tool_arguments_summary(block.get("arguments")),
                key=("tool", seq, block.get("id")),
                seqs=seqs,
                info="never started",
            )
            self._register_tool(block.get("id"), node)
            return node
        return self._node("block", i, f"[{bt}]", compact_json(block), key=key, seqs=seqs)

    def _register_tool(self, call_id: Any, node: TimelineNode) -> None:
        call_id = hkey(call_id)
        if self.step is not None:
            self.step.tools[call_id] = node
        if self.turn is not None:
            self.turn.tools[call_id] = node

    def _usage_node(self, i: int, seq: int, usage: Tokens | None, other_chunk_seqs: list[int]) -> TimelineNode:
        """The usage row of a message: its usage (or the stream's), and the finish reason its chunks gave."""
        u = usage or (self.step.usage if self.step is not None else None)
        finish = None
        for s in other_chunk_seqs:
            ch = get_path(self.records[self._index_of_seq(s, i)], "data", "chunk")
            if isinstance(ch, dict) and ch.get("type") == "finish":
                finish = get_path(ch, "reason", "kind")
        node = self._node(
            "usage",
            i,
            "Usage",
            u.short() if u else "(no usage reported)",
            key=("usage", seq),
            seqs=other_chunk_seqs or [seq],
            info=f"finish: {finish}" if finish else "",
        )
        if other_chunk_seqs:
            node.seq = other_chunk_seqs[0]
            node.index = self._index_of_seq(other_chunk_seqs[0], i)
        node.usage = u
        return node

    # -------------------------------------------------------- tools

    def _tool_call(self, i: int, rec: dict[str, Any]) -> None:
        call_id = get_path(rec, "data", "callId")
        tool = self._find_tool(call_id)
        seq = seq_of(rec, i)
        if tool is None:
            tool = self._node(
                "tool",
                i,
                f"Tool · {get_path(rec, 'data', 'name')}",
                tool_arguments_summary(get_path(rec, "data", "arguments")),
                key=("tool", seq, call_id),
            )
            self._place(tool)
            self._register_tool(call_id, tool)
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
        text = content_text(first.get("content")) if first else content_text(blocks)
        if isinstance(rec.get("surfaceOp"), dict):
            node = self._node("annotation", i, "Pruned", "tool output pruned (model-only replacement): " + one_line(text, 120))
            node.flag(PRUNED)
            self._place(node)
            return
        call_id = get_path(msg, "source", "callId") or first.get("toolCallId")
        err = get_path(data, "error")
        code = get_path(err, "code")
        node = self._node("result", i, "Result", one_line(text) or "(empty)")
        failed = first.get("isError") is True or err is not None
        # What failed, in the output's own words ("AssertionError: …"), not only its code (issue 24).
        why = error_line(text, err) if failed and code not in REPAIR_CODES else ""
        node.info = result_info(node, failed, code, get_path(data, "meta"), why)
        tool = self._find_tool(call_id)
        if tool is None:
            self._place(node)
            return
        tool.add(node)
        tool.info = tool_status(tool, node, code, why)

    def _approval(self, i: int, rec: dict[str, Any]) -> None:
        data = rec.get("data")
        call_id = get_path(data, "callId")
        tool = self._find_tool(call_id) if call_id is not None else None
        if tool is None:
            self._standalone(i, rec)
            return
        summary = one_line(get_path(data, "question") or get_path(data, "outcome") or compact_json(data))
        tool.add(self._node("event", i, str(rec.get("type")), summary))

    def _code_dispatch(self, i: int, rec: dict[str, Any]) -> None:
        data = rec.get("data")
        tool = self._find_tool(get_path(data, "parentCallId"))
        if tool is None:
            self._standalone(i, rec)
            return
        label = f"{rec.get('type')} · {get_path(data, 'name') or ''}".rstrip(" ·")
        tool.add(self._node("event", i, label, compact_json(data)))

    # -------------------------------------------------------- everything else

    def _row_node(self, i: int, rec: dict[str, Any]) -> TimelineNode:
        row = event_row(rec)
        node = self._node(row.kind, i, row.label, row.summary, info=row.info)
        if row.flags:
            node.flag(*row.flags)
        return node

    def _standalone(self, i: int, rec: dict[str, Any]) -> None:
        self._place(self._row_node(i, rec))

    def _retry(self, i: int, rec: dict[str, Any]) -> None:
        node = self._row_node(i, rec)
        if self.step is not None:  # the chunks so far were the failed attempt
            self._flush_stream(self.step, final=False, retry_index=i)
        self._place(node)

    # -------------------------------------------------------- driver

    def run(self, start: int, end: int, checkpoint: Callable[[int], None] | None = None) -> list[TimelineNode]:
        handler_of = _HANDLERS.get
        standalone = _Fold._standalone
        # ``checkpoint`` runs whenever the walk reaches or crosses a multiple of 1024 records.
        next_check = start if not start & CHECKPOINT_MASK else (start | CHECKPOINT_MASK) + 1
        for i, rec in walk(self.records, start, end):
            if checkpoint is not None and i >= next_check:
                checkpoint(i)
                next_check = (i | CHECKPOINT_MASK) + 1
            if isinstance(rec, PackedRun):
                self._chunk_run(i, rec)
                continue
            try:
                handle = handler_of(rec.get("type"), standalone)  # type: ignore[arg-type]  # any JSON value
            except TypeError:  # an unhashable "type" (a damaged payload) is an unknown type
                handle = standalone
            handle(self, i, rec)
        self._close_step(None)
        self._close_turn(None)
        self._flush_loose()
        return self.blocks


Handler = Callable[[_Fold, int, dict[str, Any]], None]

# One handler per event type; a type not listed is a standalone row (``event_rows``).
_HANDLERS: dict[str, Handler] = {
    EventType.TURN_START: _Fold._open_turn,
    EventType.TURN_END: _Fold._end_turn,
    EventType.STEP_START: _Fold._open_step,
    EventType.STEP_END: _Fold._end_step,
    EventType.ASSISTANT_CHUNK: _Fold._chunk,
    EventType.ASSISTANT_MESSAGE: _Fold._assistant,
    EventType.USER_MESSAGE: _Fold._user,
    EventType.TOOL_CALL: _Fold._tool_call,
    EventType.TOOL_RESULT: _Fold._tool_result,
    EventType.APPROVAL_ASKED: _Fold._approval,
    EventType.APPROVAL_DECIDED: _Fold._approval,
    EventType.TOOL_CODE_DISPATCH_START: _Fold._code_dispatch,
    EventType.TOOL_CODE_DISPATCH: _Fold._code_dispatch,
    EventType.LLM_RETRY: _Fold._retry,
}


def derive(
    records: Sequence[dict[str, Any]],
    start: int = 0,
    end: int | None = None,
    *,
    stored_count: int | None = None,
    checkpoint: Callable[[int], None] | None = None,
) -> list[TimelineNode]:
    """Top-level timeline nodes for ``records[start:end]``; ``start``/``end`` must be block boundaries.

    Records at index ``>= stored_count`` are in-memory crash closers (``inspect`` adds them) and are
    flagged ``synthetic``.  ``checkpoint(index)`` is called every 1024 records: a caller on a worker
    thread reports progress, raises to cancel, or sleeps briefly to let a GUI thread have the GIL.
    """
    stop = len(records) if end is None else end
    return _Fold(records, len(records) if stored_count is None else stored_count).run(start, stop, checkpoint)
