"""A SQLite repair's write transaction is ``BEGIN IMMEDIATE`` (issue 21 item 1, the SQLite half).

The JSONL repair now takes the writer's lock before its compare-and-swap; the SQLite equivalent is
that the repair takes the database's write lock (RESERVED) when its transaction begins, before it
reads the rows it will rewrite.  A deferred ``BEGIN`` would read under a shared lock and ask for the
write lock only at its first write: against another connection holding RESERVED it would fail late
(or, with the roles swapped, deadlock-retry), after deciding on rows that may have moved.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sessionkit import meta, one_turn_log, open_turn2, run
from sqlite_helpers import db_path, event_rows, raw, service

from persistence.errors import SessionConflictError

pytestmark = pytest.mark.timeout(60)

BUSY_MS = 400


def _open_turn_db(tmp_path: Path) -> Path:
    db = db_path(tmp_path)

    async def go() -> None:
        store = service(db)
        try:
            await store.create(meta("s", "/p"))
            await store.append("s", one_turn_log() + open_turn2())
        finally:
            await store.close()

    run(go())
    return db


def _write_transaction_begin(statements: list[str]) -> str:
    """The BEGIN of the transaction holding the repair's first write."""
    first_write = next(i for i, s in enumerate(statements) if s.lstrip().upper().startswith(("INSERT", "DELETE")))
    return next(s for s in reversed(statements[:first_write]) if s.upper().startswith("BEGIN"))


def test_repair_waits_for_a_reserved_lock_and_fails_typed_then_commits_immediately(tmp_path: Path) -> None:
    db = _open_turn_db(tmp_path)
    rows = event_rows(db)
    statements: list[str] = []

    async def repair(hold_reserved: bool) -> str:
        store = service(db, busy_timeout_ms=BUSY_MS)
        try:
            # Opened (and its revision read) first: opening validates the file in a write transaction too.
            revision = await store.read_stored_revision("s")
            assert revision is not None
            store.backend.db.connection().set_trace_callback(statements.append)  # type: ignore[attr-defined]
            if not hold_reserved:
                return await store.repair("s", expected_revision=revision)
            with raw(db) as other:
                other.execute("BEGIN IMMEDIATE")  # another connection holds RESERVED
                try:
                    return await store.repair("s", expected_revision=revision)
                finally:
                    other.execute("ROLLBACK")
        finally:
            await store.close()

    start = time.monotonic()
    with pytest.raises(SessionConflictError, match=r"locked|busy"):
        run(repair(True))
    waited = time.monotonic() - start
    assert waited >= BUSY_MS / 1000 * 0.8  # it waited for the lock (busy timeout), then failed typed
    assert event_rows(db) == rows  # nothing changed
    # It asked for the write lock at BEGIN: no statement of its transaction ran before the lock was refused.
    assert statements[-1].upper() == "BEGIN IMMEDIATE", statements
    assert not any(s.lstrip().upper().startswith(("INSERT", "DELETE", "UPDATE")) for s in statements), statements

    statements.clear()
    run(repair(False))
    assert _write_transaction_begin(statements).upper() == "BEGIN IMMEDIATE", statements
    assert len(event_rows(db)) == len(rows) + 2  # step/end and turn/end closers
