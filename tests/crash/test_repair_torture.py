"""Kill-during-repair torture (issue 10, "Done when"): a SIGKILL at any moment of a repair leaves
either the original log or the repaired log, every backup complete or absent, and a rerun repairs.

For each backend a session is built that needs a real repair with a lot of work in the commit:

* jsonl-zstd: a torn last frame whose complete blocks hold ~4,000 recoverable records of an open
  turn (the repair re-encodes them, plus ~2,000 closers, into a new frame);
* jsonl-none: a multi-MB log that ends in a torn half line inside an open turn (~2,000 closers);
* sqlite: a store whose open turn ends in a malformed (torn) row (~2,000 closer rows).

The expected result is computed once by an uninterrupted child run on an identical copy, which also
measures how long the repair takes.  Each trial copies the pristine files to a fresh folder, starts
``repair_child.py`` (``repair_session(..., force=True)`` through the public API) and SIGKILLs it
either after a random delay in [0, that duration] counted from the child's ready line, or at a
precise step of the transaction (the child kills itself, see ``repair_child.KILL_POINTS``).  Then:

* the artifact is byte-identical to the original or to the repaired log (SQLite: opened normally,
  so a hot WAL/journal is resolved, ``PRAGMA integrity_check`` is ok and the session's rows are the
  original or the repaired ones);
* every ``.bak-<stamp>[-N]`` file is complete (JSONL: the original bytes; SQLite: integrity ok and
  the original rows); ``.partial-`` files are not backups and only counted;
* a rerun without a kill ends in the repaired state, its backups complete too.

The outcome counts are printed (``pytest -s``) and recorded as junit test-suite properties.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import os
import random
import re
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from livekit import SQLITE_CLASS, SQLITE_SKIP_REASON

from app.actions.repair import preview_repair, repair_session
from persistence import open_store
from persistence.jsonl.frames import compress_frame
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL semantics")

CHILD = Path(__file__).with_name("repair_child.py")
REPO = Path(__file__).resolve().parents[2]
KILL_ENV = "REPAIR_TORTURE_KILL_AT"  # repair_child.KILL_ENV (the child is not importable from here)
SID = "torture-session"
CWD = "/torture/work"
PAST_S = 3600.0  # files are dated an hour back, so even the unforced liveness guard would pass
BACKUP_RE = re.compile(r"\.bak-\d{8}T\d{6}Z(-\d+)?$")
CHILD_TIMEOUT_S = 120.0

BACKENDS = [
    pytest.param("jsonl-zstd", id="jsonl-zstd"),
    pytest.param("jsonl-none", id="jsonl-none"),
    pytest.param("sqlite", id="sqlite", marks=pytest.mark.skipif(SQLITE_CLASS is None, reason=SQLITE_SKIP_REASON)),
]

# Precise kill points per backend (names of repair_child.KILL_POINTS).
BACKUP_POINTS = ("backup-partial-written", "backup-linked", "backup-published")
KILL_POINTS = {
    "jsonl-zstd": (*BACKUP_POINTS, "jsonl-temp-fsynced", "jsonl-renamed", "jsonl-swap-verified", "engine-returned"),
    "jsonl-none": (*BACKUP_POINTS, "jsonl-temp-fsynced", "jsonl-renamed", "jsonl-swap-verified", "engine-returned"),
    "sqlite": (*BACKUP_POINTS, "sqlite-txn-written", "sqlite-committed", "engine-returned"),
}

# Session shape (sizes chosen so an uninterrupted repair takes a few hundred ms on 2 cores while a
# trial's copy stays cheap): completed turns before the open one, tool calls finished inside the
# open turn (a call + a result record each), and calls left pending (closers to synthesize).
COMPLETED_TURNS = 120
OPEN_TURN_FINISHED_CALLS = 2_100
OPEN_TURN_PENDING_CALLS = 2_000


# ---------------------------------------------------------------- the session


def _vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(400)]


def _text(rng: random.Random, vocab: list[str], words: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(words))


@dataclass(frozen=True, slots=True)
class SessionParts:
    """Event batches of the session: each completed turn, the open turn's head, its body (the tail)."""

    turns: list[list[dict[str, Any]]]
    open_head: list[dict[str, Any]]
    open_body: list[dict[str, Any]]

    @property
    def events(self) -> list[dict[str, Any]]:
        return [e for t in self.turns for e in t] + self.open_head + self.open_body


def build_parts(seed: int) -> SessionParts:
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    seq = 0
    turns: list[list[dict[str, Any]]] = []
    for turn in range(1, COMPLETED_TURNS + 1):
        evs: list[dict[str, Any]] = [
            sk.turn_start(seq, turn),
            sk.user_message(seq + 1, _text(rng, vocab, 40)),
            sk.step_start(seq + 2, turn, 1),
        ]
        seq += 3
        for _ in range(rng.randint(2, 8)):
            evs.append(sk.text_delta(seq, turn, 1, _text(rng, vocab, 3)))
            seq += 1
        calls = [f"t{turn}-c{k}" for k in range(rng.randint(1, 4))]
        evs.append(sk.assistant_message(seq, turn, 1, _text(rng, vocab, 30), calls=calls))
        seq += 1
        for call in calls:
            evs.append(sk.tool_call(seq, turn, 1, call))
            evs.append(sk.tool_result(seq + 1, turn, 1, call, _text(rng, vocab, 60), sourceEventSeqs=[seq]))
            seq += 2
        evs += [sk.step_end(seq, turn, 1), sk.turn_end(seq + 1, turn)]
        seq += 2
        turns.append(evs)
    turn = COMPLETED_TURNS + 1
    finished = [f"open-c{k}" for k in range(OPEN_TURN_FINISHED_CALLS)]
    pending = [f"open-p{k}" for k in range(OPEN_TURN_PENDING_CALLS)]
    head = [
        sk.turn_start(seq, turn),
        sk.user_message(seq + 1, _text(rng, vocab, 40)),
        sk.step_start(seq + 2, turn, 1),
        sk.assistant_message(seq + 3, turn, 1, _text(rng, vocab, 20), calls=finished + pending),
    ]
    seq += 4
    body: list[dict[str, Any]] = []
    for call in finished:
        body.append(sk.tool_call(seq, turn, 1, call))
        body.append(sk.tool_result(seq + 1, turn, 1, call, _text(rng, vocab, 25), sourceEventSeqs=[seq]))
        seq += 2
    for call in pending[: len(pending) // 2]:  # started, outcome unknown; the other half never started
        body.append(sk.tool_call(seq, turn, 1, call))
        seq += 1
    return SessionParts(turns, head, body)


def _lines(events: list[dict[str, Any]]) -> bytes:
    return b"".join(js_dumps(e) + b"\n" for e in events)


def build_jsonl(root: Path, compression: str, parts: SessionParts) -> Path:
    """Plant the transcript: complete frames/lines, then a torn tail inside the open turn."""
    header = js_dumps(sk.header_line(SID, CWD)) + b"\n"
    if compression == "zstd":
        # One frame per turn like a flushing harness, then one big frame for the open turn's body whose
        # end is lost: its complete blocks still decode to thousands of records the repair re-encodes.
        body = compress_frame(_lines(parts.open_body))
        data = b"".join(compress_frame(p) for p in [header, *(_lines(t) for t in parts.turns), _lines(parts.open_head)])
        data += body[: len(body) - 300]
    else:
        tail = _lines(parts.open_body)
        last = js_dumps(sk.tool_call(parts.open_body[-1]["seq"] + 1, COMPLETED_TURNS + 1, 1, "open-torn"))
        data = header + b"".join(_lines(t) for t in parts.turns) + _lines(parts.open_head) + tail
        data += last[: len(last) // 2]  # a torn half line, no newline
    path = sk.artifact(root, CWD, SID, compression)
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(data)
    return path


async def _fill_sqlite(db: Path, parts: SessionParts) -> None:
    assert SQLITE_CLASS is not None
    store = SQLITE_CLASS(str(db))
    try:
        await store.create(sk.meta(SID, CWD))
        for batch in [*parts.turns, parts.open_head]:
            await store.append(SID, batch)
        body = parts.open_body
        for start in range(0, len(body), 500):
            await store.append(SID, body[start : start + 500])
    finally:
        await store.close()


def build_sqlite(db: Path, parts: SessionParts) -> Path:
    """A store whose open turn ends in a malformed last row: a torn tail plus closers to write."""
    asyncio.run(_fill_sqlite(db, parts))
    con = sqlite3.connect(db)
    try:
        (last,) = con.execute("SELECT max(seq) FROM events WHERE session_id = ?", (SID,)).fetchone()
        # Truncated JSON, as a torn write leaves it (sqlite-backend §7.4: torn, not corrupt, after the last turn/end).
        con.execute("UPDATE events SET data = substr(data, 1, length(data) / 2) WHERE session_id = ? AND seq = ?", (SID, last))
        con.commit()
    finally:
        con.close()
    return db


def date_in_past(root: Path) -> None:
    stamp = time.time() - PAST_S
    for dirpath, _dirs, names in os.walk(root):
        os.chmod(dirpath, 0o700)
        for name in names:
            p = os.path.join(dirpath, name)
            os.chmod(p, 0o600)
            os.utime(p, (stamp, stamp))


# ---------------------------------------------------------------- states


@dataclass(frozen=True, slots=True)
class Pristine:
    """One backend's pristine files, what the artifact holds before and after a repair, and its timing."""

    backend: str
    folder: Path  # copied whole for every trial
    target_rel: str  # what the child opens: the JSONL root or the database file
    artifact_rel: str  # the transcript (JSONL) or the database file
    original: Any  # bytes (JSONL) or the session's event rows (SQLite)
    repaired: Any
    run_s: float  # an uninterrupted repair, from the child's ready line to its exit
    recovered: int
    closers: int

    @property
    def is_sqlite(self) -> bool:
        return self.backend == "sqlite"


def session_rows(db: Path, *, read_only: bool) -> list[tuple[Any, ...]]:
    """The session's physical event rows after ``PRAGMA integrity_check`` passed.

    ``read_only=False`` opens the file the normal way, so whatever a killed writer left (an
    uncommitted WAL tail, a hot journal) is resolved exactly as the next real user would see it.
    """
    uri = f"file:{db}?mode=ro" if read_only else f"file:{db}"
    con = sqlite3.connect(uri, uri=True)
    try:
        check = con.execute("PRAGMA integrity_check").fetchall()
        assert check == [("ok",)], f"integrity_check of {db}: {check[:5]}"
        return con.execute(
            "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable FROM events WHERE session_id = ? "
            "ORDER BY seq",
            (SID,),
        ).fetchall()
    finally:
        con.close()


def artifact_state(p: Pristine, folder: Path) -> Any:
    art = folder / p.artifact_rel
    return session_rows(art, read_only=False) if p.is_sqlite else art.read_bytes()


def _first_difference(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    for i in range(0, n, 4096):
        if a[i : i + 4096] != b[i : i + 4096]:
            return i + next(j for j in range(min(4096, n - i)) if a[i + j] != b[i + j])
    return n


def describe_folder(p: Pristine, folder: Path) -> str:
    """Every file beside the artifact (name, size, sha256 prefix) for a failure message."""
    art = folder / p.artifact_rel
    lines = []
    for f in sorted(art.parent.iterdir()):
        if f.is_file():
            data = f.read_bytes()
            lines.append(f"  {f.name}: {len(data):,} bytes sha256 {hashlib.sha256(data).hexdigest()[:12]}")
    return "\n".join(lines)


def classify(p: Pristine, folder: Path, context: str) -> str:
    """'original' or 'repaired'; anything else fails with what the files looked like."""
    state = artifact_state(p, folder)
    if not p.is_sqlite:  # the swap keeps the transcript private (the harness writes 0600 logs)
        mode = (folder / p.artifact_rel).stat().st_mode & 0o777
        assert mode == 0o600, f"artifact mode {mode:o} {context}"
    if state == p.original:
        return "original"
    if state == p.repaired:
        return "repaired"
    if p.is_sqlite:
        detail = (
            f"{len(state)} rows; original {len(p.original)}, repaired {len(p.repaired)}; last row "
            f"{state[-1][:3] if state else None}"
        )
    else:
        detail = (
            f"{len(state):,} bytes; original {len(p.original):,}, repaired {len(p.repaired):,}; first difference "
            f"from the original at {_first_difference(state, p.original):,}, from the repaired log at "
            f"{_first_difference(state, p.repaired):,}"
        )
    pytest.fail(f"artifact is neither original nor repaired {context}: {detail}\n{describe_folder(p, folder)}")


def check_backups(p: Pristine, folder: Path, context: str) -> int:
    """Every file named like a backup is complete; returns how many there are."""
    art = folder / p.artifact_rel
    backups = [f for f in art.parent.iterdir() if f.name.startswith(art.name) and BACKUP_RE.search(f.name)]
    for b in backups:
        if p.is_sqlite:
            try:
                rows = session_rows(b, read_only=True)
            except (AssertionError, sqlite3.Error) as err:
                pytest.fail(f"backup {b.name} is not a sound database {context}: {err}\n{describe_folder(p, folder)}")
            assert rows == p.original, f"backup {b.name} lacks the original rows ({len(rows)}) {context}"
        else:
            data = b.read_bytes()
            assert data == p.original, (
                f"backup {b.name} is incomplete {context}: {len(data):,} of {len(p.original):,} bytes, first difference "
                f"at {_first_difference(data, p.original):,}\n{describe_folder(p, folder)}"
            )
    return len(backups)


def strays(p: Pristine, folder: Path) -> list[str]:
    """Leftovers no reader looks at (partial backups and their journals, repair temp files)."""
    art = folder / p.artifact_rel
    return sorted(f.name for f in art.parent.iterdir() if ".partial-" in f.name or ".repair-" in f.name)


# ---------------------------------------------------------------- the child


def _env(kill_at: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop(KILL_ENV, None)
    if kill_at is not None:
        env[KILL_ENV] = kill_at
    return env


@dataclass(frozen=True, slots=True)
class ChildRun:
    returncode: int
    out: str
    err: str
    ready_to_exit_s: float  # from the ready line to the exit


def run_child(backend: str, target: Path, *, kill_at: str | None = None, delay_s: float | None = None) -> ChildRun:
    """Start the child; SIGKILL it ``delay_s`` after its ready line (None: let it run, or kill itself)."""
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), backend, str(target), SID],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(kill_at),
        cwd=REPO,
    )
    assert proc.stdout is not None
    out = b""
    ready_at = None
    deadline = time.monotonic() + CHILD_TIMEOUT_S
    try:
        while b"R\n" not in out and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            out += chunk
        ready_at = time.monotonic()
        if b"R\n" in out and delay_s is not None:
            time.sleep(delay_s)
            proc.send_signal(signal.SIGKILL)  # a no-op once the child has exited (and not yet been reaped)
        rest, err = proc.communicate(timeout=CHILD_TIMEOUT_S)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    return ChildRun(
        proc.returncode, (out + rest).decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - ready_at
    )


def fresh_copy(p: Pristine, dest: Path) -> Path:
    shutil.copytree(p.folder, dest)  # copy2: modes and the past mtimes come along
    return dest


async def _repair_once(backend: str, target: Path) -> None:
    store = open_store(target, backend)
    try:
        await repair_session(store, SID, force=True)
    finally:
        await store.close()


# ---------------------------------------------------------------- setup


def make_pristine(backend: str, base: Path, seed: int = 10) -> Pristine:
    parts = build_parts(seed)
    folder = base / "pristine"
    folder.mkdir(parents=True)
    if backend == "sqlite":
        art = build_sqlite(folder / "sessions.sqlite", parts)
        target = art
    else:
        art = build_jsonl(folder / "root", "zstd" if backend == "jsonl-zstd" else "none", parts)
        target = folder / "root"
    date_in_past(folder)
    probe = Pristine(backend, folder, str(target.relative_to(folder)), str(art.relative_to(folder)), None, None, 0.0, 0, 0)
    original = artifact_state(probe, fresh_copy(probe, base / "original"))
    # The expected result: the same child, uninterrupted, on an identical copy; it also measures the
    # random-kill window.  (Every rerun from the original state must reproduce it byte for byte, so a
    # non-deterministic repair fails the trials.)
    copy = fresh_copy(probe, base / "baseline")
    run = run_child(backend, copy / probe.target_rel)
    assert run.returncode == 0 and run.out.startswith("R\nD ok "), f"baseline repair failed: {run.out} {run.err}"
    repaired = artifact_state(probe, copy)
    assert repaired != original
    assert (
        check_backups(
            Pristine(backend, folder, probe.target_rel, probe.artifact_rel, original, None, 0, 0, 0), copy, "(baseline)"
        )
        == 1
    )

    # How much work the commit holds (the scenario: thousands of recovered records to re-encode).
    async def preview() -> Any:
        store = open_store(fresh_copy(probe, base / "preview") / probe.target_rel, backend, read_only=True)
        try:
            return await preview_repair(store, SID)
        finally:
            await store.close()

    prev = asyncio.run(preview())
    assert prev.status == "torn-tail" and len(prev.closers) >= 2_000
    if backend == "jsonl-zstd":
        assert prev.recovered_count >= 4_000
    return Pristine(
        backend,
        folder,
        probe.target_rel,
        probe.artifact_rel,
        original,
        repaired,
        run.ready_to_exit_s,
        prev.recovered_count,
        len(prev.closers),
    )


# ---------------------------------------------------------------- trials


@dataclass
class Tally:
    backend: str
    kills: int = 0  # children that died of the SIGKILL
    finished_first: int = 0  # random delays that outlived the repair (not counted as kills)
    original: int = 0
    repaired: int = 0
    backups_checked: int = 0  # backup files found (and checked) right after the kill
    rerun_backups_checked: int = 0  # the same check after the rerun (the rerun's own backup included)
    partials_left: int = 0  # trials whose folder still holds a .partial- file after the rerun
    by_point: dict[str, collections.Counter[str]] | None = None

    def line(self) -> str:
        by_point = self.by_point or {}
        points = ", ".join(f"{k}: {dict(v)}" for k, v in by_point.items())
        rand_orig = self.original - sum(c["original"] for c in by_point.values())
        rand_rep = self.repaired - sum(c["repaired"] for c in by_point.values())
        return (
            f"[repair torture] {self.backend}: kills={self.kills} ended original={self.original} "
            f"ended repaired={self.repaired} backups checked={self.backups_checked} "
            f"(after the reruns {self.rerun_backups_checked}; finished before the kill={self.finished_first}; "
            f"trials leaving a .partial- file behind after the rerun={self.partials_left})"
            f"\n    random kills: {rand_orig + rand_rep} (original {rand_orig}, repaired {rand_rep}); "
            f"precise points: {points}"
        )


def trial(p: Pristine, work: Path, n: int, tally: Tally, *, kill_at: str | None = None, delay_s: float | None = None) -> None:
    folder = fresh_copy(p, work / f"trial-{n}")
    how = f"kill point {kill_at}" if kill_at else f"random kill {(delay_s or 0.0) * 1000:.1f} ms after ready"
    context = f"(backend {p.backend}, trial {n}, {how})"
    run = run_child(p.backend, folder / p.target_rel, kill_at=kill_at, delay_s=delay_s)
    outcome = classify(p, folder, context)
    if run.returncode == 0 and kill_at is None:
        tally.finished_first += 1  # the delay outlived the repair: not a kill, and it must have repaired
        assert outcome == "repaired", f"an uninterrupted run did not repair {context}: {run.out}"
    else:
        assert run.returncode == -signal.SIGKILL, (
            f"child ended with {run.returncode} instead of the SIGKILL {context}: {run.out} {run.err}"
        )
        assert run.err == "", f"child stderr {context}: {run.err}"
        tally.kills += 1
        setattr(tally, outcome, getattr(tally, outcome) + 1)
        if kill_at is not None:
            assert tally.by_point is not None
            tally.by_point.setdefault(kill_at, collections.Counter())[outcome] += 1
    tally.backups_checked += check_backups(p, folder, context)
    # A rerun without a kill always ends repaired (and its backup, if it makes one, is complete too).
    asyncio.run(_repair_once(p.backend, folder / p.target_rel))
    assert classify(p, folder, f"{context}, after the rerun") == "repaired", f"rerun did not repair {context}"
    tally.rerun_backups_checked += check_backups(p, folder, f"{context}, after the rerun")
    left = strays(p, folder)
    assert not [s for s in left if ".repair-" in s], f"the rerun left repair temp files {context}: {left}"
    tally.partials_left += any(".partial-" in s for s in left)
    shutil.rmtree(folder)


def torture(p: Pristine, work: Path, *, random_kills: int, point_rounds: int, seed: int) -> Tally:
    """Every precise kill point ``point_rounds`` times, then random kills until ``random_kills`` landed."""
    rng = random.Random(seed)
    tally = Tally(p.backend, by_point={})
    n = 0
    for _ in range(point_rounds):
        for point in KILL_POINTS[p.backend]:
            trial(p, work, n, tally, kill_at=point)
            n += 1
    random_done = 0
    # Keep going until the asked number of random kills landed (a delay can outlive a fast run).
    while random_done < random_kills:
        before = tally.kills
        trial(p, work, n, tally, delay_s=rng.uniform(0.0, p.run_s))
        n += 1
        random_done += tally.kills - before
        assert n < 4 * random_kills + 50, f"too few random delays killed the child {tally.line()}"
    return tally


@pytest.fixture(scope="module")
def pristine_cache() -> dict[str, Pristine]:
    """Built once per backend and module: the short and the slow variant share the baseline runs."""
    return {}


def pristine_for(backend: str, cache: dict[str, Pristine], tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    if backend not in cache:
        cache[backend] = make_pristine(backend, tmp_path_factory.mktemp(f"torture-{backend}"))
    return cache[backend]


def report(tally: Tally, p: Pristine, record_testsuite_property: Any) -> None:
    text = (
        tally.line() + f"\n    (uninterrupted repair {p.run_s * 1000:.0f} ms; {p.recovered} recovered records, "
        f"{p.closers} closers)"
    )
    print("\n" + text)
    record_testsuite_property(f"repair_torture_{p.backend}", text)  # lands in a --junitxml report


@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_during_repair_short(
    backend: str,
    pristine_cache: dict[str, Pristine],
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    record_testsuite_property: Any,
) -> None:
    """CI variant: every precise kill point once plus random kills, 8 kills per backend."""
    p = pristine_for(backend, pristine_cache, tmp_path_factory)
    tally = torture(p, tmp_path, random_kills=8 - len(KILL_POINTS[backend]), point_rounds=1, seed=2024)
    report(tally, p, record_testsuite_property)
    assert tally.kills >= 8


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_during_repair_200(
    backend: str,
    pristine_cache: dict[str, Pristine],
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    record_testsuite_property: Any,
) -> None:
    """At least 200 random kills per backend, plus every precise kill point five times."""
    p = pristine_for(backend, pristine_cache, tmp_path_factory)
    tally = torture(p, tmp_path, random_kills=200, point_rounds=5, seed=90_210)
    report(tally, p, record_testsuite_property)
    assert tally.kills >= 200
    # Random delays must really land on both sides of the swap, or the window is mis-measured.
    assert tally.original > 0 and tally.repaired > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_partial_backup_of_a_killed_repair_is_cleaned_up(
    backend: str, pristine_cache: dict[str, Pristine], tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A kill after the backup copy leaves a full-size ``.partial-`` file; the next repair must not keep it forever
    (each killed attempt would leave another copy of the log, and the free-space check counts them)."""
    p = pristine_for(backend, pristine_cache, tmp_path_factory)
    folder = fresh_copy(p, tmp_path / "trial")
    run = run_child(p.backend, folder / p.target_rel, kill_at="backup-partial-written")
    assert run.returncode == -signal.SIGKILL, run.err
    assert any(".partial-" in s for s in strays(p, folder))
    asyncio.run(_repair_once(p.backend, folder / p.target_rel))
    assert classify(p, folder, "(after the rerun)") == "repaired"
    assert strays(p, folder) == []
