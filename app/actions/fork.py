"""Fork after a completed turn: a new session in the same root whose seed is the parent's prefix.

Both front ends call the same pair: ``plan_fork`` (reads only: which turn, which boundary) and
``execute_fork`` (writes the child, never the parent).  ``fork_after_turn`` is the two back to back
and returns the command line's JSON.  May import the standard library and the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from persistence import CoordinatedPersistence, EventTable, SessionLocation, SessionPersistenceError, SessionStore


@dataclass(frozen=True, slots=True)
class ForkPlan:
    session_id: str
    turn: int  # the completed turn the child starts after
    boundary: int  # seq of that turn's stored ``turn/end``: the last event of the seed


@dataclass(frozen=True, slots=True)
class ForkResult:
    parent_id: str
    after_turn: int
    header: dict[str, Any]  # the child's header as JSON
    events: int  # events the child holds (its seed plus ``session/end-seed``)
    location: SessionLocation | None  # where the child's artifact lives (None: the store cannot say)

    @property
    def child_id(self) -> str:
        return str(self.header["id"])

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.header["id"],
            "parentSession": self.parent_id,
            "afterTurn": self.after_turn,
            "seedLength": self.header.get("seedLength"),
            "events": self.events,
            "header": self.header,
        }


def completed_turn_boundaries(events: Sequence[dict[str, Any]]) -> dict[int, int]:
    """turn number -> seq of its ``turn/end`` (only turns that closed)."""
    out: dict[int, int] = {}
    # Over scalar records only: a packed run of chunk deltas is never a turn/end.
    scalars = events.scalars() if isinstance(events, EventTable) else enumerate(events)
    for _i, ev in scalars:
        if ev.get("type") == "turn/end":
            data = ev.get("data")
            turn = data.get("turn") if isinstance(data, dict) else None
            if isinstance(turn, int):
                out[turn] = ev["seq"]
    return out


async def plan_fork(store: CoordinatedPersistence, session_id: str, turn: int | None) -> ForkPlan:
    """Which boundary a fork after turn ``turn`` (None: the last completed turn) starts from.  Reads only.

    Only a ``turn/end`` the parent really stored counts: the synthetic closers ``inspect`` adds to an
    interrupted (or still running) turn are not a completed turn, and a seed must be a prefix of the
    parent's own log.
    """
    diagnosis = await store.diagnose(session_id)
    inspection = await store.inspect(session_id)
    records = inspection.events.record_table()
    if diagnosis.closers:
        records = records[: len(records) - len(diagnosis.closers)]
    boundaries = completed_turn_boundaries(records)
    if not boundaries:
        raise SessionPersistenceError(f'session "{session_id}" has no completed turn to fork after')
    if turn is None:
        turn = max(boundaries, key=lambda t: boundaries[t])
    if turn not in boundaries:
        raise SessionPersistenceError(
            f'session "{session_id}" has no completed turn {turn} (completed: {", ".join(map(str, sorted(boundaries)))})'
        )
    return ForkPlan(session_id, turn, boundaries[turn])


async def execute_fork(store: CoordinatedPersistence, plan: ForkPlan, new_id: str | None = None) -> ForkResult:
    """Write the child (id ``new_id``, default a new uuid4) seeded with the parent's log through the plan's
    boundary.  The parent's log is never written."""
    sessions = SessionStore(store)
    try:
        child = await sessions.fork(plan.session_id, boundary=plan.boundary, new_id=new_id)
        await sessions.flush(child.id)
        header = child.header.to_json()
        count = child.seq
    finally:
        await sessions.close()
    return ForkResult(plan.session_id, plan.turn, header, count, store.locate(header))


async def fork_after_turn(
    store: CoordinatedPersistence, session_id: str, turn: int | None, new_id: str | None = None
) -> dict[str, Any]:
    """Fork after turn ``turn`` (None: the last completed turn); the command line's JSON of the child."""
    plan = await plan_fork(store, session_id, turn)
    return (await execute_fork(store, plan, new_id)).to_json()
