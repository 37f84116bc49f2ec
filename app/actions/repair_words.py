"""A repair preview in the user's words: which events of which turn are lost and which turn is closed, before
any byte count (issue 24 item 8).

"damaged tail after byte/row 4893 will be cut" told a user nothing they could weigh.  ``story`` says what the
repair does to the conversation ("Cuts the last 1,177 bytes: events 211–214 of turn 7 (a tool result and the
step's end) are lost; turn 7 is closed as interrupted"), ``lost_lines`` lists each lost event (seq, what it is,
a short summary).  The window's repair dialog and ``sessionscope repair --dry-run`` both print these.

Qt-free; may import ``app.glossary``, ``app.records`` and the engine's public values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.glossary import BYTE, EVENT, ROW, event_words, listing, noun, plural, seq_ranges
from app.records.fields import get_path
from app.records.summaries import compact_json, content_text, one_line, tool_arguments_summary
from persistence import EventType, LostRecord

SUMMARY_CHARS = 80  # of a lost event's summary: one line of a dialog or a terminal


@dataclass(frozen=True, slots=True)
class LostEvent:
    """One event a repair destroys, as the preview shows it."""

    seq: int | None
    type: str | None
    turn: int | None  # the turn it belonged to (its own, or the open turn's when it cannot be read)
    summary: str  # a short line of what it held; "" when nothing of it can be read
    complete: bool  # False: the write stopped inside it (or its bytes are damaged)

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "type": self.type, "turn": self.turn, "summary": self.summary, "complete": self.complete}


def _turn_of(record: dict[str, Any] | None) -> int | None:
    turn = get_path(record, "data", "turn") if record is not None else None
    return turn if type(turn) is int else None


def event_summary(record: dict[str, Any] | None) -> str:
    """A short line of what an event held (the tool and its arguments, the text of a message or result)."""
    if record is None:
        return ""
    etype = record.get("type")
    data = record.get("data")
    if etype == EventType.TOOL_CALL:
        name = get_path(data, "name")
        return one_line(f"{name or 'tool'} {tool_arguments_summary(get_path(data, 'arguments'))}", SUMMARY_CHARS)
    if etype == EventType.TOOL_RESULT:
        return one_line(content_text(get_path(data, "message", "content")), SUMMARY_CHARS)
    if etype in (EventType.USER_MESSAGE, EventType.ASSISTANT_MESSAGE):
        return one_line(content_text(get_path(data, "content")), SUMMARY_CHARS)
    if etype == EventType.ASSISTANT_CHUNK:
        delta = get_path(data, "delta")
        return one_line(delta, SUMMARY_CHARS) if isinstance(delta, str) else ""
    if isinstance(data, dict):
        # The turn and step numbers are said elsewhere ("of turn 7"); anything else the event holds is shown.
        rest = {k: v for k, v in data.items() if k not in ("turn", "step")}
        return compact_json(rest, SUMMARY_CHARS) if rest else ""
    return ""


def lost_events(lost: tuple[LostRecord, ...], open_turn: int | None) -> tuple[LostEvent, ...]:
    """The engine's lost records as the preview shows them; a record whose turn cannot be read belongs to the
    turn open at the cut (``open_turn``), or to the turn a lost ``turn/start`` before it opened."""
    out: list[LostEvent] = []
    turn = open_turn
    for r in lost:
        own = _turn_of(r.record)
        if own is not None:
            turn = own
        out.append(LostEvent(r.seq, r.type, turn, event_summary(r.record), r.complete))
    return tuple(out)


def _turns_phrase(turns: list[int]) -> str:
    if not turns:
        return ""
    if len(turns) == 1:
        return f" of turn {turns[0]:,}"
    return f" of turns {listing([f'{t:,}' for t in turns])}"


def _what_phrase(events: tuple[LostEvent, ...]) -> str:
    """(a tool result and the step's end): the kinds in order, each once."""
    kinds: list[str] = []
    for e in events:
        words = event_words(e.type)
        if words not in kinds:
            kinds.append(words)
    return f" ({listing(kinds)})" if kinds else ""


def lost_phrase(events: tuple[LostEvent, ...]) -> str:
    """``events 211–214 of turn 7 (a tool result and the step's end) are lost``."""
    n = len(events)
    seqs = [e.seq for e in events if e.seq is not None]
    turns = sorted({e.turn for e in events if e.turn is not None})
    if len(seqs) == n:
        who = f"{noun(n, EVENT)} {seq_ranges(seqs)}"
    else:
        who = plural(n, EVENT) if n > 1 else "an event"
    return f"{who}{_turns_phrase(turns)}{_what_phrase(events)} {noun(n, 'is')} lost"


def closed_turn(closers: tuple[dict[str, Any], ...]) -> int | None:
    """The turn the synthetic closers end (None when there are none or they do not say)."""
    for c in reversed(closers):
        if c.get("type") == EventType.TURN_END:
            return _turn_of(c)
    return _turn_of(closers[-1]) if closers else None


def _amount(n: int, unit: str) -> str:
    """``row`` for one ("the last row"), ``1,177 bytes`` for more."""
    return unit if n == 1 else plural(n, unit)


def story(
    *,
    kind: str,
    cut_bytes: int | None,
    cut_rows: int | None,
    lost: tuple[LostEvent, ...],
    recovered: int,
    closers: tuple[dict[str, Any], ...],
) -> str:
    """What the repair does to the conversation, in one sentence, before any byte count.

    ``kind``: the artifact kind (``jsonl`` or ``sqlite``): a transcript loses bytes, a store rows."""
    parts: list[str] = []
    if cut_rows and kind == "sqlite":
        head = f"Deletes the last {_amount(cut_rows, ROW)}"
    elif cut_bytes:
        head = f"Cuts the last {_amount(cut_bytes, BYTE)}"
    else:
        head = "Nothing is cut"
    if lost:
        parts.append(lost_phrase(lost))
    elif cut_bytes or cut_rows:
        parts.append("what they held cannot be decoded (an incomplete write) and is lost")
    if recovered:
        parts.append(f"{plural(recovered, 'complete event')} read from the damaged tail {noun(recovered, 'is')} kept")
    if closers:
        turn = closed_turn(closers)
        which = f"turn {turn:,}" if turn is not None else "the open turn"
        added = listing([event_words(c.get("type")) for c in closers])
        parts.append(f"{which} is closed as interrupted ({plural(len(closers), 'synthetic event')} appended: {added})")
    if not parts:
        return "Nothing would change: the log is balanced."
    return f"{head}: " + "; ".join(parts) + "."


def lost_lines(lost: tuple[LostEvent, ...], kind: str = "jsonl") -> list[str]:
    """One line per lost event: ``seq 213 · a tool result · bash: exit 1``; one that does not decode says why
    (a transcript's write stopped inside it; a SQLite row is damaged)."""
    broken = "damaged" if kind == "sqlite" else "cut off mid-write"
    out = []
    for e in lost:
        seq = f"seq {e.seq:,}" if e.seq is not None else "seq ?"
        what = event_words(e.type)
        tail = e.summary if e.complete else broken + (f": {e.summary}" if e.summary else "")
        out.append(f"{seq} · {what}" + (f" · {tail}" if tail else ""))
    return out


__all__ = ["LostEvent", "closed_turn", "event_summary", "lost_events", "lost_lines", "lost_phrase", "story"]
