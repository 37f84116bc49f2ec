"""Defensive reads of event-record fields: a record is JSON, and any level may be missing or mistyped.

The viewer never trusts a payload's shape (unknown event types and damaged-but-valid payloads are
shown, not refused), so every read goes through these.  Stdlib only.
"""

from __future__ import annotations

from typing import Any


def get_path(d: Any, *path: str) -> Any:
    """``d[path[0]][path[1]]…``, or None as soon as a level is not an object."""
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def seq_of(rec: dict[str, Any], fallback: int) -> int:
    """The record's ``seq`` as an int, or ``fallback`` when it has none (or not a number)."""
    s = rec.get("seq")
    return int(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else fallback
