"""The statistics of one session: a single fold over its events into a frozen ``SessionStats``.

Why a fold of its own (not the timeline's): the Stats tab, the root dashboard's per-session cache and
the exports all need the same numbers, off the GUI thread and for 200k-event logs.  Nothing here
needs a streaming delta's text, so the fold walks the log's scalar records and skips each packed run
of deltas in one step (``PackedRun``: ~8.5k items for a 202k-event log, about 15 ms); it never
expands the log into per-event dicts.

What is counted, and from which events (session-model §6.4, event-catalog.json):

- turns: ``turn/start``; a turn's wall time runs from its ``turn/start`` to its ``turn/end`` (an open
  turn: to the last event seen inside it).  ``active_ms`` sums the turns, ``span_ms`` is first to
  last event;
- steps: ``step/start`` (entered steps: equal to the ``step/end`` count of a balanced log, and it
  still counts the step a crash left open);
- model calls: ``assistant/message`` (one per successful or mid-stream-cancelled call); retries:
  ``llm/retry`` (each a failed attempt that was retried);
- tool calls by tool name: ``tool/call``, plus a result with no call (crash repair's
  TOOL_NOT_STARTED); an error is a result with ``isError`` or an ``error`` code.  Pruning
  replacements (a ``tool/result`` with a replace op) are not results;
- tokens: per step the *latest* usage sample (a ``usage`` chunk or ``assistant/message.usage``)
  replaces earlier ones, and the session total sums the steps (upstream's token meter).  Each step's
  tokens are attributed to the model of its ``assistant/message`` (else the route the latest
  ``request/context`` or ``request/header`` named), so a price table can cost them per model;
- compactions: ``compaction/summary`` (a completed compaction; its summarize call's usage is kept
  apart in ``compaction_tokens``), failed ones (``compaction/end`` with ``error``) and prunes
  (``compaction/prune``).

May import: the standard library, ``app.records`` (title, the token usage value) and the public ``persistence``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.records import NO_TOKENS, Tokens, latest_title
from persistence import EventLog, EventTable, EventType, PackedRun

UNKNOWN_TOOL = "(unknown tool)"  # a result whose call names no tool anywhere in the log
UNKNOWN_MODEL = "(unknown)"  # a usage sample with no model named before it


def _hashable(v: Any) -> Any:
    """A step number as a dict key (a damaged payload's list or object becomes its repr)."""
    return v if v is None or type(v) in (int, float, str, bool) else repr(v)


@dataclass(frozen=True, slots=True)
class ToolStats:
    """Calls of one tool and how many of them ended in an error."""

    name: str
    calls: int
    errors: int

    @property
    def error_rate(self) -> float:
        """errors / calls (0.0 for a tool never called)."""
        return self.errors / self.calls if self.calls else 0.0


@dataclass(frozen=True, slots=True)
class ModelStats:
    """One model's share of a session: the calls it answered and the tokens of the steps it ran."""

    provider: str
    model: str
    calls: int
    tokens: Tokens

    @property
    def key(self) -> str:
        """``provider/model`` (how a price table names it)."""
        return f"{self.provider}/{self.model}" if self.provider else self.model


@dataclass(frozen=True, slots=True)
class TurnStats:
    """One turn's numbers: a bar of each per-turn chart (``start_seq`` selects it in the timeline)."""

    turn: Any  # the turn number as logged (None when the turn/start carries none)
    start_seq: int
    start_time: int | None
    end_time: int | None  # the turn/end's time; an open turn: the last event seen inside it
    reason: str | None  # turn/end reason kind; None while the turn is open
    steps: int
    model_calls: int
    retries: int
    tool_calls: int
    tool_errors: int
    tokens: Tokens

    @property
    def duration_ms(self) -> int:
        """Wall time of the turn in ms (0 when a time is missing)."""
        if self.start_time is None or self.end_time is None:
            return 0
        return max(0, self.end_time - self.start_time)

    @property
    def open(self) -> bool:
        return self.reason is None


@dataclass(frozen=True, slots=True)
class SessionStats:
    """What the Stats tab shows of one session (see the module docstring for what each number counts)."""

    events: int
    turns: int
    open_turns: int
    steps: int
    model_calls: int
    retries: int
    tool_calls: int
    tool_errors: int
    tools: tuple[ToolStats, ...]  # most called first
    tokens: Tokens
    models: tuple[ModelStats, ...]  # most tokens first
    compactions: int
    compactions_failed: int
    prunes: int
    compaction_tokens: Tokens
    first_time: int | None
    last_time: int | None
    active_ms: int  # sum of the turns' wall time
    per_turn: tuple[TurnStats, ...]
    end_reasons: tuple[tuple[str, int], ...]  # (turn/end reason kind, turns), most frequent first
    title: str | None = None
    fork_turn: int | None = None  # the last turn completed inside the first ``seed_length`` events

    @property
    def span_ms(self) -> int:
        """First to last event, in ms."""
        if self.first_time is None or self.last_time is None:
            return 0
        return max(0, self.last_time - self.first_time)

    # ------------------------------------------------------------ chart series

    def tokens_per_turn(self) -> tuple[tuple[int, Tokens], ...]:
        """(turn's start seq, its tokens) per turn: the stacked tokens chart (input, output, cache read/write)."""
        return tuple((t.start_seq, t.tokens) for t in self.per_turn)

    def duration_per_turn(self) -> tuple[tuple[int, int], ...]:
        """(turn's start seq, wall time in ms) per turn: the duration chart."""
        return tuple((t.start_seq, t.duration_ms) for t in self.per_turn)

    def calls_per_tool(self) -> tuple[tuple[str, int, int], ...]:
        """(tool, calls, errors), most called first: the tool chart."""
        return tuple((t.name, t.calls, t.errors) for t in self.tools)

    # ------------------------------------------------------------ JSON

    def to_summary(self) -> dict[str, Any]:
        """A JSON-able summary (the root cache keeps one per session; per-turn rows are kept apart)."""
        return {
            "events": self.events,
            "turns": self.turns,
            "openTurns": self.open_turns,
            "steps": self.steps,
            "modelCalls": self.model_calls,
            "retries": self.retries,
            "toolCalls": self.tool_calls,
            "toolErrors": self.tool_errors,
            "tools": {t.name: [t.calls, t.errors] for t in self.tools},
            "tokens": self.tokens.to_json(),
            "models": [
                {"provider": m.provider, "model": m.model, "calls": m.calls, "tokens": m.tokens.to_json()} for m in self.models
            ],
            "compactions": self.compactions,
            "compactionsFailed": self.compactions_failed,
            "prunes": self.prunes,
            "compactionTokens": self.compaction_tokens.to_json(),
            "firstTime": self.first_time,
            "lastTime": self.last_time,
            "activeMs": self.active_ms,
            "spanMs": self.span_ms,
            "endReasons": dict(self.end_reasons),
            "title": self.title,
            "forkTurn": self.fork_turn,
        }


# ---------------------------------------------------------------- the fold


@dataclass(slots=True)
class _Turn:
    turn: Any
    start_seq: int
    start_time: int | None
    end_time: int | None = None
    reason: str | None = None
    steps: int = 0
    model_calls: int = 0
    retries: int = 0
    tool_calls: int = 0
    tool_errors: int = 0


@dataclass(slots=True)
class _StepUsage:
    tokens: Tokens
    model: tuple[str, str] | None  # the answering model (from its assistant/message), once known
    route: tuple[str, str] | None  # the route in force when the sample was taken (fallback)


@dataclass(slots=True)
class _Fold:
    seed_length: int | None
    events: int = 0
    turns: list[_Turn] = field(default_factory=list)
    turn: _Turn | None = None
    step_key: tuple[int, Any] | None = None  # (turn slot, step number) of the open step
    steps: int = 0
    model_calls: int = 0
    retries: int = 0
    usage: dict[tuple[int, Any], _StepUsage] = field(default_factory=dict)
    route: tuple[str, str] | None = None
    calls_by_model: dict[tuple[str, str], int] = field(default_factory=dict)
    tool_names: dict[Any, str] = field(default_factory=dict)  # callId -> tool name
    started: set[Any] = field(default_factory=set)  # callIds with a tool/call
    tool_calls: dict[str, int] = field(default_factory=dict)
    tool_errors: dict[str, int] = field(default_factory=dict)
    compactions: int = 0
    compactions_failed: int = 0
    prunes: int = 0
    compaction_tokens: Tokens = NO_TOKENS
    first_time: int | None = None
    last_time: int | None = None
    end_reasons: dict[str, int] = field(default_factory=dict)
    fork_turn: int | None = None

    # ------------------------------------------------------------ helpers

    def _slot(self) -> int:
        """The index of the open turn in ``turns`` (-1 outside turns)."""
        return len(self.turns) - 1 if self.turn is not None else -1

    def _step_key(self, data: Any) -> tuple[int, Any]:
        """Where a usage sample belongs: the open step; else the step the payload names, in the open turn."""
        if self.step_key is not None:
            return self.step_key
        return (self._slot(), _hashable(data.get("step") if type(data) is dict else None))

    def _time(self, t: Any) -> None:
        if type(t) is int:
            if self.first_time is None:
                self.first_time = t
            self.last_time = t
            if self.turn is not None and self.turn.reason is None:
                self.turn.end_time = t

    # ------------------------------------------------------------ events

    def run(self, run: PackedRun) -> None:
        self.events += len(run)
        # The run's last member time (time0 plus its deltas) keeps an open turn's end current.
        self._time(run.time0 + sum(run.dt) if run.dt else run.time0)

    def record(self, index: int, rec: dict[str, Any]) -> None:
        self.events += 1
        self._time(rec.get("time"))
        etype = rec.get("type")
        data = rec.get("data")
        d: dict[str, Any] = data if type(data) is dict else {}
        if etype == EventType.ASSISTANT_CHUNK:
            chunk = d.get("chunk")
            if type(chunk) is dict and chunk.get("type") == "usage":
                self._sample(d, chunk.get("usage"), None)
            return
        handler = _HANDLERS.get(etype) if type(etype) is str else None
        if handler is not None:
            handler(self, index, rec, d)

    def _sample(self, data: dict[str, Any], usage: Any, model: tuple[str, str] | None) -> None:
        tokens = Tokens.from_usage(usage)
        key = self._step_key(data)
        prev = self.usage.get(key)
        if tokens is None:
            if prev is not None and model is not None:
                prev.model = model
            return
        self.usage[key] = _StepUsage(tokens, model if model is not None else (prev.model if prev else None), self.route)

    def turn_start(self, index: int, rec: dict[str, Any], d: dict[str, Any]) -> None:
        seq = rec.get("seq")
        t = rec.get("time")
        self.turn = _Turn(d.get("turn"), seq if type(seq) is int else index, t if type(t) is int else None)
        self.turn.end_time = self.turn.start_time
        self.turns.append(self.turn)
        self.step_key = None

    def turn_end(self, index: int, rec: dict[str, Any], d: dict[str, Any]) -> None:
        reason = d.get("reason")
        kind = reason.get("kind") if type(reason) is dict else None
        kind_text = str(kind) if kind is not None else "ended"
        self.end_reasons[kind_text] = self.end_reasons.get(kind_text, 0) + 1
        if self.seed_length is not None and index < self.seed_length and type(d.get("turn")) is int:
            self.fork_turn = d["turn"]
        if self.turn is not None:
            t = rec.get("time")
            self.turn.end_time = t if type(t) is int else self.turn.end_time
            self.turn.reason = kind_text
            self.turn = None
        self.step_key = None

    def step_start(self, _index: int, _rec: dict[str, Any], d: dict[str, Any]) -> None:
        self.steps += 1
        if self.turn is not None:
            self.turn.steps += 1
        self.step_key = (self._slot(), _hashable(d.get("step")))

    def step_end(self, _index: int, _rec: dict[str, Any], _d: dict[str, Any]) -> None:
        self.step_key = None

    def route_context(self, _index: int, _rec: dict[str, Any], d: dict[str, Any]) -> None:
        provider, model = d.get("provider"), d.get("model")
        if isinstance(model, str) and model:
            self.route = (provider if isinstance(provider, str) else "", model)

    def route_header(self, _index: int, _rec: dict[str, Any], d: dict[str, Any]) -> None:
        header = d.get("header")
        config = header.get("config") if type(header) is dict else None
        if type(config) is dict:
            self.route_context(_index, _rec, config)

    def assistant(self, _index: int, _rec: dict[str, Any], d: dict[str, Any]) -> None:
        self.model_calls += 1
        if self.turn is not None:
            self.turn.model_calls += 1
        msg = d.get("message")
        source = msg.get("source") if type(msg) is dict else None
        model: tuple[str, str] | None = None
        if type(source) is dict and isinstance(source.get("model"), str):
            provider = source.get("provider")
            model = (provider if isinstance(provider, str) else "", source["model"])
        counted = model or self.route or ("", UNKNOWN_MODEL)
        self.calls_by_model[counted] = self.calls_by_model.get(counted, 0) + 1
        content = msg.get("content") if type(msg) is dict else None
        if type(content) is list:
            for block in content:
                if type(block) is dict and block.get("type") == "tool-call" and isinstance(block.get("name"), str):
                    with contextlib.suppress(TypeError):  # an unhashable id (a damaged payload) names nothing
                        self.tool_names.setdefault(block.get("id"), block["name"])
        self._sample(d, d.get("usage"), model)

    def retry(self, _index: int, _rec: dict[str, Any], _d: dict[str, Any]) -> None:
        self.retries += 1
        if self.turn is not None:
            self.turn.retries += 1

    def _count_call(self, name: str) -> None:
        self.tool_calls[name] = self.tool_calls.get(name, 0) + 1
        if self.turn is not None:
            self.turn.tool_calls += 1

    def tool_call(self, _index: int, _rec: dict[str, Any], d: dict[str, Any]) -> None:
        call_id = d.get("callId")
        name = d.get("name")
        if isinstance(name, str):
            try:
                self.tool_names[call_id] = name
            except TypeError:  # an unhashable callId (a damaged payload) names nothing
                pass
        else:
            name = self._name_of(call_id)
        self._mark_started(call_id)
        self._count_call(name)

    def _name_of(self, call_id: Any) -> str:
        try:
            return self.tool_names.get(call_id, UNKNOWN_TOOL)
        except TypeError:
            return UNKNOWN_TOOL

    def _mark_started(self, call_id: Any) -> None:
        try:
            self.started.add(call_id)
        except TypeError:
            pass

    def tool_result(self, _index: int, rec: dict[str, Any], d: dict[str, Any]) -> None:
        if type(rec.get("surfaceOp")) is dict:  # a pruning replacement, not a result (§6.2)
            return
        msg = d.get("message")
        blocks = msg.get("content") if type(msg) is dict else None
        first = blocks[0] if type(blocks) is list and blocks and type(blocks[0]) is dict else {}
        source = msg.get("source") if type(msg) is dict else None
        call_id = source.get("callId") if type(source) is dict else None
        if call_id is None:
            call_id = first.get("toolCallId")
        name = self._name_of(call_id)
        try:
            had_call = call_id in self.started
        except TypeError:
            had_call = False
        if not had_call:  # a result without its call (crash repair's TOOL_NOT_STARTED) is still a call
            self._mark_started(call_id)
            self._count_call(name)
        if first.get("isError") is True or d.get("error") is not None:
            self.tool_errors[name] = self.tool_errors.get(name, 0) + 1
            if self.turn is not None:
                self.turn.tool_errors += 1

    def compaction_summary(self, _index: int, _rec: dict[str, Any], d: dict[str, Any]) -> None:
        self.compactions += 1
        tokens = Tokens.from_usage(d.get("usage"))
        if tokens is not None:
            self.compaction_tokens = self.compaction_tokens + tokens

    def compaction_end(self, _index: int, _rec: dict[str, Any], d: dict[str, Any]) -> None:
        if d.get("error") is not None:
            self.compactions_failed += 1

    def compaction_prune(self, _index: int, _rec: dict[str, Any], _d: dict[str, Any]) -> None:
        self.prunes += 1

    # ------------------------------------------------------------ result

    def result(self, title: str | None) -> SessionStats:
        per_turn_tokens: dict[int, Tokens] = {}
        by_model: dict[tuple[str, str], Tokens] = {}
        total = NO_TOKENS
        for (slot, _step), su in self.usage.items():
            total = total + su.tokens
            if slot >= 0:
                per_turn_tokens[slot] = per_turn_tokens.get(slot, NO_TOKENS) + su.tokens
            model = su.model or su.route or ("", UNKNOWN_MODEL)
            by_model[model] = by_model.get(model, NO_TOKENS) + su.tokens
        per_turn = tuple(
            TurnStats(
                t.turn,
                t.start_seq,
                t.start_time,
                t.end_time,
                t.reason,
                t.steps,
                t.model_calls,
                t.retries,
                t.tool_calls,
                t.tool_errors,
                per_turn_tokens.get(slot, NO_TOKENS),
            )
            for slot, t in enumerate(self.turns)
        )
        names = set(self.tool_calls) | set(self.tool_errors)
        tools = tuple(
            sorted(
                (ToolStats(n, self.tool_calls.get(n, 0), self.tool_errors.get(n, 0)) for n in names),
                key=lambda s: (-s.calls, s.name),
            )
        )
        models = tuple(
            sorted(
                (
                    ModelStats(p, m, self.calls_by_model.get((p, m), 0), by_model.get((p, m), NO_TOKENS))
                    for p, m in set(by_model) | set(self.calls_by_model)
                ),
                key=lambda s: (-s.tokens.total, -s.calls, s.key),
            )
        )
        return SessionStats(
            events=self.events,
            turns=len(self.turns),
            open_turns=sum(1 for t in self.turns if t.reason is None),
            steps=self.steps,
            model_calls=self.model_calls,
            retries=self.retries,
            tool_calls=sum(self.tool_calls.values()),
            tool_errors=sum(self.tool_errors.values()),
            tools=tools,
            tokens=total,
            models=models,
            compactions=self.compactions,
            compactions_failed=self.compactions_failed,
            prunes=self.prunes,
            compaction_tokens=self.compaction_tokens,
            first_time=self.first_time,
            last_time=self.last_time,
            active_ms=sum(t.duration_ms for t in per_turn),
            per_turn=per_turn,
            end_reasons=tuple(sorted(self.end_reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
            title=title,
            fork_turn=self.fork_turn,
        )


_Handler = Callable[[_Fold, int, dict[str, Any], dict[str, Any]], None]

# One handler per event type the statistics read; every other type only counts as an event.
_HANDLERS: dict[str, _Handler] = {
    EventType.TURN_START: _Fold.turn_start,
    EventType.TURN_END: _Fold.turn_end,
    EventType.STEP_START: _Fold.step_start,
    EventType.STEP_END: _Fold.step_end,
    EventType.REQUEST_CONTEXT: _Fold.route_context,
    EventType.REQUEST_HEADER: _Fold.route_header,
    EventType.ASSISTANT_MESSAGE: _Fold.assistant,
    EventType.LLM_RETRY: _Fold.retry,
    EventType.TOOL_CALL: _Fold.tool_call,
    EventType.TOOL_RESULT: _Fold.tool_result,
    EventType.COMPACTION_SUMMARY: _Fold.compaction_summary,
    EventType.COMPACTION_END: _Fold.compaction_end,
    EventType.COMPACTION_PRUNE: _Fold.compaction_prune,
}


def table_of_log(events: EventLog | Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
    """The records to walk: an ``EventLog``'s read-only table (O(1), runs stay packed), else the sequence."""
    return events.record_table() if isinstance(events, EventLog) else events


def fold_stats(events: EventLog | Sequence[dict[str, Any]], *, seed_length: int | None = None) -> SessionStats:
    """The statistics of a session's events (an ``EventLog``, its ``record_table()`` or a list of records).

    ``seed_length`` (the header's, for a fork or subagent) also finds the fork point: the last turn
    completed inside the inherited prefix (``SessionStats.fork_turn``).  Never mutates a record.
    """
    records = table_of_log(events)
    fold = _Fold(seed_length if type(seed_length) is int else None)
    record = fold.record
    if isinstance(records, EventTable):
        index = 0
        for item in records.segments():
            if type(item) is PackedRun:
                fold.run(item)
                index += len(item)
            else:
                record(index, item)  # type: ignore[arg-type]  # a scalar item is a record
                index += 1
    else:
        for index in range(len(records)):
            rec = records[index]
            if type(rec) is dict:
                record(index, rec)
            else:
                fold.events += 1
    return fold.result(latest_title(records))


__all__ = [
    "NO_TOKENS",
    "UNKNOWN_MODEL",
    "UNKNOWN_TOOL",
    "ModelStats",
    "SessionStats",
    "Tokens",
    "ToolStats",
    "TurnStats",
    "fold_stats",
    "table_of_log",
]
