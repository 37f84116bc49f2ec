"""Shared pieces of the incremental-view tests: stores of every backend, a writer's log, damage, and the
comparison of a view with a fresh store's view of the same log.

A "fresh" view is one read by a new store instance (nothing cached, no marks): the incremental view of a
long-lived instance must equal it field for field (verdict, header, events, closers, torn facts,
revision and, when asked for, the bytes read).
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from typing import Any

from sessionkit import (
    assistant_message,
    step_end,
    step_start,
    text_delta,
    tool_call,
    tool_result,
    turn_end,
    turn_start,
    user_message,
)

from persistence import CoordinatedPersistence, JsonlSessionPersistence, SessionView
from persistence.sqlite.backend import SqliteSessionPersistence

KINDS = ("jsonl-zstd", "jsonl-none", "sqlite")
SID = "follow"


def open_store(kind: str, root: str) -> CoordinatedPersistence:
    """A store of ``kind`` on ``root`` (a JSONL root folder; SQLite: ``root/store.sqlite``)."""
    if kind == "sqlite":
        return SqliteSessionPersistence(os.path.join(root, "store.sqlite"))
    return JsonlSessionPersistence(root, compression="zstd" if kind == "jsonl-zstd" else "none")


def header(session_id: str = SID) -> dict[str, Any]:
    return {"version": 0, "id": session_id, "createdAt": 1000, "cwd": "/w"}


def turns(start: int, first_turn: int, shapes: list[tuple[int, bool]]) -> list[dict[str, Any]]:
    """Closed turns from seq ``start``: per turn (text deltas, with a tool call); deltas pack into runs."""
    out: list[dict[str, Any]] = []
    seq = start
    for k, (deltas, tool) in enumerate(shapes):
        turn = first_turn + k

        def add(event: dict[str, Any]) -> None:
            nonlocal seq
            out.append(event)
            seq += 1

        add(turn_start(seq, turn))
        add(user_message(seq, f"question {turn}"))
        add(step_start(seq, turn, 1))
        for i in range(deltas):
            add(text_delta(seq, turn, 1, f"d{i} "))
        call = f"call-{turn}"
        add(assistant_message(seq, turn, 1, "answer", calls=[call] if tool else ()))
        if tool:
            add(tool_call(seq, turn, 1, call))
            add(tool_result(seq, turn, 1, call))
        add(step_end(seq, turn, 1))
        add(turn_end(seq, turn))
    return out


def artifact_path(store: CoordinatedPersistence, kind: str, root: str) -> str:
    """The file holding the session: its transcript (JSONL) or the database."""
    if kind == "sqlite":
        return os.path.join(root, "store.sqlite")
    loc = store.locate(header())
    assert loc is not None
    return loc.path


async def fresh_view(kind: str, root: str, raw: bool = False) -> SessionView:
    """The view a new store instance reads (no cache, no marks)."""
    store = open_store(kind, root)
    try:
        return await store.view(SID, raw=raw)
    finally:
        await store.close()


def assert_same_view(got: SessionView, want: SessionView) -> None:
    """Every field a read decides is equal (the raw bytes too, when either has them)."""
    assert got.diagnosis == want.diagnosis
    assert got.header == want.header
    assert got.closer_start == want.closer_start
    assert got.closers == want.closers
    assert got.torn == want.torn
    assert list(got.events.record_table()) == list(want.events.record_table())
    assert list(got.stored.record_table()) == list(want.stored.record_table())
    assert got.raw == want.raw


def sql(path: str, statement: str, *params: Any) -> None:
    """One statement on the store file, then the session's revision bumped (as every engine write does:
    a foreign edit that keeps the revision is invisible to every cache, incremental or not)."""
    con = sqlite3.connect(path)
    try:
        with con:
            con.execute(statement, params)
            con.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (SID,))
    finally:
        con.close()


def sqlite_max_seq(path: str) -> int:
    con = sqlite3.connect(path)
    try:
        row = con.execute("SELECT max(seq) FROM events WHERE session_id = ?", (SID,)).fetchone()
        return -1 if row[0] is None else int(row[0])
    finally:
        con.close()


def sqlite_torn_append(path: str) -> None:
    """A row after the last that does not decode (a torn tail: no turn/end follows it)."""
    seq = sqlite_max_seq(path) + 1
    sql(path, "INSERT INTO events VALUES (?, ?, 'assistant/chunk', 1, '{not json', NULL, NULL, NULL)", SID, seq)


def sqlite_complete_torn(path: str) -> None:
    """The undecodable last row made whole (a chunk event): what a torn row completed later would read as."""
    seq = sqlite_max_seq(path)
    data = '{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"late"}}'
    sql(path, "UPDATE events SET data = ? WHERE session_id = ? AND seq = ?", data, SID, seq)


def sqlite_recreate(path: str) -> None:
    """The session row re-inserted (a new incarnation), its rows kept."""
    sql(path, "UPDATE sessions SET incarnation = ? WHERE id = ?", str(uuid.uuid4()), SID)


def replace_file(path: str, data: bytes) -> None:
    """Write ``data`` to a new file renamed over ``path`` (a new inode, as a rewrite by copy leaves it)."""
    tmp = path + ".new"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def write_in_place(path: str, data: bytes) -> None:
    """Overwrite the file's bytes in place (same inode)."""
    with open(path, "r+b") as f:
        f.seek(0)
        f.write(data)
        f.truncate(len(data))


__all__ = [
    "KINDS",
    "SID",
    "artifact_path",
    "assert_same_view",
    "fresh_view",
    "header",
    "open_store",
    "read_bytes",
    "replace_file",
    "sql",
    "sqlite_complete_torn",
    "sqlite_max_seq",
    "sqlite_recreate",
    "sqlite_torn_append",
    "turns",
    "write_in_place",
]
