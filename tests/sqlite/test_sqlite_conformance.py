"""Upstream fixtures: replay every recorded call, compare repairs with upstream's ``after/`` db, codec parity."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from sessionkit import run
from sqlite_helpers import NEEDS_FIXTURES, REPO, SQLITE_FIXTURES, service

sys.path.insert(0, str(REPO / "tests" / "conformance"))
from replay import copy_private, replay_calls

from persistence.sqlite.packing import encode_batch
from persistence.sqlite.rows import EVENT_COLUMNS, decode_row, validate_event_rows

SCENARIOS = sorted(p.parent for p in SQLITE_FIXTURES.glob("**/expected.json")) if SQLITE_FIXTURES.is_dir() else []


def _id(p: Path) -> str:
    return str(p.relative_to(SQLITE_FIXTURES))


@NEEDS_FIXTURES
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[_id(p) for p in SCENARIOS])
def test_replays_upstream_calls(scenario: Path, tmp_path: Path) -> None:
    expected = json.loads((scenario / "expected.json").read_text())
    before = scenario / "root" if (scenario / "root").exists() else scenario / "before" / "root"
    root = tmp_path / "root"
    copy_private(before, root)  # keeps -wal/-shm beside the db (interrupted) and makes them 0600/0700
    problems = replay_calls(expected, root, expected["calls"])
    if "callsOnAfter" in expected:
        after = tmp_path / "after"
        copy_private(scenario / "after" / "root", after)
        problems += ["after: " + p for p in replay_calls(expected, after, expected["callsOnAfter"])]
    assert problems == []


def _dump(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    con = sqlite3.connect(path)
    try:
        events = con.execute(
            "SELECT session_id, seq, type, time, typeof(data), data, source_event_seqs, surface_op, "
            "ignorable FROM events ORDER BY session_id, seq"
        ).fetchall()
        sessions = con.execute("SELECT * FROM sessions ORDER BY rowid").fetchall()
    finally:
        con.close()
    return events, sessions


@NEEDS_FIXTURES
@pytest.mark.parametrize("scenario", ["interrupted", "torn-tail/malformed-last-row"])
def test_repair_matches_upstream_after_db(scenario: str, tmp_path: Path) -> None:
    base = SQLITE_FIXTURES / scenario
    expected = json.loads((base / "expected.json").read_text())
    session_id = expected["sessions"][0]["id"]
    copy_private(base / "before" / "root", tmp_path / "before")
    copy_private(base / "after" / "root", tmp_path / "after")

    async def body() -> None:
        store = service(tmp_path / "before" / "sessions.sqlite")
        await store.load(session_id)
        await store.close()

    run(body())
    ours_events, ours_sessions = _dump(tmp_path / "before" / "sessions.sqlite")
    want_events, want_sessions = _dump(tmp_path / "after" / "sessions.sqlite")
    assert ours_events == want_events
    # Same incarnation, revision bumped exactly once (5 -> 6), like upstream.
    assert ours_sessions == want_sessions
    # A clean close checkpoints and removes the WAL side files.
    assert sorted(p.name for p in (tmp_path / "before").iterdir()) == ["sessions.sqlite"]


@NEEDS_FIXTURES
def test_every_upstream_row_reencodes_byte_identically() -> None:
    """E63 and §7.3: our writer reproduces each upstream row (incl. every zstd BLOB) from its decoded events."""
    checked = blobs = 0
    databases = [
        *sorted(SQLITE_FIXTURES.glob("**/after/root/sessions.sqlite")),
        *sorted(SQLITE_FIXTURES.glob("*/root/sessions.sqlite")),
    ]
    for db in databases:
        con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)  # read-only checked-in file
        try:
            rows = con.execute(f"SELECT {EVENT_COLUMNS} FROM events ORDER BY session_id, seq").fetchall()
        finally:
            con.close()
        validate_event_rows(rows)
        for row in rows:
            encoded = encode_batch(decode_row(row), pack=True)
            assert encoded == [tuple(row)], (db, row[:3])
            checked += 1
            blobs += type(row[3]) is bytes
    assert checked > 1000 and blobs > 10
