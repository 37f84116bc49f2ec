"""A cache SQLite file (the search index, the statistics cache): opening it and judging an existing one.

Why one module: both caches are rebuilt, never repaired.  A file that cannot be opened, was written
under another schema version or for another root, or whose tables cannot be read is removed with
its WAL companions and created empty; each cache adds its own checks (``problem``) on top of these.

May import: the standard library only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from typing import Any

BUSY_TIMEOUT_MS = 5000  # a second process (the window and the command line) waits this long for the writer
_COMPANIONS = ("", "-wal", "-shm", "-journal")  # the file itself and what SQLite keeps beside it

# Given an open cache file and its ``meta`` table, why it cannot serve (None: it can).  May raise
# sqlite3.Error, which ``unusable_reason`` reports as "is unreadable".
ExtraCheck = Callable[[sqlite3.Connection, dict[Any, Any]], str | None]


def connect_cache(path: str) -> sqlite3.Connection:
    """A writing connection to the cache file at ``path`` (created when missing)."""
    # Autocommit mode: transactions are explicit.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    # A cache: losing the last transactions to a power cut costs a recomputation, never data.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def remove_cache_files(path: str) -> None:
    """Delete a cache file and its WAL companions (missing ones are fine)."""
    for suffix in _COMPANIONS:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


def unusable_reason(path: str, schema_version: int, root: str, problem: ExtraCheck) -> str | None:
    """Why the existing file at ``path`` cannot serve as the cache of ``root`` (cleaned text), or None.

    Checked here: it opens, its ``user_version`` is ``schema_version`` and its ``meta`` names ``root``;
    then ``problem`` (the cache's own checks).  The reason reads after "the … cache {path} ".
    """
    try:
        conn = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error as err:
        return f"cannot be opened ({err})"
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != schema_version:
            return f"has schema version {version} (this SessionScope writes {schema_version})"
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("root") != root:
            return "belongs to another root"
        return problem(conn, meta)
    except sqlite3.Error as err:
        return f"is unreadable ({err})"
    finally:
        conn.close()


__all__ = ["BUSY_TIMEOUT_MS", "ExtraCheck", "connect_cache", "remove_cache_files", "unusable_reason"]
