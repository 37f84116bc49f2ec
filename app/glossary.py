"""The words the app shows, in one place: every status, damage kind, unit and number format (issue 24 item 4).

Why a module of its own: the window, the command line and the exports were each naming the same thing their own
way (an open turn was "open turn · live", "live — a writer is active" and "not closed (running or crashed)"; one
damage "frame at byte 2465", "frame 3 at byte 2,465" and "frame at file offset 2465"; "1 sessions", "turn(s)").
A user who reads one name in the list and another in the banner cannot tell they are the same fact. Everything
user-visible takes its nouns, plurals and number formats from here; ``tests/records/test_glossary.py`` walks the
app's strings for the old variants.

Qt-free on purpose (plain values and ``str`` in, ``str`` out; from the engine only the ``EventType`` catalog):
the command line, the exports and every window layer import it.
"""

from __future__ import annotations

import re
from typing import Final

from persistence import EventType

# ---------------------------------------------------------------- numbers


def number(n: int) -> str:
    """A count the one way the app writes counts: thousands separated by commas (``2,465``)."""
    return f"{n:,}"


def at_byte(offset: int) -> str:
    """A position in a file: ``byte 2,465`` (a 0-based file offset; never "file offset", never a bare number)."""
    return f"byte {offset:,}"


def size(n: int | None) -> str:
    """A file or record size: ``512 B``, ``1.5 KB``, ``2.0 MB``, ``1.25 GB`` (binary multiples); "" when unknown."""
    if n is None:
        return ""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    if n < 1024**3:
        return f"{n / 1024 / 1024:.1f} MB"
    return f"{n / 1024**3:.2f} GB"


# ---------------------------------------------------------------- plurals

# Nouns whose plural is not the regular one the rules below make.
_IRREGULAR: Final[dict[str, str]] = {
    "child": "children",
    "is": "are",
    "was": "were",
    "this": "these",
    "that": "those",
}


def plural_of(word: str) -> str:
    """The plural of an English noun: ``session`` -> ``sessions``, ``entry`` -> ``entries``, ``match`` -> ``matches``."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def noun(n: int, word: str, plural_word: str | None = None) -> str:
    """``word`` or its plural, as ``n`` calls for (the number itself left out): ``noun(3, "turn")`` -> ``turns``."""
    return word if n == 1 else (plural_word or plural_of(word))


def plural(n: int, word: str, plural_word: str | None = None) -> str:
    """``1 session``, ``2 sessions``, ``2,465 bytes``, ``0 entries``: never "session(s)", never "1 sessions"."""
    return f"{n:,} {noun(n, word, plural_word)}"


def listing(items: list[str] | tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``: a short enumeration in words."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


# ---------------------------------------------------------------- units

BYTE: Final = "byte"
EVENT: Final = "event"
TURN: Final = "turn"
SESSION: Final = "session"
PROJECT: Final = "project"
LINE: Final = "line"  # a JSONL record (a line of the transcript)
FRAME: Final = "frame"  # a zstd frame of a compressed JSONL transcript
ROW: Final = "row"  # a SQLite record
STEP: Final = "step"
CLOSER: Final = "synthetic closer"


def record_unit(kind: str) -> str:
    """The name of one stored record of a backend: ``row`` in SQLite, ``line`` in a JSONL transcript.

    ``kind`` is the artifact kind or backend name (``sqlite``, ``jsonl``, ``jsonl-zstd``, ``jsonl-none``)."""
    return ROW if kind.startswith("sqlite") else LINE


def records(n: int, kind: str) -> str:
    """``12 rows`` for a SQLite store, ``12 lines`` for a JSONL transcript."""
    return plural(n, record_unit(kind))


def tail_position(kind: str, position: int) -> str:
    """Where a damaged tail starts: ``byte 4,893`` in a transcript, ``row 4,893`` in SQLite (never "byte/row")."""
    return f"row {position:,}" if kind.startswith("sqlite") else at_byte(position)


# ---------------------------------------------------------------- statuses

# One display name per status a session can have (the keys are the engine's and the listing's status values).
STATUS_NAMES: Final[dict[str, str]] = {
    "pending": "…",
    "ok": "ok",
    "open-turn": "open turn",
    "torn-tail": "torn tail",
    "corrupt": "corrupt",
    "unsupported": "unsupported",
    "missing": "missing",
    "busy": "busy",
    "unreadable": "unreadable",
    "symlink": "symlink",
}

# An open turn is one status with three states: a writer is still at it (live), it has been quiet for the
# liveness guard's period (idle: a long silent call or a crash) or the guard found nothing running (crashed).
OPEN_TURN: Final = STATUS_NAMES["open-turn"]
OPEN_TURN_LIVE: Final = f"{OPEN_TURN} · live"
OPEN_TURN_IDLE: Final = f"{OPEN_TURN} · idle"
OPEN_TURN_CRASHED: Final = f"{OPEN_TURN} · crashed"
LIVE_MEANING: Final = "a writer is active"
IDLE_MEANING: Final = "no change for a while: a long silent call, or crashed"
CRASHED_MEANING: Final = "no writer is running: the turn will never finish"
# A turn without its end event, as the timeline's Info cell says it (it cannot tell live from crashed by itself).
OPEN_TURN_INFO: Final = f"{OPEN_TURN}: no end event yet (live or crashed)"
# An open turn that a damage cut short: the events after it cannot be read.
CUT_TURN_INFO: Final = "cut off by the damage below"

UNTITLED: Final = "(untitled)"


def status_name(status: str) -> str:
    """The one display name of a status value (an unknown value is shown as it is)."""
    return STATUS_NAMES.get(status, status)


def open_turn_name(state: str) -> str:
    """``open turn · live`` / ``open turn · idle`` / ``open turn · crashed`` for ``live``/``idle``/``crashed``."""
    return {"live": OPEN_TURN_LIVE, "idle": OPEN_TURN_IDLE, "crashed": OPEN_TURN_CRASHED}.get(state, OPEN_TURN)


# ---------------------------------------------------------------- damage kinds

# One name per kind of damage ``persistence.RawDamage`` reports (its ``kind`` values), and per kind of repair cut.
DAMAGE_NAMES: Final[dict[str, str]] = {
    "torn-line": "incomplete final line (torn tail)",
    "torn-frame": "incomplete final frame (torn tail)",
    "undecodable": "undecodable bytes",
    "undecodable-torn-frame": "undecodable incomplete frame",
    "bad-frame": "frame that fails to decode",
}


def damage_name(kind: str) -> str:
    """The one display name of a damage kind (an unknown kind is shown as it is)."""
    return DAMAGE_NAMES.get(kind, kind)


def damage_at(kind: str, offset: int, frame: int | None = None) -> str:
    """A damage and where it starts, the one way: ``frame 3 at byte 2,465`` / ``incomplete final line at byte 80``."""
    if kind == "bad-frame" and frame is not None and frame >= 0:
        return f"frame {frame:,} at {at_byte(offset)}"
    return f"{damage_name(kind)} at {at_byte(offset)}"


# ---------------------------------------------------------------- events in words

# What an event is, as a sentence names it ("events 211–214 (a tool result and the step's end) are lost").
EVENT_WORDS: Final[dict[str, str]] = {
    EventType.TURN_START: "the turn's start",
    EventType.TURN_END: "the turn's end",
    EventType.STEP_START: "a step's start",
    EventType.STEP_END: "the step's end",
    EventType.USER_MESSAGE: "a user message",
    EventType.ASSISTANT_MESSAGE: "an assistant message",
    EventType.ASSISTANT_CHUNK: "a piece of a streamed answer",
    EventType.TOOL_CALL: "a tool call",
    EventType.TOOL_RESULT: "a tool result",
    EventType.LLM_RETRY: "a model retry",
    EventType.LLM_RETRY_STARTED: "a model retry",
    EventType.APPROVAL_ASKED: "an approval request",
    EventType.APPROVAL_DECIDED: "an approval decision",
    EventType.COMMAND_RUN: "a command",
    EventType.COMMAND_DONE: "a command's outcome",
    EventType.COMPACTION_START: "a compaction's start",
    EventType.COMPACTION_END: "a compaction's end",
    EventType.COMPACTION_SUMMARY: "a compaction summary",
    EventType.SESSION_TITLE: "a title change",
    EventType.TODO_WRITE: "a to-do list update",
}


def event_words(event_type: str | None) -> str:
    """An event type in words ("a tool result"); an unknown type is named as it is stored, an unreadable one
    "an event"."""
    if not event_type:
        return "an event"
    return EVENT_WORDS.get(event_type, f"a {event_type} event")


def seq_ranges(seqs: list[int]) -> str:
    """``211–214``, ``211, 213 and 215–216``: sorted seqs with runs joined by an en dash."""
    runs: list[tuple[int, int]] = []
    for s in sorted(set(seqs)):
        if runs and s == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], s)
        else:
            runs.append((s, s))
    return listing([f"{a:,}" if a == b else f"{a:,}–{b:,}" for a, b in runs])


# The engine's own wording inside a decoder error ("corrupt Zstandard session log: frame at byte 79 failed
# validation"): the marker says where the damage is itself, so only what went wrong is kept.
_ENGINE_DETAIL = re.compile(r"^(?:corrupt (?:Zstandard )?session log: )?(?:frame at byte \d+ )?")


def _detail(message: str, after: str) -> str:
    tail = message.split(after, 1)[1] if after in message else message
    return _ENGINE_DETAIL.sub("", tail)


def damage_marker(kind: str, offset: int, size: int | None, message: str, frame: int | None = None) -> str:
    """The Raw tab's line in place of bytes that do not decode (``persistence.RawDamage``), in the app's words:
    ``frame 3 at byte 2,465 (102 bytes) failed to decode: failed validation``; a torn tail says so first."""
    n = size or 0
    if kind == "torn-line":
        return f"torn tail: an incomplete final line of {plural(n, BYTE)} at {at_byte(offset)} (not committed; a repair cuts it)"
    if kind == "torn-frame":
        where = damage_at("bad-frame", offset, frame) if frame else f"a frame at {at_byte(offset)}"
        return f"torn tail: {where} is incomplete ({plural(n, BYTE)}, not committed; a repair cuts it)"
    if kind == "bad-frame":
        where = damage_at("bad-frame", offset, frame) if frame else f"a frame at {at_byte(offset)}"
        return f"{where} ({plural(n, BYTE)}) failed to decode: {_detail(message, 'failed to decode: ')}"
    if kind == "undecodable":
        return f"undecodable bytes from {at_byte(offset)} on: {_detail(message, ': ')}"
    if kind == "undecodable-torn-frame":
        where = f"frame {frame:,}" if frame else "a frame"
        return f"undecodable incomplete {where} at {at_byte(offset)}: {_detail(message, ': ')}"
    return message


# ---------------------------------------------------------------- fields

# Header fields by their display name (the record keys stay as they are in JSON and in the Header tab's raw view).
FIELD_NAMES: Final[dict[str, str]] = {
    "createdAt": "Created",  # the list's column; lineage and the dashboard said "Started"
    "cwd": "Working folder",
    "parentSession": "Parent session",
    "seedLength": "Forked after",
    "agentPreset": "Agent preset",
    "delegationDepth": "Delegation depth",
}
CREATED: Final = FIELD_NAMES["createdAt"]


def field_name(key: str) -> str:
    """The display name of a header field (its JSON key when it has none)."""
    return FIELD_NAMES.get(key, key)


__all__ = [
    "BYTE",
    "CLOSER",
    "CRASHED_MEANING",
    "CREATED",
    "CUT_TURN_INFO",
    "DAMAGE_NAMES",
    "EVENT",
    "EVENT_WORDS",
    "FIELD_NAMES",
    "FRAME",
    "IDLE_MEANING",
    "LINE",
    "LIVE_MEANING",
    "OPEN_TURN",
    "OPEN_TURN_CRASHED",
    "OPEN_TURN_IDLE",
    "OPEN_TURN_INFO",
    "OPEN_TURN_LIVE",
    "PROJECT",
    "ROW",
    "SESSION",
    "STATUS_NAMES",
    "STEP",
    "TURN",
    "UNTITLED",
    "at_byte",
    "damage_at",
    "damage_marker",
    "damage_name",
    "event_words",
    "field_name",
    "listing",
    "noun",
    "number",
    "open_turn_name",
    "plural",
    "plural_of",
    "record_unit",
    "records",
    "seq_ranges",
    "size",
    "status_name",
    "tail_position",
]
