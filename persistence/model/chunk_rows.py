"""Packed storage rows for runs of ``assistant/chunk`` delta events (jsonl-backend §7).

A row is storage vocabulary only: it never appears in a session's events.  Rows are
formed per write batch; readers validate a row once and keep it packed as a ``PackedRun``
(``validate_row``), whose members are the canonical events, built when touched.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import orjson

from persistence.model.jsontext import MAX_SAFE_INTEGER, all_strings, is_nonneg_safe_integer, is_number, is_safe_integer
from persistence.model.packed_run import PackedRun, make_run

MIN_RUN = 3  # chunk events: a shorter run stays verbatim (jsonl-backend §0 "Packed-run minimum")
ROW_TAGS = ("text-chunks", "reasoning-chunks", "tool-call-chunks")
_ROW_TAG_SET = frozenset(ROW_TAGS)
_KIND_TAG = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks", "tool-call-delta": "tool-call-chunks"}
_TAG_KIND = {v: k for k, v in _KIND_TAG.items()}
_ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data"})
_DATA_KEYS = frozenset({"turn", "step", "chunk"})
_TEXT_KEYS = frozenset({"type", "index", "text"})
_TOOL_KEYS = frozenset({"type", "index", "id", "argumentsDelta"})
_TOOL_KEYS_NAMED = frozenset({"type", "index", "id", "name", "argumentsDelta"})
_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_INT_ONLY = frozenset({int})
_DIGITS_AND_COMMAS = b"0123456789,"
# The keys of a chunk row's ``data`` object (JSONL rows and SQLite packed rows hold the same object).
TOOL_DATA_KEYS_NAMED = frozenset({"turn", "step", "index", "id", "name", "dt", "args"})
TOOL_DATA_KEYS = frozenset({"turn", "step", "index", "id", "dt", "args"})
TEXT_DATA_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})


class MalformedRowError(ValueError):
    """A packed chunk row that breaks the row rules (jsonl-backend §7.4)."""

    pass


def classify(event: dict[str, Any]) -> str | None:
    """The delta kind of a packable event, or None when it must stay verbatim."""
    if event.get("type") != "assistant/chunk" or event.keys() != _ENVELOPE_KEYS:
        return None
    seq = event["seq"]
    if not (is_nonneg_safe_integer(seq) and is_safe_integer(event["time"])):
        return None
    data = event["data"]
    if type(data) is not dict or data.keys() != _DATA_KEYS:
        return None
    if not (is_number(data["turn"]) and is_number(data["step"])):
        return None
    chunk = data["chunk"]
    if type(chunk) is not dict or not is_number(chunk.get("index")):
        return None
    kind = chunk.get("type")
    if kind == "text-delta" or kind == "reasoning-delta":
        if chunk.keys() == _TEXT_KEYS and type(chunk["text"]) is str:
            return kind
        return None
    if kind == "tool-call-delta":
        keys = chunk.keys()
        if keys == _TOOL_KEYS or (keys == _TOOL_KEYS_NAMED and type(chunk["name"]) is str):
            if type(chunk["id"]) is str and type(chunk["argumentsDelta"]) is str:
                return kind
    return None


def continues(kind: str, prev: dict[str, Any], nxt: dict[str, Any]) -> bool:
    """Whether ``nxt`` extends the run of ``prev`` (same kind, turn, step and index; next seq)."""
    if nxt["seq"] != prev["seq"] + 1 or abs(nxt["time"] - prev["time"]) > MAX_SAFE_INTEGER:
        return False
    pd, nd = prev["data"], nxt["data"]
    if pd["turn"] != nd["turn"] or pd["step"] != nd["step"]:
        return False
    pc, nc = pd["chunk"], nd["chunk"]
    if pc["index"] != nc["index"]:
        return False
    if kind == "tool-call-delta":
        if pc["id"] != nc["id"] or ("name" in pc) != ("name" in nc) or pc.get("name") != nc.get("name"):
            return False
    return True


def _int(v: Any) -> Any:
    return int(v) if type(v) is float else v


def build_row(kind: str, members: list[dict[str, Any]]) -> dict[str, Any]:
    """The packed row of a run of chunk events of one kind."""
    first = members[0]
    fd = first["data"]
    fc = fd["chunk"]
    times = [_int(m["time"]) for m in members]
    dt = [times[i + 1] - times[i] for i in range(len(times) - 1)]
    data: dict[str, Any] = {"turn": fd["turn"], "step": fd["step"], "index": fc["index"], "dt": dt}
    if kind == "tool-call-delta":
        data["id"] = fc["id"]
        if "name" in fc:
            data["name"] = fc["name"]
        data["args"] = [m["data"]["chunk"]["argumentsDelta"] for m in members]
    else:
        data["texts"] = [m["data"]["chunk"]["text"] for m in members]
    return {"type": _KIND_TAG[kind], "seq0": _int(first["seq"]), "time0": times[0], "data": data}


def pack_runs(
    events: list[dict[str, Any]], *, max_members: int | None = None, max_bytes_check: Any = None
) -> list[dict[str, Any]]:
    """Storage records for one batch: eligible runs of >= 3 become rows, the rest stay verbatim.

    ``max_members``/``max_bytes_check`` let the SQLite codec bound rows; JSONL has no cap.
    """
    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    run_kind: str | None = None

    def flush() -> None:
        if run_kind is None:
            return
        if len(run) >= MIN_RUN:
            if max_members is None:
                out.append(build_row(run_kind, run))
            else:
                for start in range(0, len(run), max_members):
                    piece = run[start : start + max_members]
                    if len(piece) >= MIN_RUN:
                        out.append(build_row(run_kind, piece))
                    else:
                        out.extend(piece)
        else:
            out.extend(run)

    for ev in events:
        kind = classify(ev)
        if kind is None:
            flush()
            run, run_kind = [], None
            out.append(ev)
            continue
        if kind == run_kind and continues(kind, run[-1], ev):
            run.append(ev)
            continue
        flush()
        run, run_kind = [ev], kind
    flush()
    return out


def _bad(tag: str, why: str) -> MalformedRowError:
    return MalformedRowError(f"malformed {tag} storage row: {why}")


def deltas_proven(dt: list[Any], time0: int, n: int) -> bool:
    """Whether ``dt`` passes every delta check at once: ``n - 1`` non-negative ints whose sum keeps the
    last member time safe.  Then each delta is at most the sum, and member times rise from the safe
    ``time0`` to ``time0 + sum``.  False proves nothing: the full checks run and name the fault.

    Shown in C: orjson writes the list back (``true``, ``null``, ``1.5``, ``-3``, ``"x"`` and nested
    containers all leave a character besides digits and commas), then one ``sum``.  Why: the
    per-delta type set and ``max``/``min`` cost ~7 us of a 144-member row's 10.5 us; the 2,859 rows
    of the 202k-event log spent 30 ms there (issue 25).
    """
    if len(dt) != n - 1:
        return False
    try:
        text = orjson.dumps(dt)
    except orjson.JSONEncodeError:  # an int beyond 64 bits
        return False
    if text.translate(None, _DIGITS_AND_COMMAS) != b"[]":
        return False
    total = sum(dt)
    return total <= MAX_SAFE_INTEGER and time0 + total <= MAX_SAFE_INTEGER


def _canonical_run(row: dict[str, Any]) -> PackedRun | None:
    """The run of a row in the form writers produce (int fields, exact keys, non-negative deltas),
    checked in one straight pass; None for anything else, which ``validate_row``'s full checks then
    judge (and name).  Whatever this accepts, the full checks accept as the same run.

    Why: the full checks' generic predicates cost ~7 us a row; the 2,859 rows of the 202k-event log
    are the largest share of a read beyond parsing (issue 25).
    """
    if row.keys() != _ROW_KEYS:
        return None
    seq0, time0, data = row["seq0"], row["time0"], row["data"]
    if type(seq0) is not int or type(time0) is not int or type(data) is not dict:
        return None
    if seq0 < 0 or not -MAX_SAFE_INTEGER <= time0 <= MAX_SAFE_INTEGER:
        return None
    tag = row["type"]
    kind = _TAG_KIND.get(tag) if type(tag) is str else None
    return None if kind is None else run_of_data(kind, seq0, time0, data)


def run_of_data(kind: str, seq0: int, time0: int, data: dict[str, Any]) -> PackedRun | None:
    """The run a chunk row's ``data`` object holds in writers' form (exact keys, integer turn, step and
    index, string id and name, a non-empty list of strings, deltas proven by ``deltas_proven``), for a
    row whose ``kind``, ``seq0`` and ``time0`` the caller has checked; None for anything else.

    Both straight passes read it: a JSONL row's (``_canonical_run``) and a SQLite packed row's
    (``sqlite.straight_scan``), which adds its own bounds on the run it gets.
    """
    call_id = name = None
    keys = data.keys()
    if kind == "tool-call-delta":
        if keys == TOOL_DATA_KEYS_NAMED:
            name = data["name"]
            if type(name) is not str:
                return None
        elif keys != TOOL_DATA_KEYS:
            return None
        call_id = data["id"]
        if type(call_id) is not str:
            return None
        payload = data["args"]
    elif keys == TEXT_DATA_KEYS:
        payload = data["texts"]
    else:
        return None
    turn, step, index = data["turn"], data["step"], data["index"]
    if type(turn) is not int or type(step) is not int or type(index) is not int:
        return None
    if type(payload) is not list or not payload:
        return None
    try:
        "".join(payload)  # only strings join (see all_strings)
    except TypeError:
        return None
    dt = data["dt"]
    n = len(payload)
    if type(dt) is not list or not deltas_proven(dt, time0, n) or seq0 + n - 1 > MAX_SAFE_INTEGER:
        return None
    return make_run(kind, seq0, time0, tuple(dt), turn, step, index, tuple(payload), call_id, name)


def validate_row(row: dict[str, Any]) -> PackedRun:
    """Validate a stored row (jsonl-backend §7.4) once, at row level, and keep it packed.

    Its members are valid events by construction: the row's shape fixes their envelope and
    chunk keys, and the checks below bound their seqs and times.  A row in writers' form takes
    ``_canonical_run``'s straight pass; deltas are first tried on the fast proof
    (``deltas_proven``); the outcome is the same either way.
    """
    run = _canonical_run(row)
    if run is not None:
        return run
    tag = row["type"]
    if row.keys() != _ROW_KEYS:
        raise _bad(tag, "envelope must be exactly {type, seq0, time0, data}")
    seq0, time0, data = row["seq0"], row["time0"], row["data"]
    if not is_nonneg_safe_integer(seq0):
        raise _bad(tag, "seq0 must be a non-negative safe integer")
    if not is_safe_integer(time0):
        raise _bad(tag, "time0 must be a safe integer")
    if not isinstance(data, (dict, list)):
        raise _bad(tag, "data must be an object")
    is_tool = tag == "tool-call-chunks"
    keys = data.keys() if isinstance(data, dict) else set()
    if is_tool:
        if keys != TOOL_DATA_KEYS_NAMED and keys != TOOL_DATA_KEYS:
            raise _bad(tag, "data must be exactly {turn, step, index, id, name?, dt, args}")
        assert isinstance(data, dict)  # a list has no keys: it was refused just above
        if type(data["id"]) is not str or ("name" in data and type(data["name"]) is not str):
            raise _bad(tag, "id (and name when present) must be strings")
    elif keys != TEXT_DATA_KEYS:
        raise _bad(tag, "data must be exactly {turn, step, index, dt, texts}")
    else:
        assert isinstance(data, dict)  # a list has no keys: it was refused just above
    turn, step, index = data["turn"], data["step"], data["index"]
    if not (_number(turn) and _number(step) and _number(index)):
        raise _bad(tag, "turn/step/index must be numbers")
    payload_key = "args" if is_tool else "texts"
    payload = data[payload_key]
    if type(payload) is not list or not payload or not all_strings(payload):
        raise _bad(tag, f"{payload_key} must be a non-empty string array")
    dt = data["dt"]
    if type(dt) is not list:
        raise _bad(tag, "dt must be an array of safe integers")
    n = len(payload)
    if deltas_proven(dt, int(time0), n):
        seq0 = int(seq0)
        if seq0 + n - 1 > MAX_SAFE_INTEGER:
            raise _bad(tag, "member seqs must stay safe integers")
        return _packed(tag, seq0, int(time0), dt, turn, step, index, payload, data, is_tool)
    # set(map(type, ...)) and max/min run in C: a Python-level all() over 200k deltas cost ~20 ms per read.
    lo = hi = 0
    if set(map(type, dt)) <= _INT_ONLY:
        if dt:
            hi, lo = max(dt), min(dt)
            if hi > MAX_SAFE_INTEGER or lo < -MAX_SAFE_INTEGER:
                raise _bad(tag, "dt must be an array of safe integers")
    elif not all(is_safe_integer(v) for v in dt):
        raise _bad(tag, "dt must be an array of safe integers")
    else:
        dt = [int(d) for d in dt]
        hi, lo = max(dt), min(dt)
    n = len(payload)
    if len(dt) != n - 1:
        raise _bad(tag, f"dt length {len(dt)} does not match {n} members")
    seq0 = int(seq0)
    if seq0 + n - 1 > MAX_SAFE_INTEGER:
        raise _bad(tag, "member seqs must stay safe integers")
    time0 = int(time0)
    # Every member time lies within time0 + k*min(dt) .. time0 + k*max(dt): when those bounds are safe,
    # so is every time, and the exact sums (2 us a row) are left to whoever builds the members.
    span = n - 1
    if not (-MAX_SAFE_INTEGER <= time0 + span * min(lo, 0) and time0 + span * max(hi, 0) <= MAX_SAFE_INTEGER):
        times = list(accumulate(dt, initial=time0))
        if max(times) > MAX_SAFE_INTEGER or min(times) < -MAX_SAFE_INTEGER:
            raise _bad(tag, "member times must stay safe integers")
    return _packed(tag, seq0, time0, dt, turn, step, index, payload, data, is_tool)


def _packed(
    tag: str, seq0: int, time0: int, dt: list[int], turn: Any, step: Any, index: Any, payload: list[str], data: Any, is_tool: bool
) -> PackedRun:
    if is_tool:
        return PackedRun(_TAG_KIND[tag], seq0, time0, tuple(dt), turn, step, index, tuple(payload), data["id"], data.get("name"))
    return PackedRun(_TAG_KIND[tag], seq0, time0, tuple(dt), turn, step, index, tuple(payload))


def _number(v: Any) -> bool:
    return type(v) is int or is_number(v)


def expand_row(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Validate a row (jsonl-backend §7.4) and expand it into member events."""
    return validate_row(row).members()


def decode_storage_record(value: Any) -> list[Any]:
    """One stored record -> the events it stands for (non-rows pass through unchanged)."""
    if type(value) is dict and value.get("type") in _ROW_TAG_SET:
        return expand_row(value)
    return [value]
