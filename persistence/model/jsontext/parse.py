"""``JSON.parse`` of one record as upstream reads it: lossy UTF-8, JS's rounding of big integers, any depth.

orjson parses almost every line; this module handles what it refuses or reads differently from JS:
integers beyond 2**53 (JS holds every number as a double, so they come back rounded), documents deeper
than the recursive decoders allow (parsed iteratively), and header lines whose ``-0`` must stay
distinguishable.

May import: orjson and the standard library.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson


class JsonTextError(ValueError):
    """Text is not JSON that ``JSON.parse`` would accept."""


def _raise_constant(name: str) -> Any:
    raise JsonTextError(f"invalid JSON literal {name}")


def _json_fallback(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_raise_constant)
    except RecursionError:
        # Valid but deeper than the recursive decoders allow (orjson: 1024, json: the recursion
        # limit).  JSON.parse has no such limit, and treating the line as unparsable would make a
        # committed event look like a torn tail, so parse it iteratively instead.
        return _parse_iterative(text)
    except ValueError as err:
        raise JsonTextError(str(err)) from None


_TOKEN = re.compile(
    r'[ \t\n\r]*(?:(?P<str>"(?:[^"\\\x00-\x1f]|\\.)*")'
    r"|(?P<num>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<lit>true|false|null)|(?P<punct>[\[\]{},:]))"
)
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}


def _parse_iterative(text: str) -> Any:
    """Strict ``JSON.parse`` without recursion (fallback for very deep documents only)."""
    pos = 0

    def tok() -> tuple[str, Any]:
        nonlocal pos
        m = _TOKEN.match(text, pos)
        if m is None:
            raise JsonTextError(f"invalid JSON at offset {pos}")
        pos = m.end()
        kind = m.lastgroup or ""
        raw = m.group(kind)
        if kind == "str":
            try:
                return kind, json.loads(raw)  # one flat string: escapes and lone surrogates as JSON.parse
            except ValueError as err:
                raise JsonTextError(str(err)) from None
        if kind == "num":
            return kind, float(raw) if any(c in raw for c in ".eE") else int(raw)
        if kind == "lit":
            return kind, _LITERALS[raw]
        return raw, None

    stack: list[list[Any]] = []  # open containers: [container, pending dict key]
    root: Any = None

    def attach(v: Any) -> None:
        nonlocal root
        if not stack:
            root = v
        elif type(stack[-1][0]) is list:
            stack[-1][0].append(v)
        else:
            stack[-1][0][stack[-1][1]] = v  # duplicate keys: last value wins, first position kept

    def read_key() -> None:
        kind, key = tok()
        if kind != "str":
            raise JsonTextError(f"expected a string key at offset {pos}")
        if tok()[0] != ":":
            raise JsonTextError(f"expected ':' at offset {pos}")
        stack[-1][1] = key

    expect_value = True
    while True:
        if expect_value:
            kind, value = tok()
            if kind == "[":
                new: Any = []
                attach(new)
                stack.append([new, None])
                save = pos
                if tok()[0] == "]":
                    stack.pop()
                    expect_value = False
                else:
                    pos = save
                continue
            if kind == "{":
                new = {}
                attach(new)
                stack.append([new, None])
                save = pos
                if tok()[0] == "}":
                    stack.pop()
                    expect_value = False
                else:
                    pos = save
                    read_key()
                continue
            if kind not in ("str", "num", "lit"):
                raise JsonTextError(f"expected a value at offset {pos}")
            attach(value)
            expect_value = False
            continue
        if not stack:
            if text[pos:].strip(" \t\n\r"):
                raise JsonTextError(f"extra data at offset {pos}")
            return root
        kind, _ = tok()
        is_list = type(stack[-1][0]) is list
        if kind == ("]" if is_list else "}"):
            stack.pop()
        elif kind == ",":
            if not is_list:
                read_key()
            expect_value = True
        else:
            raise JsonTextError(f"expected ',' or a closing bracket at offset {pos}")


def _round_big_ints(v: Any) -> Any:
    """JS holds every number as a double: integers beyond 2**53 come back rounded."""
    try:
        return _round_big_ints_recursive(v)
    except RecursionError:
        return _round_big_ints_iterative(v)  # very deep documents (in place, so retrying is safe)


def _round_big_ints_recursive(v: Any) -> Any:
    t = type(v)
    if t is int:
        return float(v) if not (-(2**53) <= v <= 2**53) else v
    if t is dict:
        for k, item in v.items():
            fixed = _round_big_ints_recursive(item)
            if fixed is not item:
                v[k] = fixed
        return v
    if t is list:
        for i, item in enumerate(v):
            fixed = _round_big_ints_recursive(item)
            if fixed is not item:
                v[i] = fixed
        return v
    return v


def _round_big_ints_iterative(root: Any) -> Any:
    if type(root) is int:
        return _round_big_ints_recursive(root)
    stack = [root]
    while stack:
        v = stack.pop()
        pairs = v.items() if type(v) is dict else enumerate(v)
        for k, item in list(pairs):
            t = type(item)
            if t is int and not (-(2**53) <= item <= 2**53):
                v[k] = float(item)
            elif t is dict or t is list:
                stack.append(item)
    return root


def js_loads(line: bytes | str) -> Any:
    """``JSON.parse`` of one record (bytes are decoded as lossy UTF-8 first)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        text = line.decode("utf-8", "replace") if isinstance(line, (bytes, bytearray, memoryview)) else line
        if isinstance(line, (bytes, bytearray, memoryview)):
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError:
                value = _json_fallback(text)
        else:
            value = _json_fallback(text)
        return _round_big_ints(value)
    if isinstance(line, str):
        if has_big_digits(line.encode("utf-8", "surrogatepass")):
            value = _round_big_ints(value)
        return value
    if isinstance(line, (bytes, bytearray)) and has_big_digits(line):
        value = _round_big_ints(value)
    return value


# Every digit becomes "0" and everything else a space, so a 16-digit run is one substring find:
# 8.6 ms for a 4.9 MB log against 59 ms for the ``\d{16,}`` regex (issue 12 profile).
_DIGIT_MASK = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16


# Buffers past this are translated a slice at a time (consecutive slices overlap by 15 bytes, so a run
# across a seam is seen whole): translating 5 MB at once allocated 5 MB of fresh pages every read
# (6.0 ms against 3.3 ms in 16 KiB slices, issue 25).
_SLICE = 16 * 1024


def has_big_digits(buffer: bytes) -> bool:
    """Whether ``buffer`` holds a run of 16+ digits: the only text in which orjson can read an
    integer that JS would round (2**53 has 16 digits).  One scan per buffer instead of per line."""
    data = bytes(buffer)
    n = len(data)
    if n <= 4 * _SLICE:
        return _SIXTEEN_DIGITS in data.translate(_DIGIT_MASK)
    mask, needle, overlap = _DIGIT_MASK, _SIXTEEN_DIGITS, len(_SIXTEEN_DIGITS) - 1
    return any(needle in data[i : i + _SLICE + overlap].translate(mask) for i in range(0, n, _SLICE))


def js_loads_small(line: bytes) -> Any:
    """``js_loads`` for a line already known to hold no 16-digit run (see ``has_big_digits``)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return js_loads(line)


def _header_parse_int(text: str) -> int | float:
    v = int(text)
    if v == 0 and text.startswith("-"):
        return -0.0
    return v


def js_loads_keep_negative_zero(line: bytes) -> Any:
    """Parse keeping a literal ``-0`` distinguishable (header fields reject it)."""
    text = line.decode("utf-8", "replace")
    try:
        value = json.loads(text, parse_constant=_raise_constant, parse_int=_header_parse_int)
    except (ValueError, RecursionError) as err:
        raise JsonTextError(str(err)) from None
    return _round_big_ints(value)
