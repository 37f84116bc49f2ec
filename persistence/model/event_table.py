"""EventTable: the engine's append-only event list, with chunk runs kept packed.

Why: a 202k-event log read as 200k separate dicts cost 470 ms and ~185 MiB (issue 12); the same
log as ~8.5k items (scalar events plus ``PackedRun``s) costs a fraction of both.  The table is a
``Sequence`` of event records, so code that indexes, slices or iterates keeps working unchanged;
code that walks a whole log (validation, the turn fold, the timeline, search) walks ``items``
instead and treats a run of 500 deltas as one step.

Index arithmetic: ``starts[k]`` is the event index of ``items[k]``; it stays ``None`` while the
table holds no run (then item k is event k and no bisect is needed).  Records of scalar events are
the engine's own dicts (never mutate them); run members are built fresh on every access.

May import: ``persistence.model.packed_run`` only.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, overload

from persistence.model.packed_run import PackedRun

Record = dict[str, Any]
Item = Record | PackedRun


class EventTable(Sequence[Record]):
    """An append-only list of event records stored as scalar records and packed runs."""

    __slots__ = ("_flat", "_n", "items", "starts")

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self.items: list[Item] = []
        self.starts: list[int] | None = None
        self._n = 0
        self._flat: list[Record] | None = None
        self.extend_items(items)

    @classmethod
    def adopt(cls, records: list[Any]) -> EventTable:
        """A table over ``records`` itself (no copy): the caller hands the list over and never
        touches it again.  A list that holds runs is indexed like any other."""
        table = cls()
        if any(type(r) is PackedRun for r in records):
            table.extend_items(records)
            return table
        table.items = records
        table._n = len(records)
        return table

    # ------------------------------------------------------------ growth

    def append(self, record: Record) -> None:
        """Append one scalar event record (the table keeps it; never mutate it afterwards)."""
        if self.starts is not None:
            self.starts.append(self._n)
        self.items.append(record)
        self._n += 1

    def append_run(self, run: PackedRun) -> None:
        """Append a packed run of chunk events."""
        if self.starts is None:
            self.starts = list(range(len(self.items)))
        self.starts.append(self._n)
        self.items.append(run)
        self._n += len(run)

    def extend_items(self, items: Iterable[Item]) -> None:
        """Append scalar records and runs in order (in bulk: a reader hands over a MiB of records at a
        time, and a method call per item cost ~3 ms of a 202k-event read)."""
        batch = items if type(items) is list else list(items)
        if not batch:
            return
        n = self._n
        if self.starts is None:
            if PackedRun not in set(map(type, batch)):
                self.items.extend(batch)
                self._n = n + len(batch)
                return
            self.starts = list(range(len(self.items)))
        sizes = [len(it.payload) if type(it) is PackedRun else 1 for it in batch]
        marks = list(accumulate(sizes, initial=n))
        self._n = marks.pop()
        self.starts.extend(marks)
        self.items.extend(batch)

    def extend(self, records: Iterable[Record]) -> None:
        """Append scalar records (``list.extend``'s spelling)."""
        for r in records:
            self.append(r)

    def replace_last(self, record: Record) -> None:
        """Swap the newest scalar record for ``record`` (an unpublished marker being re-stamped)."""
        if type(self.items[-1]) is PackedRun:
            raise TypeError("the newest event is inside a packed run")
        self.items[-1] = record
        if self._flat is not None and len(self._flat) == self._n:
            self._flat[-1] = record

    # ------------------------------------------------------------ reading

    @property
    def has_runs(self) -> bool:
        """Whether any item is a packed run."""
        return self.starts is not None

    def __len__(self) -> int:
        return self._n

    def locate(self, index: int) -> tuple[int, int]:
        """(item position, offset inside it) of event ``index`` (0 <= index < len)."""
        starts = self.starts
        if starts is None:
            return index, 0
        k = bisect_right(starts, index) - 1
        return k, index - starts[k]

    def start_of(self, k: int) -> int:
        """The event index of ``items[k]``."""
        return k if self.starts is None else self.starts[k]

    @overload
    def __getitem__(self, index: int) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> EventTable: ...
    def __getitem__(self, index: int | slice) -> Record | EventTable:
        if isinstance(index, slice):
            lo, hi, step = index.indices(self._n)
            if step != 1:
                return EventTable(list(self)[index])
            return self.between(lo, hi)
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("event index out of range")
        if self.starts is None:
            return self.items[index]  # type: ignore[return-value]
        k, off = self.locate(index)
        it = self.items[k]
        if type(it) is PackedRun:
            return it.member(off)
        return it  # type: ignore[return-value]

    def segments(self, lo: int = 0, hi: int | None = None) -> Iterator[Item]:
        """The items covering events ``lo:hi``, a run cut at either end becoming a shorter run."""
        stop = self._n if hi is None else min(hi, self._n)
        if lo >= stop:
            return
        if self.starts is None:
            yield from self.items[lo:stop]
            return
        k, off = self.locate(lo)
        items, starts = self.items, self.starts
        pos = lo
        while pos < stop:
            it = items[k]
            if type(it) is PackedRun:
                end = min(len(it), stop - starts[k])
                yield it.sub(off, end)
                pos = starts[k] + end
            else:
                yield it
                pos += 1
            k += 1
            off = 0

    def between(self, lo: int, hi: int) -> EventTable:
        """Events ``lo:hi`` as a new table sharing records and runs with this one."""
        if lo == 0 and hi >= self._n and self.starts is None:
            return EventTable.adopt(self.items[:])
        return EventTable(self.segments(lo, hi))

    def __iter__(self) -> Iterator[Record]:
        for it in self.items:
            if type(it) is PackedRun:
                yield from it.members()
            else:
                yield it  # type: ignore[misc]

    def iter_range(self, lo: int, hi: int) -> Iterator[Record]:
        """Records of events ``lo:hi`` (members built as they are reached)."""
        for it in self.segments(lo, hi):
            if type(it) is PackedRun:
                yield from it.members()
            else:
                yield it  # type: ignore[misc]

    def scalars(self, lo: int = 0, hi: int | None = None) -> Iterator[tuple[int, Record]]:
        """(event index, record) of every event in ``lo:hi`` that is not inside a packed run.

        Turn/step folds ignore streaming deltas, so they walk this and skip runs in one step.
        """
        stop = self._n if hi is None else min(hi, self._n)
        if self.starts is None:
            items = self.items
            for i in range(lo, stop):
                yield i, items[i]  # type: ignore[misc]
            return
        if lo >= stop:
            return
        k, _ = self.locate(lo)
        items, starts = self.items, self.starts
        for j in range(k, len(items)):
            s = starts[j]
            if s >= stop:
                return
            it = items[j]
            if type(it) is not PackedRun:
                yield s, it  # type: ignore[misc]

    def last(self) -> Record:
        """The newest event record (IndexError on an empty table)."""
        it = self.items[-1]
        if type(it) is PackedRun:
            return it.member(-1)
        return it  # type: ignore[return-value]

    def records(self) -> list[Record]:
        """Every event as a record list (engine-internal; built once and kept up to date as the
        table grows, so only callers that need a plain list pay for the expansion)."""
        if self.starts is None:
            return self.items  # type: ignore[return-value]
        flat = self._flat
        if flat is None:
            flat = self._flat = list(self)
            return flat
        if len(flat) < self._n:
            flat.extend(self.iter_range(len(flat), self._n))
        return flat

    def __add__(self, other: Sequence[Record]) -> EventTable:
        out = EventTable(self.items)
        if isinstance(other, EventTable):
            out.extend_items(other.items)
        else:
            out.extend_items(other)
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (EventTable, list, tuple)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventTable(<{self._n} events in {len(self.items)} items>)"


def table_of(events: Sequence[Record] | EventTable) -> EventTable:
    """``events`` as a table (a plain list is wrapped without copying: do not mutate it afterwards)."""
    if isinstance(events, EventTable):
        return events
    if isinstance(events, list):
        return EventTable.adopt(events)
    return EventTable(events)


__all__ = ["EventTable", "Item", "Record", "table_of"]
