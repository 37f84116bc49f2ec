"""The straight pass of scanRows (``persistence.sqlite.straight_scan``) equals the reference scan.

A clean log must take the straight pass (else the speed-up is lost silently); every damaged or
unusual row must give the reference's events, torn point or error text, wherever it sits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from sessionkit import one_turn_log, step_start, text_delta, tool_delta, turn_end, turn_start

from persistence.model.jsontext import MAX_SAFE_INTEGER
from persistence.sqlite.packing import encode_batch
from persistence.sqlite.rows import Row, ScanResult, scan_rows, scan_rows_reference
from persistence.sqlite.straight_scan import _digit_run_cells, straight_items
from persistence.sqlite.varint import encode_seqs


def _events() -> list[dict[str, Any]]:
    """Every row shape a writer produces: scalars with each optional column, BLOB data, three packed kinds."""
    log = one_turn_log()
    seq = len(log)
    log.append(turn_start(seq, 2))
    log.append(step_start(seq + 1, 2, 1))
    seq += 2
    for k in range(5):
        log.append(text_delta(seq, 2, 1, f"t{k} ", time=1000 + seq + k))
        seq += 1
    for k in range(4):
        log.append(text_delta(seq, 2, 1, f"r{k}", kind="reasoning-delta", index=1))
        seq += 1
    for k in range(3):
        log.append(tool_delta(seq, 2, 1, "c1", f'{{"a{k}"', name="bash", index=2))
        seq += 1
    for k in range(3):
        log.append(tool_delta(seq, 2, 1, "c2", f"x{k}", index=3))
        seq += 1
    log.append({"type": "x/note", "seq": seq, "time": 5, "data": {"big": "y" * 9000}, "ignorable": True})
    log.append({"type": "x/src", "seq": seq + 1, "time": 6, "data": {"n": 1}, "sourceEventSeqs": [0, seq], "ignorable": True})
    log.append(turn_end(seq + 2, 2))
    return log


def _rows() -> list[Row]:
    return [tuple(r) for r in encode_batch(_events(), pack=True)]


def _outcome(scan: Callable[[list[Row], int], ScanResult], rows: list[Row], base: int = 0) -> Any:
    try:
        result = scan(rows, base)
    except Exception as err:
        return ("raised", type(err), str(err))
    # repr, not ==: 2**60 == float(2**60), but a JS-rounded integer must come back a float all the same.
    return (repr(result.preserved.items), result.torn_from, len(result.preserved))


def test_clean_log_takes_the_straight_pass_and_equals_the_reference() -> None:
    rows = _rows()
    assert any(type(r[3]) is bytes for r in rows) and sum(r[6] == 0 for r in rows) == 4
    assert straight_items(rows, 0) is not None
    assert _outcome(scan_rows, rows) == _outcome(scan_rows_reference, rows)


def test_big_integers_are_rounded_like_the_reference() -> None:
    rows = _rows()
    i = next(k for k, r in enumerate(rows) if r[1] == "turn/start")
    seq, etype, time, _, ses, _, ign = rows[i]
    rows[i] = (seq, etype, time, '{"turn":12345678901234567891}', ses, '{"n":98765432109876543210}', ign)
    fast = straight_items(rows, 0)
    assert fast is not None
    assert fast[i]["data"] == {"turn": 12345678901234567891.0} and type(fast[i]["data"]["turn"]) is float
    assert _outcome(scan_rows, rows) == _outcome(scan_rows_reference, rows)


@pytest.mark.parametrize("note", ["ascii", "caf\u00e9"])
def test_one_long_number_among_many_cells(note: str) -> None:
    rows = _rows()
    scalars = [i for i, r in enumerate(rows) if r[6] != 0 and type(r[3]) is str]
    first, last = scalars[0], scalars[-1]
    rows[first] = (*rows[first][:3], '{"id":9007199254740993,"n":"' + note + '"}', *rows[first][4:])
    rows[last] = (*rows[last][:3], '{"ok":123456789012345,"t":"1234567890123456"}', *rows[last][4:])
    fast = straight_items(rows, 0)
    assert fast is not None
    assert fast[first]["data"]["id"] == 9007199254740992.0
    assert _outcome(scan_rows, rows) == _outcome(scan_rows_reference, rows)


def test_digit_runs_are_traced_to_their_cells() -> None:
    texts = ["a", "1234567890123456", "x 12345678901234567 y 99999999999999999", "123456789012345", "7" * 15]
    assert _digit_run_cells(texts) == {id(texts[1]), id(texts[2])}
    assert _digit_run_cells(["short", "1" * 15]) == set()
    assert _digit_run_cells(["\u00e9", "1" * 16]) is None


def test_suffix_base() -> None:
    rows = _rows()[3:]
    assert _outcome(scan_rows, rows, rows[0][0]) == _outcome(scan_rows_reference, rows, rows[0][0])
    assert _outcome(scan_rows, rows, rows[0][0] + 1) == _outcome(scan_rows_reference, rows, rows[0][0] + 1)


def _packed_obj(row: Row) -> dict[str, Any]:
    return orjson.loads(row[3])


def _set_packed(**changes: Any) -> Callable[[Row], Row]:
    def damage(row: Row) -> Row:
        if row[6] != 0:
            return row
        obj = _packed_obj(row)
        for key, value in changes.items():
            if value is ...:
                obj.pop(key, None)
            else:
                obj[key] = value
        return (*row[:3], orjson.dumps(obj).decode(), *row[4:])

    return damage


def _cell(index: int, value: Any) -> Callable[[Row], Row]:
    return lambda row: (*row[:index], value, *row[index + 1 :])


_ZSTD = zstandard.ZstdCompressor(level=3)
_ABC = '"dt":[0,0],"texts":["a","b","c"]}'
_HUGE = '{"turn":1,"step":1,"index":0,"dt":[0,0],"texts":["' + "é" * 600_000 + '","b","c"]}'

DAMAGES: dict[str, Callable[[Row], Row]] = {
    "data not json": _cell(3, "{nope"),
    "data empty": _cell(3, ""),
    "data js-only number": _cell(3, '{"turn":1e999}'),
    "data lone surrogate": _cell(3, '{"t":"\\ud800"}'),
    "data array": _cell(3, "[1,2,3]"),
    "data blob garbage": _cell(3, b"\x28\xb5\x2f\xfdgarbage"),
    "data blob of bad json": _cell(3, _ZSTD.compress(b"{oops")),
    "data blob of json": _cell(3, _ZSTD.compress(b'{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}')),
    "surface op not json": _cell(5, "append"),
    "surface op big int": _cell(5, "12345678901234567"),
    "source seqs bad varint": _cell(4, b"\xff"),
    "source seqs on packed": lambda r: (*r[:4], encode_seqs([1]), *r[5:]),
    "seq skips": lambda r: (r[0] + 1, *r[1:]),
    "seq repeats": lambda r: (r[0] - 1, *r[1:]) if r[0] else r,
    "scalar made packed": _cell(6, 0),
    "packed made scalar": _cell(6, None),
    "tag unknown": _cell(1, "text-chunk"),
    "turn float": _set_packed(turn=2.0),
    "turn huge": _set_packed(turn=2**60),
    "turn bool": _set_packed(turn=True),
    "index string": _set_packed(index="0"),
    "extra key": _set_packed(extra=1),
    "dt missing": _set_packed(dt=...),
    "dt negative": _set_packed(dt=[-1, 0, 0, 0, 0, 0, 0, 0][:2]),
    "dt float": _set_packed(dt=[1.0, 1.0]),
    "dt huge": _set_packed(dt=[MAX_SAFE_INTEGER, 1]),
    "dt short": _set_packed(dt=[1]),
    "texts two": _set_packed(texts=["a", "b"], dt=[0]),
    "texts number": _set_packed(texts=["a", 1, "c"], dt=[0, 0]),
    "args number": _set_packed(args=["a", None, "c"], dt=[0, 0]),
    "name number": _set_packed(name=5),
    "id missing": _set_packed(id=...),
    "packed huge text": lambda r: (*r[:3], _HUGE, *r[4:]),
}


@pytest.mark.parametrize("label", sorted(DAMAGES))
def test_damaged_rows_give_the_reference_outcome(label: str) -> None:
    rows = _rows()
    damage = DAMAGES[label]
    for i in range(len(rows)):
        damaged = list(rows)
        damaged[i] = damage(rows[i])
        if damaged[i] == rows[i]:
            continue
        assert _outcome(scan_rows, damaged) == _outcome(scan_rows_reference, damaged), (label, i)


def test_packed_row_at_the_safe_seq_limit() -> None:
    rows = _rows()
    last = rows[-1]
    tail = (MAX_SAFE_INTEGER - 1, "text-chunks", 0, '{"turn":1,"step":1,"index":0,' + _ABC, None, None, 0)
    for extra in ([tail], [last, tail]):
        assert _outcome(scan_rows, rows + extra) == _outcome(scan_rows_reference, rows + extra)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.integers(min_value=2**53 - 2, max_value=2**53 + 2)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_CELL_TEXT = st.one_of(_JSON.map(lambda v: orjson.dumps(v).decode()), st.text(max_size=12))


@settings(max_examples=examples(200))
@given(st.lists(st.tuples(st.integers(0, 40), _CELL_TEXT, st.booleans()), max_size=4))
def test_random_cells_give_the_reference_outcome(edits: list[tuple[int, str, bool]]) -> None:
    """Any JSON (big, -0, unicode, nested) or any text at all in data or surfaceOp cells."""
    rows = _rows()
    for at, text, in_surface in edits:
        i = at % len(rows)
        rows[i] = _cell(5 if in_surface else 3, text)(rows[i])
    assert _outcome(scan_rows, rows) == _outcome(scan_rows_reference, rows)
