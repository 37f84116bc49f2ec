"""Repair refusals: liveness guard, corrupt / unsupported / missing sessions, and the backup itself.

These build their sessions with the engine (no shared fixtures needed) except where noted.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import (
    BACKUP_RE,
    UPSTREAM,
    assert_untouched,
    backups_under,
    cli,
    copy_private,
    main_json,
    main_text,
    needs_shared,
    needs_sqlite,
    privatize,
    run,
    sqlite_rows,
    tree_digest,
)

from app.actions import repair
from app.actions.artifacts import ArtifactRef, artifact_of, last_modified_age_s
from persistence import JsonlSessionPersistence, open_store
from persistence.jsonl.frames import compress_frame

pytestmark = pytest.mark.timeout(60)

COMPRESSIONS = ["zstd", "none"]


def make_root(tmp: Path, compression: str, sessions: dict[str, list[dict[str, Any]]], *, age: float | None = None) -> Path:
    """A JSONL root written by the engine; ``age`` dates every file that many seconds back (None: just written)."""
    root = tmp / "root"
    tmp.mkdir(parents=True, exist_ok=True)
    os.chmod(tmp, 0o700)

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            for sid, events in sessions.items():
                await store.create(sk.meta(sid, sk.WORK))
                await store.append(sid, events)
        finally:
            await store.close()

    run(go())
    if age is not None:
        privatize(root, age=age)
    return root


def open_turn_log() -> list[dict[str, Any]]:
    return sk.one_turn_log() + sk.open_turn2()


def write_version(path: Path, compression: str, version: int) -> None:
    """Re-write the header line with another format version (zstd: header frame re-encoded)."""
    plain = sk.plaintext(path.read_bytes(), compression)
    nl = plain.index(b"\n") + 1
    header = plain[:nl].replace(b'"version":0', b'"version":%d' % version, 1)
    body = plain[nl:]
    path.write_bytes(compress_frame(header) + compress_frame(body) if compression == "zstd" else header + body)


async def _repair(root: Path, sid: str, **kw: Any) -> repair.RepairResult:
    store = open_store(root)
    try:
        return await repair.repair_session(store, sid, **kw)
    finally:
        await store.close()


# ---------------------------------------------------------------- liveness guard


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_guard_refuses_a_just_written_session_and_force_overrides(compression: str, tmp_path: Path) -> None:
    root = make_root(tmp_path, compression, {"live": open_turn_log()})
    before = tree_digest(root)
    with pytest.raises(repair.RepairRefused) as info:
        run(_repair(root, "live"))
    msg = str(info.value)
    assert msg.startswith('refusing to repair "live": the artifact changed ')
    assert "less than 10 s" in msg and "--force" in msg
    assert_untouched(root, before)
    assert backups_under(root) == []

    # A shorter quiet window is configurable; 0 s accepts any age.
    res = run(_repair(root, "live", quiet_seconds=0))
    assert res.status_after == "ok" and res.backup is not None

    root2 = make_root(tmp_path / "again", compression, {"live": open_turn_log()})
    res = run(_repair(root2, "live", force=True))
    assert res.status_after == "ok"
    [b] = backups_under(root2)
    assert str(b) == res.backup


def test_guard_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_root(tmp_path, "zstd", {"live": open_turn_log()})
    before = tree_digest(root)
    code, out, err = main_text(capsys, "repair", str(root), "live")
    assert code == 1 and out == ""
    assert err.startswith('sessionscope: Error: refusing to repair "live": the artifact changed ')
    assert_untouched(root, before)

    code, out, err = main_json(capsys, "repair", str(root), "live")
    assert code == 1
    assert set(out) == {"error"} and set(out["error"]) == {"class", "message"}
    assert out["error"]["class"] == "Error" and "refusing to repair" in out["error"]["message"]
    assert_untouched(root, before)

    code, out, err = main_json(capsys, "repair", str(root), "live", "--force")
    assert code == 0, err
    assert set(out) == {"preview", "backup", "statusAfter", "eventsAfter"}
    assert out["statusAfter"] == "ok" and out["eventsAfter"] == 10
    assert [c["type"] for c in out["preview"]["closers"]] == ["step/end", "turn/end"]
    assert Path(out["backup"]).is_file()


def test_check_liveness_measures_the_age_against_now(tmp_path: Path) -> None:
    f = tmp_path / "session.jsonl"
    f.write_bytes(b"x")
    os.utime(f, (1_000_000.0, 1_000_000.0))
    ref = ArtifactRef("jsonl", str(f))
    assert last_modified_age_s(ref, 1_000_004.0) == pytest.approx(4.0)
    why = repair.check_liveness(ref, now=1_000_004.0)
    assert why is not None and "changed 4.0 s ago (less than 10 s)" in why
    assert repair.check_liveness(ref, now=1_000_010.5) is None
    assert repair.check_liveness(ref, now=1_000_004.0, quiet_seconds=3) is None
    assert repair.check_liveness(ref, now=1_000_030.0, quiet_seconds=60) is not None
    # A clock step backwards (mtime in the future) is treated as "just written".
    assert repair.check_liveness(ref, now=999_990.0) is not None


def _plain_wal_db(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t (x)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    os.chmod(path, 0o600)


def test_sqlite_liveness_refuses_while_a_write_transaction_is_held(tmp_path: Path) -> None:
    db = tmp_path / "sessions.sqlite"
    _plain_wal_db(db)
    old = time.time() - 3600
    os.utime(db, (old, old))
    ref = ArtifactRef("sqlite", str(db))
    assert repair.check_liveness(ref) is None
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        why = repair.check_liveness(ref)
        assert why is not None and why.startswith("the database is busy (database is locked)")
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    for side in tmp_path.glob("sessions.sqlite-*"):
        os.utime(side, (old, old))
    assert repair.check_liveness(ref) is None


def test_sqlite_liveness_counts_a_fresh_wal_but_not_an_empty_one(tmp_path: Path) -> None:
    db = tmp_path / "sessions.sqlite"
    _plain_wal_db(db)
    old = time.time() - 3600
    os.utime(db, (old, old))
    ref = ArtifactRef("sqlite", str(db))
    wal = tmp_path / "sessions.sqlite-wal"
    wal.write_bytes(b"")  # what any reader's open creates: says nothing about writers
    assert repair.check_liveness(ref) is None
    wal.write_bytes(b"\0" * 32)  # frames written just now: a writer is active
    why = repair.check_liveness(ref)
    assert why is not None and "changed 0." in why
    os.utime(wal, (old, old))
    journal = tmp_path / "sessions.sqlite-journal"
    journal.write_bytes(b"\0")
    assert repair.check_liveness(ref) is not None


@needs_shared
def test_sqlite_liveness_probe_and_backup_do_not_checkpoint_the_crash_wal(tmp_path: Path) -> None:
    """Backup before any write: neither the guard nor the backup may fold the -wal into the database."""
    root = copy_private(UPSTREAM / "sqlite" / "interrupted" / "before" / "root", tmp_path / "root")
    db = root / "sessions.sqlite"
    before = tree_digest(root)
    ref = ArtifactRef("sqlite", str(db))
    assert repair.check_liveness(ref) is None
    assert_untouched(root, before)
    backup = repair.backup_artifact(ref)
    assert_untouched(root, before, backups=True)
    assert (root / "sessions.sqlite-wal").stat().st_size > 0
    probe = copy_private(root, tmp_path / "probe" / "root")
    (probe / Path(backup).name).unlink()
    assert sqlite_rows(Path(backup)) == sqlite_rows(probe / "sessions.sqlite")


# ---------------------------------------------------------------- refusals


def _damaged_root(tmp: Path, compression: str) -> Path:
    root = make_root(
        tmp,
        compression,
        {
            "good": open_turn_log(),
            "corrupt": open_turn_log(),
            "future": open_turn_log(),
            "past": open_turn_log(),
            "ok": sk.one_turn_log(),
        },
    )
    art = sk.artifact(root, sk.WORK, "corrupt", compression)
    data = bytearray(art.read_bytes())
    if compression == "zstd":
        data[-6] ^= 0xFF  # inside the event frame (content checksum no longer matches)
    else:
        lines = bytes(data).split(b"\n")
        lines[3] = b'{"type":"step/start","seq":2,'  # a broken line inside the committed region
        data = bytearray(b"\n".join(lines))
    art.write_bytes(bytes(data))
    write_version(sk.artifact(root, sk.WORK, "future", compression), compression, 1)
    write_version(sk.artifact(root, sk.WORK, "past", compression), compression, -1)
    privatize(root)
    return root


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize(
    ("sid", "status", "fragment"),
    [
        ("corrupt", "corrupt", "corrupt"),
        ("future", "unsupported", "uses log format v1, but this harness reads only v0"),
        ("past", "unsupported", "uses log format v-1, older than the supported v0"),
    ],
)
@pytest.mark.parametrize("mode", [{}, {"force": True}, {"dry_run": True}, {"force": True, "quiet_seconds": 0}])
def test_corrupt_and_unsupported_are_never_repaired(
    compression: str, sid: str, status: str, fragment: str, mode: dict[str, Any], tmp_path: Path
) -> None:
    root = _damaged_root(tmp_path, compression)
    before = tree_digest(root)
    prev = run(_preview(root, sid))
    assert prev.status == status and not prev.repairable
    with pytest.raises(repair.RepairRefused) as info:
        run(_repair(root, sid, **mode))
    msg = str(info.value)
    assert msg.startswith(f'session "{sid}" is {status}, not repairable: ')
    assert fragment in msg and msg.endswith("Nothing was changed; copy the raw artifact for analysis instead.")
    assert_untouched(root, before)
    assert backups_under(root) == []


async def _preview(root: Path, sid: str) -> repair.RepairPreview:
    store = open_store(root)
    try:
        return await repair.preview_repair(store, sid)
    finally:
        await store.close()


def test_refusals_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _damaged_root(tmp_path, "zstd")
    before = tree_digest(root)
    for sid, status in (("corrupt", "corrupt"), ("future", "unsupported")):
        code, out, _err = main_json(capsys, "repair", str(root), sid, "--force")
        assert code == 1
        assert out["error"]["class"] == "Error"
        assert out["error"]["message"].startswith(f'session "{sid}" is {status}, not repairable')
    code, out, err = main_text(capsys, "repair", str(root), "nobody", "--force")
    assert code == 1 and err == 'sessionscope: Error: session "nobody" not found\n'
    assert_untouched(root, before)
    assert backups_under(root) == []


def test_ok_session_needs_no_repair_and_gets_no_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _damaged_root(tmp_path, "none")
    before = tree_digest(root)
    res = run(_repair(root, "ok", force=True))
    assert res.preview.status == "ok" and res.backup is None and res.notes == ["nothing to repair"]
    code, out, _err = main_text(capsys, "repair", str(root), "ok")
    assert code == 0 and out == "session ok: ok (balanced log)\n  nothing to repair\n"
    assert_untouched(root, before)


def test_preview_of_a_layout_error_is_a_typed_refusal(tmp_path: Path) -> None:
    """A foreign layout (a stray raw transcript beside a zstd one) is refused, never half-repaired."""
    root = make_root(tmp_path, "zstd", {"s": open_turn_log()}, age=3600)
    stray = sk.artifact(root, sk.WORK, "s", "none")
    stray.write_bytes(b"")
    before = tree_digest(root)
    refusal = r'session "s" is corrupt, not repairable: .*configured for compression "zstd"'
    with pytest.raises(repair.RepairRefused, match=refusal):
        run(_repair(root, "s", force=True))
    assert_untouched(root, before)


# ---------------------------------------------------------------- backup


def test_backup_name_bytes_mode_and_collisions(tmp_path: Path) -> None:
    d = tmp_path / "--w--" / "s"
    d.mkdir(parents=True)
    art = d / "session.jsonl.zstd"
    payload = os.urandom(5000)
    art.write_bytes(payload)
    os.chmod(art, 0o644)
    os.utime(art, (1_700_000_000, 1_700_000_000))
    ref = ArtifactRef("jsonl", str(art))
    now = 1_767_312_000.0  # 2026-01-02T00:00:00Z
    first = repair.backup_artifact(ref, now=now)
    assert first == f"{art}.bak-20260102T000000Z"
    second = repair.backup_artifact(ref, now=now)
    third = repair.backup_artifact(ref, now=now)
    assert (second, third) == (f"{first}-2", f"{first}-3")
    for b in (first, second, third):
        assert Path(b).read_bytes() == payload
        assert stat.S_IMODE(os.stat(b).st_mode) == 0o600  # private from the start, whatever the source mode
        assert BACKUP_RE.search(b)
    assert os.stat(first).st_mtime == 1_700_000_000  # the original's time is kept
    assert art.read_bytes() == payload


def test_backup_stamp_is_utc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: a local-time stamp would show another day
    time.tzset()
    try:
        art = tmp_path / "session.jsonl"
        art.write_bytes(b"{}\n")
        b = repair.backup_artifact(ArtifactRef("jsonl", str(art)), now=1_767_312_000.0 + 3600 * 23)
        assert b.endswith(".bak-20260102T230000Z")
        # Without ``now`` the stamp is the current UTC second.
        t0 = time.gmtime(time.time())
        stamp = re.search(r"\.bak-(\d{8}T\d{6}Z)$", repair.backup_artifact(ArtifactRef("jsonl", str(art))))
        assert stamp is not None and stamp.group(1)[:11] == time.strftime("%Y%m%dT%H", t0)[:11]
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_sqlite_backup_uses_the_online_api_and_odd_paths(tmp_path: Path) -> None:
    d = tmp_path / "we?ird #dir %41"
    d.mkdir()
    db = d / "sessions.sqlite"
    _plain_wal_db(db)
    held = sqlite3.connect(db)  # keeps the -wal alive, with committed frames not yet checkpointed
    held.execute("PRAGMA wal_autocheckpoint=0")
    held.execute("INSERT INTO t VALUES (2)")
    held.commit()
    try:
        b = repair.backup_artifact(ArtifactRef("sqlite", str(db)), now=1_767_312_000.0)
    finally:
        held.close()
    assert b == f"{db}.bak-20260102T000000Z"
    assert stat.S_IMODE(os.stat(b).st_mode) == 0o600
    con = sqlite3.connect(f"file:{urllib.parse.quote(b)}?mode=ro", uri=True)
    try:
        assert con.execute("SELECT x FROM t ORDER BY x").fetchall() == [(1,), (2,)]
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        con.close()


def test_artifact_of_each_backend(tmp_path: Path) -> None:
    root = make_root(tmp_path, "zstd", {"a": sk.one_turn_log()})
    store = open_store(root)
    try:
        ref = artifact_of(store, "a")
        assert ref == ArtifactRef("jsonl", str(sk.artifact(root, sk.WORK, "a", "zstd")))
        assert artifact_of(store, "nobody") is None
    finally:
        run(store.close())


@needs_sqlite
def test_sqlite_artifact_and_memory_store(tmp_path: Path) -> None:
    from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]

    mem = SqliteSessionPersistence(":memory:")
    try:
        assert artifact_of(mem, "x") is None
    finally:
        run(mem.close())
    db = tmp_path / "sessions.sqlite"
    os.chmod(tmp_path, 0o700)
    store = SqliteSessionPersistence(db)
    try:
        assert artifact_of(store, "x") == ArtifactRef("sqlite", str(db))
    finally:
        run(store.close())


@needs_sqlite
def test_sqlite_guard_refuses_just_written_session(tmp_path: Path) -> None:
    from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]

    os.chmod(tmp_path, 0o700)
    db = tmp_path / "sessions.sqlite"

    async def write() -> None:
        store = SqliteSessionPersistence(db)
        try:
            await store.create(sk.meta("live", sk.WORK))
            await store.append("live", open_turn_log())
        finally:
            await store.close()

    run(write())
    rows = sqlite_rows(db)
    with pytest.raises(repair.RepairRefused, match="the artifact changed"):
        run(_repair(db, "live"))
    assert sqlite_rows(db) == rows
    assert backups_under(tmp_path) == []
    res = run(_repair(db, "live", force=True))
    assert res.status_after == "ok" and res.events_after == 10
    assert sqlite_rows(Path(res.backup or "")) == rows


def test_cli_subprocess_refusal_exit_code(tmp_path: Path) -> None:
    root = make_root(tmp_path, "none", {"live": open_turn_log()})
    done = cli("repair", str(root), "live")
    assert done.returncode == 1 and done.stdout == ""
    assert 'refusing to repair "live"' in done.stderr and "Traceback" not in done.stderr


@needs_shared
@needs_sqlite
def test_sqlite_repair_refused_while_another_connection_writes(tmp_path: Path) -> None:
    root = copy_private(UPSTREAM / "sqlite" / "torn-tail" / "malformed-last-row" / "before" / "root", tmp_path / "root")
    db = root / "sessions.sqlite"
    sid = "b8e2f7c1-0d3a-4e5b-9f6c-2a1b3c4d5e6f"
    rows = sqlite_rows(db)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        with pytest.raises(repair.RepairRefused, match=r"the database is busy \(database is locked\): another process"):
            run(_repair(db, sid))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert backups_under(root) == []
    assert sqlite_rows(db) == rows
    res = run(_repair(db, sid, quiet_seconds=0))  # the writer is gone; quiet window waived
    assert res.status_after == "ok" and res.backup is not None
    assert sqlite_rows(Path(res.backup)) == rows
