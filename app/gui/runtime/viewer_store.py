"""The window's handle on the engine: every call awaited, one at a time.

``CoordinatedPersistence`` keeps an LRU of prepared sources that its worker threads touch without a
lock, so two reads of different sessions running at once can raise ``KeyError`` from inside the
engine.  Until that is fixed there, the window's calls go through this gate.  It costs little: the
reads are GIL-bound, so they would not have overlapped usefully anyway.  Each call also runs under
the GC policy of ``gcpolicy`` so a big decode does not end in a long collection on the GUI.
"""

from __future__ import annotations

import asyncio
from typing import Any

from app.gui.gcpolicy import engine_call
from persistence import CoordinatedPersistence, SessionDiagnosis, SessionInspection, open_store
from persistence.values import ReadFromResult, SessionLocation, SessionPersistenceSnapshot


def open_for_viewing(path: str) -> CoordinatedPersistence:
    """The engine store for a root, opened read-only: a viewer must never change what it shows.

    (JSONL reads never write; a SQLite store is opened ``mode=ro`` so it is neither checkpointed nor
    converted, and still sees a live writer's ``-wal``.)
    """
    return open_store(path, read_only=True, create=False)


class EngineGate:
    def __init__(self, store: CoordinatedPersistence) -> None:
        self.store = store
        self._lock = asyncio.Lock()

    @property
    def compression(self) -> str | None:
        return getattr(self.store, "compression", None)

    def locate(self, meta: Any) -> SessionLocation | None:
        return self.store.locate(meta)

    async def diagnose(self, session_id: str) -> SessionDiagnosis:
        async with self._lock:
            with engine_call():
                return await self.store.diagnose(session_id)

    async def inspect(self, session_id: str) -> SessionInspection:
        async with self._lock:
            with engine_call():
                return await self.store.inspect(session_id)

    async def read_from(self, session_id: str, seq: int) -> ReadFromResult:
        async with self._lock:
            with engine_call():
                return await self.store.read_from(session_id, seq)

    async def read_tail(self, session_id: str, min_events: int) -> ReadFromResult:
        async with self._lock:
            with engine_call():
                return await self.store.read_tail(session_id, min_events)

    async def list_snapshots(self) -> list[SessionPersistenceSnapshot]:
        async with self._lock:
            with engine_call():
                return await self.store.list_snapshots()

    async def close(self) -> None:
        async with self._lock:
            await self.store.close()
