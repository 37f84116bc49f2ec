"""The liveness guard by more than mtime (issue 10 item 1): held-open files, a harness in the session's
folder, a call or request in flight, and the original recently-written rule.

Every file here is dated an hour back, so the mtime rule stays quiet unless a test wants it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.actions import liveness
from app.actions.artifacts import ArtifactRef
from app.actions.liveness import (
    FORCE_RISK,
    HarnessRunning,
    HeldOpen,
    InFlight,
    ProcessFacts,
    RecentlyWritten,
    assess_liveness,
    is_harness,
    signal_json,
)

pytestmark = pytest.mark.timeout(60)

NOW = 1_800_000_000.0  # a fixed wall clock for ages of events
HOUR = 3600.0


def aged(path: Path, content: bytes = b'{"type":"session"}\n') -> Path:
    path.write_bytes(content)
    old = time.time() - HOUR
    os.utime(path, (old, old))
    return path


def no_processes(_targets: frozenset[str]) -> list[ProcessFacts]:
    return []


HOLDER = "import sys; f = open(sys.argv[1], 'rb'); print('ready', flush=True); sys.stdin.readline()"


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A child python process that keeps a quiet transcript open until the test ends."""
    path = aged(tmp_path / "session.jsonl")
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc, path
    finally:
        proc.communicate("", timeout=10)


# ---------------------------------------------------------------- held open


def test_a_child_process_holding_the_transcript_is_named_with_its_pid(holder: tuple[subprocess.Popen[str], Path]) -> None:
    proc, path = holder
    verdict = assess_liveness(ArtifactRef("jsonl", str(path)))
    held = [s for s in verdict.signals if isinstance(s, HeldOpen)]
    assert [s.pid for s in held] == [proc.pid], verdict
    [sig] = held
    assert sig.process == psutil.Process(proc.pid).name() and sig.process
    assert sig.path == str(path)
    assert sig.sentence == f"looks live: process {proc.pid} ({sig.process}) has {path} open"
    assert verdict.live and not any(isinstance(s, RecentlyWritten) for s in verdict.signals)
    refusal = verdict.refusal("s1")
    assert refusal is not None and refusal.startswith(f'refusing to repair "s1": looks live: process {proc.pid} (')
    assert refusal.endswith(FORCE_RISK + ".") and "--force" in refusal and "corrupt" in refusal
    assert signal_json(sig) == {
        "kind": "held-open",
        "sentence": sig.sentence,
        "pid": proc.pid,
        "process": sig.process,
        "path": str(path),
    }


def test_the_psutil_path_finds_the_holder_too(
    holder: tuple[subprocess.Popen[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What macOS and Windows use (``Process.open_files``), exercised here by turning the /proc fast path off."""
    proc, path = holder
    monkeypatch.setattr(liveness, "_proc_fd_scan", lambda _targets: None)
    verdict = assess_liveness(ArtifactRef("jsonl", str(path)))
    assert [s.pid for s in verdict.signals if isinstance(s, HeldOpen)] == [proc.pid]


class _FakeOpenFile:
    def __init__(self, path: str) -> None:
        self.path = path


class _FakeProc:
    def __init__(self, pid: int, name: str, error: BaseException | None = None, files: tuple[str, ...] = ()) -> None:
        self.info = {"pid": pid, "name": name, "cmdline": [name], "cwd": None}
        self._error = error
        self._files = files

    def open_files(self) -> list[_FakeOpenFile]:
        if self._error is not None:
            raise self._error
        return [_FakeOpenFile(p) for p in self._files]


def test_processes_we_may_not_inspect_are_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = aged(tmp_path / "session.jsonl")
    procs = [
        _FakeProc(11, "denied", psutil.AccessDenied(11)),
        _FakeProc(12, "gone", psutil.NoSuchProcess(12)),
        _FakeProc(13, "zombie", psutil.ZombieProcess(13)),
        _FakeProc(14, "io", PermissionError(13, "denied")),
        _FakeProc(15, "writer", files=(str(path),)),
    ]
    monkeypatch.setattr(liveness, "_proc_fd_scan", lambda _targets: None)
    monkeypatch.setattr(psutil, "process_iter", lambda *_a, **_k: iter(procs))
    verdict = assess_liveness(ArtifactRef("jsonl", str(path)))
    assert [(s.kind, s.pid, s.process) for s in verdict.signals if isinstance(s, HeldOpen)] == [("held-open", 15, "writer")]
    assert verdict.notes == ()


def test_a_failing_process_list_is_a_note_not_an_error(tmp_path: Path) -> None:
    path = aged(tmp_path / "session.jsonl")

    def broken(_targets: frozenset[str]) -> list[ProcessFacts]:
        raise psutil.AccessDenied()

    verdict = assess_liveness(ArtifactRef("jsonl", str(path)), process_source=broken)
    assert verdict.signals == () and verdict.reason is None and verdict.refusal("s") is None
    assert len(verdict.notes) == 1 and verdict.notes[0].startswith("the process list could not be read")


def test_our_own_handles_are_no_signal(tmp_path: Path) -> None:
    path = aged(tmp_path / "session.jsonl")
    with open(path, "rb"), open(path, "ab"):
        verdict = assess_liveness(ArtifactRef("jsonl", str(path)))
    assert verdict.signals == (), verdict
    # A source that reports our own pid (as a real listing does) is filtered too.
    me = ProcessFacts(os.getpid(), "dsh", ("dsh",), str(tmp_path), (str(path),))
    verdict = assess_liveness(ArtifactRef("jsonl", str(path)), session_cwd=str(tmp_path), process_source=lambda _t: [me])
    assert verdict.signals == ()


def test_a_quiet_closed_file_gives_no_signal(tmp_path: Path) -> None:
    path = aged(tmp_path / "session.jsonl")
    verdict = assess_liveness(
        ArtifactRef("jsonl", str(path)),
        session_cwd=str(tmp_path),
        last_event={"type": "turn/end", "seq": 9, "time": int(time.time() * 1000)},
    )
    assert verdict.signals == () and not verdict.live and verdict.notes == ()


SQLITE_HOLDER = (
    "import sqlite3, sys; con = sqlite3.connect(sys.argv[1]); con.execute('PRAGMA journal_mode=WAL'); "
    "con.execute('SELECT count(*) FROM t').fetchone(); print('ready', flush=True); sys.stdin.readline()"
)


def test_a_process_holding_the_database_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    db = tmp_path / "sessions.sqlite"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t (x)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    proc = subprocess.Popen(
        [sys.executable, "-c", SQLITE_HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        old = time.time() - HOUR
        for f in tmp_path.iterdir():
            os.utime(f, (old, old))
        before = {f.name: (f.read_bytes(), f.stat().st_mtime_ns) for f in tmp_path.iterdir()}
        verdict = assess_liveness(ArtifactRef("sqlite", str(db)))
        after = {f.name: (f.read_bytes(), f.stat().st_mtime_ns) for f in tmp_path.iterdir()}
    finally:
        proc.communicate("", timeout=10)
    assert [(s.kind, s.pid) for s in verdict.signals] == [("held-open", proc.pid)], verdict
    assert after == before  # the probe and the scan never write (no checkpoint, no new sidecar)


# ---------------------------------------------------------------- harness in the session's folder


def test_a_harness_running_in_the_session_cwd_is_named() -> None:
    procs = [
        ProcessFacts(101, "dsh", ("/usr/local/bin/dsh", "--resume"), "/w/proj"),
        ProcessFacts(102, "node", ("node", "/usr/lib/node_modules/@deepseek-ai/dsh/bin/cli.js"), "/w/proj"),
        ProcessFacts(103, "dsh", ("dsh",), "/w/other"),  # a harness, elsewhere
        ProcessFacts(104, "vim", ("vim", "dsh.txt"), "/w/proj"),  # not a harness
        ProcessFacts(105, "node", ("node", "server.js"), "/w/proj"),  # node, but not the harness
        ProcessFacts(106, "bash", ("bash",), None),  # cwd unreadable (another user's process)
    ]
    here = Path(__file__)
    ref = ArtifactRef("jsonl", str(here))
    verdict = assess_liveness(ref, now=here.stat().st_mtime + HOUR, session_cwd="/w/proj", process_source=lambda _t: procs)
    assert [(s.kind, s.pid) for s in verdict.signals] == [("harness-running", 101), ("harness-running", 102)]
    first = verdict.signals[0]
    assert isinstance(first, HarnessRunning)
    assert first.sentence == "looks live: harness process 101 (dsh) is running in the session's folder /w/proj"
    # Without the session's cwd the rule cannot run; the names are tunable.
    assert assess_liveness(ref, now=here.stat().st_mtime + HOUR, process_source=lambda _t: procs).signals == ()
    tuned = assess_liveness(
        ref, now=here.stat().st_mtime + HOUR, session_cwd="/w/proj", harness_names=("vim",), process_source=lambda _t: procs
    )
    assert [s.pid for s in tuned.signals] == [104]


@pytest.mark.parametrize(
    ("name", "cmdline", "expected"),
    [
        ("dsh", (), True),
        ("DSH.EXE", (), True),
        ("python3", ("/opt/bin/dsh", "x"), True),  # argv[0] basename
        ("node", ("node", "dsh.js"), True),
        ("node.exe", ("C:\\Program Files\\nodejs\\node.exe", "C:\\npm\\node_modules\\dsh-cli\\index.js"), True),
        ("nodejs", ("nodejs", "--inspect", "/x/@scope/dsh/cli.js"), True),
        ("node", ("node", "dashboard.js"), False),
        ("node", ("node", "/srv/sshd/x.js"), False),
        ("python3", ("python3", "dsh.py"), False),  # only Node.js is looked into
    ],
)
def test_is_harness(name: str, cmdline: tuple[str, ...], expected: bool) -> None:
    assert is_harness(ProcessFacts(1, name, cmdline)) is expected


# ---------------------------------------------------------------- in flight


def _event(type_: str, seconds_ago: float, seq: int = 7) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "time": round((NOW - seconds_ago) * 1000), "data": {}}


def test_last_event_in_flight_looks_live(tmp_path: Path) -> None:
    path = aged(tmp_path / "session.jsonl")
    os.utime(path, (NOW - HOUR, NOW - HOUR))
    ref = ArtifactRef("jsonl", str(path))

    def judge(event: Any, **kw: Any) -> liveness.LivenessVerdict:
        return assess_liveness(ref, now=NOW, last_event=event, process_source=no_processes, **kw)

    verdict = judge(_event("tool/call", 11))
    [sig] = verdict.signals
    assert isinstance(sig, InFlight) and (sig.event_type, sig.seq) == ("tool/call", 7)
    assert sig.sentence.startswith("looks live: last event is tool/call 11 s ago (")
    assert verdict.reason == sig.sentence
    assert (
        judge(_event("request/header", 125))
        .signals[0]
        .sentence.startswith("looks live: last event is request/header 2 min ago (a model request")
    )
    assert judge(_event("step/start", 3)).live and judge(_event("assistant/chunk", 3)).live
    # Too old for the window: abandoned, not slow (the window is tunable).
    assert not judge(_event("tool/call", 31 * 60)).live
    assert judge(_event("tool/call", 31 * 60), in_flight_seconds=2 * HOUR).live
    # A settled last event means nothing is pending.
    for settled in ("tool/result", "assistant/message", "step/end", "turn/end", "user/message"):
        assert not judge(_event(settled, 1)).live, settled
    # No usable time: the file's age stands in (an hour: too old); an event from the future is "just now".
    assert not judge({"type": "tool/call", "seq": 1, "data": {}}).live
    assert judge({"type": "tool/call", "seq": 1, "time": True, "data": {}}, in_flight_seconds=2 * HOUR).live
    future = judge(_event("tool/call", -50))
    assert isinstance(future.signals[0], InFlight) and future.signals[0].age_s == 0.0
    assert not judge(None).live and not judge("tool/call").live


def test_an_engine_event_is_accepted(tmp_path: Path) -> None:
    path = aged(tmp_path / "session.jsonl")

    class EngineEvent:
        def to_json(self) -> dict[str, Any]:
            return _event("tool/call", 20)

    verdict = assess_liveness(ArtifactRef("jsonl", str(path)), now=NOW, last_event=EngineEvent(), process_source=no_processes)
    assert [s.kind for s in verdict.signals] == ["in-flight"]


# ---------------------------------------------------------------- the original mtime rule


def test_recently_written_keeps_the_original_sentence(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"x")
    os.utime(path, (1_000_000.0, 1_000_000.0))
    ref = ArtifactRef("jsonl", str(path))
    verdict = assess_liveness(ref, now=1_000_004.0, process_source=no_processes)
    [sig] = verdict.signals
    assert isinstance(sig, RecentlyWritten) and sig.path == str(path)
    assert sig.sentence == (
        "the artifact changed 4.0 s ago (less than 10 s): an agent may still be writing it; wait, or "
        "override the guard (confirm in the window, --force on the command line)"
    )
    assert not assess_liveness(ref, now=1_000_010.5, process_source=no_processes).live
    assert assess_liveness(ref, now=999_990.0, process_source=no_processes).live  # clock stepped back
    # Signals add up, strongest first.
    both = assess_liveness(
        ref, now=1_000_004.0, last_event={"type": "tool/call", "seq": 3, "time": 1_000_001_000}, process_source=no_processes
    )
    assert [s.kind for s in both.signals] == ["recently-written", "in-flight"]
    refusal = both.refusal("live")
    assert refusal is not None and refusal.startswith('refusing to repair "live": the artifact changed 4.0 s ago')
    assert "; looks live: last event is tool/call 3 s ago (" in refusal


def test_sqlite_sidecars_count_and_busy_is_reported(tmp_path: Path) -> None:
    db = tmp_path / "sessions.sqlite"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    old = time.time() - HOUR
    os.utime(db, (old, old))
    ref = ArtifactRef("sqlite", str(db))
    assert not assess_liveness(ref, process_source=no_processes).live
    (tmp_path / "sessions.sqlite-wal").write_bytes(b"\0" * 32)
    [sig] = assess_liveness(ref, process_source=no_processes).signals
    assert isinstance(sig, RecentlyWritten) and sig.path == str(db) + "-wal"
    (tmp_path / "sessions.sqlite-wal").unlink()
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        verdict = assess_liveness(ref, process_source=no_processes)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    busy = [s for s in verdict.signals if s.kind == "busy"]
    assert [s.sentence for s in busy] == ["the database is busy (database is locked): another process holds a write transaction"]


def _hold_until_told(path: str, ready: Any, stop: Any) -> None:
    with open(path, "rb"):
        ready.set()
        stop.wait(30)


def test_our_own_worker_processes_are_no_signal(tmp_path: Path) -> None:
    """The window's multiprocessing pool reads logs too; its workers are not an agent."""
    import multiprocessing

    path = aged(tmp_path / "session.jsonl")
    ctx = multiprocessing.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    worker = ctx.Process(target=_hold_until_told, args=(str(path), ready, stop))
    worker.start()
    try:
        assert ready.wait(30)
        verdict = assess_liveness(ArtifactRef("jsonl", str(path)))
        assert verdict.signals == (), verdict
    finally:
        stop.set()
        worker.join(30)
