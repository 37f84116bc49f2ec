"""SessionEvent: one immutable entry of the append-only log."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from persistence.model.event_table import EventTable, table_of
from persistence.model.frozen import FrozenDict, freeze, raw_of
from persistence.model.jsontext import deep_copy_json
from persistence.model.packed_run import PackedRun

SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """One immutable event of a session log (``data`` is a read-only view)."""

    type: str
    seq: int
    time: int
    data: Any
    source_event_seqs: tuple[int, ...] | None = None
    surface_op: Any = None
    ignorable: bool = False
    # The record exactly as stored or appended: writers keep its key order (upstream's
    # JSONL writer does not reorder, jsonl-backend §6.1).
    _wire: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """A detached copy of the on-disk envelope (camelCase, absent optionals omitted)."""
        if self._wire:
            return deep_copy_json(self._wire)
        return deep_copy_json(_build_wire(self))

    @property
    def wire(self) -> dict[str, Any]:
        """Engine-internal: the record itself. Never mutate."""
        return self._wire

    @classmethod
    def from_json(cls, record: Any) -> SessionEvent:
        """An event from a JSON record (deep-copied: the caller keeps its object)."""
        if not isinstance(record, dict):
            raise TypeError("a session event must be a JSON object")
        return event_from_wire(deep_copy_json(raw_of(record)))

    @classmethod
    def make(
        cls,
        type: str,
        seq: int,
        time: int,
        data: Any,
        *,
        source_event_seqs: Sequence[int] | None = None,
        surface_op: Any = None,
        ignorable: bool = False,
    ) -> SessionEvent:
        """A new event from its fields (``data`` is deep-copied)."""
        wire: dict[str, Any] = {"type": type, "seq": seq, "time": time, "data": deep_copy_json(raw_of(data))}
        if source_event_seqs is not None:
            wire["sourceEventSeqs"] = list(source_event_seqs)
        if surface_op is not None:
            wire["surfaceOp"] = deep_copy_json(raw_of(surface_op))
        if ignorable:
            wire["ignorable"] = True
        return event_from_wire(wire)


def _build_wire(ev: SessionEvent) -> dict[str, Any]:
    wire: dict[str, Any] = {"type": ev.type, "seq": ev.seq, "time": ev.time, "data": raw_of(ev.data)}
    if ev.source_event_seqs is not None:
        wire["sourceEventSeqs"] = list(ev.source_event_seqs)
    if ev.surface_op is not None:
        wire["surfaceOp"] = raw_of(ev.surface_op)
    if ev.ignorable:
        wire["ignorable"] = True
    return wire


def _int(v: Any) -> Any:
    return int(v) if type(v) is float and v == int(v) else v


def event_from_wire(wire: dict[str, Any]) -> SessionEvent:
    """Wrap an engine-owned record (no copy) as a SessionEvent."""
    ses = wire.get("sourceEventSeqs")
    return SessionEvent(
        wire.get("type"),  # type: ignore[arg-type]
        _int(wire.get("seq")),
        _int(wire.get("time")),
        freeze(wire.get("data")),
        tuple(_int(s) for s in ses) if isinstance(ses, list) else ses,
        freeze(wire.get("surfaceOp")),
        wire.get("ignorable") is True,
        wire,
    )


def wire_of(event: SessionEvent | dict[str, Any] | FrozenDict) -> dict[str, Any]:
    """The engine's record behind an event or frozen view (no copy; never mutate it)."""
    if isinstance(event, SessionEvent):
        return event._wire or _build_wire(event)
    return raw_of(event)


class EventLog(Sequence[SessionEvent]):
    """An immutable sequence of events over the engine's ``EventTable``.

    Chunk runs stay packed: ``len()``, slicing and iteration never expand the log, and a
    ``SessionEvent`` (with its member record) is built when an index is touched and then kept, so
    ``log[i] is log[i]``.  A slice is a view (O(1)).  Code that walks a whole log should walk
    ``segments()``: a packed run of 500 deltas is one step there.
    """

    __slots__ = ("_cache", "_hi", "_lo", "_table")

    def __init__(self, records: EventTable | list[dict[str, Any]], length: int | None = None, *, start: int = 0) -> None:
        # ``length`` lets a live session hand out O(1) snapshots of its append-only table:
        # later appends land beyond the snapshot's end and are never visible through it.
        table = table_of(records)
        self._table = table
        self._lo = start
        self._hi = len(table) if length is None else length
        # A dict, not a preallocated list: a snapshot of a 200k-event live log costs O(1).
        self._cache: dict[int, SessionEvent] = {}

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> EventLog: ...
    def __getitem__(self, index: int | slice) -> SessionEvent | EventLog:
        n = self._hi - self._lo
        if isinstance(index, slice):
            lo, hi, step = index.indices(n)
            if step != 1:
                return EventLog([self._table[self._lo + i] for i in range(lo, hi, step)])
            return EventLog(self._table, self._lo + max(hi, lo), start=self._lo + lo)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("event index out of range")
        ev = self._cache.get(index)
        if ev is None:
            ev = event_from_wire(self._table[self._lo + index])
            self._cache[index] = ev
        return ev

    def __len__(self) -> int:
        return self._hi - self._lo

    def __iter__(self) -> Iterator[SessionEvent]:
        cache = self._cache
        i = 0
        for rec in self._table.iter_range(self._lo, self._hi):
            ev = cache.get(i)
            if ev is None:
                ev = cache[i] = event_from_wire(rec)
            yield ev
            i += 1

    def segments(self) -> Iterator[dict[str, Any] | PackedRun]:
        """The log as scalar records and ``PackedRun``s, in order (records are engine-owned: never mutate)."""
        return self._table.segments(self._lo, self._hi)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventLog):
            return len(other) == len(self) and all(
                a == b for a, b in zip(self._records_iter(), other._records_iter(), strict=True)
            )
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(wire_of(o) == r for o, r in zip(other, self._records_iter(), strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _records_iter(self) -> Iterator[dict[str, Any]]:
        return self._table.iter_range(self._lo, self._hi)

    def records(self) -> list[dict[str, Any]]:
        """Engine-internal: the events as records, expanded (built once per table). Never mutate."""
        flat = self._table.records()
        if self._lo == 0 and self._hi == len(flat):
            return flat
        return flat[self._lo : self._hi]

    def record_table(self) -> EventTable:
        """The log's records as a read-only ``EventTable`` (never mutate it): indexing builds one record,
        ``segments()``/``scalars()`` walk the log a packed run at a time.  O(1) for a whole log,
        O(items) for a slice or a live snapshot; no run is expanded."""
        if self._lo == 0 and self._hi == len(self._table):
            return self._table
        return self._table.between(self._lo, self._hi)

    @property
    def table(self) -> EventTable:
        """Engine-internal: the table behind this log (it may run past this log's end)."""
        return self._table

    @property
    def bounds(self) -> tuple[int, int]:
        """Engine-internal: this log's ``[start, end)`` in ``table``."""
        return self._lo, self._hi

    def to_json(self) -> list[dict[str, Any]]:
        """A detached deep copy of every record."""
        return [deep_copy_json(r) for r in self._records_iter()]

    def __repr__(self) -> str:
        return f"EventLog(<{len(self)} events>)"
