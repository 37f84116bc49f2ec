"""Helpers for the action tests (repair / fork / resume / verify and their command line).

Upstream fixtures are read from ``<repo>/../shared`` and only ever *copied* into private
temp dirs (dirs 0700, files 0600, mtimes pushed into the past so the liveness guard passes).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
UPSTREAM = SHARED / "fixtures" / "upstream"
SHARED_SKIP = f"shared fixtures not available ({UPSTREAM} is absent)"

BACKUP_RE = re.compile(r"\.bak-(\d{8}T\d{6}Z)(-\d+)?$")
PAST = 3600.0  # how far back copied fixtures are dated


def _sqlite_backend() -> tuple[Any, str]:
    try:
        from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]
    except Exception as err:  # not written yet (ImportError) or mid-edit
        return None, f"persistence.sqlite.backend does not import: {type(err).__name__}: {err}"
    return SqliteSessionPersistence, ""


SQLITE_CLASS, SQLITE_SKIP_REASON = _sqlite_backend()
needs_sqlite = pytest.mark.skipif(SQLITE_CLASS is None, reason=SQLITE_SKIP_REASON or "sqlite backend")
needs_shared = pytest.mark.skipif(not UPSTREAM.is_dir(), reason=SHARED_SKIP)

# The repair scenarios of the upstream README: (backend, scenario path).
REPAIR_SCENARIOS = [
    ("jsonl-zstd", "interrupted"),
    ("jsonl-zstd", "torn-tail/cut-mid-frame"),
    ("jsonl-zstd", "torn-tail/cut-frame-magic"),
    ("jsonl-zstd", "torn-tail/cut-multiblock-frame"),
    ("jsonl-none", "interrupted"),
    ("jsonl-none", "torn-tail/half-line"),
    ("jsonl-none", "torn-tail/half-line-last"),
    ("sqlite", "interrupted"),
    ("sqlite", "torn-tail/malformed-last-row"),
]


def scenario_params() -> list[Any]:
    out = []
    for backend, scenario in REPAIR_SCENARIOS:
        marks = [needs_shared]
        if backend == "sqlite":
            marks.append(needs_sqlite)
        out.append(pytest.param(backend, scenario, id=f"{backend}/{scenario}", marks=marks))
    return out


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


# ---------------------------------------------------------------- private copies


def privatize(root: Path, *, age: float = PAST) -> None:
    """chmod dirs 700 / files 600 and date every file ``age`` seconds in the past."""
    stamp = time.time() - age
    for dirpath, _dirs, names in os.walk(root):
        os.chmod(dirpath, 0o700)
        for name in names:
            p = os.path.join(dirpath, name)
            os.chmod(p, 0o600)
            os.utime(p, (stamp, stamp))


def copy_private(src: Path, dst: Path, *, age: float = PAST) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(dst.parent, 0o700)
    shutil.copytree(src, dst)
    privatize(dst, age=age)
    return dst


def scenario_dir(backend: str, scenario: str) -> Path:
    d = UPSTREAM / backend / scenario
    if not d.is_dir():
        pytest.skip(f"upstream fixture {d} is absent")
    return d


def expected_of(d: Path) -> dict[str, Any]:
    return json.loads((d / "expected.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def store_path(backend: str, root: Path) -> Path:
    """What ``open_store``/the CLI is pointed at: the root dir, or the database file."""
    return root / "sessions.sqlite" if backend == "sqlite" else root


# ---------------------------------------------------------------- file facts


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_digest(root: Path) -> dict[str, tuple[str, int]]:
    """Relative path -> (sha256, mtime_ns) of every file (a read-only action must leave both alone)."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = (sha256(p), p.stat().st_mtime_ns)
    return out


def content_digest(root: Path, *, skip_sqlite_shm: bool = True) -> dict[str, str]:
    """Relative path -> sha256 (``-shm`` is SQLite's shared-memory index, rewritten by any reader)."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            if skip_sqlite_shm and name.endswith("-shm"):
                continue
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = sha256(p)
    return out


def assert_untouched(root: Path, before: dict[str, tuple[str, int]], *, backups: bool = False, new_files: bool = False) -> None:
    """Every file of ``before`` (a ``tree_digest``) keeps its bytes and mtime.

    SQLite's shared-memory ``-shm`` (rewritten by every reader) is ignored, and the only files a
    read may add are the side files a read-only SQLite connection creates: a ``-shm`` and an empty ``-wal``
    (plus ``.bak-*`` backups when ``backups``, anything when ``new_files``).
    """
    after = tree_digest(root)
    for rel, facts in before.items():
        if rel.endswith("-shm"):
            continue
        assert after.get(rel) == facts, f"{rel} changed"
    for rel in set(after) - set(before):
        if new_files or (backups and BACKUP_RE.search(rel)):
            continue
        assert rel.endswith("-shm") or (rel.endswith("-wal") and (root / rel).stat().st_size == 0), f"{rel} appeared"


def backups_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and BACKUP_RE.search(p.name))


# ---------------------------------------------------------------- SQLite rows


def sqlite_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The stored rows, without opaque store ids (``persistence_state.store_id``, ``sessions.incarnation``)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        events = con.execute(
            "SELECT session_id, seq, type, time, data, source_event_seqs, surface_op, ignorable FROM events "
            "ORDER BY session_id, seq"
        ).fetchall()
        sessions = con.execute(
            "SELECT id, version, created_at, cwd, parent_session, seed_length, origin, delegation_depth, agent_preset, "
            "revision FROM sessions ORDER BY id"
        ).fetchall()
    finally:
        con.close()
    return {"events": events, "sessions": sessions}


# ---------------------------------------------------------------- command line


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``python -m app ARGS`` in the repo (a real process, like a user's shell)."""
    env = dict(os.environ)
    env.pop("DSH_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def main_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """``app.cli.main([...args, "--json"])`` in-process: (exit code, parsed stdout, stderr)."""
    from app.cli import main

    capsys.readouterr()
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def main_text(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from app.cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err
