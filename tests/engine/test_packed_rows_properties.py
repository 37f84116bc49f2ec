"""Property tests: packed-row validation and the per-buffer big-integer pre-check equal their eager references.

Why (issue 12): rows are now validated once at row level and kept packed.  ``validate_row`` (JSONL) and
``sqlite.rows.packed_run`` prove the member time range from the deltas' extremes instead of summing every
member, and the JSONL scanner runs one 16-digit scan per buffer instead of a regex per line.  Each
shortcut must raise exactly when, and with exactly the message, the eager rule does (jsonl-backend §7.4,
sqlite-backend §6.7: the message text is part of the contract), and must decode the same values.

The references below are written from the spec, not from the engine: they accumulate every member's
time and check each one, the way upstream's decoder does.
"""

from __future__ import annotations

import copy
import json
import marshal
import re
from typing import Any

import pytest
import zstandard
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from persistence.jsonl import lines as lines_module
from persistence.jsonl.lines import LineScanner
from persistence.model.chunk_rows import MalformedRowError, decode_storage_record, expand_row, validate_row
from persistence.model.jsontext import has_big_digits, js_loads, js_loads_small
from persistence.model.packed_run import PackedRun
from persistence.sqlite.errors import RowDecodeError
from persistence.sqlite.rows import expand_packed, packed_last_seq, packed_run

MAX = 2**53 - 1
TAG_KIND = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta", "tool-call-chunks": "tool-call-delta"}
TAGS = tuple(TAG_KIND)


class Refused(Exception):
    """The reference's verdict: the row is malformed, with this message."""


def js_safe(v: Any) -> bool:
    """JS ``Number.isSafeInteger`` (a bool is not a number; an integral double is an integer)."""
    if type(v) is int:
        return -MAX <= v <= MAX
    if type(v) is float:
        return v == v and v not in (float("inf"), float("-inf")) and v == int(v) and -MAX <= v <= MAX
    return False


def js_number(v: Any) -> bool:
    return type(v) is int or type(v) is float


def _chunk(kind: str, index: Any, text: str, call_id: Any = None, name: Any = None, has_name: bool = False) -> dict[str, Any]:
    if kind != "tool-call-delta":
        return {"type": kind, "index": index, "text": text}
    chunk = {"type": kind, "index": index, "id": call_id}
    if has_name:
        chunk["name"] = name
    chunk["argumentsDelta"] = text
    return chunk


def eager_members(
    kind: str, seq0: int, time0: int, dt: list[int], turn: Any, step: Any, index: Any, payload: list[str], **tool: Any
) -> list[dict[str, Any]]:
    """Expansion the eager way: every member's time is the running sum (jsonl §7.1, sqlite §6.6)."""
    out = []
    t = time0
    for k, text in enumerate(payload):
        if k:
            t += dt[k - 1]
        out.append(
            {
                "type": "assistant/chunk",
                "seq": seq0 + k,
                "time": t,
                "data": {"turn": turn, "step": step, "chunk": _chunk(kind, index, text, **tool)},
            }
        )
    return out


def _running_times_safe(time0: int, dt: list[int]) -> bool:
    t = time0
    for d in dt:
        t += d
        if not -MAX <= t <= MAX:
            return False
    return True


# ---------------------------------------------------------------- 3a. JSONL rows (jsonl-backend §7.4)


def reference_jsonl(row: dict[str, Any]) -> list[dict[str, Any]]:
    """jsonl-backend §7.4 checks 1-11 in order, times checked member by member; then §7.1 expansion."""
    tag = row["type"]

    def bad(why: str) -> Refused:
        return Refused(f"malformed {tag} storage row: {why}")

    if set(row) != {"type", "seq0", "time0", "data"}:
        raise bad("envelope must be exactly {type, seq0, time0, data}")
    seq0, time0, raw_data = row["seq0"], row["time0"], row["data"]
    if not (js_safe(seq0) and seq0 >= 0):
        raise bad("seq0 must be a non-negative safe integer")
    if not js_safe(time0):
        raise bad("time0 must be a safe integer")
    if not isinstance(raw_data, (dict, list)):
        raise bad("data must be an object")
    data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}  # a list has no keys: refused below
    keys = set(data)
    tool = tag == "tool-call-chunks"
    if tool:
        if keys not in ({"turn", "step", "index", "id", "name", "dt", "args"}, {"turn", "step", "index", "id", "dt", "args"}):
            raise bad("data must be exactly {turn, step, index, id, name?, dt, args}")
        if type(data["id"]) is not str or ("name" in data and type(data["name"]) is not str):
            raise bad("id (and name when present) must be strings")
    elif keys != {"turn", "step", "index", "dt", "texts"}:
        raise bad("data must be exactly {turn, step, index, dt, texts}")
    if not all(js_number(data[k]) for k in ("turn", "step", "index")):
        raise bad("turn/step/index must be numbers")
    field = "args" if tool else "texts"
    payload = data[field]
    if type(payload) is not list or not payload or not all(type(p) is str for p in payload):
        raise bad(f"{field} must be a non-empty string array")
    dt = data["dt"]
    if type(dt) is not list or not all(js_safe(d) for d in dt):
        raise bad("dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        raise bad(f"dt length {len(dt)} does not match {len(payload)} members")
    if int(seq0) + len(payload) - 1 > MAX:
        raise bad("member seqs must stay safe integers")
    ints = [int(d) for d in dt]
    if not _running_times_safe(int(time0), ints):
        raise bad("member times must stay safe integers")
    extra = {"call_id": data["id"], "name": data.get("name"), "has_name": "name" in data} if tool else {}
    return eager_members(TAG_KIND[tag], int(seq0), int(time0), ints, data["turn"], data["step"], data["index"], payload, **extra)


# dt values around the edges: +-2**53, mixed signs, integral floats, bools, huge ints, non-integers.
EDGE_INTS = [MAX, -MAX, MAX - 1, -(MAX - 1), MAX + 1, -(MAX + 1), 2**52, -(2**52), 2**52 + 1, 2**63, -(2**64), 10**30]
DT_VALUES = st.one_of(
    st.integers(-50, 50),
    st.sampled_from(EDGE_INTS),
    st.integers(-MAX - 2, MAX + 2),
    st.sampled_from([float(MAX), -float(MAX), 2.0**53, 3.0, -0.0, 0.0, 1e300]),
    st.sampled_from([0.5, float("nan"), float("inf"), True, False, None, "1"]),
)
SAFE_DT = st.one_of(st.integers(-50, 50), st.sampled_from([MAX, -MAX, MAX - 1, 2**52, -(2**52)]), st.integers(-MAX, MAX))
TIME0 = st.one_of(
    st.integers(-MAX, MAX),
    st.sampled_from([MAX, -MAX, MAX - 1, -(MAX - 1), 0, MAX - 10, -(MAX - 10), float(MAX - 1), 5.0, -0.0]),
)
BAD_TIME0 = st.sampled_from([MAX + 1, -(MAX + 1), 2**64, 1.5, float("nan"), True, None, "0"])
SEQ0 = st.one_of(st.integers(0, 1000), st.sampled_from([MAX, MAX - 1, MAX - 5, 3.0, -0.0, float(MAX - 2)]))
BAD_SEQ0 = st.sampled_from([-1, 2.5, True, MAX + 1, None, -1.0])
NUMBER = st.one_of(st.integers(-3, 9), st.sampled_from([1.5, 2**53 + 2, -0.0]))
NOT_NUMBER = st.sampled_from([True, None, "1", [1], {"a": 1}])
TEXTS = st.lists(st.sampled_from(["", "a", "é😀", "\ud800", "tok"]), min_size=1, max_size=7)
DEFECTS = (
    "seq0",
    "time0",
    "envelope",
    "data-list",
    "data-scalar",
    "data-keys",
    "id",
    "name",
    "number",
    "payload-empty",
    "payload-type",
    "dt-type",
    "dt-length",
)


def one_in(k: int) -> st.SearchStrategy[bool]:
    """True about once in ``k`` draws (a middle value: hypothesis favours the ends of a range)."""
    return st.integers(0, k - 1).map(lambda x: x == k // 2)


@st.composite
def jsonl_rows(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly well-shaped rows (so the time check is reached), with 0-2 defects of any other rule."""
    tag = draw(st.sampled_from(TAGS))
    payload = draw(TEXTS)
    wild_dt = draw(st.booleans())
    dt = draw(st.lists(DT_VALUES if wild_dt else SAFE_DT, min_size=len(payload) - 1, max_size=len(payload) - 1))
    data: dict[str, Any] = {"turn": draw(NUMBER), "step": draw(NUMBER), "index": draw(NUMBER), "dt": dt}
    if tag == "tool-call-chunks":
        data["id"] = "call-1"
        if draw(st.booleans()):
            data["name"] = "bash"
        data["args"] = payload
    else:
        data["texts"] = payload
    row: dict[str, Any] = {"type": tag, "seq0": draw(SEQ0), "time0": draw(TIME0), "data": data}
    for defect in draw(st.lists(st.sampled_from(DEFECTS), min_size=1, max_size=2)) if draw(one_in(2)) else []:
        if defect == "seq0":
            row["seq0"] = draw(BAD_SEQ0)
        elif defect == "time0":
            row["time0"] = draw(BAD_TIME0)
        elif defect == "envelope":
            if draw(st.booleans()):
                row["extra"] = 1
            else:
                row.pop(draw(st.sampled_from(["seq0", "time0", "data"])), None)
        elif defect == "data-list":
            row["data"] = [data]
        elif defect == "data-scalar":
            row["data"] = draw(st.sampled_from([None, "x", 3]))
        elif defect == "data-keys":
            if draw(st.booleans()):
                data["more"] = 1
            elif data:
                del data[draw(st.sampled_from(sorted(data)))]
        elif defect == "id" and "id" in data:
            data["id"] = draw(NOT_NUMBER | st.integers())
        elif defect == "name" and tag == "tool-call-chunks":
            data["name"] = draw(NOT_NUMBER | st.integers())
        elif defect == "number":
            key = draw(st.sampled_from(["turn", "step", "index"]))
            if key in data:
                data[key] = draw(NOT_NUMBER)
        elif defect == "payload-empty":
            data["args" if tag == "tool-call-chunks" else "texts"] = []
        elif defect == "payload-type":
            field = "args" if tag == "tool-call-chunks" else "texts"
            data[field] = [*payload, draw(st.sampled_from([1, None, ["a"]]))] if draw(st.booleans()) else "abc"
        elif defect == "dt-type":
            data["dt"] = draw(st.sampled_from([None, 3, "1,2", {"0": 1}]))
        elif defect == "dt-length":
            data["dt"] = [*dt, 1] if draw(st.booleans()) or not dt else dt[:-1]
    return row


def _row(tag: str, seq0: Any, time0: Any, dt: list[Any], n: int | None = None) -> dict[str, Any]:
    texts = ["x"] * (len(dt) + 1 if n is None else n)
    return {"type": tag, "seq0": seq0, "time0": time0, "data": {"turn": 1, "step": 1, "index": 0, "dt": dt, "texts": texts}}


def _same(got: Any, want: Any) -> None:
    """Equal values, key order and int/float/bool types included (marshal v0 keeps all three apart)."""
    if marshal.dumps(got, 0) != marshal.dumps(want, 0):
        assert repr(got) == repr(want)
        raise AssertionError("same repr, different structure")


@settings(max_examples=examples(400), deadline=None)
@given(row=jsonl_rows())
@example(row=_row("text-chunks", 0, MAX - 1, [1]))  # the last safe time exactly
@example(row=_row("text-chunks", 0, MAX - 1, [1, 1]))  # one past it
@example(row=_row("text-chunks", 0, MAX, [-MAX, -MAX, MAX]))  # dips to -MAX exactly and back
@example(row=_row("text-chunks", 0, MAX, [-MAX, -MAX, -1]))  # one below -MAX at the last member
@example(row=_row("text-chunks", 0, -MAX, [MAX, MAX, MAX, -MAX]))  # overflows mid-run, ends safe
@example(row=_row("text-chunks", 0, 0, [MAX, 1, -MAX]))  # the bound check fails, every time is safe
@example(row=_row("reasoning-chunks", 0, 0, [MAX, -MAX] * 600))  # 1201 members, fast bound off the scale
@example(row=_row("text-chunks", 0, 5.0, [2.0**52, 2.0**52, -1.0]))  # integral floats, overflow at member 2
@example(row=_row("text-chunks", 0, 0, [True, 1]))
@example(row=_row("text-chunks", 0, 0, [0, 0.5]))
@example(row=_row("text-chunks", MAX - 1, 0, [1]))
@example(row=_row("text-chunks", MAX - 1, 0, [1, 1]))
@example(row=_row("text-chunks", 0, 0, [1, MAX + 1], n=2))  # unsafe dt wins over the length mismatch
@example(row=_row("text-chunks", 0, MAX, [1, 1], n=2))  # length mismatch wins over unsafe times
@example(row=_row("text-chunks", 0, 0, []))
def test_validate_row_equals_the_eager_reference(row: dict[str, Any]) -> None:
    try:
        want: list[dict[str, Any]] | str = reference_jsonl(copy.deepcopy(row))
    except Refused as err:
        want = str(err)
    original = copy.deepcopy(row)
    try:
        run = validate_row(row)
    except MalformedRowError as err:
        assert str(err) == want
    else:
        assert not isinstance(want, str), f"validate_row accepted a row the eager rule refuses: {want}"
        _same(run.members(), want)
        _same(list(run.times), [m["time"] for m in want])
        _same([run.member(k) for k in range(-len(run), len(run))], want + want)
        _same(expand_row(copy.deepcopy(row)), want)
        _same(decode_storage_record(copy.deepcopy(row)), want)
    _same(row, original)  # validation never rewrites the caller's row


# ---------------------------------------------------------------- 3b. SQLite packed rows (sqlite-backend §6.7)

FIELDS_ERROR = {"tool-call-chunks": "invalid tool-call data fields"}


def reference_sqlite(tag: Any, seq: int, time: int, data: str | bytes, ses: Any, sop: Any) -> list[dict[str, Any]]:
    """sqlite-backend §6.7 in order, times checked member by member, JSON parsed as ``JSON.parse`` does."""

    def bad(why: str) -> Refused:
        return Refused(f"malformed {tag} storage row: {why}")

    if tag not in TAG_KIND:
        raise bad("packed discriminator requires a chunk tag")
    if ses is not None or sop is not None:
        raise bad("packed surface fields must be null")
    text = zstandard.ZstdDecompressor().decompress(data).decode("utf-8") if isinstance(data, bytes) else data
    if len(text.encode("utf-8", "surrogatepass")) > 1_048_576:
        raise bad("data exceeds 1048576 UTF-8 bytes")
    try:
        obj = js_loads(text)  # JSON.parse: integers beyond 2**53 become doubles
    except ValueError as err:
        raise bad(f"invalid JSON: {err}") from None
    if not isinstance(obj, (dict, list)):
        raise bad("data must be an object")
    tool = tag == "tool-call-chunks"
    fields_error = "invalid tool-call data fields" if tool else "invalid text data fields"
    if not isinstance(obj, dict):  # a JSON array is an object to JS, but it has none of the keys
        raise bad(fields_error)
    keys = set(obj)
    if tool:
        if keys not in ({"turn", "step", "index", "dt", "id", "args"}, {"turn", "step", "index", "dt", "id", "name", "args"}):
            raise bad(fields_error)
        if type(obj["id"]) is not str or ("name" in obj and type(obj["name"]) is not str):
            raise bad("id and optional name must be strings")
    elif keys != {"turn", "step", "index", "dt", "texts"}:
        raise bad(fields_error)
    if not all(js_number(obj[k]) for k in ("turn", "step", "index")):
        raise bad("turn/step/index must be numbers")
    field = "args" if tool else "texts"
    payload = obj[field]
    if type(payload) is not list or not 3 <= len(payload) <= 1024 or not all(type(p) is str for p in payload):
        raise bad(f"{field} must contain 3..1024 strings")
    dt = obj["dt"]
    if type(dt) is not list or not all(js_safe(d) for d in dt):
        raise bad("dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        raise bad("dt length must match the member count")
    if seq + len(payload) - 1 > MAX:
        raise bad("member seqs exceed safe integers")
    ints = [int(d) for d in dt]
    if not _running_times_safe(time, ints):
        raise bad("member times exceed safe integers")
    extra = {"call_id": obj["id"], "name": obj.get("name"), "has_name": "name" in obj} if tool else {}
    return eager_members(TAG_KIND[tag], seq, time, ints, obj["turn"], obj["step"], obj["index"], payload, **extra)


def _json_text(obj: Any, *, ascii_only: bool = True) -> str:
    # json.dumps keeps integral floats as "5.0", huge integers exact, and writes NaN/Infinity (which
    # JSON.parse refuses): all three are cases the decoder must treat like upstream.  ASCII output escapes
    # lone surrogates as JSON.stringify does, so the text is valid UTF-8 (a BLOB must be).
    return json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":"))


@st.composite
def sqlite_rows(draw: st.DrawFn) -> tuple[Any, int, int, str | bytes, Any, Any]:
    row = draw(jsonl_rows())
    tag = draw(st.sampled_from(["assistant/chunk", "text", 7])) if draw(one_in(25)) else row["type"]
    data = row.get("data")
    if isinstance(data, dict):
        n = len(data.get("args", data.get("texts", [])) or [])
        if n and n < 3 and not draw(one_in(4)) and type(data.get("dt")) is list:
            # Stretch short rows to the 3-member minimum with safe deltas (the time check needs members).
            field = "args" if "args" in data else "texts"
            data[field] = [*data[field], "y", "z"]
            data["dt"] = [*data["dt"], draw(SAFE_DT), draw(SAFE_DT)]
        if draw(one_in(20)):
            field = "args" if "args" in data else "texts"
            data[field] = ["m"] * draw(st.sampled_from([1024, 1025]))
            data["dt"] = [1] * (len(data[field]) - 1)
        if draw(one_in(12)):
            data["dt"] = [MAX + 1]  # exact in orjson, a rounded double in JSON.parse: unsafe either way
    text = _json_text(data)
    if draw(one_in(15)):
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]  # cut: invalid JSON
    blob: str | bytes = text
    if draw(one_in(4)):
        blob = zstandard.ZstdCompressor(level=3).compress(text.encode("utf-8", "surrogatepass"))
    seq = draw(st.sampled_from([MAX, MAX - 1, MAX - 2, MAX - 3])) if draw(one_in(6)) else draw(st.integers(0, 1000))
    time = draw(st.one_of(st.integers(-MAX, MAX), st.sampled_from([MAX, -MAX, MAX - 1, 0])))
    ses = b"\x01" if draw(one_in(25)) else None
    sop = "append" if draw(one_in(25)) else None
    return tag, seq, time, blob, ses, sop


def _sqlite_row(time: int, dt: list[Any], seq: int = 0) -> tuple[Any, int, int, str, Any, Any]:
    obj = {"turn": 1, "step": 2, "index": 0, "dt": dt, "texts": ["x"] * (len(dt) + 1)}
    return "text-chunks", seq, time, _json_text(obj), None, None


@settings(max_examples=examples(300), deadline=None)
@given(row=sqlite_rows())
@example(row=_sqlite_row(MAX - 2, [1, 1]))
@example(row=_sqlite_row(MAX - 2, [1, 1, 1]))
@example(row=_sqlite_row(-MAX, [MAX, MAX, MAX, -MAX]))
@example(row=_sqlite_row(0, [MAX, 1, -MAX]))
@example(row=_sqlite_row(MAX, [-MAX, -MAX, -1]))
@example(row=_sqlite_row(0, [2**53, -1]))  # 2**53 is exact in JSON.parse too, and unsafe
@example(row=_sqlite_row(0, [9007199254740993, -1]))  # JSON.parse reads 2**53
@example(row=_sqlite_row(7, [2.0, -1.0]))  # integral doubles are safe integers
@example(row=_sqlite_row(7, [0, 0.5]))  # sqlite-backend E31
@example(row=_sqlite_row(7, [1, True]))
@example(row=_sqlite_row(0, [MAX, -MAX] * 511 + [1]))  # 1024 members
@example(row=_sqlite_row(0, [1] * 1024))  # 1025 members
@example(row=_sqlite_row(0, [1, 1], seq=MAX - 2))
@example(row=_sqlite_row(0, [1, 1], seq=MAX - 1))
def test_sqlite_packed_run_equals_the_eager_reference(row: tuple[Any, int, int, str | bytes, Any, Any]) -> None:
    tag, seq, time, data, ses, sop = row
    try:
        want: list[dict[str, Any]] | str = reference_sqlite(tag, seq, time, data, ses, sop)
    except Refused as err:
        want = str(err)
    try:
        run = packed_run(tag, seq, time, data, ses, sop)
    except RowDecodeError as err:
        assert isinstance(want, str), f"packed_run refused a row the eager rule accepts: {err}"
        if "invalid JSON" in want:
            # The parser's own words differ (orjson vs json); the family and the prefix are the contract.
            assert str(err).startswith(f"malformed {tag} storage row: invalid JSON")
        else:
            assert str(err) == want
        with pytest.raises(RowDecodeError):
            packed_last_seq(tag, seq, time, data, ses, sop)
    else:
        assert not isinstance(want, str), f"packed_run accepted a row the eager rule refuses: {want}"
        assert isinstance(run, PackedRun)
        _same(run.members(), want)
        _same(expand_packed(tag, seq, time, data, ses, sop), want)
        assert packed_last_seq(tag, seq, time, data, ses, sop) == want[-1]["seq"]


# ---------------------------------------------------------------- 4. one big-integer scan per buffer

BIG_DIGITS = re.compile(rb"\d{16,}")
DIGITISH = st.text(alphabet="0123456789 ,.-+e\n٣\x00é", max_size=80)


@st.composite
def digit_runs(draw: st.DrawFn) -> bytes:
    parts = [
        draw(st.sampled_from([b"", b" ", b"-", b"\n", b"a", "٣".encode(), b"\xff", b"."])) + b"7" * draw(st.integers(0, 18))
        for _ in range(draw(st.integers(0, 6)))
    ]
    return b"".join(parts)


@settings(max_examples=examples(300), deadline=None)
@given(buf=st.one_of(st.binary(max_size=120), DIGITISH.map(lambda s: s.encode("utf-8")), digit_runs()))
@example(buf=b"9007199254740992")
@example(buf=b"900719925474099")
@example(buf=b"x" * 100 + b"1234567890123456")
@example(buf=b"123456789012345\n6")
def test_has_big_digits_equals_the_regex(buf: bytes) -> None:
    assert has_big_digits(buf) == (BIG_DIGITS.search(buf) is not None)


NEAR_2_53 = st.one_of(
    st.integers(2**53 - 3, 2**53 + 3),
    st.integers(-(2**53) - 3, -(2**53) + 3),
    st.sampled_from([2**63, 2**64 - 1, 2**64, -(2**63), 10**20, 10**30, 123456789012345678]),
    st.integers(-1000, 1000),
    st.sampled_from([999999999999999, 1000000000000000, 1.5, 9007199254740993.0]),
)
LINE_STRINGS = st.sampled_from(["", "1234567890123456789", "x9007199254740993", "é", "\\ud800"])


@st.composite
def numeric_lines(draw: st.DrawFn) -> list[bytes]:
    """Event lines whose numbers sit around 2**53 (in data, lists, keys and strings), some packed rows."""
    out: list[bytes] = []
    seq = 0
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.integers(0, 4)) == 0:
            n = draw(st.integers(1, 4))
            dt = draw(st.lists(st.one_of(st.integers(-3, 3), NEAR_2_53), min_size=n - 1, max_size=n - 1))
            line = {
                "type": "text-chunks",
                "seq0": seq,
                "time0": draw(st.integers(0, 10**6)),
                "data": {"turn": draw(NEAR_2_53), "step": 1, "index": 0, "dt": dt, "texts": ["t"] * n},
            }
            seq += n
        else:
            line = {
                "type": "custom/event",
                "seq": seq,
                "time": draw(st.one_of(st.integers(0, 10**6), NEAR_2_53)),
                "data": {"n": draw(NEAR_2_53), "l": draw(st.lists(NEAR_2_53, max_size=3)), "s": draw(LINE_STRINGS)},
            }
            seq += 1
        text = _json_text(line, ascii_only=False).replace('"\\\\ud800"', '"\\ud800"')
        out.append(text.encode("utf-8"))
    return out


def _scan(data: bytes, cuts: list[int]) -> LineScanner:
    scanner = LineScanner(0)
    prev = 0
    for cut in [*sorted(c % (len(data) + 1) for c in cuts), len(data)]:
        scanner.write(data[prev:cut])
        prev = max(prev, cut)
    scanner.finish()
    return scanner


def _outcome(scanner: LineScanner) -> tuple[Any, ...]:
    return (
        marshal.dumps(list(scanner.events), 0),
        scanner.committed_bytes,
        scanner.line_no,
        None if scanner.issue is None else str(scanner.issue),
    )


@settings(max_examples=examples(150), deadline=None)
@given(lines=numeric_lines(), cuts=st.lists(st.integers(0, 10**6), max_size=6))
@example(lines=[b'{"type":"e","seq":0,"time":1,"data":9007199254740993}'], cuts=[20, 30])
@example(lines=[b'{"type":"e","seq":0,"time":1,"data":[90071992547409,93]}'], cuts=[])
@example(
    lines=[b'{"type":"e","seq":0,"time":1,"data":1}', b'{"type":"e","seq":1,"time":1,"data":18446744073709551616}'], cuts=[45]
)
def test_scanner_pre_check_equals_js_loads_per_line(lines: list[bytes], cuts: list[int]) -> None:
    data = b"".join(line + b"\n" for line in lines)
    fast = _scan(data, cuts)
    # The path before issue 12: js_loads (with its own per-line scan) on every line.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lines_module, "has_big_digits", lambda _buf: True)
        slow = _scan(data, cuts)
    assert _outcome(fast) == _outcome(slow)
    # And the committed events are exactly JSON.parse of each line, rows expanded.
    if fast.issue is None:
        want = [m for line in lines for m in decode_storage_record(js_loads(line))]
        _same(list(fast.events), want)
    for line in lines:
        if BIG_DIGITS.search(line) is None:
            _same(js_loads_small(line), js_loads(line))
