"""The readable part of a log the engine refuses: every line of the artifact that still decodes.

Why: a corrupt or unsupported log (or a bad listing row: a flat file, an unlistable header) has no
``view`` events, yet what it holds is often exactly what a support engineer searches for.  The
engine's lenient decoder (``persistence.iter_raw``) yields the decodable text; each line that is a
JSON object with a ``type`` and a ``seq`` is an event for the extractor, a packed chunk row (JSONL
§7.1) becomes a ``PackedRun``, and the header line gives the cwd.  Nothing here is validated beyond
what the extractor needs: hits in such logs carry the log's status so nobody mistakes them for a
verdict.

May import: the standard library and the public ``persistence`` package.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from persistence import PackedRun, RawChunk, iter_raw

_ROW_KINDS = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta", "tool-call-chunks": "tool-call-delta"}


def packed_row(value: dict[str, Any]) -> PackedRun | None:
    """A packed chunk row as a run, or None when it is not a well-formed one."""
    kind = _ROW_KINDS.get(value.get("type"))  # type: ignore[arg-type]
    data = value.get("data")
    if kind is None or not isinstance(data, dict):
        return None
    payload = data.get("args") if kind == "tool-call-delta" else data.get("texts")
    seq0, time0, dt = value.get("seq0"), value.get("time0"), data.get("dt")
    if not (isinstance(payload, list) and payload and all(isinstance(p, str) for p in payload)):
        return None
    if type(seq0) is not int or type(time0) is not int or not isinstance(dt, list) or len(dt) != len(payload) - 1:
        return None
    if not all(type(d) is int for d in dt):
        return None
    call_id = data.get("id") if isinstance(data.get("id"), str) else None
    name = data.get("name") if isinstance(data.get("name"), str) else None
    return PackedRun(
        kind, seq0, time0, tuple(dt), data.get("turn"), data.get("step"), data.get("index"), tuple(payload), call_id, name
    )


def decode_damaged(
    data: bytes, compression: str, cancelled: Callable[[], bool] | None = None
) -> tuple[dict[str, Any] | None, list[dict[str, Any] | PackedRun]]:
    """(header meta or None, items) of every decodable line of an artifact, in file order."""
    meta: dict[str, Any] | None = None
    items: list[dict[str, Any] | PackedRun] = []
    for piece in iter_raw(data, compression, cancelled=cancelled):
        if not isinstance(piece, RawChunk):
            continue
        for line in piece.text.split(b"\n"):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:  # a damaged line (invalid UTF-8 included): skip it, keep the rest
                continue
            if not isinstance(value, dict):
                continue
            if "seq" in value and isinstance(value.get("type"), str):
                items.append(value)
            elif "seq0" in value:
                run = packed_row(value)
                if run is not None:
                    items.append(run)
            elif meta is None and "id" in value and "type" not in value:
                meta = value
    return meta, items


__all__ = ["decode_damaged", "packed_row"]
