"""The diagnosis cache file: where it lives, what it changes, and what happens when it is damaged or shared.

It lives in the user's cache folder, never in the root (a read verb leaves every byte and mtime of
the root as it was); a damaged file is dropped and rebuilt with a message, as the search index is;
``verify --no-cache`` neither reads nor writes it; the verdicts printed are the same cold, warm and
without the cache, on every backend and for damaged logs too; the worker processes that judge many
sessions at once print what this process would; two processes using it at once both finish right.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from cachekit import age, main_json
from damagedkit import BACKENDS, build_damaged, storage_of

import app.diagnosis.parallel as parallel
from app.diagnosis.cache import CACHE_DIR_NAME, cache_path
from persistence import JsonlSessionPersistence

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[2]
CWD = sk.WORK


def write_root(root: Path, n: int, compression: str = "zstd") -> list[str]:
    sids = [f"s-{i:03d}" for i in range(n)]

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            for i, sid in enumerate(sids):
                await store.create(sk.meta(sid, CWD))
                await store.append(sid, sk.one_turn_log())
                if i % 5 == 1:
                    await store.append(sid, sk.open_turn2())
        finally:
            await store.close()

    sk.run(go())
    return sids


def digest(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return out


def cache_folder() -> Path:
    return Path(os.environ["SESSIONSCOPE_CACHE_DIR"]) / CACHE_DIR_NAME


def test_the_cache_lives_in_the_user_cache_folder_and_read_verbs_leave_the_root_alone(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SESSIONSCOPE_CACHE_DIR")  # the default: $XDG_CACHE_HOME/sessionscope (a private folder here)
    root = tmp_path / "root"
    write_root(root, 4)
    age()
    before = digest(root)
    for args in (("verify",), ("verify",), ("list", "--long"), ("list",), ("verify", "--no-cache")):
        main_json(capsys, *args, str(root))
    assert digest(root) == before
    files = list((Path(os.environ["XDG_CACHE_HOME"]) / "sessionscope" / CACHE_DIR_NAME).glob("*.sqlite"))
    assert [str(f) for f in files] == [cache_path(str(root), "jsonl")]


def test_a_cache_folder_inside_the_root_keeps_verdicts_in_memory(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    write_root(root, 3)
    age()
    monkeypatch.setenv("SESSIONSCOPE_CACHE_DIR", str(root / "cache"))
    before = digest(root)
    _, _, err = main_json(capsys, "verify", str(root))
    assert "inside the session root" in err
    assert digest(root) == before and not (root / "cache").exists()


def test_a_damaged_cache_is_rebuilt_with_a_message(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    root = tmp_path / "root"
    sids = write_root(root, 4)
    age()
    _, cold, _ = main_json(capsys, "verify", str(root))
    path = Path(cache_path(str(root), "jsonl"))
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    judged.clear()
    _, rebuilt, err = main_json(capsys, "verify", str(root))
    assert "diagnosis cache" in err and "rebuilding it" in err
    assert rebuilt == cold and sorted(judged) == sorted(sids)
    judged.clear()
    _, warm, err = main_json(capsys, "verify", str(root))
    assert warm == cold and judged == [] and err == ""


def test_a_flipped_schema_is_rebuilt_with_a_message(tmp_path: Path, capsys: Any) -> None:
    import sqlite3

    root = tmp_path / "root"
    write_root(root, 2)
    age()
    _, cold, _ = main_json(capsys, "verify", str(root))
    con = sqlite3.connect(cache_path(str(root), "jsonl"))
    with con:
        con.execute("DROP TABLE verdicts")
        con.execute("CREATE TABLE verdicts(session_id TEXT, place TEXT, revision TEXT, status TEXT)")
    con.close()
    _, again, err = main_json(capsys, "verify", str(root))
    assert "rebuilding it" in err and again == cold


def test_no_cache_neither_reads_nor_writes_it(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    root = tmp_path / "root"
    sids = write_root(root, 3)
    age()
    main_json(capsys, "verify", "--no-cache", str(root))
    assert sorted(judged) == sorted(sids) and not cache_folder().exists()
    main_json(capsys, "verify", str(root))
    path = Path(cache_path(str(root), "jsonl"))
    stamp = digest(path.parent)
    judged.clear()
    main_json(capsys, "verify", "--no-cache", str(root))
    assert sorted(judged) == sorted(sids)
    assert digest(path.parent) == stamp


@pytest.mark.parametrize("backend", BACKENDS)
def test_verdicts_are_the_same_cold_warm_and_without_the_cache(
    backend: str, tmp_path: Path, capsys: Any, judged: list[str]
) -> None:
    storage = storage_of(backend, tmp_path)
    build_damaged(backend, storage)
    age()
    for verb in (("verify",), ("list", "--long")):
        bare = main_json(capsys, *verb, "--no-cache", str(storage)) if verb == ("verify",) else None
        shutil.rmtree(cache_folder(), ignore_errors=True)  # each verb cold (they share the cache)
        judged.clear()
        cold = main_json(capsys, *verb, str(storage))
        assert len(judged) == 2
        judged.clear()
        warm = main_json(capsys, *verb, str(storage))
        assert judged == []
        assert warm == cold
        if bare is not None:
            assert bare == cold
    shutil.rmtree(cache_folder(), ignore_errors=True)
    main_json(capsys, "verify", str(storage))
    judged.clear()
    _, rows, _ = main_json(capsys, "list", "--long", str(storage))
    assert judged == []  # verify's verdicts serve list too: one cache per root
    titles = {r["id"]: (r["status"], r["title"]) for r in rows}
    assert titles == {
        "corrupt-titled": ("corrupt", "Zebra corrupt title"),
        "unsupported-titled": ("unsupported", "Quokka unsupported title"),
    }


def test_worker_processes_judge_as_this_process_does(tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    write_root(root, parallel.POOL_MIN + 6)
    age()
    monkeypatch.setattr(parallel, "POOL_MIN", 10**9)
    _, here, _ = main_json(capsys, "verify", "--no-cache", str(root))
    monkeypatch.setattr(parallel, "POOL_MIN", 8)
    monkeypatch.setattr(parallel, "CHUNK", 16)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    _, workers, _ = main_json(capsys, "verify", str(root))
    assert workers == here
    assert {r["status"] for r in here["sessions"]} == {"ok", "open-turn"}
    monkeypatch.setattr(parallel, "POOL_MIN", 10**9)
    _, warm, _ = main_json(capsys, "verify", str(root))
    assert warm == here


def test_two_processes_sharing_the_cache_both_finish_right(tmp_path: Path, capsys: Any) -> None:
    root = tmp_path / "root"
    write_root(root, 40)
    age()
    code, expected, _ = main_json(capsys, "verify", "--no-cache", str(root))
    assert code == 1  # open turns: verify fails, both runs must say so
    env = {k: v for k, v in os.environ.items() if k != "DSH_HOME"}
    cmd = [sys.executable, "-m", "app", "verify", "--json", str(root)]
    procs = [subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == code, err
        assert json.loads(out) == expected
        assert b"rebuilding" not in err
    _, warm, err = main_json(capsys, "verify", str(root))
    assert warm == expected and err == ""


def test_a_row_that_cannot_be_read_is_found_by_the_lookup_and_rebuilt(tmp_path: Path, capsys: Any, judged: list[str]) -> None:
    import sqlite3

    root = tmp_path / "root"
    sids = write_root(root, 3)
    age()
    _, cold, _ = main_json(capsys, "verify", str(root))
    con = sqlite3.connect(cache_path(str(root), "jsonl"))
    with con:  # a flipped byte: a stored text that is not UTF-8
        con.execute("UPDATE verdicts SET reason = CAST(x'ff41ff' AS TEXT) WHERE session_id = ?", (sids[1],))
    con.close()
    judged.clear()
    _, again, err = main_json(capsys, "verify", str(root))
    assert "is damaged" in err and "rebuilding it" in err and "\\xff" not in err
    assert again == cold and sorted(judged) == sorted(sids)
    judged.clear()
    _, warm, err = main_json(capsys, "verify", str(root))
    assert warm == cold and judged == [] and err == ""


def test_read_verbs_leave_a_sqlite_store_and_its_folder_alone(tmp_path: Path, capsys: Any) -> None:
    folder = tmp_path / "store-folder"
    folder.mkdir()
    storage = storage_of("sqlite", folder)
    build_damaged("sqlite", storage)
    before = digest(folder)
    for args in (("verify",), ("verify",), ("list", "--long"), ("verify", "--no-cache")):
        main_json(capsys, *args, str(storage))
    after = digest(folder)
    # SQLite's own -wal/-shm beside a WAL store appear on any read-only open (``list`` too): nothing else.
    assert after[storage.name] == before[storage.name]
    assert set(after) <= {storage.name, f"{storage.name}-wal", f"{storage.name}-shm"}
    assert Path(cache_path(str(storage), "sqlite")).is_file()
