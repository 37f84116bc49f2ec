"""JS's view of plain values: ``typeof v === "number"``, safe integers, ``Number::toString`` and ``String()``.

Why apart from the serializer and the parser: the engine's validation, upgrade and error messages ask
these questions of decoded values without writing or reading any text.

May import: the standard library only.
"""

from __future__ import annotations

import math
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1


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


def all_strings(values: list[Any]) -> bool:
    """Whether every item is a ``str`` (``str.join`` accepts exactly strings, and runs in C: 0.28 us
    for a 69-member chunk row against 1.26 us for ``set(map(type, ...))``)."""
    try:
        "".join(values)
    except TypeError:
        return False
    return True
