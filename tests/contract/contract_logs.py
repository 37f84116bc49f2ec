"""Stored logs shared by the contract suite's files: the turn-1 event types, a session stored through the
public API, and a session's listed revision.

One place for them because every contract area (create, append, reads, repair, listing, live sessions)
starts from the same one-turn log (persistence-contract §9.0).  May import ``sessionkit`` (the suite's
builders), ``contract_backends`` and the public ``persistence`` package only.
"""

from __future__ import annotations

from typing import Any

from contract_backends import BackendKit
from sessionkit import WORK, meta, one_turn_log

from persistence import CoordinatedPersistence

# The event types of sessionkit.one_turn_log(), in order (seq 0-5).
TURN1 = ["turn/start", "user/message", "step/start", "assistant/message", "step/end", "turn/end"]


async def stored(kit: BackendKit, session_id: str, events: list[dict[str, Any]], cwd: str | None = WORK, **extra: Any) -> None:
    """Persist ``events`` through the public API of a throwaway instance (the test's instance stays cold)."""
    p = kit.make()
    await p.create(meta(session_id, cwd, **extra))
    await p.append(session_id, events)


async def stored_one_turn(
    kit: BackendKit, session_id: str = "s1", cwd: str | None = "/proj", **extra: Any
) -> CoordinatedPersistence:
    """Create ``session_id`` and append the one-turn log; the instance that wrote it is returned (it stays warm)."""
    store = kit.make()
    await store.create(meta(session_id, cwd, **extra))
    await store.append(session_id, one_turn_log())
    return store


async def revision_of(store: Any, session_id: str) -> str:
    """The revision ``list_snapshots`` reports for ``session_id`` (KeyError when it is not listed)."""
    snaps = {s.header.id: s.revision for s in await store.list_snapshots()}
    return snaps[session_id]
