"""Repair can never destroy a session (issue 10, items 2-5 and 7).

Each test here failed before the transactional repair: a writer's appends cut by a stale commit,
a non-atomic truncate-then-append, a partial backup under its final name, a full disk after the
backup, intact records cut as a "torn tail", SQLite index damage called repairable, a locked store
called corrupt, a backup made before a permission refusal.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import assert_untouched, backups_under, privatize, run, tree_digest

from app.actions import backups as backup_action
from app.actions import repair
from app.actions.artifacts import artifact_of
from persistence import JsonlSessionPersistence, SessionConflictError, open_store
from persistence.jsonl import repair_commit
from persistence.jsonl.frames import compress_frame
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.timeout(60)

COMPRESSIONS = ["zstd", "none"]


def open_turn_root(tmp: Path, compression: str, sid: str = "s", *, extra: list[dict[str, Any]] | None = None) -> Path:
    root = tmp / "root"

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            await store.create(sk.meta(sid, sk.WORK))
            await store.append(sid, sk.one_turn_log() + sk.open_turn2() + (extra or []))
        finally:
            await store.close()

    run(go())
    privatize(root)
    return root


def artifact_path(root: Path, sid: str, compression: str) -> Path:
    return sk.artifact(root, sk.WORK, sid, compression)


async def _with_store(root: Path | str, fn: Any) -> Any:
    store = open_store(root)
    try:
        return await fn(store)
    finally:
        await store.close()


def _append_raw_records(path: Path, compression: str, records: list[dict[str, Any]]) -> bytes:
    """What another writer appends: complete records continuing the seq run."""
    text = b"".join(js_dumps(r) + b"\n" for r in records)
    data = compress_frame(text) if compression == "zstd" else text
    with open(path, "ab") as f:
        f.write(data)
    return data


# ---------------------------------------------------------------- item 2: a racing writer


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_writer_appending_after_the_preview_is_never_cut(compression: str, tmp_path: Path) -> None:
    """The commit is pinned to the previewed revision: the writer's records stay, nothing is repaired."""
    root = open_turn_root(tmp_path, compression)
    path = artifact_path(root, "s", compression)
    preview = run(_with_store(root, lambda st: repair.preview_repair(st, "s")))
    n = preview.closers[0]["seq"]
    late = [sk.tool_result(n, 2, 1, "c-late"), sk.step_end(n + 1, 2, 1)]
    _append_raw_records(path, compression, late)
    with_writer = path.read_bytes()
    with pytest.raises(repair.RepairRefused, match="changed since its repair was previewed"):
        run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True, expected_revision=preview.revision)))
    assert path.read_bytes() == with_writer


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_writer_appending_during_the_backup_aborts_the_repair(
    compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = open_turn_root(tmp_path, compression)
    path = artifact_path(root, "s", compression)
    real_backup = repair.backup_artifact
    appended: list[bytes] = []

    def backup_then_writer(ref: Any, **kw: Any) -> str:
        out = real_backup(ref, **kw)
        appended.append(_append_raw_records(path, compression, [sk.tool_result(7, 2, 1, "c-late")]))
        return out

    monkeypatch.setattr(repair, "backup_artifact", backup_then_writer)
    before = path.read_bytes()
    with pytest.raises(repair.RepairRefused, match="changed while it was backed up"):
        run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    assert path.read_bytes() == before + appended[0]
    assert backups_under(root) == []  # a copy of a moving log is dropped


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_writer_slipping_in_at_the_swap_is_put_back(compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that appends between the last check and the rename: its bytes survive, the repair is undone."""
    root = open_turn_root(tmp_path, compression)
    path = artifact_path(root, "s", compression)
    before = path.read_bytes()
    real_replace = os.replace
    late: list[bytes] = []

    def replace_after_a_writer(src: str, dst: str) -> None:
        if not late and str(dst) == str(path):
            late.append(_append_raw_records(path, compression, [sk.tool_result(7, 2, 1, "c-late")]))
        real_replace(src, dst)

    monkeypatch.setattr(repair_commit.os, "replace", replace_after_a_writer)
    with pytest.raises(repair.RepairRefused, match="no record was lost"):
        run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    assert path.read_bytes() == before + late[0]
    [b] = backups_under(root)
    assert b.read_bytes() == before


def test_engine_repair_never_retries_like_load(tmp_path: Path) -> None:
    """``CoordinatedPersistence.repair`` is pinned: a stale revision is a conflict, not a re-read and re-cut."""
    root = open_turn_root(tmp_path, "none")
    path = artifact_path(root, "s", "none")
    before = path.read_bytes()

    async def go(store: Any) -> None:
        await store.repair("s", expected_revision="0:0:0:0:0")

    with pytest.raises(SessionConflictError, match="changed since its repair was previewed"):
        run(_with_store(root, go))
    assert path.read_bytes() == before


# ---------------------------------------------------------------- item 3: atomic commit, recoverable backups


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_commit_encodes_before_touching_the_log_and_swaps_atomically(
    compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure while the repaired copy is written leaves the log byte-identical (no truncate happened)."""
    root = open_turn_root(tmp_path, compression)
    path = artifact_path(root, "s", compression)
    before = path.read_bytes()
    ino = os.stat(path).st_ino
    real_write = os.write

    def failing_write(fd: int, data: Any) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
            raise OSError(errno.EIO, "I/O error (simulated)")
        return real_write(fd, data)

    monkeypatch.setattr(repair_commit.os, "write", failing_write)
    with pytest.raises(repair.RepairWriteFailed, match="The log was not changed"):
        run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    assert path.read_bytes() == before and os.stat(path).st_ino == ino
    assert [p for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_stray_temp_of_a_killed_commit_is_removed_by_the_next_one(tmp_path: Path) -> None:
    root = open_turn_root(tmp_path, "zstd")
    path = artifact_path(root, "s", "zstd")
    stray = path.parent / f"{path.name}.repair-999999999-abcd.tmp"  # no such pid
    stray.write_bytes(b"half")
    res = run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    assert res.status_after == "ok"
    assert not stray.exists()


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_backup_holding_records_the_log_lacks_is_found_and_restored(compression: str, tmp_path: Path) -> None:
    """What a killed non-atomic repair left: a short log and a backup with every record; restore brings them back."""
    root = open_turn_root(tmp_path, compression)
    path = artifact_path(root, "s", compression)
    original = path.read_bytes()
    ref = artifact_of(open_store(root), "s")
    assert ref is not None
    backup = repair.backup_artifact(ref)
    # The log as the old two-step commit left it when killed after the truncate: the header and one turn.
    short = sk.encode_log(sk.header_line("s", sk.WORK), [sk.one_turn_log()[:4]], compression)
    path.write_bytes(short)
    privatize(root)

    found = run(_with_store(root, lambda st: backup_action.list_backups(st, "s")))
    assert [(Path(b.path), b.holds_lost_records) for b in found] == [(Path(backup), True)]
    assert found[0].lacking == found[0].records - 4

    res = run(_with_store(root, lambda st: backup_action.restore_backup(st, "s", backup, force=True)))
    assert path.read_bytes() == original
    assert Path(res.backup_of_current).read_bytes() == short  # the state it replaced is kept too
    again = run(_with_store(root, lambda st: backup_action.list_backups(st, "s")))
    assert all(not b.holds_lost_records for b in again if b.path == backup)


def test_a_good_repair_leaves_a_backup_that_lacks_nothing(tmp_path: Path) -> None:
    root = open_turn_root(tmp_path, "zstd")
    res = run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    found = run(_with_store(root, lambda st: backup_action.list_backups(st, "s")))
    assert [(b.path, b.lacking) for b in found] == [(res.backup, 0)]


# ---------------------------------------------------------------- item 4: backups complete or absent


def test_a_failed_backup_copy_leaves_no_file_under_a_backup_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = open_turn_root(tmp_path, "zstd")
    path = artifact_path(root, "s", "zstd")
    before = tree_digest(root)
    real_write = os.write
    calls = {"n": 0}

    def write_then_die(fd: int, data: Any) -> int:
        calls["n"] += 1
        if ".partial-" in os.readlink(f"/proc/self/fd/{fd}"):
            real_write(fd, bytes(data)[:100])
            raise OSError(errno.EIO, "I/O error (simulated)")
        return real_write(fd, data)

    monkeypatch.setattr(repair.os, "write", write_then_die)
    with pytest.raises(OSError, match="simulated"):
        run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    assert backups_under(root) == []
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    assert tree_digest(root) == before


# ---------------------------------------------------------------- item 5: disk full


def test_no_room_for_backup_and_copy_refuses_before_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = open_turn_root(tmp_path, "zstd")
    before = tree_digest(root)

    class Usage:
        total, used, free = 10 << 30, 10 << 30, 1000

    monkeypatch.setattr(repair.shutil, "disk_usage", lambda _p: Usage)
    with pytest.raises(repair.RepairRefused, match=r"not enough free space.*no backup was made"):
        run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    assert tree_digest(root) == before


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_disk_full_after_the_backup_keeps_the_log_and_names_the_backup(
    compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = open_turn_root(tmp_path, compression)
    path = artifact_path(root, "s", compression)
    before = path.read_bytes()
    real_write = os.write

    def full(fd: int, data: Any) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(repair_commit.os, "write", full)
    with pytest.raises(repair.RepairWriteFailed) as info:
        run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    [b] = backups_under(root)
    msg = str(info.value)
    assert "the log was not changed" in msg.lower() and str(b) in msg
    assert path.read_bytes() == before and b.read_bytes() == before


# ---------------------------------------------------------------- item 7: misdiagnoses


def test_damage_followed_by_intact_records_is_not_cut_without_consent(tmp_path: Path) -> None:
    """One damaged line early in an open turn, then 498 valid seq-contiguous records (raw JSONL)."""
    root = tmp_path / "root"
    first = sk.one_turn_log()
    n = len(first)
    events = [*first, sk.turn_start(n, 2), sk.step_start(n + 1, 2, 1)]
    tail = [sk.text_delta(n + 2 + i, 2, 1, f"t{i}") for i in range(499)]
    header = js_dumps(sk.header_line("s", sk.WORK)) + b"\n"
    body = b"".join(js_dumps(e) + b"\n" for e in events)
    damaged = b"{garbage\n" + b"".join(js_dumps(e) + b"\n" for e in tail[1:])
    sk.plant(root, os.path.relpath(artifact_path(root, "s", "none").parent, root), header + body + damaged, "none")
    privatize(root)
    path = artifact_path(root, "s", "none")
    before = path.read_bytes()

    preview = run(_with_store(root, lambda st: repair.preview_repair(st, "s")))
    assert preview.status == "torn-tail" and preview.intact_after_damage == 498
    assert "498 intact record(s) after the damage" in preview.reason
    assert preview.to_json()["intactAfterDamage"] == 498
    with pytest.raises(repair.RepairRefused, match="498 intact record"):
        run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True)))
    assert path.read_bytes() == before and backups_under(root) == []

    res = run(_with_store(root, lambda st: repair.repair_session(st, "s", force=True, accept_loss=True)))
    assert res.status_after == "ok"
    [b] = backups_under(root)
    assert b.read_bytes() == before


def _sqlite_store(tmp: Path, *, others: int = 0) -> Path:
    """A store whose session "s" has an open turn, plus ``others`` balanced sessions sorting after it."""
    from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]

    db = tmp / "store.sqlite"

    async def go() -> None:
        store = SqliteSessionPersistence(str(db))
        try:
            await store.create(sk.meta("s", sk.WORK))
            await store.append("s", sk.one_turn_log() + sk.open_turn2())
            for i in range(others):
                await store.create(sk.meta(f"u{i:04d}", sk.WORK))
                await store.append(f"u{i:04d}", sk.one_turn_log())
        finally:
            await store.close()

    run(go())
    privatize(tmp)
    return db


def test_sqlite_index_damage_is_refused_before_any_backup(tmp_path: Path) -> None:
    """Damage in an index page that reading "s" never touches: diagnose calls it repairable, quick_check does not."""
    db = _sqlite_store(tmp_path, others=300)
    con = sqlite3.connect(db)
    try:
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        [(page,)] = con.execute(
            "SELECT pageno FROM dbstat WHERE name = 'sqlite_autoindex_events_1' AND pagetype = 'leaf' ORDER BY path DESC LIMIT 1"
        ).fetchall()
    finally:
        con.close()
    data = bytearray(db.read_bytes())
    start = (page - 1) * page_size
    data[start + 8 : start + page_size] = b"\xff" * (page_size - 8)
    db.write_bytes(bytes(data))
    privatize(tmp_path)
    before = tree_digest(tmp_path)
    preview = run(_with_store(db, lambda st: repair.preview_repair(st, "s")))
    assert preview.status == "open-turn"  # the read path alone cannot see the damage
    with pytest.raises(repair.RepairRefused, match=r"the database is damaged \(quick_check"):
        run(_with_store(db, lambda st: repair.repair_session(st, "s", force=True)))
    assert_untouched(tmp_path, before)
    assert backups_under(tmp_path) == []


def test_sqlite_locked_store_is_busy_not_corrupt(tmp_path: Path) -> None:
    from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]

    db = _sqlite_store(tmp_path)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:

        async def go() -> Any:
            store = SqliteSessionPersistence(str(db), busy_timeout_ms=0)
            try:
                return await store.diagnose("s")
            finally:
                await store.close()

        diag = run(go())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert diag.status == "busy", diag
    assert "busy, not damaged" in diag.reason


def test_sqlite_store_not_writable_is_refused_before_the_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _sqlite_store(tmp_path)
    before = tree_digest(tmp_path)
    real_access = os.access
    monkeypatch.setattr(
        repair.os, "access", lambda p, mode, **kw: False if str(p) == str(db) and mode & os.W_OK else real_access(p, mode, **kw)
    )
    with pytest.raises(repair.RepairRefused, match=r"not writable.*no backup was made"):
        run(_with_store(db, lambda st: repair.repair_session(st, "s", force=True)))
    assert_untouched(tmp_path, before)
    assert backups_under(tmp_path) == []


# ---------------------------------------------------------------- the command line


def test_cli_backups_restore_and_accept_loss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from actionkit import main_json, main_text

    root = open_turn_root(tmp_path, "zstd")
    path = artifact_path(root, "s", "zstd")
    original = path.read_bytes()
    code, out, err = main_text(capsys, "repair", str(root), "s", "--dry-run")
    assert code == 0, err
    assert "liveness guard: quiet" in out
    code, out, err = main_json(capsys, "repair", str(root), "s", "--force", "--accept-loss")
    assert code == 0, err
    repaired = path.read_bytes()
    code, listed, err = main_json(capsys, "backups", str(root), "s")
    assert code == 0, err
    assert [(b["path"], b["lacking"]) for b in listed] == [(out["backup"], 0)]
    code, done, err = main_json(capsys, "restore", str(root), "s", "--backup", out["backup"], "--force")
    assert code == 0, err
    assert path.read_bytes() == original
    assert Path(done["backupOfCurrent"]).read_bytes() == repaired
    code, refused, _err = main_json(capsys, "restore", str(root), "s", "--backup", str(path), "--force")
    assert code == 1 and "is not a backup" in refused["error"]["message"]


def test_verify_names_a_backup_holding_records_the_log_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from actionkit import main_json, main_text

    root = open_turn_root(tmp_path, "none")
    path = artifact_path(root, "s", "none")
    ref = artifact_of(open_store(root), "s")
    assert ref is not None
    backup = repair.backup_artifact(ref)
    path.write_bytes(sk.encode_log(sk.header_line("s", sk.WORK), [sk.one_turn_log()[:4]], "none"))
    code, out, _err = main_json(capsys, "verify", str(root))
    assert code == 1 and not out["ok"]
    [lost] = out["lostRecords"]
    assert lost["id"] == "s" and lost["backup"] == backup and lost["lacking"] > 0
    code, text, _err = main_text(capsys, "verify", str(root))
    assert code == 1 and f"restore {root} s --backup {backup}" in text


def test_commit_reuses_the_previewed_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pinned commit takes the preview's parsed log from the store's cache (revision re-checked), so a
    repair does not parse the whole log a second time before writing."""
    from persistence.jsonl.storage import JsonlStorage

    root = open_turn_root(tmp_path, "zstd")
    parses: list[str] = []
    real = JsonlStorage._whole

    def counting(self: Any, *args: Any, **kw: Any) -> Any:
        parses.append(args[0])
        return real(self, *args, **kw)

    monkeypatch.setattr(JsonlStorage, "_whole", counting)

    async def go(store: Any) -> None:
        preview = await repair.preview_repair(store, "s")
        seen = len(parses)
        await store.repair("s", expected_revision=preview.revision)
        assert len(parses) == seen

    run(_with_store(root, go))
