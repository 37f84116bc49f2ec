"""The session title as the viewer shows it: the latest ``session/title`` wins (session-model §6.5).

A fold of the whole log that reads one event type, backwards; stdlib, ``app.records.fields`` and the
public ``persistence`` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from app.records.fields import get_path
from persistence import EventTable, EventType


def latest_title(records: Sequence[dict[str, Any]]) -> str | None:
    """The session title (latest ``session/title`` wins, §6.5)."""
    if isinstance(records, EventTable):
        # Backwards over the table's items: a packed run (never a title) is one step.
        candidates: Iterable[Any] = reversed(records.items)
    else:
        candidates = (records[i] for i in range(len(records) - 1, -1, -1))
    for rec in candidates:
        if type(rec) is dict and rec.get("type") == EventType.SESSION_TITLE:
            title = get_path(rec, "data", "title")
            if isinstance(title, str):
                return title
    return None
