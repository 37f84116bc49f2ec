"""The lossless-JSON snapshot (session-model §2.4): a detached deep copy, or why a value cannot be one.

Why apart from the text: appending an event copies it without writing it yet, and the rules (exact
types, string keys, finite numbers, safe integers, no cycles, any depth) are JSON's, not orjson's.

May import: the standard library and ``jsontext.scalars``.
"""

from __future__ import annotations

import math
from typing import Any

from persistence.model.jsontext.scalars import MAX_SAFE_INTEGER, is_negative_zero


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
