"""JS-compatible JSON text (jsonl-backend §2) and the lossless-JSON rules (session-model §2.4, §8 rules 10-12)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from sessionkit import ev, meta, run, turn_end, turn_start

from persistence.model.jsontext import (
    JsonTextError,
    NotLosslessError,
    deep_copy_json,
    is_negative_zero,
    is_nonneg_safe_integer,
    is_number,
    is_record,
    is_safe_integer,
    js_dumps,
    js_loads,
    js_loads_keep_negative_zero,
    js_number,
    js_string,
    json_quote,
    lossless_copy,
)

pytestmark = pytest.mark.usefixtures("fast_fsync")

# ---------------------------------------------------------------- §2.1 serializer


def test_serializer_conformance_vector_numbers() -> None:
    """§2.1 conformance vector (from Node)."""
    value = [1e16, 1e21, 1.5e-7, 1.0, 0.000001, 1e-7, -0.0, 1.23e-18, 2**64]
    assert js_dumps(value) == b"[10000000000000000,1e+21,1.5e-7,1,0.000001,1e-7,0,1.23e-18,18446744073709552000]"


def test_serializer_conformance_vector_string() -> None:
    """§2.1 conformance vector: short escapes, lowercase \\u00XX, literal DEL/U+2028/non-ASCII, lone surrogate."""
    s = '\b\f\n\r\t"\\/\x1f\x7f\u2028é😀\ud800'
    expected = '"\\b\\f\\n\\r\\t\\"\\\\/\\u001f\x7f\u2028é😀\\ud800"'.encode()
    assert js_dumps(s) == expected
    assert b"\n" not in js_dumps({"k": "a\nb"})


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (-1.5, "-1.5"),
        (100.0, "100"),
        (0.1, "0.1"),
        (123e-20, "1.23e-18"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.2345678901234568e20, "123456789012345680000"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),
        (-(2**60), "-1152921504606847000"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (123456.789, "123456.789"),
        (-1e-7, "-1e-7"),
        (2.5e-6, "0.0000025"),
    ],
)
def test_js_number(value: float, text: str) -> None:
    """§2.1 rule 5: ECMAScript Number::toString."""
    assert js_number(value) == text
    assert js_dumps(value) == text.encode()


def test_key_order_array_indices_first() -> None:
    """§2.1 rule 3: canonical array-index keys ascend first; others keep insertion order."""
    assert js_dumps({"b": 1, "2": 2, "1": 3}) == b'{"1":3,"2":2,"b":1}'
    value = {"x": 0, "4294967295": 1, "4294967294": 2, "01": 3, "-1": 4, "1.5": 5, "0": 6, "10": 7, "9": 8}
    assert js_dumps(value) == b'{"0":6,"9":8,"10":7,"4294967294":2,"x":0,"4294967295":1,"01":3,"-1":4,"1.5":5}'


def test_serializer_scalars_and_no_whitespace() -> None:
    """§2.1 rules 1, 2, 6."""
    assert js_dumps({"a": [None, True, False, {"b": []}], "c": {}}) == b'{"a":[null,true,false,{"b":[]}],"c":{}}'


def test_serializer_lone_surrogate_key() -> None:
    """§2.1 rule 4 applies to keys as well."""
    assert js_dumps({"\udc00": 1, "2": 2}) == b'{"2":2,"\\udc00":1}'


def test_json_quote() -> None:
    assert json_quote('a"b/c') == '"a\\"b/c"'


# ---------------------------------------------------------------- §2.2 parser


def test_parser_lossy_utf8() -> None:
    """§2.2: invalid UTF-8 inside a string becomes U+FFFD."""
    assert js_loads(b'{"t":"a\xffb"}') == {"t": "a\ufffdb"}


@pytest.mark.parametrize(
    "text",
    [b"", b"   ", b"NaN", b"[Infinity]", b"-Infinity", b"[1,]", b'{"a":1,}', b"// c\n1", b"\xef\xbb\xbf{}", b"{'a':1}", b"[1 2]"],
)
def test_parser_rejects_non_json(text: bytes) -> None:
    """§2.2: empty input, NaN/Infinity, trailing commas, comments and a BOM are parse errors."""
    with pytest.raises(JsonTextError):
        js_loads(text)


def test_parser_whitespace_and_crlf() -> None:
    """§2.2: JSON whitespace around the value (so a CR before the newline) is tolerated."""
    assert js_loads(b' \t{"a":1}\r') == {"a": 1}


def test_parser_duplicate_keys_last_value_first_position() -> None:
    """§2.2 / §10: ``"seq":99,"seq":5`` is seq 5 and the key keeps its first position."""
    value = js_loads(b'{"seq":99,"type":"x","seq":5}')
    assert value == {"seq": 5, "type": "x"}
    assert list(value) == ["seq", "type"]


def test_parser_lone_surrogate_escape() -> None:
    """§2.2: escaped lone surrogates are valid (orjson refuses them; the fallback parses them)."""
    assert js_loads(b'["\\ud800","\\udc00x"]') == ["\ud800", "\udc00x"]
    assert js_loads('"\\ud800"') == "\ud800"


def test_parser_big_ints_round_to_doubles() -> None:
    """§2.2 / §10: a 20-digit integer comes back rounded like JSON.parse."""
    value = js_loads(b'{"n":12345678901234567890,"m":[9007199254740993],"ok":9007199254740992}')
    assert value["n"] == 12345678901234567000.0
    assert js_dumps(value) == b'{"n":12345678901234567000,"m":[9007199254740992],"ok":9007199254740992}'


def test_parser_overflow_is_infinity() -> None:
    """§2.2: ``1e400`` parses to infinity (and then fails every safe-integer check)."""
    assert js_loads(b"[1e400]") == [math.inf]
    assert not is_safe_integer(js_loads(b"1e400"))


def test_header_parser_keeps_negative_zero() -> None:
    """§2.3: the header parse keeps a literal -0 distinguishable."""
    value = js_loads_keep_negative_zero(b'{"a":-0,"b":0,"c":-0.0,"d":-0e3}')
    assert is_negative_zero(value["a"]) and is_negative_zero(value["c"]) and is_negative_zero(value["d"])
    assert not is_negative_zero(value["b"])


# ---------------------------------------------------------------- §2.3 predicates


def test_predicates() -> None:
    """§2.3: bool is not a number; integral floats are safe integers."""
    assert not is_number(True) and is_number(1) and is_number(1.5)
    assert is_safe_integer(1.0) and not is_safe_integer(1.5) and not is_safe_integer(True)
    assert is_safe_integer(2**53 - 1) and not is_safe_integer(2**53) and not is_safe_integer(math.inf)
    assert is_nonneg_safe_integer(0) and not is_nonneg_safe_integer(-1)
    assert is_record({}) and is_record([]) and not is_record(None) and not is_record("x")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (1.5, "1.5"),
        ("s", "s"),
        ({}, "[object Object]"),
        ([1, "a", None], "1,a,"),
        (-1, "-1"),
    ],
)
def test_js_string(value: Any, text: str) -> None:
    """§2.3 ``js_string`` (JS ``String(v)``)."""
    assert js_string(value) == text


def test_js_string_undefined() -> None:
    assert js_string() == "undefined"


# ---------------------------------------------------------------- lossless JSON (session-model §2.4)


class _Custom:
    pass


def _cycle() -> list[Any]:
    a: list[Any] = []
    a.append({"a": a})
    return a


@pytest.mark.parametrize(
    "value",
    [math.nan, math.inf, -math.inf, -0.0, {1, 2}, (1, 2), b"x", _Custom(), print, {1: "x"}, 2**53, -(2**53), _cycle()],
    ids=["nan", "inf", "-inf", "-0.0", "set", "tuple", "bytes", "object", "callable", "int-key", "2**53", "-2**53", "cycle"],
)
def test_lossless_copy_rejects(value: Any) -> None:
    """session-model §8 rule 10 / contract R-05 Python list."""
    with pytest.raises(NotLosslessError):
        lossless_copy({"data": [value]})


def test_lossless_copy_detaches_and_copies_aliases() -> None:
    """session-model §2.4: a detached deep copy; shared aliases are fine (copied, not a cycle)."""
    shared = {"x": [1]}
    src = {"a": shared, "b": shared, "s": "\ud800", "n": None, "f": 0.5, "max": 2**53 - 1}
    out = lossless_copy(src)
    assert out == src
    assert out["a"] is not shared and out["a"] is not out["b"]
    shared["x"].append(2)
    assert out["a"] == {"x": [1]}


def _nested_list(depth: int) -> list[Any]:
    root: list[Any] = []
    cur = root
    for _ in range(depth):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    return root


def test_deep_values_have_no_depth_limit() -> None:
    """session-model §8 rule 12: a 5,000-level nested list is accepted, serialized and parsed back."""
    deep = _nested_list(5000)
    assert js_dumps(lossless_copy(deep)) == b"[" * 5001 + b"]" * 5001
    assert js_dumps(deep_copy_json(deep)) == b"[" * 5001 + b"]" * 5001
    text = js_dumps({"k": deep, "big": 2**60, "s": "\ud800"})
    assert js_dumps(js_loads(text)) == text
    deep_obj: dict[str, Any] = {}
    cur = deep_obj
    for _ in range(20000):
        cur["k"] = {"v": [1.5, None]}
        cur = cur["k"]
    text = js_dumps(deep_obj)
    assert js_dumps(js_loads(text)) == text
    cyclic = _nested_list(3000)
    tip = cyclic
    while tip:
        tip = tip[0]
    tip.append(cyclic)
    with pytest.raises(NotLosslessError):
        lossless_copy(cyclic)


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_deep_event_round_trips_through_the_backend(tmp_path: Any, compression: str) -> None:
    """session-model §8 rule 12 end to end: a deep payload is a committed event, never a "torn" line."""
    from persistence import JsonlSessionPersistence

    deep = _nested_list(5000)
    event = ev("session/title", 0, {"title": "deep", "value": deep})

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        await store.create(meta("deep", "/p"))
        await store.append("deep", [event, turn_start(1, 1), turn_end(2, 1)])
        loaded = await JsonlSessionPersistence(tmp_path, compression=compression).load("deep")
        assert len(loaded.events) == 3
        assert js_dumps(loaded.events.to_json()[0]) == js_dumps(event)

    run(body())
