"""Walking a log a packed run at a time: the one loop every whole-log pass of the viewer shares.

Why: the engine keeps runs of streaming deltas packed (``persistence.PackedRun``; 85-95 % of a
real log's events).  Indexing such a log event by event builds a record per delta (about 1 us
each, plus the collector's passes over them: 0.37 s for a 202k-event log), while a pass that only
needs each delta's seq, index and text reads them straight from the run.  A plain list of records
(a tail preview, a test) is walked record by record, so callers need not care which they hold.

Imports the engine's public API only (``EventTable``, ``EventType``, ``PackedRun``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from persistence import EventTable, EventType, PackedRun

Item = dict[str, Any] | PackedRun


def walk(records: Sequence[dict[str, Any]], start: int = 0, stop: int | None = None) -> Iterator[tuple[int, Item]]:
    """``(index, item)`` over ``records[start:stop]``: an ``EventTable`` yields each packed run once, at
    the index of its first member (cut to the range); anything else yields every record."""
    end = len(records) if stop is None else min(stop, len(records))
    if isinstance(records, EventTable):
        i = start
        for it in records.segments(start, end):
            yield i, it
            i += len(it) if type(it) is PackedRun else 1
        return
    for i in range(start, end):
        yield i, records[i]


def walk_items(records: Sequence[dict[str, Any]], stop: int, start: int = 0) -> Iterator[Item]:
    """The items of ``records[start:stop]`` (to build an ``EventTable`` from a span without expanding runs)."""
    for _i, item in walk(records, start, stop):
        yield item


def item_type(item: Item) -> Any:
    """The event type of a walked item (a run is always ``assistant/chunk``)."""
    if type(item) is PackedRun:
        return EventType.ASSISTANT_CHUNK
    return item.get("type") if type(item) is dict else None


__all__ = ["Item", "item_type", "walk", "walk_items"]
