"""Pieces several benchmarks share, so their generated inputs stay the same shape.

Why here: ``bench_gui.py`` and ``bench_search.py`` both write one big session through the engine once
per backend and reuse it on later runs; one writer keeps those sessions (and the "done" marker) alike.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import time
from collections.abc import Callable

from floors import SQLITE_FILENAME
from synthetic import batches, session_events

from persistence import CoordinatedPersistence, JsonlSessionPersistence
from persistence.sqlite.backend import SqliteSessionPersistence

BIG_CREATED_AT_MS = 1_767_225_600_000  # createdAt of the big session, ms since the epoch (2026-01-01 00:00 UTC)
BIG_ID = "bench-big"  # the big session's id in the follow and window benchmarks


def open_store_at(kind: str, root: str) -> CoordinatedPersistence:
    """A store of backend ``kind`` (jsonl-zstd, jsonl-none, sqlite) on ``root``: a JSONL root directory,
    or (sqlite) the store file itself."""
    if kind == "sqlite":
        return SqliteSessionPersistence(root)
    return JsonlSessionPersistence(root, compression="zstd" if kind == "jsonl-zstd" else "none")


def big_session(workdir: str, kind: str, n_events: int) -> str:
    """The ``n_events`` session ``BIG_ID`` of backend ``kind`` under ``workdir``, written once; what a
    store (or the window) opens: the JSONL root, or the SQLite store file."""
    base = os.path.join(workdir, f"big-{kind}-{n_events}")
    root = os.path.join(base, SQLITE_FILENAME) if kind == "sqlite" else base
    return write_big_once(base, root, BIG_ID, n_events, lambda r: open_store_at(kind, r))


def write_big_once(
    base: str, root: str, session_id: str, n_events: int, open_backend: Callable[[str], CoordinatedPersistence]
) -> str:
    """Write ``session_id`` (``session_events(n_events)`` in engine-sized batches) through the store
    ``open_backend(root)`` into the fresh folder ``base``, unless ``base + ".complete"`` says a
    previous run finished it; ``root`` (what a benchmark opens: ``base`` or a file in it)."""
    done = base + ".complete"
    if os.path.exists(done):
        return root
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base, mode=0o700)

    async def write() -> None:
        store = open_backend(root)
        await store.create({"id": session_id, "createdAt": BIG_CREATED_AT_MS, "cwd": "/bench/big"})
        for part in batches(session_events(n_events)):
            await store.append(session_id, part)
        await store.close()

    asyncio.run(write())
    open(done, "w").close()
    return root


def take_back(kind: str, root: str, transcript: str | None, size: int, from_seq: int) -> None:
    """Remove what a follow benchmark appended to ``BIG_ID`` so the generated session stays as written:
    the SQLite rows from ``from_seq`` on, or the JSONL ``transcript`` cut back to ``size`` bytes."""
    if kind == "sqlite":
        con = sqlite3.connect(root)
        try:
            with con:
                con.execute("DELETE FROM events WHERE session_id = ? AND seq >= ?", (BIG_ID, from_seq))
        finally:
            con.close()
    elif transcript:
        os.truncate(transcript, size)


async def until(pred: Callable[[], object], timeout: float = 600.0, step: float = 0.002) -> float:
    """Poll ``pred`` every ``step`` seconds on the running loop; the ``perf_counter`` when it first held.

    Raises ``TimeoutError`` after ``timeout`` seconds: a benchmark whose condition never comes fails loudly.
    """
    t0 = time.perf_counter()
    while not pred():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("benchmark condition not reached")
        await asyncio.sleep(step)
    return time.perf_counter()


__all__ = [
    "BIG_CREATED_AT_MS",
    "BIG_ID",
    "SQLITE_FILENAME",
    "big_session",
    "open_store_at",
    "take_back",
    "until",
    "write_big_once",
]
