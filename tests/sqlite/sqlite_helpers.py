"""Shared helpers of the SQLite backend tests (importable as ``sqlite_helpers``)."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sessionkit import step_end, step_start, text_delta, turn_end, turn_start

from persistence.backend import NEVER_CANCELLED
from persistence.sqlite.backend import SqliteSessionPersistence
from persistence.sqlite.sessions import BUMP_REVISION, UPSERT_SESSION, upsert_params
from persistence.sqlite.storage import SqliteStorage

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
SQLITE_FIXTURES = SHARED / "fixtures" / "upstream" / "sqlite"
NEEDS_FIXTURES = pytest.mark.skipif(
    not SQLITE_FIXTURES.is_dir(), reason=f"upstream SQLite fixtures not found at {SQLITE_FIXTURES}"
)
T = NEVER_CANCELLED


def private_dir(tmp_path: Path, name: str = "store") -> Path:
    d = tmp_path / name
    d.mkdir(mode=0o700, exist_ok=True)
    os.chmod(d, 0o700)
    return d


def db_path(tmp_path: Path) -> Path:
    return private_dir(tmp_path) / "sessions.sqlite"


def storage(path: Path | str, **kw: Any) -> SqliteStorage:
    return SqliteStorage(path, **kw)


def service(path: Path | str, **kw: Any) -> SqliteSessionPersistence:
    return SqliteSessionPersistence(path, **kw)


def fill_sessions(path: Path | str, ids: list[str], *, subagent_every: int = 0) -> None:
    """A header row for each of ``ids`` (created_at its index, one of three cwds), each a new incarnation
    at revision 1; every ``subagent_every``-th one a subagent's (a parent, origin, depth and preset)."""
    st = SqliteStorage(path)
    st.list_headers(NEVER_CANCELLED)
    with st.db.write("fill") as con:
        for i, sid in enumerate(ids):
            m: dict[str, Any] = {"version": 0, "id": sid, "createdAt": i, "cwd": f"/p/{i % 3}"}
            if subagent_every and i % subagent_every == 0:
                m |= {"parentSession": "parent", "origin": "subagent", "delegationDepth": 1, "agentPreset": "reviewer"}
            con.execute(UPSERT_SESSION, upsert_params(m, str(uuid.uuid4())))
            con.execute(BUMP_REVISION, (sid,))
    st.close()


async def fresh_listing(path: Path) -> tuple[list[Any], list[Any]]:
    """``list()`` and ``list_snapshots()`` of a new read-only instance of the store at ``path``."""
    store = SqliteSessionPersistence(path, read_only=True)
    try:
        return await store.list(), await store.list_snapshots()
    finally:
        await store.close()


@contextmanager
def typeless_sessions(rows: list[tuple[Any, ...]]) -> Iterator[sqlite3.Connection]:
    """An in-memory ``sessions`` table of ``rows`` without column types (nor STRICT): every cell keeps the
    storage class it was given, as in a crafted or damaged file."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute(
            "CREATE TABLE sessions (id, version, created_at, cwd, parent_session, seed_length, origin, "
            "delegation_depth, agent_preset, incarnation, revision)"
        )
        con.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        yield con
    finally:
        con.close()


@contextmanager
def raw(path: Path | str) -> Iterator[sqlite3.Connection]:
    """A plain connection for crafting or inspecting files (autocommit)."""
    con = sqlite3.connect(path, isolation_level=None, timeout=5)
    try:
        yield con
    finally:
        con.close()


def event_rows(path: Path | str, session_id: str | None = None) -> list[tuple[Any, ...]]:
    with raw(path) as con:
        sql = (
            "SELECT rowid, seq, type, time, typeof(data), data, source_event_seqs, surface_op, ignorable "
            "FROM events {} ORDER BY seq"
        )
        if session_id is None:
            return con.execute(sql.format("")).fetchall()
        return con.execute(sql.format("WHERE session_id = ?"), (session_id,)).fetchall()


def packed_count(rows: list[tuple[Any, ...]]) -> int:
    return sum(1 for r in rows if r[8] == 0)


def chunk_log(n: int, *, text: str = "x") -> list[dict[str, Any]]:
    """Upstream's chunkLog(n): turn/start, step/start, n text deltas, step/end, turn/end (n + 4 events)."""
    out = [turn_start(0, 1), step_start(1, 1, 1)]
    out += [text_delta(2 + i, 1, 1, text) for i in range(n)]
    out += [step_end(n + 2, 1, 1), turn_end(n + 3, 1)]
    return out


def append(st: SqliteStorage, meta: dict[str, Any], events: list[dict[str, Any]], *, materialized: bool = True) -> None:
    st.append_batch(meta, events, materialized, T, expected_next_seq=events[0]["seq"] if events else 0)


def append_batches(st: SqliteStorage, meta: dict[str, Any], events: list[dict[str, Any]], sizes: list[int]) -> None:
    """Append ``events`` in consecutive batches whose sizes cycle through ``sizes``."""
    i = k = 0
    while i < len(events):
        n = sizes[k % len(sizes)]
        append(st, meta, events[i : i + n], materialized=i > 0)
        i += n
        k += 1
