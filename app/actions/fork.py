"""Fork after a completed turn: a new session in the same root whose seed is the parent's prefix."""

from __future__ import annotations

from typing import Any

from persistence import CoordinatedPersistence, SessionPersistenceError, SessionStore


def completed_turn_boundaries(events: list[dict[str, Any]]) -> dict[int, int]:
    """turn number -> seq of its ``turn/end`` (only turns that closed)."""
    out: dict[int, int] = {}
    for ev in events:
        if ev.get("type") == "turn/end":
            data = ev.get("data")
            turn = data.get("turn") if isinstance(data, dict) else None
            if isinstance(turn, int):
                out[turn] = ev["seq"]
    return out


async def fork_after_turn(store: CoordinatedPersistence, session_id: str, turn: int | None,
                          new_id: str | None = None) -> dict[str, Any]:
    """Fork after turn ``turn`` (None: the last completed turn). The parent's log is never written.

    Only a ``turn/end`` the parent really stored counts: the synthetic closers ``inspect`` adds to an
    interrupted (or still running) turn are not a completed turn, and a seed must be a prefix of the
    parent's own log.
    """
    diagnosis = await store.diagnose(session_id)
    inspection = await store.inspect(session_id)
    records = inspection.events.records()
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
    sessions = SessionStore(store)
    try:
        child = await sessions.fork(session_id, boundary=boundaries[turn], new_id=new_id)
        await sessions.flush(child.id)
        header = child.header.to_json()
        count = child.seq
    finally:
        await sessions.close()
    return {"id": header["id"], "parentSession": session_id, "afterTurn": turn, "seedLength": header.get("seedLength"),
            "events": count, "header": header}
