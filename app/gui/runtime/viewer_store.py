"""The window's handle on the engine: a store opened read-only, every read under the collector policy.

No lock.  The window used to serialise its engine calls through an ``asyncio.Lock`` because the
engine's LRU of prepared sources was touched by worker threads without one.  It has one now
(``CoordinatedPersistence._cache_lock`` guards ``_cache_put``, ``_cache_drop`` and both looks of
``_cached_fresh``; the JSONL tail marks and the SQLite connection have their own locks), the engine
serialises calls per session id itself, and its ``close()`` waits for work still running on any id.
So two reads of different sessions (a load and the in-process diagnosis pass) may now overlap; they
are GIL-bound, so what they gain is not waiting behind each other's I/O.

What stays: each call runs inside ``collector_paused()`` (``runtime.collector``) so a big decode
does not end in a long collection on the GUI thread, and the engine's own pause nests inside it.

May import: the public ``persistence`` package and ``runtime.collector``; never Qt (worker processes
import this module).
"""

from __future__ import annotations

from typing import Any

from app.gui.runtime.collector import collector_paused
from persistence import (
    CoordinatedPersistence,
    ListedEntry,
    ReadablePrefix,
    ReadFromResult,
    SessionDiagnosis,
    SessionInspection,
    SessionLocation,
    SessionPersistenceSnapshot,
    SessionView,
    open_store,
)


def open_for_viewing(path: str) -> CoordinatedPersistence:
    """The engine store for a root, opened read-only: a viewer must never change what it shows.

    (JSONL reads never write; a SQLite store is opened ``mode=ro`` so it is neither checkpointed nor
    converted, and still sees a live writer's ``-wal``.)
    """
    return open_store(path, read_only=True, create=False)


class ViewerStore:
    """The engine calls the window makes, each awaited under the collector policy."""

    def __init__(self, engine: CoordinatedPersistence) -> None:
        self.engine = engine

    @property
    def compression(self) -> str | None:
        """JSONL: the transcripts' encoding (``"zstd"`` or ``"none"``); None for SQLite."""
        return self.engine.compression

    def locate(self, meta: Any) -> SessionLocation | None:
        return self.engine.locate(meta)

    async def diagnose(self, session_id: str) -> SessionDiagnosis:
        with collector_paused():
            return await self.engine.diagnose(session_id)

    async def view(self, session_id: str, *, raw: bool = False) -> SessionView:
        """One read of the log: verdict, stored events, closers, torn facts and (``raw``) the bytes it parsed."""
        with collector_paused():
            return await self.engine.view(session_id, raw=raw)

    async def inspect(self, session_id: str) -> SessionInspection:
        with collector_paused():
            return await self.engine.inspect(session_id)

    async def read_from(self, session_id: str, seq: int) -> ReadFromResult:
        with collector_paused():
            return await self.engine.read_from(session_id, seq)

    async def read_tail(self, session_id: str, min_events: int) -> ReadFromResult:
        with collector_paused():
            return await self.engine.read_tail(session_id, min_events)

    async def readable_prefix(self, session_id: str) -> ReadablePrefix | None:
        """A refused session's header as written and its events before the first damage (any backend)."""
        with collector_paused():
            return await self.engine.readable_prefix(session_id)

    async def list_snapshots(self) -> list[SessionPersistenceSnapshot]:
        with collector_paused():
            return await self.engine.list_snapshots()

    async def list_entries(self) -> list[ListedEntry]:
        """Every session and every bad entry, one row each (SQLite: a row that fails validation is a bad row)."""
        with collector_paused():
            return await self.engine.list_entries()

    async def session_sizes(self, session_ids: list[str] | None = None) -> dict[str, tuple[int, int | None]]:
        """session id -> (bytes, newest change in ms) for the list's Size and Modified columns."""
        return await self.engine.session_sizes(session_ids)

    async def close(self) -> None:
        await self.engine.close()


__all__ = ["ViewerStore", "open_for_viewing"]
