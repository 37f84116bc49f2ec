"""PackedRun: a validated run of ``assistant/chunk`` deltas kept packed in memory.

Why: a 200k-event log is mostly streaming deltas (in real logs 85-95 % of events).  Expanding
every stored chunk row into three dicts per member cost about 20 % of a full read, and the GC
pass those 600k containers provoked another 13 % (issue 12's profile of a 202k inspect).  A
run is validated once, at row level (jsonl-backend §7.4: the row's shape, its seq run, its time
range), after which every member is valid by construction; members are built only when
somebody looks at one.

The value is immutable: payload and time deltas are tuples, and every member handed out is a
fresh dict, so a caller that mutates what it got cannot change the log.  Member times are kept
as upstream stores them (``time0`` plus deltas) and summed when members are built: the read
then proves the time range from the deltas' extremes alone (see ``chunk_rows.validate_row``).

May import: ``persistence.model.jsontext`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Any

CHUNK_TYPE = "assistant/chunk"
TOOL_KIND = "tool-call-delta"


@dataclass(frozen=True, slots=True)
class PackedRun:
    """``len(payload)`` contiguous chunk events: seqs ``seq0 ..``, one kind, turn, step and index.

    ``kind`` is the chunk type (``text-delta``, ``reasoning-delta`` or ``tool-call-delta``);
    ``payload`` holds each member's ``text`` (or ``argumentsDelta`` for tool-call deltas); ``name``
    is None when the tool-call chunks carry no name (the key is then absent from members).
    """

    kind: str
    seq0: int
    time0: int
    dt: tuple[int, ...]  # len(payload) - 1 deltas: member k's time is time0 + sum(dt[:k])
    turn: Any
    step: Any
    index: Any
    payload: tuple[str, ...]
    call_id: str | None = None
    name: str | None = None

    def __len__(self) -> int:
        return len(self.payload)

    @property
    def times(self) -> tuple[int, ...]:
        """Every member's time."""
        return tuple(accumulate(self.dt, initial=self.time0))

    @property
    def last_seq(self) -> int:
        """The seq of the run's last member."""
        return self.seq0 + len(self.payload) - 1

    def _chunk_head(self) -> tuple[dict[str, Any], str]:
        """The chunk keys every member shares, in upstream's order, and the key of its payload."""
        if self.kind != TOOL_KIND:
            return {"type": self.kind, "index": self.index}, "text"
        if self.name is None:
            return {"type": self.kind, "index": self.index, "id": self.call_id}, "argumentsDelta"
        return {"type": self.kind, "index": self.index, "id": self.call_id, "name": self.name}, "argumentsDelta"

    def chunk(self, k: int) -> dict[str, Any]:
        """Member ``k``'s ``data.chunk`` object (fresh), keys in upstream's order."""
        head, key = self._chunk_head()
        head[key] = self.payload[k]
        return head

    def member(self, k: int) -> dict[str, Any]:
        """Member ``k`` (0-based, negative counts from the end) as a fresh event record."""
        n = len(self.payload)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("packed run member out of range")
        return {
            "type": CHUNK_TYPE,
            "seq": self.seq0 + k,
            "time": self.time0 + sum(self.dt[:k]),
            "data": {"turn": self.turn, "step": self.step, "chunk": self.chunk(k)},
        }

    def members(self) -> list[dict[str, Any]]:
        """Every member as fresh event records (one comprehension: the eager path's hot loop)."""
        turn, step = self.turn, self.step
        head, key = self._chunk_head()
        seqs = range(self.seq0, self.seq0 + len(self.payload))
        times = accumulate(self.dt, initial=self.time0)
        return [
            {"type": CHUNK_TYPE, "seq": s, "time": tm, "data": {"turn": turn, "step": step, "chunk": {**head, key: p}}}
            for s, tm, p in zip(seqs, times, self.payload, strict=True)
        ]

    def sub(self, lo: int, hi: int) -> PackedRun:
        """Members ``lo:hi`` as a run of their own (0 <= lo < hi <= len)."""
        if lo == 0 and hi == len(self.payload):
            return self
        return PackedRun(
            self.kind,
            self.seq0 + lo,
            self.time0 + sum(self.dt[:lo]),
            self.dt[lo : hi - 1],
            self.turn,
            self.step,
            self.index,
            self.payload[lo:hi],
            self.call_id,
            self.name,
        )

    def text(self) -> str:
        """The run's payload joined (the text a timeline shows for the whole run)."""
        return "".join(self.payload)


_FIELDS = ("kind", "seq0", "time0", "dt", "turn", "step", "index", "payload", "call_id", "name")
_SETTERS = tuple(getattr(PackedRun, field).__set__ for field in _FIELDS)
_new = object.__new__


def make_run(
    kind: str,
    seq0: int,
    time0: int,
    dt: tuple[int, ...],
    turn: Any,
    step: Any,
    index: Any,
    payload: tuple[str, ...],
    call_id: str | None = None,
    name: str | None = None,
) -> PackedRun:
    """``PackedRun(...)`` for a reader's hot loop: the same value, built through the slots' own setters.

    Why: the frozen dataclass's ``__init__`` routes each of the ten fields through
    ``object.__setattr__`` (1.07 us a run against 0.55 us here); a 202k-event log builds 2,859 runs.
    """
    run = _new(PackedRun)
    k, s0, t0, d, tu, st, ix, pl, ci, nm = _SETTERS
    k(run, kind)
    s0(run, seq0)
    t0(run, time0)
    d(run, dt)
    tu(run, turn)
    st(run, step)
    ix(run, index)
    pl(run, payload)
    ci(run, call_id)
    nm(run, name)
    return run


__all__ = ["CHUNK_TYPE", "PackedRun", "make_run"]
