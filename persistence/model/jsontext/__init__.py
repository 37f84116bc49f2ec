"""JS-compatible JSON text: the single place where byte compatibility with upstream lives.

Upstream writes every record with ``JSON.stringify`` and reads with ``JSON.parse`` on
lossy-decoded UTF-8 (spec jsonl-backend §2).  orjson is fast but differs from JS for
floats, lone surrogates and integer-like key order, so serialization pre-walks the value
and hands orjson ready-made fragments only where JS would print something else.

One concept per module (this file only gathers their names, which the engine imports from here):

- ``scalars``   JS's view of plain values: ``typeof number``, safe integers, ``Number::toString``, ``String()``
- ``dump``      ``JSON.stringify`` (``js_dumps``, ``js_dumps_str``, ``json_quote``)
- ``parse``     ``JSON.parse`` (``js_loads`` and its fast and header variants, ``JsonTextError``)
- ``lossless``  the lossless-JSON snapshot (``lossless_copy``, ``deep_copy_json``, ``NotLosslessError``)

Engine-internal: ``app/`` reaches the few public ones through ``persistence``.
"""

from __future__ import annotations

from persistence.model.jsontext.dump import js_dumps, js_dumps_str, json_quote
from persistence.model.jsontext.lossless import NotLosslessError, deep_copy_json, lossless_copy
from persistence.model.jsontext.parse import (
    JsonTextError,
    has_big_digits,
    js_loads,
    js_loads_keep_negative_zero,
    js_loads_small,
)
from persistence.model.jsontext.scalars import (
    MAX_SAFE_INTEGER,
    all_strings,
    is_negative_zero,
    is_nonneg_safe_integer,
    is_number,
    is_record,
    is_safe_integer,
    js_number,
    js_string,
)

__all__ = [
    "MAX_SAFE_INTEGER",
    "JsonTextError",
    "NotLosslessError",
    "all_strings",
    "deep_copy_json",
    "has_big_digits",
    "is_negative_zero",
    "is_nonneg_safe_integer",
    "is_number",
    "is_record",
    "is_safe_integer",
    "js_dumps",
    "js_dumps_str",
    "js_loads",
    "js_loads_keep_negative_zero",
    "js_loads_small",
    "js_number",
    "js_string",
    "json_quote",
    "lossless_copy",
]
