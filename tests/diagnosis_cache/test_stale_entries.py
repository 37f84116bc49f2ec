"""A stored verdict is used only while the log is provably the one it was read from (issue 25 item 2).

JSONL: (device, inode, size, mtime_ns, ctime_ns).  A touch, a same-size rewrite that even puts the
old mtime back, and a rename-over (another inode) each make the session be read again; SQLite: the
session's revision counter and the store file's identity.  Each test first lets the logs age past the
cache's race margin (a log changed within a clock tick of its read is never stored), then changes
one log and checks both what is printed and which sessions were read.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from cachekit import age, main_json, write_sessions

from app.diagnosis.cache import DiagnosisCache, cache_path, racy
from app.diagnosis.verdicts import Verdict
from persistence import JsonlSessionPersistence, open_store

pytestmark = pytest.mark.timeout(120)

CWD = sk.WORK
SIDS = ("s-alpha", "s-beta", "s-gamma")


def write_root(root: Path, compression: str = "none") -> None:
    write_sessions(root, f"jsonl-{compression}", SIDS)


def write_sqlite(path: Path) -> None:
    write_sessions(path, "sqlite", SIDS)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["status"] for r in report["sessions"]}


def transcript(root: Path, sid: str, compression: str = "none") -> Path:
    return sk.artifact(root, CWD, sid, compression)


def test_a_warm_verify_reads_no_log(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    root = tmp_path / "root"
    write_root(root)
    age()
    code, cold, _ = main_json(capsys, "verify", str(root))
    assert code == 0 and sorted(judged) == sorted(SIDS)
    judged.clear()
    code, warm, _ = main_json(capsys, "verify", str(root))
    assert code == 0 and judged == []
    assert warm == cold


def test_a_touch_is_read_again(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    root = tmp_path / "root"
    write_root(root)
    age()
    main_json(capsys, "verify", str(root))
    judged.clear()
    path = transcript(root, "s-beta")
    os.utime(path)  # same bytes, a new mtime and ctime
    _, rows, _ = main_json(capsys, "verify", str(root))
    assert judged == ["s-beta"]
    assert statuses(rows)["s-beta"] == "ok"


def test_a_same_size_rewrite_with_the_old_mtime_is_read_again(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    root = tmp_path / "root"
    write_root(root)
    age()
    _, before, _ = main_json(capsys, "verify", str(root))
    assert statuses(before)["s-beta"] == "ok"
    path = transcript(root, "s-beta")
    st = path.stat()
    data = path.read_bytes()
    # The last line's closing brace becomes a space: same size, a torn last record.
    damaged = data[:-2] + b" \n"
    assert len(damaged) == len(data)
    with open(path, "r+b") as f:  # in place: same inode
        f.write(damaged)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the old mtime back: only ctime tells
    assert path.stat().st_ino == st.st_ino and path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    judged.clear()
    _, after, _ = main_json(capsys, "verify", str(root))
    assert judged == ["s-beta"]
    assert statuses(after)["s-beta"] != "ok"
    assert {k: v for k, v in statuses(after).items() if k != "s-beta"} == {"s-alpha": "ok", "s-gamma": "ok"}


def test_a_rename_over_with_the_same_bytes_and_times_is_read_again(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    root = tmp_path / "root"
    write_root(root)
    age()
    main_json(capsys, "verify", str(root))
    path = transcript(root, "s-gamma")
    copy = path.with_name("copy.tmp")
    shutil.copy2(path, copy)  # same bytes, same mtime; another inode
    os.replace(copy, path)
    judged.clear()
    code, rows, _ = main_json(capsys, "verify", str(root))
    assert code == 0 and judged == ["s-gamma"]
    assert statuses(rows) == dict.fromkeys(SIDS, "ok")


def test_an_append_changes_the_list_long_counts(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    root = tmp_path / "root"
    write_root(root)
    age()
    _, before, _ = main_json(capsys, "list", "--long", str(root))
    assert {r["id"]: r["events"] for r in before} == dict.fromkeys(SIDS, 6)

    async def append() -> None:
        store = JsonlSessionPersistence(root, compression="none")
        try:
            await store.append("s-alpha", sk.open_turn2())
        finally:
            await store.close()

    sk.run(append())
    judged.clear()
    _, after, _ = main_json(capsys, "list", "--long", str(root))
    assert judged == ["s-alpha"]
    got = {r["id"]: (r["events"], r["status"]) for r in after}
    assert got == {"s-alpha": (8, "open-turn"), "s-beta": (6, "ok"), "s-gamma": (6, "ok")}


def test_a_sqlite_revision_change_is_read_again(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    db = tmp_path / "store.sqlite"
    write_sqlite(db)
    main_json(capsys, "verify", str(db))
    judged.clear()
    main_json(capsys, "verify", str(db))
    assert judged == []

    async def append() -> None:
        store = open_store(db, "sqlite")
        try:
            await store.append("s-beta", sk.open_turn2())
        finally:
            await store.close()

    sk.run(append())
    _, rows, _ = main_json(capsys, "verify", str(db))
    assert judged == ["s-beta"]
    assert statuses(rows) == {"s-alpha": "ok", "s-beta": "open-turn", "s-gamma": "ok"}


def test_another_sqlite_file_moved_over_the_store_is_read_again(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    db = tmp_path / "store.sqlite"
    write_sqlite(db)
    main_json(capsys, "verify", str(db))
    copy = tmp_path / "copy.sqlite"
    shutil.copy2(db, copy)  # the same store identity and revisions inside, another file
    os.replace(copy, db)
    judged.clear()
    code, rows, _ = main_json(capsys, "verify", str(db))
    assert code == 0 and sorted(judged) == sorted(SIDS)
    assert statuses(rows) == dict.fromkeys(SIDS, "ok")


def test_a_log_changed_within_the_race_margin_of_its_read_is_not_stored(tmp_path: Path) -> None:
    now = time.time_ns()
    fresh = Verdict("s", "p/session.jsonl", f"1:2:3:{now - 10}:{now - 10}", "ok", "", None, 6, 0, None, None, now)
    old = Verdict("s", "p/session.jsonl", f"1:2:3:{now - 10**9}:{now - 10**9}", "ok", "", None, 6, 0, None, None, now)
    coarse = (now // 10**9) * 10**9 - 10**9  # whole-second stamps one second back: still within the coarse margin
    second = Verdict("s", "p/session.jsonl", f"1:2:3:{coarse}:{coarse}", "ok", "", None, 6, 0, None, None, now)
    unknown = Verdict("s", "p/session.jsonl", old.revision, "ok", "", None, 6, 0, None, None, 0)
    assert racy(fresh) and racy(second) and racy(unknown)
    assert not racy(old)
    root = tmp_path / "root"
    root.mkdir()
    cache = DiagnosisCache(str(root), "jsonl", cache_dir=str(tmp_path / "cache"))
    try:
        assert cache.store([fresh, second, unknown]) == 0
        assert cache.store([old]) == 1
        assert cache.lookup([("s", "p/session.jsonl", old.revision)]) == {("s", "p/session.jsonl"): _unstamped(old)}
        assert cache.lookup([("s", "p/session.jsonl", fresh.revision)]) == {}
    finally:
        cache.close()
    assert os.path.isfile(cache_path(str(root), "jsonl", str(tmp_path / "cache")))


def _unstamped(v: Verdict) -> Verdict:
    return dataclasses.replace(v, started_ns=0)
