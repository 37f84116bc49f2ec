"""Backend kits for the contract suite: one isolated storage plus a factory for instances on it.

``jsonl-zstd`` and ``jsonl-none`` always run; ``sqlite`` runs only when
``persistence.sqlite.backend`` imports (it is skipped, with the reason, otherwise).
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sessionkit import artifact

from persistence import CoordinatedPersistence, JsonlSessionPersistence
from persistence.jsonl.frames import compress_frame


def _sqlite_backend() -> tuple[Any, str]:
    try:
        from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]
    except Exception as err:  # not written yet (ImportError) or mid-edit
        return None, f"persistence.sqlite.backend does not import: {type(err).__name__}: {err}"
    return SqliteSessionPersistence, ""


SQLITE_CLASS, SQLITE_SKIP_REASON = _sqlite_backend()

BACKEND_PARAMS = [
    pytest.param("jsonl-zstd", id="jsonl-zstd"),
    pytest.param("jsonl-none", id="jsonl-none"),
    pytest.param("sqlite", id="sqlite", marks=pytest.mark.skipif(SQLITE_CLASS is None, reason=SQLITE_SKIP_REASON)),
]

# A torn, newline-less fragment of an assistant/chunk record (persistence-contract §9.0 corrupt_tail).
TORN_FRAGMENT = b'{"type":"assistant/chunk","seq":%d,"ti'


@dataclass
class BackendKit:
    """One isolated storage plus a factory for backend instances mounted on it."""

    name: str
    storage: Path
    instances: list[CoordinatedPersistence] = field(default_factory=list)

    @property
    def is_jsonl(self) -> bool:
        return self.name.startswith("jsonl")

    @property
    def compression(self) -> str:
        return "none" if self.name == "jsonl-none" else "zstd"

    def make(self) -> CoordinatedPersistence:
        """A fresh backend instance (cold caches) over the shared storage."""
        if self.is_jsonl:
            store: CoordinatedPersistence = JsonlSessionPersistence(self.storage, compression=self.compression)
        else:
            store = SQLITE_CLASS(self.storage)
        self.instances.append(store)
        return store

    def corrupt_tail(self, session_id: str, cwd: str | None, next_seq: int) -> None:
        """Write an incomplete record after the committed region (no instance may be writing)."""
        if self.is_jsonl:
            path = artifact(self.storage, cwd, session_id, self.compression)
            fragment = TORN_FRAGMENT % next_seq
            # zstd: a frame cut before its end is a torn final frame whose plaintext is the fragment.
            tail = fragment if self.compression == "none" else compress_frame(fragment)[:-2]
            with open(path, "ab") as f:
                f.write(tail)
            return
        con = sqlite3.connect(self.storage, timeout=5)
        try:
            with con:
                con.execute(
                    "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, 'assistant/chunk', ?, ?)",
                    (session_id, next_seq, next_seq + 1, '{"type":"text-delta","ind'),
                )
        finally:
            con.close()

    def close_all(self) -> None:
        async def close() -> None:
            for store in self.instances:
                await store.close()

        asyncio.run(close())
        self.instances.clear()
