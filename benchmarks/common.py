"""Pieces several benchmarks share, so their generated inputs stay the same shape.

Why here: ``bench_gui.py`` and ``bench_search.py`` both write one big session through the engine once
per backend and reuse it on later runs; one writer keeps those sessions (and the "done" marker) alike.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable

from synthetic import batches, session_events

from persistence import CoordinatedPersistence

BIG_CREATED_AT_MS = 1_767_225_600_000  # createdAt of the big session, ms since the epoch (2026-01-01 00:00 UTC)


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


__all__ = ["BIG_CREATED_AT_MS", "until", "write_big_once"]
