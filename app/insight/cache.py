"""Per-session summaries of a root, kept by revision in the user's cache folder: what the dashboard reads.

Why a cache: a root's totals need every session's statistics, and folding 10,000 logs takes minutes;
the dashboard must open in under a second once they are computed.  So each session's summary (its
``SessionStats`` in a few columns, plus its per-turn, per-tool and per-model rows) is stored with the
revision it was computed from, and an update re-reads only the sessions whose revision changed.  The
aggregations (``app.insight.dashboard``) are then SQL over these tables.

Where: ``<cache>/insight/<root key>.sqlite``, the key being the search index's (``app.search.location``:
the backend kind and real path of the root), never inside the root.  It is a cache: a file that is
not a database, from another schema or fold version, of another root, whose schema text is not the
one ``_SCHEMA`` creates, or whose session rows cannot be read is replaced by an empty one
(``messages`` says so); a folder that cannot be written keeps the cache in memory.  Damage met later
(a bit flipped on disk, read by an update or by the dashboard) heals the same way: ``reset`` and
compute again (``update`` does it by itself; a reader calls ``reset`` on ``app.cache_db.is_damage``).

Consistency: each session is replaced in one transaction together with its revision, so a cancelled
or killed update leaves every session either at its old summary or at its new one.  A session the
engine reports ``busy`` (a locked SQLite store) is skipped and retried by the next update.  Reads
never write the session (``view`` only).

Threading: like the search indexer, a cache and its store belong to one thread and event loop (a
worker thread in the window); ``reader()`` opens a connection of its own for another thread.

May import: the standard library, ``app.insight``'s own modules, ``app.records``, ``app.paths``, ``app.cache_db``,
``app.search.location`` / ``app.search.db`` (the root key and text cleaning) and the public ``persistence``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from app.cache_db import (
    BUSY_TIMEOUT_MS,
    DAMAGE_ERRORS,
    damage_text,
    is_damage,
    open_cache_file,
    remove_cache_files,
    schema_problem,
    unusable_reason,
)
from app.insight.stats import SessionStats
from app.insight.summary import SessionSummary, entry_summary, prefix_summary, summarize, summary_of
from app.paths import cache_dir
from app.search.db import clean_text
from app.search.location import index_key, inside_root, root_identity
from persistence import CoordinatedPersistence, ListedEntry, SessionPersistenceError

CACHE_DIR_NAME = "insight"  # below the user's cache folder
CACHE_SUFFIX = ".sqlite"
SCHEMA_VERSION = 1  # PRAGMA user_version of the cache file; another value means "rebuild"
# Bump when what the fold counts changes: every cached summary is then recomputed (stored in ``meta``).
FOLD_VERSION = 2  # 2: a refused log counts its readable part (issue 24 item 5)

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE sessions(
    session_id TEXT PRIMARY KEY,
    revision TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    title TEXT,
    project TEXT,
    created_ms INTEGER,
    first_ms INTEGER,
    last_ms INTEGER,
    events INTEGER NOT NULL DEFAULT 0,
    turns INTEGER NOT NULL DEFAULT 0,
    steps INTEGER NOT NULL DEFAULT 0,
    model_calls INTEGER NOT NULL DEFAULT 0,
    retries INTEGER NOT NULL DEFAULT 0,
    tool_calls INTEGER NOT NULL DEFAULT 0,
    tool_errors INTEGER NOT NULL DEFAULT 0,
    input INTEGER NOT NULL DEFAULT 0,
    output INTEGER NOT NULL DEFAULT 0,
    cache_read INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    reasoning INTEGER NOT NULL DEFAULT 0,
    active_ms INTEGER NOT NULL DEFAULT 0,
    span_ms INTEGER NOT NULL DEFAULT 0,
    compactions INTEGER NOT NULL DEFAULT 0,
    parent TEXT,
    origin TEXT,
    delegation_depth INTEGER,
    seed_length INTEGER,
    fork_turn INTEGER,
    summary TEXT NOT NULL
);
CREATE INDEX sessions_created ON sessions(created_ms);
CREATE TABLE turns(
    session_id TEXT NOT NULL,
    slot INTEGER NOT NULL,
    start_ms INTEGER,
    duration_ms INTEGER NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    PRIMARY KEY(session_id, slot)
) WITHOUT ROWID;
CREATE TABLE tools(
    session_id TEXT NOT NULL,
    name TEXT NOT NULL,
    calls INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    PRIMARY KEY(session_id, name)
) WITHOUT ROWID;
CREATE TABLE models(
    session_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    calls INTEGER NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    PRIMARY KEY(session_id, provider, model)
) WITHOUT ROWID;
"""

SESSION_COLUMNS = (
    "session_id",
    "revision",
    "status",
    "reason",
    "title",
    "project",
    "created_ms",
    "first_ms",
    "last_ms",
    "events",
    "turns",
    "steps",
    "model_calls",
    "retries",
    "tool_calls",
    "tool_errors",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "reasoning",
    "active_ms",
    "span_ms",
    "compactions",
    "parent",
    "origin",
    "delegation_depth",
    "seed_length",
    "fork_turn",
)


_INSERT_SESSION = (
    f"INSERT INTO sessions({', '.join(SESSION_COLUMNS)}, summary) VALUES ({', '.join('?' * (len(SESSION_COLUMNS) + 1))})"
)


def cache_path(root: str, kind: str, cache: str | None = None) -> str:
    """The cache file of ``root`` (a JSONL root directory or a SQLite store file) below the cache folder."""
    base = os.path.join(cache if cache is not None else cache_dir(), CACHE_DIR_NAME)
    return os.path.join(base, f"{index_key(root, kind)}{CACHE_SUFFIX}")


class _Damaged(Exception):
    """The cache file (not the engine) failed with damage during an update: ``error`` is what it raised."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True, slots=True)
class CacheProgress:
    """Where an update is: ``done`` of ``total`` sessions needing work."""

    done: int
    total: int
    session_id: str | None = None

    @property
    def label(self) -> str:
        return f"Computing statistics {self.done:,} / {self.total:,} sessions"


@dataclass(frozen=True, slots=True)
class CacheReport:
    """What one update did."""

    listed: int
    computed: int
    unchanged: int
    removed: int
    skipped: int  # busy or failed now: retried by the next update
    seconds: float
    cancelled: bool


class InsightCache:
    """The per-session summaries of one store's root (see the module docstring for the contract)."""

    def __init__(
        self,
        store: CoordinatedPersistence,
        *,
        cache_file: str | None = None,
        cache_dir: str | None = None,
        in_memory: bool = False,
    ) -> None:
        self.store = store
        self.identity = root_identity(store.root_path, store.kind)
        self.messages: list[str] = []
        path = None if in_memory else (cache_file or cache_path(store.root_path, store.kind, cache_dir))
        if path is not None and inside_root(path, store.root_path, store.kind):
            self.messages.append(
                f"the cache folder {os.path.dirname(path)} is inside the session root; statistics are kept in memory"
            )
            path = None
        self.path, self.conn = self._open(path)
        self._cancel = threading.Event()

    # ------------------------------------------------------------ opening

    def _open(self, path: str | None) -> tuple[str | None, sqlite3.Connection]:
        return open_cache_file(
            path,
            label="statistics cache",
            kept="it is kept in memory",
            unusable=self._unusable,
            create=self._create,
            messages=self.messages,
        )

    def _unusable(self, path: str) -> str | None:
        def problem(conn: sqlite3.Connection, meta: dict[Any, Any]) -> str | None:
            if meta.get("fold") != str(FOLD_VERSION):
                return f"was computed by fold version {meta.get('fold')} (this SessionScope computes {FOLD_VERSION})"
            why = schema_problem(conn, _SCHEMA)
            if why is not None:
                return why
            conn.execute("SELECT session_id, revision FROM sessions").fetchall()  # what every update reads
            return None

        return unusable_reason(path, SCHEMA_VERSION, clean_text(self.identity), problem)

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.executescript(_SCHEMA)
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [("root", clean_text(self.identity)), ("fold", str(FOLD_VERSION)), ("created", str(time.time()))],
        )
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def reset(self, why: str) -> None:
        """Replace a damaged cache file by an empty one (found damaged while in use); ``messages`` says why."""
        self.messages.append(f"the statistics cache {self.path or '(in memory)'} is damaged ({why}); rebuilding it")
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()
        if self.path is not None:
            remove_cache_files(self.path)
        self.path, self.conn = self._open(self.path)

    def reader(self) -> sqlite3.Connection:
        """A connection for reading on another thread (the same one for a cache kept in memory)."""
        if self.path is None:
            return self.conn
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return conn

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    async def aclose(self) -> None:
        """``close`` and close the store."""
        self.close()
        await self.store.close()

    # ------------------------------------------------------------ reads

    def revisions(self) -> dict[str, str | None]:
        """session id -> the revision its cached summary was computed from."""
        return dict(self.conn.execute("SELECT session_id, revision FROM sessions").fetchall())

    def summaries(self) -> list[SessionSummary]:
        """Every cached session summary."""
        rows = self.conn.execute(f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions ORDER BY created_ms, session_id")
        return [SessionSummary.from_row(r) for r in rows]

    def summary(self, session_id: str) -> SessionSummary | None:
        row = self.conn.execute(
            f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions WHERE session_id = ?", (clean_text(session_id),)
        ).fetchone()
        return None if row is None else SessionSummary.from_row(row)

    def summary_json(self, session_id: str) -> dict[str, Any] | None:
        """The stored JSON summary record of a session (its stats summary included)."""
        row = self.conn.execute("SELECT summary FROM sessions WHERE session_id = ?", (clean_text(session_id),)).fetchone()
        return None if row is None else orjson.loads(row[0])

    # ------------------------------------------------------------ writes

    def put(self, summary: SessionSummary, stats: SessionStats | None) -> None:
        """Replace one session's rows in one transaction."""
        sid = clean_text(summary.session_id)
        record = summary.to_json()
        if stats is not None:
            record["stats"] = stats.to_summary()
        blob = orjson.dumps(record, default=str, option=orjson.OPT_NON_STR_KEYS).decode("utf-8", "replace")
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._delete(sid)
            conn.execute(_INSERT_SESSION, (*summary.row(), clean_text(blob)))
            if stats is not None:
                conn.executemany(
                    "INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            sid,
                            slot,
                            t.start_time,
                            t.duration_ms,
                            t.tokens.input,
                            t.tokens.output,
                            t.tokens.cache_read,
                            t.tokens.cache_write,
                        )
                        for slot, t in enumerate(stats.per_turn)
                    ],
                )
                conn.executemany(
                    "INSERT INTO tools VALUES (?, ?, ?, ?)", [(sid, clean_text(t.name), t.calls, t.errors) for t in stats.tools]
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO models VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (sid, clean_text(m.provider), clean_text(m.model), m.calls, m.tokens.input, m.tokens.output,
                         m.tokens.cache_read, m.tokens.cache_write)
                        for m in stats.models
                    ],
                )  # fmt: skip
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _delete(self, sid: str) -> None:
        for table in ("sessions", "turns", "tools", "models"):
            self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))

    def remove(self, session_ids: Sequence[str]) -> None:
        """Drop sessions gone from the root."""
        if not session_ids:
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for sid in session_ids:
                self._delete(clean_text(sid))
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ updating

    def cancel(self) -> None:
        """Stop a running update before its next session (thread-safe)."""
        self._cancel.set()

    async def update(
        self, entries: Sequence[ListedEntry] | None = None, progress: Callable[[CacheProgress], None] | None = None
    ) -> CacheReport:
        """Bring the cache up to date: sessions whose revision changed are read (``view``) and folded,
        sessions gone from a full listing are removed.  ``entries``: just these (a watcher's rows).

        A cache file found damaged on the way is rebuilt (``reset``) and the update starts again on
        the empty file; a fresh file that fails again is not damage of the old one: that propagates."""
        try:
            return await self._update(entries, progress)
        except _Damaged as damaged:
            self.reset(damage_text(damaged.error))
        try:
            return await self._update(entries, progress)
        except _Damaged as damaged:
            raise damaged.error from None

    @contextlib.contextmanager
    def _cache_io(self) -> Iterator[None]:
        """Around a read or write of the cache file (not the engine's): its damage becomes ``_Damaged``."""
        try:
            yield
        except DAMAGE_ERRORS as err:
            if not is_damage(err):
                raise
            raise _Damaged(err) from err

    async def _readable_part(self, summary: SessionSummary) -> tuple[SessionSummary, SessionStats | None]:
        """``summary`` of a refused log completed from the events the engine can still read (none: as is)."""
        try:
            prefix = await self.store.readable_prefix(summary.session_id)
        except (SessionPersistenceError, OSError):
            return summary, None
        return (summary, None) if prefix is None else prefix_summary(summary, prefix.events)

    async def _update(
        self, entries: Sequence[ListedEntry] | None, progress: Callable[[CacheProgress], None] | None
    ) -> CacheReport:
        started = time.perf_counter()
        self._cancel.clear()
        full = entries is None
        listing = list(await self.store.list_entries()) if entries is None else list(entries)
        with self._cache_io():
            known = self.revisions()
        seen: set[str] = set()
        jobs: list[ListedEntry] = []
        for e in listing:
            if e.kind != ListedEntry.SESSION or e.session_id in seen:
                continue  # a bad row is not a session; of two transcripts of one id the first is the one read
            seen.add(e.session_id)
            key = clean_text(e.session_id)
            if e.revision is None or key not in known or known[key] != e.revision:
                jobs.append(e)
        listed = {clean_text(s) for s in seen}
        removed = [sid for sid in known if sid not in listed] if full else []
        with self._cache_io():
            self.remove(removed)
        computed = skipped = 0
        cancelled = False
        for n, entry in enumerate(jobs):
            if self._cancel.is_set():
                cancelled = True
                break
            try:
                view = await self.store.view(entry.session_id)
            except SessionPersistenceError as err:
                self.messages.append(f"{entry.session_id}: {err}")
                skipped += 1
                continue
            if view.status == "busy":
                skipped += 1
                continue
            if view.status == "missing":  # gone since the listing
                with self._cache_io():
                    self.remove([entry.session_id])
                continue
            if view.readable:
                summary, stats = summarize(view)
            else:
                summary = replace(entry_summary(entry, view.status, view.reason), revision=view.revision or entry.revision)
                summary, stats = await self._readable_part(summary)
            with self._cache_io():
                self.put(summary, stats)
            computed += 1
            if progress is not None:
                progress(CacheProgress(n + 1, len(jobs), entry.session_id))
        return CacheReport(
            len(listing), computed, len(seen) - len(jobs), len(removed), skipped, time.perf_counter() - started, cancelled
        )


__all__ = [
    "CACHE_DIR_NAME",
    "FOLD_VERSION",
    "CacheProgress",
    "CacheReport",
    "InsightCache",
    "SessionSummary",
    "cache_path",
    "summarize",
    "summary_of",
]
