"""``readable_prefix`` on every backend and every refused kind (issue 24 item 5): a corrupt log's events
before its damage and an unsupported log's readable events, each under its header as written (id,
cwd, version), with what stopped them.  Before, JSONL had no lenient reader (None) and a SQLite
header row that failed validation hid the whole session."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import damagedkit as dk
import pytest
import sessionkit as sk
from livekit import open_backend

from persistence import EventType


def latest_title(events: object) -> str | None:
    titles = [e["data"]["title"] for e in events if e.get("type") == EventType.SESSION_TITLE]  # type: ignore[attr-defined]
    return titles[-1] if titles else None


@pytest.mark.parametrize("name", dk.BACKENDS)
def test_a_corrupt_log_reads_up_to_its_damage_and_an_unsupported_one_whole(tmp_path: Path, name: str) -> None:
    storage = dk.storage_of(name, tmp_path)
    dk.build_damaged(name, storage)

    async def read() -> tuple[object, object, str, str]:
        store = open_backend(name, storage)
        try:
            corrupt, unsupported = await store.readable_prefix(dk.CORRUPT), await store.readable_prefix(dk.UNSUPPORTED)
            return corrupt, unsupported, (await store.diagnose(dk.CORRUPT)).status, (await store.diagnose(dk.UNSUPPORTED)).status
        finally:
            await store.close()

    corrupt, unsupported, corrupt_status, unsupported_status = sk.run(read())
    assert (corrupt_status, unsupported_status) == ("corrupt", "unsupported")
    assert corrupt is not None and unsupported is not None
    assert corrupt.meta["id"] == dk.CORRUPT and corrupt.meta["cwd"] == dk.CWD  # type: ignore[attr-defined]
    assert len(corrupt.events) == dk.READABLE_EVENTS  # type: ignore[attr-defined]
    assert latest_title(corrupt.events) == dk.TITLE[dk.CORRUPT]  # type: ignore[attr-defined]
    stop = corrupt.stop  # type: ignore[attr-defined]
    assert stop is not None and stop.seq == dk.READABLE_EVENTS and stop.rows_after >= 1
    assert unsupported.meta["version"] == 1 and unsupported.meta["cwd"] == dk.CWD  # type: ignore[attr-defined]
    assert len(unsupported.events) == dk.READABLE_EVENTS + len(dk.later_turn())  # type: ignore[attr-defined]
    assert latest_title(unsupported.events) == dk.TITLE[dk.UNSUPPORTED]  # type: ignore[attr-defined]


def test_a_sqlite_header_row_that_fails_validation_still_names_its_session(tmp_path: Path) -> None:
    storage = dk.storage_of("sqlite", tmp_path)
    dk.build_damaged("sqlite", storage)
    con = sqlite3.connect(storage)
    with con:
        con.execute("UPDATE sessions SET cwd = 'relative/dir' WHERE id = ?", (dk.UNSUPPORTED,))
    con.close()

    async def read() -> object:
        store = open_backend("sqlite", storage)
        try:
            return await store.readable_prefix(dk.UNSUPPORTED)
        finally:
            await store.close()

    prefix = sk.run(read())
    assert prefix is not None
    assert prefix.meta["cwd"] == "relative/dir"  # type: ignore[attr-defined]
    assert latest_title(prefix.events) == dk.TITLE[dk.UNSUPPORTED]  # type: ignore[attr-defined]


def test_a_jsonl_log_whose_first_line_is_no_object_has_no_prefix(tmp_path: Path) -> None:
    root = tmp_path / "root"
    path = sk.artifact(root, dk.CWD, "s1", "none")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"[1, 2]\n" + b"".join(dk._lines(dk.readable_turn(dk.CORRUPT))))

    async def read() -> object:
        store = open_backend("jsonl-none", root)
        try:
            return await store.readable_prefix("s1")
        finally:
            await store.close()

    assert sk.run(read()) is None
