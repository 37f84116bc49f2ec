"""Interop details found by running upstream's own code (issue 10, "Interop details"), plus the
fork-on-a-full-disk cleanup of item 5.

Each test pins one place where we differed from upstream: folder modes of a new root, number
text in ``--json``, fork error wording, the subject of stored-event validation messages, the
clock of resumed sessions, and what a failed first write leaves behind.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sessionkit import ev, meta, one_turn_log, open_turn2, run, tool_result, turn_start, user_message

import persistence.jsonl.writer as jsonl_storage
from app.actions import fork as fork_action
from app.cli import main
from persistence import (
    JsonlSessionPersistence,
    SessionForkError,
    SessionPersistenceCorruptionError,
    SessionStore,
    SessionValidationError,
)
from persistence.open import open_store
from persistence.session import END_SEED
from persistence.sqlite.storage import SqliteStorage

pytestmark = pytest.mark.usefixtures("fast_fsync")


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# ---------------------------------------------------------------- a. folder modes of a new root


def test_every_missing_parent_of_a_new_root_is_created_0700(tmp_path: Path, umask_022: None) -> None:
    """Upstream's ``mkdir -p root`` gives every level it creates mode 0700 (jsonl-backend §11.2)."""
    root = tmp_path / "a" / "b" / "c" / "sessions"

    async def body() -> None:
        store = JsonlSessionPersistence(root)
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())

    run(body())
    created = [
        tmp_path / "a",
        tmp_path / "a" / "b",
        tmp_path / "a" / "b" / "c",
        root,
        root / "--proj--",
        root / "--proj--" / "s1",
    ]
    assert {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode)) for p in created} == {
        str(p.relative_to(tmp_path)): "0o700" for p in created
    }


def test_an_existing_parent_keeps_its_mode(tmp_path: Path, umask_022: None) -> None:
    parent = tmp_path / "shared"
    parent.mkdir(mode=0o755)
    os.chmod(parent, 0o755)

    async def body() -> None:
        store = JsonlSessionPersistence(parent / "new" / "root")
        await store.create(meta("s1", "/proj"))
        await store.append("s1", one_turn_log())

    run(body())
    assert stat.S_IMODE(parent.stat().st_mode) == 0o755
    assert stat.S_IMODE((parent / "new").stat().st_mode) == 0o700


# ---------------------------------------------------------------- b. numbers in --json


def test_json_output_prints_numbers_as_javascript_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta("n1", "/proj"))
        await store.append(
            "n1",
            [
                ev(
                    "plugin/numbers",
                    0,
                    {"big": 1e20, "small": 1e-6, "neg": -0.0000015, "huge": 1.5e300, "whole": 2.0},
                    ignorable=True,
                )
            ],
        )

    run(body())
    assert main(["inspect", str(tmp_path), "n1", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"data":{"big":100000000000000000000,"small":0.000001,"neg":-0.0000015,"huge":1.5e+300,"whole":2}' in out
    assert json.loads(out)["events"][0]["data"]["big"] == 1e20


# ---------------------------------------------------------------- c. fork error wording


async def _live_source(tmp_path: Path, events: list[dict[str, Any]]) -> SessionStore:
    store = SessionStore(JsonlSessionPersistence(tmp_path))
    src = await store.create("src", meta={"cwd": "/proj"})
    for e in events:
        src.append(e["type"], e["data"], surface_op=e.get("surfaceOp"))
    return store


@pytest.mark.parametrize(("boundary", "shown"), [(-1, "-1"), (0.5, "0.5"), (2**53, "9007199254740992"), (True, "true")])
def test_invalid_fork_boundary_names_the_session_like_upstream(tmp_path: Path, boundary: Any, shown: str) -> None:
    async def body() -> None:
        store = await _live_source(tmp_path, one_turn_log())
        try:
            with pytest.raises(SessionForkError) as info:
                await store.fork("src", boundary=boundary)
            assert str(info.value) == f'fork boundary for session "src" must be a non-negative safe integer, got {shown}'
            assert info.value.code == "INVALID_BOUNDARY"
        finally:
            await store.close()

    run(body())


def test_open_turn_fork_error_names_the_session_like_upstream(tmp_path: Path) -> None:
    async def body() -> None:
        store = await _live_source(tmp_path, [turn_start(0, 1), user_message(1, "q")])
        try:
            with pytest.raises(SessionForkError) as info:
                await store.fork("src", boundary=1)
            assert str(info.value) == 'fork boundary 1 in session "src" ends inside open turn 1'
            assert info.value.code == "OPEN_TURN"
        finally:
            await store.close()

    run(body())


# ---------------------------------------------------------------- d. subject of stored-event validation


def test_stored_event_validation_names_a_session_event_at_seq(tmp_path: Path) -> None:
    """Upstream's read pipeline validates each stored event as ``session event at seq N``."""
    bad = tool_result(4, 1, 1, "c1")
    bad["data"]["message"]["content"] = []

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta("v1", "/proj"))
        await store.append("v1", [*one_turn_log()[:4], bad])
        with pytest.raises(SessionPersistenceCorruptionError) as wrapped:
            await JsonlSessionPersistence(tmp_path).inspect("v1")
        assert str(wrapped.value) == (
            'stored session "v1" failed validation: Error: session event at seq 4 message must contain one tool-result block'
        )
        with pytest.raises(SessionValidationError) as inner:
            await JsonlSessionPersistence(tmp_path).read_from("v1", 0)
        assert str(inner.value) == "session event at seq 4 message must contain one tool-result block"

    run(body())


# ---------------------------------------------------------------- e. the store's clock reaches resumed sessions


def test_resume_uses_the_session_stores_clock(tmp_path: Path) -> None:
    async def body() -> None:
        first = JsonlSessionPersistence(tmp_path)
        await first.create(meta("r1", "/proj"))
        await first.append("r1", one_turn_log() + open_turn2())
        store = SessionStore(JsonlSessionPersistence(tmp_path), clock=lambda: 4242)
        try:
            session = await store.resume("r1")
            marker = session.records()[-1]
            assert (marker["type"], marker["time"]) == (END_SEED, 4242)
            appended = session.append("turn/start", {"turn": session.next_turn})
            assert appended.time == 4242
            await store.flush("r1")
        finally:
            await store.close()
        stored = (await JsonlSessionPersistence(tmp_path).inspect("r1")).events.records()
        marker_at = max(i for i, e in enumerate(stored) if e["type"] == END_SEED)
        assert [(e["type"], e["time"]) for e in stored[marker_at : marker_at + 2]] == [(END_SEED, 4242), ("turn/start", 4242)]

    run(body())


# ---------------------------------------------------------------- item 5: a failed first write leaves nothing


def _one_turn_parent(root: Path) -> None:
    async def body() -> None:
        store = JsonlSessionPersistence(root)
        await store.create(meta("parent", "/proj"))
        await store.append("parent", one_turn_log())

    run(body())


@pytest.mark.parametrize("failing", ["write", "fsync"])
def test_fork_on_a_full_disk_leaves_no_temp_file_and_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    _one_turn_parent(tmp_path)
    before = _files(tmp_path)
    real_write_all = jsonl_storage._write_all
    real_fsync = os.fsync

    def full_write(fd: int, content: bytes) -> None:
        real_write_all(fd, content[: len(content) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    def full_fsync(fd: int) -> None:
        if os.fstat(fd).st_size > 0 and stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    if failing == "write":
        monkeypatch.setattr(jsonl_storage, "_write_all", full_write)
    else:
        monkeypatch.setattr(os, "fsync", full_fsync)

    async def body() -> None:
        store = open_store(str(tmp_path), None)
        try:
            with pytest.raises(OSError) as info:
                await fork_action.fork_after_turn(store, "parent", 1, "child")
        finally:
            await store.close()
        assert info.value.errno == errno.ENOSPC
        assert "nothing was left on disk" in str(info.value)

    run(body())
    assert _files(tmp_path) == before  # no 0-byte .tmp, no empty --proj--/child folder


def test_failed_first_write_into_a_new_root_removes_only_the_folders_it_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "keep").mkdir()
    root = tmp_path / "keep" / "new" / "root"

    def full_write(fd: int, content: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonl_storage, "_write_all", full_write)

    async def body() -> None:
        store = JsonlSessionPersistence(root)
        await store.create(meta("s1", "/proj"))
        with pytest.raises(OSError, match="nothing was left on disk"):
            await store.append("s1", one_turn_log())

    run(body())
    assert _files(tmp_path) == ["keep"]


def test_a_folder_that_gained_other_content_is_kept_and_the_error_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _one_turn_parent(tmp_path)

    def full_write(fd: int, content: bytes) -> None:
        # Another writer drops a file into the session folder this call just created.
        (tmp_path / "--proj--" / "child" / "other.txt").write_text("x")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonl_storage, "_write_all", full_write)

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta("child", "/proj"))
        with pytest.raises(OSError) as info:
            await store.append("child", one_turn_log())
        assert "left on disk" in str(info.value) and "nothing was left" not in str(info.value)
        assert os.path.join("--proj--", "child") in str(info.value)

    run(body())
    assert sorted(os.listdir(tmp_path / "--proj--" / "child")) == ["other.txt"]  # the temp file is gone


def test_sqlite_fork_that_fails_inside_its_transaction_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.sqlite"

    async def seed() -> None:
        store = open_store(str(db), "sqlite")
        try:
            await store.create(meta("parent", "/proj"))
            await store.append("parent", one_turn_log())
        finally:
            await store.close()

    run(seed())

    def rows() -> dict[str, list[Any]]:
        con = sqlite3.connect(db)
        try:
            return {
                t: con.execute(f"SELECT * FROM {t}").fetchall()  # table names come from sqlite_master
                for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
            }
        finally:
            con.close()

    before = rows()
    calls = {"n": 0}

    def full_insert(self: Any, conn: sqlite3.Connection, session_id: str, rows_: Any) -> None:
        # Runs after the new session's metadata row was written inside the same transaction.
        calls["n"] += 1
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SqliteStorage, "_insert", full_insert)

    async def body() -> None:
        store = open_store(str(db), "sqlite")
        try:
            with pytest.raises(Exception, match="disk is full"):
                await fork_action.fork_after_turn(store, "parent", 1, "child")
        finally:
            await store.close()

    run(body())
    monkeypatch.undo()
    assert calls["n"] >= 1
    assert rows() == before
