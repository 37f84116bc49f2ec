"""Fork after a completed turn: a new session in the same root whose seed is the parent's prefix.

Both front ends call the same pair: ``plan_fork`` (reads only: which turn, which boundary, the
parent's title) and ``execute_fork`` (writes the child, never the parent).  ``fork_after_turn`` is
the two back to back and returns the command line's JSON.

A fork may get a title of its own (issue 14: the fork dialog's name field, default ``fork_title``):
it is appended to the *new* session as a ``session/title`` event with source ``{kind: "user"}`` (an
explicit name pins the title, event-catalog.json), after the seed and its end marker, so the seed
stays the parent's prefix byte for byte and the parent is never written.

A refusal (no such completed turn) is the engine's ``SessionForkError`` with upstream's
``INVALID_BOUNDARY`` code: the class upstream's own fork throws, which the command line reports.

May import the standard library, ``app.records`` (the parent's title) and the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.records import latest_title
from persistence import (
    CoordinatedPersistence,
    EventTable,
    EventType,
    SessionArgumentError,
    SessionForkError,
    SessionLocation,
    SessionStore,
)

UNTITLED = "Untitled session"  # what a fork title names a parent that has no title


def fork_title(parent_title: str | None, turn: int) -> str:
    """The default title of a fork: ``<parent title> (fork after turn N)``."""
    base = normalize_title(parent_title or "") or UNTITLED
    return f"{base} (fork after turn {turn})"


def normalize_title(title: str) -> str:
    """A title as it is stored: whitespace runs (newlines included) become one space, ends trimmed."""
    return " ".join(title.split())


@dataclass(frozen=True, slots=True)
class ForkPlan:
    session_id: str
    turn: int  # the completed turn the child starts after
    boundary: int  # seq of that turn's stored ``turn/end``: the last event of the seed
    parent_title: str | None = None  # the parent's title (latest ``session/title``), None when it has none

    @property
    def default_title(self) -> str:
        """The fork dialog's default name: ``<parent title> (fork after turn N)``."""
        return fork_title(self.parent_title, self.turn)


@dataclass(frozen=True, slots=True)
class ForkResult:
    parent_id: str
    after_turn: int
    header: dict[str, Any]  # the child's header as JSON
    events: int  # events the child holds (its seed plus ``session/end-seed``, plus its title event)
    location: SessionLocation | None  # where the child's artifact lives (None: the store cannot say)
    title: str | None = None  # the title written into the child (None: none was asked for)

    @property
    def child_id(self) -> str:
        return str(self.header["id"])

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.header["id"],
            "parentSession": self.parent_id,
            "afterTurn": self.after_turn,
            "seedLength": self.header.get("seedLength"),
            "events": self.events,
            "header": self.header,
        }
        if self.title is not None:  # only a titled fork says so: an untitled fork's JSON is unchanged
            out["title"] = self.title
        return out


def completed_turn_boundaries(events: Sequence[dict[str, Any]]) -> dict[int, int]:
    """turn number -> seq of its ``turn/end`` (only turns that closed)."""
    out: dict[int, int] = {}
    # Over scalar records only: a packed run of chunk deltas is never a turn/end.
    scalars = events.scalars() if isinstance(events, EventTable) else enumerate(events)
    for _i, ev in scalars:
        if ev.get("type") == EventType.TURN_END:
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
        raise SessionForkError(f'session "{session_id}" has no completed turn to fork after', "INVALID_BOUNDARY")
    if turn is None:
        turn = max(boundaries, key=lambda t: boundaries[t])
    if turn not in boundaries:
        raise SessionForkError(
            f'session "{session_id}" has no completed turn {turn} (completed: {", ".join(map(str, sorted(boundaries)))})',
            "INVALID_BOUNDARY",
        )
    return ForkPlan(session_id, turn, boundaries[turn], latest_title(records))


async def execute_fork(
    store: CoordinatedPersistence, plan: ForkPlan, new_id: str | None = None, title: str | None = None
) -> ForkResult:
    """Write the child (id ``new_id``, default a new uuid4) seeded with the parent's log through the plan's
    boundary, titled ``title`` when one is given (a ``session/title`` event in the child only).  The
    parent's log is never written.  A title that is blank once normalized is refused before anything is written."""
    name: str | None = None
    if title is not None:
        name = normalize_title(title)
        if not name:
            raise SessionArgumentError("a fork title must not be empty")
    sessions = SessionStore(store)
    try:
        child = await sessions.fork(plan.session_id, boundary=plan.boundary, new_id=new_id)
        if name is not None:
            # After the seed's end marker: the child's own first event.  messageSeqs [] and source user:
            # an explicit rename (event-catalog.json), which the harness keeps instead of regenerating.
            child.append(EventType.SESSION_TITLE, {"title": name, "messageSeqs": [], "source": {"kind": "user"}})
        await sessions.flush(child.id)
        header = child.header.to_json()
        count = child.seq
    finally:
        await sessions.close()
    return ForkResult(plan.session_id, plan.turn, header, count, store.locate(header), name)


async def fork_after_turn(
    store: CoordinatedPersistence, session_id: str, turn: int | None, new_id: str | None = None, title: str | None = None
) -> dict[str, Any]:
    """Fork after turn ``turn`` (None: the last completed turn); the command line's JSON of the child."""
    plan = await plan_fork(store, session_id, turn)
    return (await execute_fork(store, plan, new_id, title)).to_json()
