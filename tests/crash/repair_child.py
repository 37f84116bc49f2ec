"""Kill-during-repair child: runs one ``repair_session(..., force=True)`` through the public API.

Usage: ``repair_child.py <backend> <store-path> <session-id>``  (``open_store``'s backend name; the path is
a JSONL root directory or a SQLite file)

It prints ``R`` once everything is imported and the repair is about to start (the parent's random
SIGKILL delay is measured from there, so interpreter start-up does not dilute the kill window),
then ``D <status-after> <backup>`` when the repair returned.  With ``REPAIR_TORTURE_KILL_AT=<point>``
it SIGKILLs itself at that precise step of the transaction instead (see ``KILL_POINTS``); a point
that is never reached makes the child finish normally, which the parent reports as a failure, so
a renamed step cannot silently turn a precise kill into a no-op.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from app.actions import repair as repair_mod
from persistence import CoordinatedPersistence, open_store
from persistence.jsonl import repair_commit

KILL_ENV = "REPAIR_TORTURE_KILL_AT"


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _after(owner: Any, name: str) -> None:
    """``owner.name`` runs to completion, then the process dies before its caller sees the result."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        _die()
        return result

    setattr(owner, name, wrapper)


def _before(owner: Any, name: str) -> None:
    """The process dies the moment ``owner.name`` is first called."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _die()
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def _after_async(owner: Any, name: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = await original(*args, **kwargs)
        _die()
        return result

    setattr(owner, name, wrapper)


def _sqlite_storage() -> Any:
    from persistence.sqlite.storage import SqliteStorage

    return SqliteStorage


# point -> how to arm it.  Backup steps apply to every backend, the commit steps to one kind.
KILL_POINTS: dict[str, Callable[[], None]] = {
    # the copy is complete and fsynced under its .partial- name, not linked yet
    "backup-partial-written": lambda: _after(repair_mod, "_copy_artifact_to"),
    # os.link gave the backup its final name; the .partial- name is not unlinked yet
    "backup-linked": lambda: _after(os, "link"),
    # the backup is published (partial gone, folder fsynced); the engine has not been called
    "backup-published": lambda: _after(repair_mod, "_publish"),
    # JSONL: prefix + encoded suffix written to the temp file and fsynced; the log not swapped yet
    "jsonl-temp-fsynced": lambda: _after(repair_commit, "_write_temp"),
    # JSONL: just after the rename over the log (the folder fsync is the next call)
    "jsonl-renamed": lambda: _before(repair_commit, "_fsync_dir"),
    # JSONL: the swap was verified; the engine is about to return
    "jsonl-swap-verified": lambda: _after(repair_commit, "_verify_after_swap"),
    # SQLite: the cut and the closers are written inside the open transaction, COMMIT not run
    "sqlite-txn-written": lambda: _after(_sqlite_storage(), "_bump"),
    # SQLite: the transaction committed; nothing after it ran
    "sqlite-committed": lambda: _after(_sqlite_storage(), "commit_repair"),
    # any backend: the engine's pinned commit returned; the post-repair diagnose has not run
    "engine-returned": lambda: _after_async(CoordinatedPersistence, "repair"),
}


async def main(backend: str, target: str, session_id: str) -> None:
    store = open_store(target, backend)
    try:
        sys.stdout.write("R\n")
        sys.stdout.flush()
        result = await repair_mod.repair_session(store, session_id, force=True)
    finally:
        await store.close()
    sys.stdout.write(f"D {result.status_after} {result.backup}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    point = os.environ.get(KILL_ENV)
    if point:
        KILL_POINTS[point]()
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
