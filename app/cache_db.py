"""A cache SQLite file (the search index, the statistics cache): opening it, judging an existing one,
and telling damage met while reading it from a writer that merely holds it busy.

Why one module: both caches are rebuilt, never repaired.  A file that cannot be opened, was written
under another schema version or for another root, whose schema is not the one this SessionScope
creates, or whose tables cannot be read is removed with its WAL companions and created empty; each
cache adds its own checks (``problem``) on top of these.  A bit flipped on disk shows up in many
shapes (SQLite's "malformed", a text column or a schema that is not UTF-8, a column the schema no
longer names, rows that contradict each other): ``is_damage`` sorts them from "busy, try later", and
``damage_text`` says each in one clean line (never a codec message with byte positions).

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


class CacheDamaged(Exception):
    """A cache's rows contradict each other (a flipped id): read as damage like SQLite's own errors."""


# What a read of a damaged cache file raises: SQLite's errors, a text column or error message that is
# not UTF-8 (Python's decoder), and our own finding that rows contradict each other.
DAMAGE_ERRORS: tuple[type[BaseException], ...] = (sqlite3.DatabaseError, UnicodeError, CacheDamaged)
_OPEN_ERRORS: tuple[type[BaseException], ...] = (OSError, *DAMAGE_ERRORS)  # a folder or file we cannot write, or damage


# What any call on a cache file may raise, busy or damaged: SQLite's own errors stay behind this module
# (a controller catches ``CACHE_ERRORS``; ``app.gui``, ``app.export`` and ``app.actions`` never import
# ``sqlite3``, and the engine's stores raise only ``SessionPersistenceError``).
CACHE_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error,)


def is_busy(err: BaseException) -> bool:
    """Whether ``err`` says another connection holds the file (wait and retry), not that it is damaged."""
    text = str(err).lower()
    return isinstance(err, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def is_damage(err: BaseException) -> bool:
    """Whether ``err``, raised by a read or write of a cache file, means the file must be rebuilt."""
    return isinstance(err, DAMAGE_ERRORS) and not is_busy(err)


def damage_text(err: BaseException) -> str:
    """``err`` as one clean line for a "rebuilding it" message: no byte positions, no undecodable text."""
    if isinstance(err, UnicodeError):
        return "a stored text is not valid UTF-8"
    text = str(err)
    if text.startswith("Could not decode to UTF-8"):
        column = text.split("'")[1] if text.count("'") >= 2 else "a"
        return f"the stored text of column {column!r} is not valid UTF-8"
    if text.startswith(("no such column", "no such table")) or "malformed database schema" in text:
        return f"its schema is not this SessionScope's ({text.split('(')[0].strip()})"
    # SQLite's own messages are short ASCII ("database disk image is malformed"); anything else is cut
    # to printable characters so a flipped byte never reaches the terminal.
    clean = "".join(ch if ch.isprintable() and ch != "\ufffd" else "?" for ch in text)[:200]
    return clean or type(err).__name__


def schema_problem(
    conn: sqlite3.Connection, script: str, prepare: Callable[[sqlite3.Connection], object] | None = None
) -> str | None:
    """Why the schema of ``conn``'s file is not the one ``script`` creates (None: it is).

    Compared: every table, index, trigger and virtual table (with the shadow tables FTS5 makes) by
    type, name and SQL text, against a database in memory built from ``script`` by this very SQLite,
    so a renamed column or a flipped letter in a CREATE statement is a rebuild, not a query error
    later.  ``prepare`` registers what ``script`` needs on the reference connection.
    """
    query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    ref = sqlite3.connect(":memory:")
    try:
        if prepare is not None:
            prepare(ref)
        ref.executescript(script)
        expected = ref.execute(query).fetchall()
    finally:
        ref.close()
    found = conn.execute(query).fetchall()
    if found == expected:
        return None
    names = {r[1] for r in expected} ^ {r[1] for r in found}
    return "has a schema this SessionScope did not write" + (f" ({', '.join(sorted(map(str, names))[:3])})" if names else "")


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
        return f"cannot be opened ({damage_text(err)})"
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != schema_version:
            return f"has schema version {version} (this SessionScope writes {schema_version})"
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("root") != root:
            return "belongs to another root"
        return problem(conn, meta)
    except DAMAGE_ERRORS as err:
        if is_busy(err):  # another process is writing it: a cache that is busy is not damaged
            return None
        return f"is unreadable ({damage_text(err)})"
    finally:
        conn.close()


def open_cache_file(
    path: str | None,
    *,
    label: str,
    kept: str,
    unusable: Callable[[str], str | None],
    create: Callable[[sqlite3.Connection], None],
    messages: list[str],
    busy_kept: str | None = None,
) -> tuple[str | None, sqlite3.Connection]:
    """The cache file at ``path`` opened for writing, or an in-memory stand-in: ``(path or None, connection)``.

    An existing file ``unusable`` finds a reason against is removed and created anew ("the {label}
    {path} {why}; rebuilding it"); ``create`` makes the tables of a new one.  A folder or file that
    cannot be written gives an in-memory cache for this run and a message ending in ``kept``
    ("statistics are kept in memory"); with ``busy_kept``, a file another process holds busy says so
    in its own words instead.  Every message goes to ``messages`` (the caller shows them).
    """
    if path is not None:
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            why = unusable(path) if os.path.exists(path) else None
            if why is not None:
                messages.append(f"the {label} {path} {why}; rebuilding it")
                remove_cache_files(path)
            conn = connect_cache(path)
            if conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'meta'").fetchone()[0] == 0:
                create(conn)
            return path, conn
        except _OPEN_ERRORS as err:
            if busy_kept is not None and isinstance(err, sqlite3.Error) and is_busy(err):
                messages.append(f"the {label} {path} is busy; {busy_kept}")
            else:
                messages.append(f"cannot write the {label} {path} ({damage_text(err)}); {kept}")
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    create(conn)
    return None, conn


__all__ = [
    "BUSY_TIMEOUT_MS",
    "DAMAGE_ERRORS",
    "CacheDamaged",
    "ExtraCheck",
    "connect_cache",
    "damage_text",
    "is_busy",
    "is_damage",
    "open_cache_file",
    "remove_cache_files",
    "schema_problem",
    "unusable_reason",
]
