"""``JSON.stringify`` as upstream writes every record: orjson, with JS's text where orjson's differs.

orjson is fast but differs from JS for floats, lone surrogates and integer-like key order, so
serialization pre-walks the value and hands orjson ready-made fragments only where JS would print
something else; values deeper than orjson allows take an iterative path (same rules, any depth).

May import: orjson, the standard library and ``jsontext.scalars``.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from persistence.model.jsontext.scalars import js_number

_ARRAY_INDEX_MAX = 4294967294
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_quote(s: str) -> str:
    """``JSON.stringify`` of a string."""
    return js_dumps(s).decode("utf-8")


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
