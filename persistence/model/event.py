"""SessionEvent: one immutable entry of the append-only log."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from persistence.model.frozen import FrozenDict, freeze, raw_of
from persistence.model.jsontext import deep_copy_json

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
    """An immutable sequence of events backed by engine-owned records.

    SessionEvent objects are built on first access: loading a 200k-event log should not
    pay for objects nobody looks at.
    """

    __slots__ = ("_cache", "_len", "_records")

    def __init__(self, records: list[dict[str, Any]], length: int | None = None) -> None:
        # ``length`` lets a live session hand out O(1) snapshots of its append-only list:
        # later appends land beyond the snapshot's end and are never visible through it.
        self._records = records
        self._len = len(records) if length is None else length
        # A dict, not a preallocated list: a snapshot of a 200k-event live log costs O(1).
        self._cache: dict[int, SessionEvent] = {}

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> EventLog: ...
    def __getitem__(self, index: int | slice) -> SessionEvent | EventLog:
        if isinstance(index, slice):
            return EventLog(self.records()[index])
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("event index out of range")
        ev = self._cache.get(index)
        if ev is None:
            ev = event_from_wire(self._records[index])
            self._cache[index] = ev
        return ev

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[SessionEvent]:
        for i in range(self._len):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventLog):
            return self.records() == other.records()
        if isinstance(other, (list, tuple)):
            return len(other) == self._len and all(wire_of(o) == r for o, r in zip(other, self.records(), strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def records(self) -> list[dict[str, Any]]:
        """Engine-internal: the backing records. Never mutate."""
        if self._len == len(self._records):
            return self._records
        return self._records[: self._len]

    def to_json(self) -> list[dict[str, Any]]:
        """A detached deep copy of every record."""
        return deep_copy_json(self.records())

    def __repr__(self) -> str:
        return f"EventLog(<{self._len} events>)"
