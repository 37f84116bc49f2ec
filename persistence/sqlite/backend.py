"""``SqliteSessionPersistence``: the service over one schema-17 SQLite file (or ``:memory:``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from persistence.coordinator import DEFAULT_PREPARED_CACHE_SIZE, CoordinatedPersistence
from persistence.service import AbortSignal, EventLike, HeaderLike
from persistence.sqlite import facts
from persistence.sqlite.constants import DEFAULT_BUSY_TIMEOUT_MS, MEMORY_PATH
from persistence.sqlite.errors import SessionReadOnlyError
from persistence.sqlite.storage import SqliteStorage


class SqliteSessionPersistence(CoordinatedPersistence):
    """Upstream-compatible SQLite store.

    ``read_only=True`` opens the file with ``mode=ro`` (never ``immutable``), so a viewer
    sees every commit of a writer in another process through its live ``-wal``.  Such a
    store never creates or converts the file; ``create``/``append`` and a ``load`` that
    would commit a repair raise ``SessionReadOnlyError`` (use ``inspect`` to browse an
    interrupted session).  Permission problems upstream would refuse are reported in
    ``warnings`` instead.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        journal_mode: str = "wal",
        pack_chunks: bool = True,
        prepared_session_cache_size: int = DEFAULT_PREPARED_CACHE_SIZE,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        read_only: bool = False,
    ) -> None:
        super().__init__(
            SqliteStorage(
                path, journal_mode=journal_mode, pack_chunks=pack_chunks, busy_timeout_ms=busy_timeout_ms, read_only=read_only
            ),
            prepared_session_cache_size=prepared_session_cache_size,
        )

    @property
    def storage(self) -> SqliteStorage:
        """The SQLite hooks behind this store (engine-internal)."""
        return self.backend  # type: ignore[return-value]

    @property
    def path(self) -> str:
        """The database file (``:memory:`` for a private in-memory store)."""
        return self.storage.path

    @property
    def read_only(self) -> bool:
        """Whether the file is open ``mode=ro``."""
        return self.storage.read_only

    async def schema_version(self, signal: AbortSignal | None = None) -> int | None:
        """The database's ``user_version`` on a private read-only connection (None: ``:memory:``, unreadable)."""
        if self.storage.path == MEMORY_PATH:
            return None
        return await self._run(lambda _t: facts.schema_version(self.storage.path), signal)

    def _open_read_only_twin(self) -> CoordinatedPersistence | None:
        """A ``read_only`` store on the same file (None when this one is read-only or in memory)."""
        if self.storage.read_only or self.storage.path == MEMORY_PATH:
            return None
        return SqliteSessionPersistence(self.storage.path, read_only=True)

    @property
    def warnings(self) -> list[str]:
        """Why upstream would refuse this file (read-only stores open it anyway)."""
        return list(self.storage.warnings)

    def _refuse_write(self, operation: str) -> None:
        if self.storage.read_only:
            raise SessionReadOnlyError(
                f'session database "{self.storage.path}" is open read-only; {operation} needs a writable store'
            )

    async def create(self, meta: HeaderLike) -> None:
        """Refused on a read-only store; else ``CoordinatedPersistence.create``."""
        self._refuse_write("create")
        await super().create(meta)

    async def append(self, session_id: str, events: Sequence[EventLike]) -> None:
        """Refused on a read-only store; else ``CoordinatedPersistence.append``."""
        self._refuse_write("append")
        await super().append(session_id, events)
