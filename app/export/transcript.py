"""A session as a readable transcript: one stream of entries (turns, prompts, replies, tool calls and
results, notes) that the Markdown and HTML writers both render, as they walk.

Why a stream: an export of a 200k-event log must stay small in memory, so nothing is collected; each
entry is yielded as its event is reached and the writer puts it in the file at once.  The log is
walked a packed run at a time (``EventTable.segments``): a run of streaming deltas is never expanded,
because an ``assistant/message`` is authoritative for a finished step (session-model §6.3).  Deltas
matter only when a step ended without its message (cancelled, or a crash): their text is then joined
from the runs kept for that step and shown as a stream.

What is shown: the human transcript (§6.2) - human prompts and injected context (``user/message``),
assistant text and reasoning, tool calls with their arguments and results - and as notes the events a
reader needs to follow it: retries, compactions and prunes (model-only replacements are notes, never
replace what a human saw), the end of an inherited seed, title changes, approvals, a subagent's
descriptor.  Plumbing (request headers and context, chunks, hooks, todo snapshots ...) is left out;
``sessionscope export --format jsonl`` has every byte.

May import: the standard library, ``app.timeline`` (field reads, message text) and the public ``persistence``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from app.records import compact_json, content_text, get_path
from persistence import EventLog, EventTable, EventType, PackedRun


@dataclass(frozen=True, slots=True)
class TurnOpen:
    number: int  # 1-based position among the log's turns (a document anchor; never from the log)
    turn: Any  # the turn number as logged
    seq: int
    time: int | None


@dataclass(frozen=True, slots=True)
class TurnClose:
    turn: Any
    reason: str  # reason kind, or "not closed" for a turn the log leaves open
    detail: str  # an error message or cancel cause; "" when none
    duration_ms: int | None


@dataclass(frozen=True, slots=True)
class StepOpen:
    turn: Any
    step: Any
    seq: int


@dataclass(frozen=True, slots=True)
class Prompt:
    """A ``user/message``: a human prompt (``human``) or injected context (``label`` says which)."""

    text: str
    human: bool
    label: str
    seq: int


@dataclass(frozen=True, slots=True)
class Reply:
    """One assistant content block: ``kind`` is text, reasoning or another block type (shown as JSON)."""

    kind: str
    text: str
    interrupted: bool
    model: str | None
    seq: int


@dataclass(frozen=True, slots=True)
class ToolCall:
    call_id: str
    name: str
    arguments: str  # the raw argument text as the model produced it
    seq: int


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    name: str
    text: str
    is_error: bool
    code: str | None  # the internal error code (TOOL_NOT_STARTED, ...) when one is recorded
    seq: int


@dataclass(frozen=True, slots=True)
class Stream:
    """Streamed output of a step that ended without its message (cancelled or crashed)."""

    text: str
    chunks: int
    seq: int


@dataclass(frozen=True, slots=True)
class Note:
    label: str
    text: str
    seq: int


Entry = TurnOpen | TurnClose | StepOpen | Prompt | Reply | ToolCall | ToolResult | Stream | Note


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else compact_json(value, 10_000))


def _seq(rec: dict[str, Any], index: int) -> int:
    s = rec.get("seq")
    return s if type(s) is int else index


class _Walk:
    """The walk's state: what is pending in the open step, and tool names by call id."""

    def __init__(self) -> None:
        self.turns = 0
        self.turn_open: tuple[Any, int | None] | None = None  # (turn, start time)
        self.last_time: int | None = None
        self.pending: list[PackedRun | dict[str, Any]] = []  # deltas of the open step not yet cited by a message
        self.pending_seq = -1
        self.names: dict[Any, str] = {}
        self.shown_calls: set[Any] = set()

    def name_of(self, call_id: Any) -> str:
        try:
            return self.names.get(call_id, "(unknown tool)")
        except TypeError:
            return "(unknown tool)"

    def flush_stream(self) -> Iterator[Entry]:
        if not self.pending:
            return
        parts: list[str] = []
        n = 0
        for item in self.pending:
            if type(item) is PackedRun:
                parts.append(item.text())
                n += len(item)
            else:
                ch = get_path(item, "data", "chunk")
                text = ch.get("text", ch.get("argumentsDelta")) if isinstance(ch, dict) else None
                if isinstance(text, str):
                    parts.append(text)
                n += 1
        seq = self.pending_seq
        self.pending = []
        text = "".join(parts)
        if text.strip():
            yield Stream(text, n, seq)

    def close_turn(self, turn: Any, reason: str, detail: str, end_time: int | None) -> Iterator[Entry]:
        yield from self.flush_stream()
        start = self.turn_open[1] if self.turn_open is not None else None
        duration = end_time - start if start is not None and end_time is not None else None
        self.turn_open = None
        yield TurnClose(turn, reason, detail, duration)

    # ------------------------------------------------------------ one record

    def record(self, index: int, rec: dict[str, Any]) -> Iterator[Entry]:
        etype = rec.get("type")
        data = rec.get("data")
        seq = _seq(rec, index)
        t = rec.get("time")
        if type(t) is int:
            self.last_time = t
        replacement = type(rec.get("surfaceOp")) is dict
        if etype == EventType.ASSISTANT_CHUNK:
            ch = get_path(data, "chunk")
            if isinstance(ch, dict) and ch.get("type") in ("text-delta", "reasoning-delta", "tool-call-delta"):
                if not self.pending:
                    self.pending_seq = seq
                self.pending.append(rec)
        elif etype == EventType.TURN_START:
            if self.turn_open is not None:  # a turn the log never closed
                yield from self.close_turn(self.turn_open[0], "not closed", "", self.last_time)
            self.turns += 1
            turn = get_path(data, "turn")
            self.turn_open = (turn, t if type(t) is int else None)
            yield TurnOpen(self.turns, turn, seq, t if type(t) is int else None)
        elif etype == EventType.TURN_END:
            kind = get_path(data, "reason", "kind")
            detail = get_path(data, "reason", "error", "message") or get_path(data, "reason", "reason", "kind") or ""
            if self.turn_open is None:
                yield Note("Turn end", f"turn {_s(get_path(data, 'turn'))} ended ({_s(kind)}) with no turn open", seq)
            else:
                yield from self.close_turn(get_path(data, "turn"), _s(kind) or "ended", _s(detail), t if type(t) is int else None)
        elif etype == EventType.STEP_START:
            yield from self.flush_stream()
            yield StepOpen(get_path(data, "turn"), get_path(data, "step"), seq)
        elif etype == EventType.STEP_END:
            yield from self.flush_stream()
        elif etype == EventType.USER_MESSAGE:
            yield from self.user(data, seq, replacement)
        elif etype == EventType.ASSISTANT_MESSAGE:
            yield from self.assistant(data, seq)
        elif etype == EventType.TOOL_CALL:
            call_id = get_path(data, "callId")
            name = _s(get_path(data, "name"))
            try:
                self.names.setdefault(call_id, name)
                shown = call_id in self.shown_calls
            except TypeError:
                shown = False
            if not shown:  # a call no assistant block announced (a damaged or legacy log)
                yield ToolCall(_s(call_id), name, _s(get_path(data, "arguments")), seq)
        elif etype == EventType.TOOL_RESULT:
            yield from self.tool_result(data, seq, replacement)
        elif etype == EventType.LLM_RETRY:
            self.pending = []  # the failed attempt's deltas: the retry replaces them
            failure = get_path(data, "failure")
            msg = _s(get_path(failure, "message"))
            code = _s(get_path(failure, "code"))
            yield Note("Retry", f"model request failed ({code}): {msg}; retry {_s(get_path(data, 'retry'))}", seq)
        elif etype == EventType.COMPACTION_SUMMARY:
            summary = content_text(get_path(data, "summary"))
            count = get_path(data, "shadowedTokenCount")
            yield Note("Compaction", f"context compacted (about {_s(count)} tokens summarized):\n{summary}", seq)
        elif etype == EventType.COMPACTION_END and get_path(data, "error") is not None:
            yield Note("Compaction failed", _s(get_path(data, "error")), seq)
        elif etype == EventType.SESSION_END_SEED:
            yield Note("Seed ends", "everything above was inherited from an earlier session (fork, resume or replay)", seq)
        elif etype == EventType.SESSION_TITLE:
            yield Note("Title", _s(get_path(data, "title")), seq)
        elif etype == EventType.APPROVAL_ASKED:
            yield Note("Approval asked", _s(get_path(data, "question") or get_path(data, "toolName")), seq)
        elif etype == EventType.APPROVAL_DECIDED:
            yield Note("Approval", _s(get_path(data, "outcome")), seq)
        elif etype == EventType.SUBAGENT_DESCRIPTOR:
            yield Note("Subagent", _s(get_path(data, "label") or get_path(data, "mode")), seq)

    def user(self, data: Any, seq: int, replacement: bool) -> Iterator[Entry]:
        source = get_path(data, "source")
        kind = get_path(source, "kind")
        text = content_text(get_path(data, "content"))
        if replacement:  # a compaction checkpoint: model-only, never replaces what a human saw
            yield Note("Compaction checkpoint", text, seq)
            return
        if kind == "user":
            yield Prompt(text, True, "User", seq)
            return
        label = _s(kind) or "context"
        if kind == "plugin":
            label = f"plugin: {_s(get_path(source, 'plugin'))}"
        yield Prompt(text, False, f"Context ({label})", seq)

    def assistant(self, data: Any, seq: int) -> Iterator[Entry]:
        self.pending = []  # the message is authoritative for the deltas that built it
        msg = get_path(data, "message")
        model = get_path(msg, "source", "model")
        model_text = model if isinstance(model, str) else None
        interrupted = get_path(data, "interrupted") is True
        content = get_path(msg, "content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            bt = block.get("type")
            if bt in ("text", "reasoning"):
                yield Reply(str(bt), _s(block.get("text")), interrupted, model_text, seq)
            elif bt == "tool-call":
                call_id = block.get("id")
                name = _s(block.get("name"))
                try:
                    self.names[call_id] = name
                    self.shown_calls.add(call_id)
                except TypeError:
                    pass
                yield ToolCall(_s(call_id), name, _s(block.get("arguments")), seq)
            else:
                yield Reply(_s(bt) or "block", compact_json(block, 10_000), interrupted, model_text, seq)

    def tool_result(self, data: Any, seq: int, replacement: bool) -> Iterator[Entry]:
        msg = get_path(data, "message")
        blocks = get_path(msg, "content")
        first = blocks[0] if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict) else {}
        text = content_text(first.get("content")) if first else content_text(blocks)
        if replacement:
            yield Note("Pruned", "tool output pruned for the model (the result above is what ran):\n" + text, seq)
            return
        call_id = get_path(msg, "source", "callId") or first.get("toolCallId")
        err = get_path(data, "error")
        code = get_path(err, "code")
        yield ToolResult(
            _s(call_id), self.name_of(call_id), text, first.get("isError") is True or err is not None, _s(code) or None, seq
        )

    def finish(self) -> Iterator[Entry]:
        yield from self.flush_stream()
        if self.turn_open is not None:
            yield from self.close_turn(self.turn_open[0], "not closed", "", self.last_time)


def transcript(events: EventLog | Sequence[dict[str, Any]]) -> Iterator[Entry]:
    """The transcript entries of a session's events, in log order (nothing is collected)."""
    records = events.record_table() if isinstance(events, EventLog) else events
    w = _Walk()
    if isinstance(records, EventTable):
        index = 0
        for item in records.segments():
            if type(item) is PackedRun:
                if not w.pending:
                    w.pending_seq = item.seq0
                w.pending.append(item)  # kept by reference: text is joined only if no message cites it
                w.last_time = item.time0 + sum(item.dt)
                index += len(item)
                continue
            yield from w.record(index, item)  # type: ignore[arg-type]  # a scalar item is a record
            index += 1
    else:
        for index in range(len(records)):
            rec = records[index]
            if isinstance(rec, dict):
                yield from w.record(index, rec)
    yield from w.finish()


__all__ = [
    "Entry",
    "Note",
    "Prompt",
    "Reply",
    "StepOpen",
    "Stream",
    "ToolCall",
    "ToolResult",
    "TurnClose",
    "TurnOpen",
    "transcript",
]
