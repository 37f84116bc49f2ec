"""JS-compatible JSON text: the single place where byte compatibility with upstream lives.

Upstream writes every record with ``JSON.stringify`` and reads with ``JSON.parse`` on
lossy-decoded UTF-8 (spec jsonl-backend §2).  orjson is fast but differs from JS for
floats, lone surrogates and integer-like key order, so serialization pre-walks the value
and hands orjson ready-made fragments only where JS would print something else.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

MAX_SAFE_INTEGER = 2**53 - 1
_ARRAY_INDEX_MAX = 4294967294
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonTextError(ValueError):
    """Text is not JSON that ``JSON.parse`` would accept."""


# ---------------------------------------------------------------- predicates


def is_number(v: object) -> bool:
    """JS ``typeof v === "number"``: an int or a float, never a bool."""
    return (type(v) is int) or (type(v) is float)


def is_safe_integer(v: Any) -> bool:
    """JS ``Number.isSafeInteger(v)`` (an integral float counts, a bool does not)."""
    t = type(v)
    if t is int:
        return -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER
    if t is float:
        return math.isfinite(v) and v == int(v) and abs(v) <= MAX_SAFE_INTEGER
    return False


def is_nonneg_safe_integer(v: Any) -> bool:
    """A safe integer that is not negative."""
    return is_safe_integer(v) and v >= 0


def is_negative_zero(v: object) -> bool:
    """Whether ``v`` is the float -0.0 (JSON writes it as ``0``)."""
    return type(v) is float and v == 0 and math.copysign(1.0, v) < 0


def is_record(v: object) -> bool:
    """JS ``typeof v === 'object' && v !== null``: a dict or a list."""
    return isinstance(v, (dict, list))


# ---------------------------------------------------------------- numbers and String()


def js_number(x: int | float) -> str:
    """ECMAScript Number::toString of the double nearest to ``x``."""
    if type(x) is int:
        if -(2**53) <= x <= 2**53:
            return str(x)
        x = float(x)
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    mantissa, _, exp = r.partition("e")
    e = int(exp) if exp else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + e  # decimal point position relative to digits start
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    s = stripped.rstrip("0") or "0"
    k = len(s)
    n = point
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + s
    else:
        exp_v = n - 1
        out = s[0] + ("." + s[1:] if k > 1 else "") + "e" + ("+" if exp_v >= 0 else "-") + str(abs(exp_v))
    return sign + out


_UNDEFINED = object()


def js_string(v: object = _UNDEFINED) -> str:
    """JS ``String(v)``, for error messages."""
    if v is _UNDEFINED:
        return "undefined"
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if is_number(v):
        return js_number(v)  # type: ignore[arg-type]
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "[object Object]"
    if isinstance(v, (list, tuple)):
        return ",".join("" if x is None else js_string(x) for x in v)
    return str(v)


def json_quote(s: str) -> str:
    """``JSON.stringify`` of a string."""
    return js_dumps(s).decode("utf-8")


# ---------------------------------------------------------------- serializer


def _is_array_index(k: str) -> bool:
    if not k or not ("0" <= k[0] <= "9"):
        return False
    if k == "0":
        return True
    if k[0] == "0" or not k.isascii() or not k.isdigit():
        return False
    return int(k) <= _ARRAY_INDEX_MAX


def _escape_string(s: str) -> str:
    # orjson cannot encode lone surrogates; build JS's escaped text ourselves.
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(o, f"\\u{o:04x}"))
        elif 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _fix_str(s: str) -> Any:
    if _LONE_SURROGATE.search(s) is None:
        return s
    # A valid pair is already one code point in Python; only lone halves remain.
    return orjson.Fragment(_escape_string(s).encode("utf-8"))


def _fixup(v: Any) -> Any:
    """Return ``v`` (identity when nothing needs JS treatment) or a copy orjson prints like JS."""
    t = type(v)
    if t is str:
        return _fix_str(v)
    if t is float or (t is int and not (-(2**53) <= v <= 2**53)):
        return orjson.Fragment(js_number(v).encode("ascii"))
    if t is dict:
        changed = False
        keys = list(v.keys())
        index_keys = [k for k in keys if _is_array_index(k)]
        if index_keys:
            index_keys.sort(key=int)
            idx = set(index_keys)
            keys = index_keys + [k for k in keys if k not in idx]
            changed = True
        out = {}
        for k in keys:
            item = v[k]
            fixed = _fixup(item)
            if fixed is not item:
                changed = True
            fk = k
            if _LONE_SURROGATE.search(k) is not None:
                # orjson cannot emit such a key: fall back to building the object by hand.
                return _ManualObject(keys, v)
            out[fk] = fixed
        return out if changed else v
    if t is list or t is tuple:
        changed = t is tuple
        out_l = []
        for item in v:
            fixed = _fixup(item)
            if fixed is not item:
                changed = True
            out_l.append(fixed)
        return out_l if changed else v
    if hasattr(v, "__json_value__"):
        return _fixup(v.__json_value__())
    return v


class _ManualObject:
    __slots__ = ("keys", "obj")

    def __init__(self, keys: list[str], obj: dict[str, Any]) -> None:
        self.keys = keys
        self.obj = obj


def _manual_default(v: Any) -> Any:
    if isinstance(v, _ManualObject):
        parts = [_escape_string(k) + ":" + js_dumps(v.obj[k]).decode("utf-8") for k in v.keys]
        return orjson.Fragment(("{" + ",".join(parts) + "}").encode("utf-8"))
    if hasattr(v, "__json_value__"):
        return _fixup(v.__json_value__())
    raise TypeError(f"not JSON-serializable: {type(v).__name__}")


def js_dumps(value: Any) -> bytes:
    """``JSON.stringify(value)`` as UTF-8 bytes (no trailing newline)."""
    try:
        return orjson.dumps(_fixup(value), default=_manual_default)
    except (orjson.JSONEncodeError, RecursionError):
        # orjson refuses nesting deeper than 255 levels and ``_fixup`` recurses; lossless JSON has no
        # depth limit (session-model §2.4: upstream accepts 5,000-deep arrays), so deep values take
        # the slower iterative path.  It also raises the TypeError for unsupported values.
        return _js_dumps_iterative(value).encode("utf-8")


def _js_dumps_iterative(value: Any) -> str:
    """Iterative ``JSON.stringify`` (same rules as the orjson path; any depth)."""
    out: list[str] = []
    # Work items: a value to print, or a literal string (a closing bracket or separator).
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        literal, v = stack.pop()
        if literal:
            out.append(v)
            continue
        while hasattr(v, "__json_value__"):
            v = v.__json_value__()
        t = type(v)
        if v is None:
            out.append("null")
        elif v is True:
            out.append("true")
        elif v is False:
            out.append("false")
        elif t is str:
            out.append(_escape_string(v))
        elif t is int or t is float:
            out.append(js_number(v))
        elif t is dict:
            keys = list(v.keys())
            index_keys = sorted((k for k in keys if _is_array_index(k)), key=int)
            if index_keys:
                idx = set(index_keys)
                keys = index_keys + [k for k in keys if k not in idx]
            out.append("{")
            stack.append((True, "}"))
            for i in range(len(keys) - 1, -1, -1):
                stack.append((False, v[keys[i]]))
                stack.append((True, ("," if i else "") + _escape_string(keys[i]) + ":"))
        elif t is list or t is tuple:
            out.append("[")
            stack.append((True, "]"))
            for i in range(len(v) - 1, -1, -1):
                stack.append((False, v[i]))
                if i:
                    stack.append((True, ","))
        else:
            raise TypeError(f"not JSON-serializable: {t.__name__}")
    return "".join(out)


def js_dumps_str(value: Any) -> str:
    """``js_dumps`` as text: JS ``JSON.stringify`` of ``value``."""
    return js_dumps(value).decode("utf-8")


# ---------------------------------------------------------------- parser


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


def all_strings(values: list[Any]) -> bool:
    """Whether every item is a ``str`` (``str.join`` accepts exactly strings, and runs in C: 0.28 us
    for a 69-member chunk row against 1.26 us for ``set(map(type, ...))``)."""
    try:
        "".join(values)
    except TypeError:
        return False
    return True


def has_big_digits(buffer: bytes) -> bool:
    """Whether ``buffer`` holds a run of 16+ digits: the only text in which orjson can read an
    integer that JS would round (2**53 has 16 digits).  One scan per buffer instead of per line."""
    return _SIXTEEN_DIGITS in bytes(buffer).translate(_DIGIT_MASK)


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


# ---------------------------------------------------------------- lossless snapshot


class NotLosslessError(TypeError):
    """A value that JSON text cannot carry unchanged (not JSON-serializable as JS would)."""

    pass


def lossless_copy(value: Any) -> Any:
    """Detached deep copy of ``value`` if it is losslessly JSON; else ``NotLosslessError``.

    Python analogue of upstream's lossless-JSON snapshot (session-model §2.4): dict/list of
    exact types, str keys, finite non-negative-zero numbers, safe ints; cycles rejected
    (tracked along the ancestor chain, so shared aliases are simply copied).
    """
    ancestors: set[int] = set()

    def walk(v: Any) -> Any:
        t = type(v)
        if v is None or t is bool or t is str:
            return v
        if t is int:
            if -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
                return v
            raise NotLosslessError("integer outside the safe range")
        if t is float:
            if not math.isfinite(v) or is_negative_zero(v):
                raise NotLosslessError("non-finite or negative-zero number")
            return v
        if t is dict:
            if id(v) in ancestors:
                raise NotLosslessError("cycle")
            ancestors.add(id(v))
            try:
                out = {}
                for k, item in v.items():
                    if type(k) is not str:
                        raise NotLosslessError("non-string key")
                    out[k] = walk(item)
                return out
            finally:
                ancestors.discard(id(v))
        if t is list:
            if id(v) in ancestors:
                raise NotLosslessError("cycle")
            ancestors.add(id(v))
            try:
                return [walk(item) for item in v]
            finally:
                ancestors.discard(id(v))
        if hasattr(v, "__json_value__"):
            return walk(v.__json_value__())
        raise NotLosslessError(f"value of type {t.__name__}")

    try:
        return walk(value)
    except RecursionError:
        # Lossless JSON has no depth limit (session-model §2.4, rule 12: a 5,000-deep list is
        # accepted); the recursive walk is only the fast path.
        return _copy_deep(value, check=True)


def deep_copy_json(value: Any) -> Any:
    """Fast deep copy of a value already known to be plain JSON."""
    try:
        return _deep_copy_recursive(value)
    except RecursionError:
        return _copy_deep(value, check=False)  # deeper than Python's recursion limit


def _deep_copy_recursive(value: Any) -> Any:
    t = type(value)
    if t is dict:
        return {k: _deep_copy_recursive(v) for k, v in value.items()}
    if t is list:
        return [_deep_copy_recursive(v) for v in value]
    return value


_LEAVE = object()


def _copy_deep(value: Any, *, check: bool) -> Any:
    """Iterative deep copy of any depth; ``check`` applies the lossless rules of ``lossless_copy``."""
    holder: list[Any] = [None]
    ancestors: set[int] = set()
    work: list[tuple[Any, Any, Any]] = [(value, holder, 0)]
    while work:
        src, dst, key = work.pop()
        if dst is _LEAVE:
            ancestors.discard(src)
            continue
        if check:
            while hasattr(src, "__json_value__") and type(src) not in (dict, list):
                src = src.__json_value__()
        t = type(src)
        if t is dict or t is list:
            if check:
                if id(src) in ancestors:
                    raise NotLosslessError("cycle")
                ancestors.add(id(src))
                work.append((id(src), _LEAVE, None))
            if t is dict:
                new: Any = {}
                for k in src:
                    if check and type(k) is not str:
                        raise NotLosslessError("non-string key")
                    new[k] = None  # reserve the key's position; filled below
                items = list(src.items())
            else:
                new = [None] * len(src)
                items = list(enumerate(src))
            dst[key] = new
            for k, item in reversed(items):
                work.append((item, new, k))
            continue
        if check:
            if t is int:
                if not -MAX_SAFE_INTEGER <= src <= MAX_SAFE_INTEGER:
                    raise NotLosslessError("integer outside the safe range")
            elif t is float:
                if not math.isfinite(src) or is_negative_zero(src):
                    raise NotLosslessError("non-finite or negative-zero number")
            elif not (src is None or t is bool or t is str):
                raise NotLosslessError(f"value of type {t.__name__}")
        dst[key] = src
    return holder[0]
