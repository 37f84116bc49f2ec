"""Each session's verdict kept per root in the user's cache folder, keyed by what proves its log unchanged.

Why: diagnosing a session parses its whole log (~1 ms per 100 events); a 10,000-session root took
12-48 s before every status cell of the window was filled, and ``verify`` paid 12.6 s again on every
run (issue 25).  A verdict (``app.diagnosis.verdicts.Verdict``) depends only on the log's bytes, so it
is kept with the revision it was read at and reused while the listing reports the same revision:
a warm ``verify`` of 10,000 sessions then costs one ``SELECT`` of ~1 MB (~30 ms) beside the listing.

The key: a JSONL transcript's revision is (device, inode, size, mtime_ns, ctime_ns), so a touch, a
same-size rewrite and a rename-over (another inode) each change it; a SQLite session's revision is
the store's identity, incarnation and revision counter, and the store file's own (device, inode) is
part of the row's ``place`` so a database copied over the old one never matches.  One row per
(session id, place): a new verdict replaces the old one, so the file never grows past the root.

A timestamp is only as fine as the file system's clock (a coarse tick of 4-10 ms on Linux, whole
seconds on some file systems): a log rewritten within the tick it was read in could keep its
revision.  So a JSONL verdict is stored only when the log's ctime and mtime are older than the read's
start by ``RACY_NS`` (``RACY_COARSE_NS`` for whole-second stamps), as git does for its index; a log
changed that recently is diagnosed again next time (a live session: one log, milliseconds).

Where: ``<cache>/diagnosis/<root key>.sqlite`` (the search index's key: the backend kind and the real
path of the root), never inside the root: a cache folder inside the root keeps the verdicts in
memory only.  It is a cache: a file that is not a database, of another schema or verdict version or
of another root, or whose rows cannot be read is removed and created empty, and ``messages`` says
so (as the search index does, ``app.cache_db``).  Two processes (the window and the command line)
share it through SQLite's WAL and a busy timeout; a write that still finds it busy is skipped.

May import: the standard library, ``app.cache_db``, ``app.paths``, ``app.search.location`` (the root key),
``app.search.db`` (text cleaning) and ``app.diagnosis.verdicts``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from typing import Any

from app.cache_db import (
    BUSY_TIMEOUT_MS,
    DAMAGE_ERRORS,
    damage_text,
    is_busy,
    open_cache_file,
    remove_cache_files,
    schema_problem,
    unusable_reason,
)
from app.diagnosis.verdicts import UNCACHEABLE, Verdict
from app.paths import cache_dir
from app.search.db import clean_text
from app.search.location import index_key, inside_root, root_identity

CACHE_DIR_NAME = "diagnosis"  # below the user's cache folder
SCHEMA_VERSION = 1  # PRAGMA user_version; another value means "rebuild"
# Bump when what a verdict holds or how the engine judges changes: every stored verdict is then dropped.
VERDICT_VERSION = 1
RACY_NS = 100_000_000  # a log changed less than this before its read is not stored (Linux ticks are <= 10 ms)
RACY_COARSE_NS = 2_000_000_000  # the same for whole-second timestamps (FAT keeps 2 s)

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE verdicts(
    session_id TEXT NOT NULL,
    place TEXT NOT NULL,
    revision TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    error_class TEXT,
    events INTEGER,
    closers INTEGER NOT NULL,
    title TEXT,
    last_time INTEGER,
    PRIMARY KEY(session_id, place)
) WITHOUT ROWID;
"""
_COLUMNS = "session_id, place, revision, status, reason, error_class, events, closers, title, last_time"

Wanted = tuple[str, str, str | None]  # (session id, place, the revision the listing reports now)


def cache_path(root: str, kind: str, cache: str | None = None) -> str:
    """The diagnosis cache file of ``root`` (a JSONL root directory or a SQLite store file)."""
    base = os.path.join(cache if cache is not None else cache_dir(), CACHE_DIR_NAME)
    return os.path.join(base, f"{index_key(root, kind)}.sqlite")


def cacheable_root(root: str, kind: str) -> bool:
    """Whether ``root`` has verdicts worth keeping: a JSONL root folder or a SQLite store file (not a
    lone transcript, not a store in memory)."""
    return os.path.isdir(root) if kind == "jsonl" else (kind == "sqlite" and os.path.isfile(root))


def sqlite_place(root: str) -> str:
    """The ``place`` of every session of the SQLite store at ``root``: its file's identity."""
    try:
        st = os.stat(root)
    except OSError:
        return "sqlite:?"
    return f"sqlite:{st.st_dev}:{st.st_ino}"


def racy(verdict: Verdict) -> bool:
    """Whether a JSONL log may have changed within the clock tick of its read (then it is not stored)."""
    parts = (verdict.revision or "").split(":")
    if len(parts) != 5 or verdict.place.startswith("sqlite:"):
        return False  # a SQLite revision counts writes, not time
    try:
        mtime, ctime = int(parts[3]), int(parts[4])
    except ValueError:
        return True
    coarse = mtime % 1_000_000_000 == 0 and ctime % 1_000_000_000 == 0
    margin = RACY_COARSE_NS if coarse else RACY_NS
    return verdict.started_ns == 0 or max(mtime, ctime) >= verdict.started_ns - margin


def cacheable(verdict: Verdict) -> bool:
    return verdict.revision is not None and verdict.status not in UNCACHEABLE and not racy(verdict)


class DiagnosisCache:
    """The verdicts of one root (see the module docstring); thread-safe (one lock around its connection)."""

    def __init__(self, root: str, kind: str, *, cache_dir: str | None = None, cache_file: str | None = None) -> None:
        self.identity = clean_text(root_identity(root, kind))
        self.messages: list[str] = []
        self._lock = threading.Lock()
        path: str | None = cache_file or cache_path(root, kind, cache_dir)
        if path is not None and inside_root(path, root, kind):
            self.messages.append(
                f"the cache folder {os.path.dirname(path)} is inside the session root; verdicts are kept in memory"
            )
            path = None
        self.path, self.conn = self._open(path)

    # ------------------------------------------------------------ opening

    def _open(self, path: str | None) -> tuple[str | None, sqlite3.Connection]:
        return open_cache_file(
            path,
            label="diagnosis cache",
            kept="verdicts are kept in memory",
            busy_kept="verdicts are kept in memory this time",
            unusable=self._unusable,
            create=self._create,
            messages=self.messages,
        )

    def _unusable(self, path: str) -> str | None:
        try:
            with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                    return None  # an empty file, or another process creating it right now: ``_create`` decides
        except sqlite3.Error:
            pass  # ``unusable_reason`` says what is wrong with it

        def problem(conn: sqlite3.Connection, meta: dict[Any, Any]) -> str | None:
            if meta.get("verdicts") != str(VERDICT_VERSION):
                return f"holds verdicts of version {meta.get('verdicts')} (this SessionScope writes {VERDICT_VERSION})"
            # Rows that cannot be read are found by the first lookup, which reads them all anyway (``reset``).
            return schema_problem(conn, _SCHEMA)

        return unusable_reason(path, SCHEMA_VERSION, self.identity, problem)

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'meta'").fetchone()[0] == 0:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.executemany(
                    "INSERT INTO meta(key, value) VALUES (?, ?)",
                    [("root", self.identity), ("verdicts", str(VERDICT_VERSION)), ("created", str(time.time()))],
                )
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def reset(self, why: str) -> None:
        """Replace a file found damaged while in use by an empty one; ``messages`` says why."""
        self.messages.append(f"the diagnosis cache {self.path or '(in memory)'} is damaged ({why}); rebuilding it")
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        if self.path is not None:
            remove_cache_files(self.path)
        self.path, self.conn = self._open(self.path)

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self.conn.close()

    # ------------------------------------------------------------ reads and writes

    def snapshot(self) -> dict[tuple[str, str], Verdict]:
        """Every stored verdict by (session id, place), as stored (the window compares revisions itself)."""
        return {(r[0], r[1]): Verdict(*r) for r in self._rows()}

    def lookup(self, wanted: Iterable[Wanted]) -> dict[tuple[str, str], Verdict]:
        """The stored verdicts of ``wanted`` whose revision is the one the listing reports now."""
        want = {(clean_text(sid), clean_text(place)): (sid, place, rev) for sid, place, rev in wanted if rev is not None}
        if not want:
            return {}
        out: dict[tuple[str, str], Verdict] = {}
        for sid_c, place_c, revision, status, reason, error_class, events, closers, title, last_time in self._rows():
            found = want.get((sid_c, place_c))
            if found is None or found[2] != revision:
                continue  # a stale entry is never used: the log changed since it was judged
            sid, place, _ = found
            out[(sid, place)] = Verdict(sid, place, revision, status, reason, error_class, events, closers, title, last_time)
        return out

    def _rows(self) -> list[tuple[Any, ...]]:
        """Every stored row; none while another process holds the file busy, and a damaged file rebuilt."""
        with self._lock:
            try:
                return self.conn.execute(f"SELECT {_COLUMNS} FROM verdicts").fetchall()
            except DAMAGE_ERRORS as err:
                if not (isinstance(err, sqlite3.Error) and is_busy(err)):
                    self.reset(damage_text(err))
                return []

    def store(self, verdicts: Iterable[Verdict]) -> int:
        """Keep what can be kept of ``verdicts`` (one transaction); how many were stored (0 when busy)."""
        rows = [
            (clean_text(v.session_id), clean_text(v.place), v.revision, v.status, clean_text(v.reason), v.error_class,
             v.events, v.closers, None if v.title is None else clean_text(v.title), v.last_time)
            for v in verdicts
            if cacheable(v)
        ]  # fmt: skip
        if not rows:
            return 0
        with self._lock:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(f"INSERT OR REPLACE INTO verdicts({_COLUMNS}) VALUES ({', '.join('?' * 10)})", rows)
                conn.execute("COMMIT")
            except DAMAGE_ERRORS as err:
                with contextlib.suppress(sqlite3.Error):
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                if isinstance(err, sqlite3.Error) and is_busy(err):
                    return 0  # another process holds it: these are judged again next time
                self.reset(damage_text(err))
                return 0
        return len(rows)


__all__ = [
    "CACHE_DIR_NAME",
    "RACY_NS",
    "VERDICT_VERSION",
    "DiagnosisCache",
    "Wanted",
    "cache_path",
    "cacheable",
    "cacheable_root",
    "racy",
    "sqlite_place",
]
