"""What a person searches for in a session, as index rows: one row per searchable event field.

Why a module of its own: the indexer walks a log once (a 200k-event log in well under a second
here), and that walk must not build a record per streaming delta.  It walks the engine's items
(``EventLog.segments()``: scalar records, never mutated, and ``PackedRun``s) so a run of 500 deltas
is one step, and reads a run's text straight from its payload.

What becomes a row (``DocRow``: seq, kind, event type, tool, turn, time, body):

- ``user/message`` text (kind ``user``), ``assistant/message`` text and reasoning blocks
  (``assistant``/``reasoning``; the message is authoritative, the chunks it cites are not indexed
  again), ``tool/call`` name plus arguments (``tool-call``; the assistant's tool-call blocks repeat
  them and are left out, so one call is one hit), ``tool/result`` content (``tool-result``, or
  ``error`` when the result is an error; its tool name comes from the call it answers),
  ``session/title`` (``title``), failures (``turn/end`` errors, ``llm/retry``, failed commands and
  compactions: ``error``) and a few log-only texts (commands, feedback, summaries, todos: ``meta``);
- the ids an event carries (message, call, result, retry, request, approval, command, child session
  ids: ``ids_of``), one per line, as a second row at the event's seq with the kind and tool of its
  text row (``meta`` when it has none), in ``Batch.id_rows``.  A support engineer pastes them from an
  error report; they are a row of their own, not appended to the text, so a snippet of the text never
  shows them.  The trigram index matches a pasted id as one substring, ``-``/``_``/``.``/``:`` included;
- a stream no message cites (a crash mid-stream, a failed attempt before a retry, a live session
  whose message is not written yet): consecutive deltas of one block joined, one row at the first
  delta's seq.  When a later message cites it, the indexer deletes that row (``Batch.cited``);
- the session header (id, cwd, parent): one ``meta`` row without a seq (``header_row``).

Bodies longer than ``MAX_BODY_CHARS`` keep their head: a 5 MB tool output would otherwise cost more
index than a thousand ordinary sessions.

May import: the standard library, ``app.search.db`` (``clean_text``), ``app.records`` and the
public ``persistence`` package.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from app.records import content_text
from app.search.db import clean_text
from persistence import EventType, PackedRun

# The kinds a hit can have (the window's filter offers these; the command line's --kind takes them).
USER = "user"
ASSISTANT = "assistant"
REASONING = "reasoning"
TOOL_CALL = "tool-call"
TOOL_RESULT = "tool-result"
ERROR = "error"
TITLE = "title"
META = "meta"
KINDS: tuple[str, ...] = (USER, ASSISTANT, REASONING, TOOL_CALL, TOOL_RESULT, ERROR, TITLE, META)

HEADER_TYPE = "session/header"  # the event type shown for the header row (it is not an event)
CHUNK_TYPE = EventType.ASSISTANT_CHUNK
MAX_BODY_CHARS = 200_000  # characters of one row's text; the head of a longer text is kept

# One index row: (seq, kind, event type, tool name, turn, time, body).  A plain tuple, not a value
# class: a 10k-session root makes about a million of them, and executemany takes tuples as they are.
DocRow = tuple[int | None, str, str, str | None, int | None, int | None, str]

_STREAM_KIND = {"text-delta": ASSISTANT, "reasoning-delta": REASONING, "tool-call-delta": TOOL_CALL}


@dataclass(frozen=True, slots=True)
class TailState:
    """What the index remembers of a session between two batches (the ``sessions`` table's columns)."""

    last_seq: int = -1  # seq of the newest event indexed (-1: none)
    last_type: str | None = None  # its type and time: a grown log must still hold the same event there
    last_time: int | None = None
    turn: int | None = None  # the turn open or last seen
    open_turn: bool = False  # a turn/start without its turn/end
    title: str | None = None  # the newest session/title
    updated: int | None = None  # the newest event time
    event_count: int = 0


@dataclass(frozen=True, slots=True)
class Batch:
    """The rows of one walked span, the cited seq ranges in it, and the state after it."""

    rows: list[DocRow]
    cited: list[tuple[int, int]]  # (min, max) of each message's sourceEventSeqs: stream rows there are not hits
    state: TailState
    text_chars: int  # characters of body text produced (what the index covers)
    # The ids each event carries, one row per event (see ``ids_of``): kept apart from ``rows`` so the text
    # rows stay one per searchable field; the indexer stores both.
    id_rows: list[DocRow] = field(default_factory=list)


def _int(v: Any) -> int | None:
    if type(v) is int:
        return v
    if type(v) is float and v.is_integer():
        return int(v)
    return None


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _cut(text: str) -> str:
    """``text`` as the index can hold it: at most ``MAX_BODY_CHARS`` (see ``clean_text``)."""
    return clean_text(text if len(text) <= MAX_BODY_CHARS else text[:MAX_BODY_CHARS])


def arguments_text(arguments: Any) -> str:
    """Tool arguments as a person reads them: a JSON object's values unescaped (``key: value`` lines),
    so ``npm run build`` matches a command whose JSON text has ``\\"`` or ``\\n`` in it; anything that
    does not parse stays as written."""
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return arguments
    if isinstance(value, dict):
        lines = []
        for key, v in value.items():
            lines.append(f"{key}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}")
        return "\n".join(lines)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def header_row(meta: dict[str, Any] | None, session_id: str) -> DocRow:
    """The searchable header of a session: its id, cwd, parent session and agent preset."""
    parts = [session_id]
    if meta:
        for key in ("cwd", "parentSession", "agentPreset"):
            v = meta.get(key)
            if isinstance(v, str) and v:
                parts.append(v)
    created = _int(meta.get("createdAt")) if meta else None
    return (None, META, HEADER_TYPE, None, None, created, _cut("\n".join(parts)))


class Extractor:
    """Turns a session's items into rows, batch after batch (a tail continues from ``TailState``).

    ``tool_of(seq)`` names the tool of a call indexed by an earlier batch (a result whose call came
    before this batch); calls inside the batch are resolved from the batch itself.
    """

    def __init__(self, state: TailState | None = None, tool_of: Callable[[int], str | None] | None = None) -> None:
        st = state or TailState()
        self.last_seq, self.last_type, self.last_time = st.last_seq, st.last_type, st.last_time
        self.turn, self.open_turn, self.title, self.updated = st.turn, st.open_turn, st.title, st.updated
        self.event_count = st.event_count
        self._tool_of = tool_of
        self.rows: list[DocRow] = []
        self.id_rows: list[DocRow] = []
        self._streams: list[tuple[int, int, DocRow]] = []  # (first seq, last seq, row), pending citation check
        self.cited: list[tuple[int, int]] = []
        self._calls: dict[int, str] = {}  # seq of a tool/call -> its tool name
        # The open stream group: key, first seq, last seq, first time, turn, texts.
        self._gkey: tuple[Any, ...] | None = None
        self._gfirst = self._glast = 0
        self._gtime: int | None = None
        self._gturn: int | None = None
        self._gparts: list[str] = []

    # ------------------------------------------------------------ walking

    def feed(self, items: Iterable[dict[str, Any] | PackedRun]) -> None:
        """Walk items in log order (records are the engine's: read, never mutated)."""
        handlers = _HANDLERS
        for it in items:
            if type(it) is PackedRun:
                self._run(it)
                continue
            if type(it) is not dict:
                continue
            t = it.get("type")
            seq = _int(it.get("seq"))
            tm = _int(it.get("time"))
            self.event_count += 1
            if seq is not None:
                self.last_seq, self.last_type, self.last_time = seq, t, tm
            if tm is not None and (self.updated is None or tm > self.updated):
                self.updated = tm
            if t == CHUNK_TYPE:
                self._scalar_chunk(seq, tm, it.get("data"))
                continue
            data = it.get("data")
            if not isinstance(data, dict):
                continue
            handler = handlers.get(t)  # type: ignore[arg-type]
            if handler is not None:
                dturn = _int(data.get("turn"))
                if dturn is not None:
                    self.turn = dturn
                handler(self, it, seq, tm, data)
            ids = ids_of(data)
            if ids:
                self._id_row(seq, tm, _str(t), ids)

    def _id_row(self, seq: int | None, tm: int | None, etype: str, ids: list[str]) -> None:
        """The ids an event carries as a row of their own, with the kind and tool of the event's text row
        (a call id found is a ``tool-call`` hit of that tool); an event without text is ``meta``."""
        kind, tool = META, None
        last = self.rows[-1] if self.rows else None
        if last is not None and seq is not None and last[0] == seq:
            kind, tool = last[1], last[3]
        self.id_rows.append((seq, kind, etype, tool, self.turn, tm, _cut("\n".join(ids))))

    def _add(self, seq: int | None, kind: str, etype: str, tool: str | None, tm: int | None, body: str) -> None:
        if body and not body.isspace():
            self.rows.append((seq, kind, etype, None if tool is None else clean_text(tool), self.turn, tm, _cut(body)))

    # ------------------------------------------------------------ streams

    def _run(self, run: PackedRun) -> None:
        n = len(run.payload)
        self.event_count += n
        last_time = run.time0 + sum(run.dt)
        self.last_seq, self.last_type, self.last_time = run.seq0 + n - 1, CHUNK_TYPE, last_time
        if self.updated is None or last_time > self.updated:
            self.updated = last_time
        turn = _int(run.turn)
        if turn is not None:
            self.turn = turn
        key = (run.kind, run.turn, run.step, run.index, run.call_id, run.name)
        self._stream(key, run.seq0, run.seq0 + n - 1, run.time0, turn, "".join(run.payload))

    def _scalar_chunk(self, seq: int | None, tm: int | None, data: Any) -> None:
        chunk = data.get("chunk") if isinstance(data, dict) else None
        if not isinstance(chunk, dict) or seq is None:
            return
        ctype = chunk.get("type")
        if ctype in ("text-delta", "reasoning-delta"):
            text = chunk.get("text")
        elif ctype == "tool-call-delta":
            text = chunk.get("argumentsDelta")
        else:
            return  # block-start/-end, usage, finish: nothing a person searches (block-end repeats the message)
        if not isinstance(text, str):
            return
        turn = _int(data.get("turn"))
        if turn is not None:
            self.turn = turn
        key = (ctype, data.get("turn"), data.get("step"), chunk.get("index"), chunk.get("id"), chunk.get("name"))
        self._stream(key, seq, seq, tm, turn, text)

    def _stream(self, key: tuple[Any, ...], first: int, last: int, tm: int | None, turn: int | None, text: str) -> None:
        if key == self._gkey and first == self._glast + 1:
            self._glast = last
            self._gparts.append(text)
            return
        self._flush_stream()
        self._gkey, self._gfirst, self._glast, self._gtime, self._gturn = key, first, last, tm, turn
        self._gparts = [text]

    def _flush_stream(self) -> None:
        key = self._gkey
        if key is None:
            return
        self._gkey = None
        body = "".join(self._gparts)
        self._gparts = []
        if not body or body.isspace():
            return
        kind = _STREAM_KIND[key[0]]
        tool = clean_text(key[5]) if isinstance(key[5], str) else None
        if kind == TOOL_CALL:
            body = f"{tool}\n{arguments_text(body)}" if tool else arguments_text(body)
        self._streams.append(
            (self._gfirst, self._glast, (self._gfirst, kind, CHUNK_TYPE, tool, self._gturn, self._gtime, _cut(body)))
        )

    # ------------------------------------------------------------ result

    def finish(self) -> Batch:
        """The rows (uncited streams included), the cited ranges and the state after this batch."""
        self._flush_stream()
        rows = self.rows
        chars = sum(len(r[6]) for r in rows)
        if self._streams:
            cited = sorted(self.cited)
            los = [c[0] for c in cited]
            reach = list(accumulate((c[1] for c in cited), max))  # reach[k]: the furthest end among ranges 0..k
            for first, last, row in self._streams:
                k = bisect_right(los, last) - 1  # ranges 0..k start at or before the stream's last seq
                if k < 0 or reach[k] < first:  # ...and none of them reaches its first: nothing cites it
                    rows.append(row)
                    chars += len(row[6])
        state = TailState(
            self.last_seq,
            self.last_type,
            self.last_time,
            self.turn,
            self.open_turn,
            self.title,
            self.updated,
            self.event_count,
        )
        return Batch(rows, self.cited, state, chars, self.id_rows)

    # ------------------------------------------------------------ one handler per event type

    def _user(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        self._add(seq, USER, EventType.USER_MESSAGE, None, tm, content_text(data.get("content")))

    def _assistant(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        ses = it.get("sourceEventSeqs")
        if isinstance(ses, list) and ses:
            nums = [s for s in ses if type(s) is int]
            if nums:
                self.cited.append((min(nums), max(nums)))
        msg = data.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            return
        texts: list[str] = []
        reasoning: list[str] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            bt = block.get("type")
            if bt == "text":
                texts.append(_str(block.get("text")))
            elif bt == "reasoning":
                reasoning.append(_str(block.get("text")))
        if reasoning:
            self._add(seq, REASONING, EventType.ASSISTANT_MESSAGE, None, tm, "\n".join(reasoning))
        if texts:
            self._add(seq, ASSISTANT, EventType.ASSISTANT_MESSAGE, None, tm, "\n".join(texts))

    def _tool_call(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        name = data.get("name")
        tool = name if isinstance(name, str) else None
        if seq is not None and tool is not None:
            self._calls[seq] = tool
        args = arguments_text(data.get("arguments")) if "arguments" in data else ""
        self._add(seq, TOOL_CALL, EventType.TOOL_CALL, tool, tm, f"{tool}\n{args}" if tool and args else (tool or args))

    def _tool_result(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        tool = None
        ses = it.get("sourceEventSeqs")
        if isinstance(ses, list) and ses and type(ses[0]) is int:
            call = ses[0]
            tool = self._calls.get(call)
            if tool is None and self._tool_of is not None:
                tool = self._tool_of(call)
        msg = data.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        is_error = False
        if isinstance(content, list):
            is_error = any(isinstance(b, dict) and b.get("isError") is True for b in content)
        body = content_text(content)
        err = data.get("error")
        if isinstance(err, dict):
            is_error = True
            body = f"{body}\n{_str(err.get('name'))} {_str(err.get('code'))}".strip()
        self._add(seq, ERROR if is_error else TOOL_RESULT, EventType.TOOL_RESULT, tool, tm, body)

    def _code_dispatch(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        name = data.get("name")
        tool = name if isinstance(name, str) else None
        self._add(seq, TOOL_CALL, _str(it.get("type")), tool, tm, f"{tool or ''}\n{arguments_text(data.get('arguments'))}")
        if "content" in data:
            kind = ERROR if data.get("isError") is True else TOOL_RESULT
            self._add(seq, kind, _str(it.get("type")), tool, tm, content_text(data.get("content")))

    def _title(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        title = data.get("title")
        if isinstance(title, str):
            self.title = title
            self._add(seq, TITLE, EventType.SESSION_TITLE, None, tm, title)

    def _turn_start(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        self.open_turn = True

    def _turn_end(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        self.open_turn = False
        reason = data.get("reason")
        if isinstance(reason, dict) and reason.get("kind") == "error":
            self._add(seq, ERROR, EventType.TURN_END, None, tm, _failure_text(reason.get("error")))

    def _retry(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        self._add(seq, ERROR, EventType.LLM_RETRY, None, tm, _failure_text(data.get("failure")))

    def _command_run(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        self._add(seq, USER, EventType.COMMAND_RUN, None, tm, f"/{_str(data.get('name'))} {_str(data.get('args'))}".rstrip())

    def _command_done(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        kind = ERROR if data.get("kind") == "error" else META
        self._add(seq, kind, EventType.COMMAND_DONE, None, tm, _str(data.get("text")))

    def _compaction_end(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        self._add(seq, ERROR, EventType.COMPACTION_END, None, tm, _str(data.get("error")))

    def _compaction_summary(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        self._add(seq, META, EventType.COMPACTION_SUMMARY, None, tm, content_text(data.get("summary")))

    def _feedback(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        self._add(seq, USER, EventType.FEEDBACK_RECORD, None, tm, _str(data.get("text")))

    def _hook_result(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        stderr = _str(data.get("stderrSummary"))
        if stderr:
            self._add(seq, META, EventType.HOOK_RESULT, None, tm, f"{_str(data.get('point'))} {stderr}")

    def _approval(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        name = data.get("toolName")
        tool = name if isinstance(name, str) else None
        self._add(seq, META, EventType.APPROVAL_ASKED, tool, tm, f"{tool or ''} {_str(data.get('reason'))}".strip())

    def _todos(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        todos = data.get("todos")
        if isinstance(todos, list):
            text = "\n".join(_str(t.get("content")) for t in todos if isinstance(t, dict))
            self._add(seq, META, EventType.TODO_WRITE, None, tm, text)

    def _labelled(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        parts = [_str(data.get(k)) for k in ("label", "persona", "name", "phase")]
        self._add(seq, META, _str(it.get("type")), None, tm, "\n".join(p for p in parts if p))

    def _team_message(self, it: dict[str, Any], seq: int | None, tm: int | None, data: dict[str, Any]) -> None:
        msg = data.get("message")
        if isinstance(msg, dict):
            self._add(seq, META, EventType.TEAM_MESSAGE_QUEUED, None, tm, content_text(msg.get("content")))


# Branches of an event's data that hold no id a person pastes (opaque provider state, content text,
# token counts) or repeat one another's (a message's content blocks repeat its call ids; the
# ``tool/call`` and ``tool/result`` events carry them).
_NO_IDS = frozenset({"replayState", "content", "usage", "arguments", "chunk", "summary", "todos"})
_ID_DEPTH = 3  # data -> message -> source -> callId is the deepest id in the event catalog
MIN_ID_CHARS = 3  # shorter values are no id anyone pastes (a test's "c1"); a trigram needs 3 characters


def ids_of(data: dict[str, Any], depth: int = _ID_DEPTH) -> list[str]:
    """The ids an event's data carries, in order, each once: every string under a key ``id`` or ending in
    ``Id`` (``callId``, ``toolCallId``, ``requestId``, ``retryId``, ``commandId``, ``childId`` ...), in the
    data and the objects it nests (``message.id``, ``message.source.callId``, ``failure.requestId``).

    By key, not by event type: the catalog names ids that way, and a newer harness's event keeps them."""
    out: list[str] = []
    for key, value in data.items():
        if isinstance(value, str):
            if len(value) >= MIN_ID_CHARS and (key == "id" or key.endswith("Id")) and value not in out:
                out.append(value)
        elif isinstance(value, dict) and depth > 1 and key not in _NO_IDS:
            for v in ids_of(value, depth - 1):
                if v not in out:
                    out.append(v)
    return out


def _failure_text(failure: Any) -> str:
    if not isinstance(failure, dict):
        return ""
    return f"{_str(failure.get('message'))} {_str(failure.get('code'))}".strip()


Handler = Callable[[Extractor, dict[str, Any], "int | None", "int | None", dict[str, Any]], None]

_HANDLERS: dict[str, Handler] = {
    EventType.USER_MESSAGE: Extractor._user,
    EventType.ASSISTANT_MESSAGE: Extractor._assistant,
    EventType.TOOL_CALL: Extractor._tool_call,
    EventType.TOOL_RESULT: Extractor._tool_result,
    EventType.TOOL_CODE_DISPATCH: Extractor._code_dispatch,
    EventType.SESSION_TITLE: Extractor._title,
    EventType.TURN_START: Extractor._turn_start,
    EventType.TURN_END: Extractor._turn_end,
    EventType.LLM_RETRY: Extractor._retry,
    EventType.COMMAND_RUN: Extractor._command_run,
    EventType.COMMAND_DONE: Extractor._command_done,
    EventType.COMPACTION_END: Extractor._compaction_end,
    EventType.COMPACTION_SUMMARY: Extractor._compaction_summary,
    EventType.FEEDBACK_RECORD: Extractor._feedback,
    EventType.HOOK_RESULT: Extractor._hook_result,
    EventType.APPROVAL_ASKED: Extractor._approval,
    EventType.TODO_WRITE: Extractor._todos,
    EventType.SUBAGENT_DESCRIPTOR: Extractor._labelled,
    EventType.TOOL_WORKFLOW_RUN_START: Extractor._labelled,
    EventType.TOOL_WORKFLOW_AGENT_START: Extractor._labelled,
    EventType.TEAM_MESSAGE_QUEUED: Extractor._team_message,
}


def extract(
    items: Iterable[dict[str, Any] | PackedRun],
    state: TailState | None = None,
    tool_of: Callable[[int], str | None] | None = None,
) -> Batch:
    """The rows of ``items`` (one walk), continuing from ``state``."""
    ex = Extractor(state, tool_of)
    ex.feed(items)
    return ex.finish()


__all__ = [
    "ASSISTANT",
    "CHUNK_TYPE",
    "ERROR",
    "HEADER_TYPE",
    "KINDS",
    "MAX_BODY_CHARS",
    "META",
    "REASONING",
    "TITLE",
    "TOOL_CALL",
    "TOOL_RESULT",
    "USER",
    "Batch",
    "DocRow",
    "Extractor",
    "TailState",
    "arguments_text",
    "clean_text",
    "extract",
    "header_row",
    "ids_of",
]
