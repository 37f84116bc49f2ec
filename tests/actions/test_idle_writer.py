"""An idle writer is seen, and quiet is not called a crash (issue 21 items 2 and 3).

A live SessionScope writer (a ``SessionStore`` holding a session with an open turn) that stays quiet
longer than the quiet period used to leave no trace: the engine opens the transcript only per append,
so the guard saw no open handle and ``repair`` appended closers under the live session.  Now the
writer keeps a shared lock on its transcript for the life of the session and the guard honours it.
When nothing fires, the verdict keeps "idle for N" and "no harness process found" as two facts and
says "possibly crashed"; ``repair --dry-run --json`` carries the verdict with every signal.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import main_json, main_text, privatize, run

from app.actions import backups, repair
from app.actions.artifacts import ArtifactRef
from app.actions.liveness import ProcessFacts, WriterHolds, assess_liveness, verdict_json
from persistence import JsonlSessionPersistence, SessionConflictError, SessionStore, jsonl_writer_holds, open_store

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(sys.platform == "win32", reason="advisory flock is POSIX-only"),
]

COMPRESSIONS = ["zstd", "none"]
HOUR = 3600.0
REPO = Path(__file__).resolve().parents[2]


def balanced_root(tmp: Path, compression: str) -> Path:
    root = tmp / "root"

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            await store.create(sk.meta("s", sk.WORK))
            await store.append("s", sk.one_turn_log())
        finally:
            await store.close()

    run(go())
    privatize(root)
    return root


def open_turn_root(tmp: Path, compression: str) -> Path:
    root = tmp / "root"

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            await store.create(sk.meta("s", sk.WORK))
            await store.append("s", sk.one_turn_log() + sk.open_turn2())
        finally:
            await store.close()

    run(go())
    privatize(root)
    return root


def age_files(root: Path, seconds: float = HOUR) -> None:
    stamp = time.time() - seconds
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(dirpath, name), (stamp, stamp))


async def _plan(root: Path) -> repair.RepairPlan:
    store = open_store(root)
    try:
        return await repair.plan_repair(store, "s")
    finally:
        await store.close()


async def _repair(root: Path, **kw: Any) -> repair.RepairResult:
    store = open_store(root)
    try:
        return await repair.repair_session(store, "s", **kw)
    finally:
        await store.close()


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_quiet_live_store_is_seen_and_its_session_is_not_repaired(
    compression: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from persistence.jsonl import locks

    monkeypatch.setattr(locks, "REPAIR_LOCK_WAIT_S", 0.3)
    root = balanced_root(tmp_path, compression)
    path = sk.artifact(root, sk.WORK, "s", compression)

    async def body() -> None:
        live = SessionStore(JsonlSessionPersistence(root, compression=compression), write_batch_max_delay_ms=1)
        try:
            session = await live.resume("s")
            session.append("turn/start", {"turn": 2})  # an open turn, then a long silent model call
            await live.flush("s")
            age_files(root)  # quiet for an hour: the mtime rule is silent
            before = path.read_bytes()
            assert jsonl_writer_holds(str(path)) is True

            plan = await _plan(root)
            assert plan.preview.status == "open-turn"
            assert plan.liveness is not None and plan.liveness.live
            held = [s for s in plan.liveness.signals if isinstance(s, WriterHolds)]
            assert [s.path for s in held] == [str(path)]
            assert plan.liveness.idle is None and plan.idle_note is None  # live, so neither idle nor "possibly crashed"
            with pytest.raises(repair.RepairRefused, match="looks live: a SessionScope writer holds"):
                await _repair(root)
            # --force passes the guard, never a live writer: refused before any backup is made...
            with pytest.raises(repair.RepairRefused, match="--force cannot override a live writer"):
                await _repair(root, force=True)
            assert path.read_bytes() == before
            assert [p.name for p in path.parent.iterdir() if ".bak-" in p.name] == []
            with pytest.raises(repair.RepairRefused, match="--force cannot override a live writer"):
                await _restore(root, str(path) + ".bak-20260101T000000Z")
            # ...and the engine's commit itself waits for the writer's lock and fails typed.
            store = open_store(root)
            try:
                revision = await store.read_stored_revision("s")
                assert revision is not None
                with pytest.raises(SessionConflictError, match="holds the log"):
                    await store.repair("s", expected_revision=revision)
            finally:
                await store.close()
            assert path.read_bytes() == before
            session.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
            await live.flush("s")  # the writer goes on undisturbed
        finally:
            await live.close()
            await live.persistence.close()
        assert jsonl_writer_holds(str(path)) is False  # released on dispose

    run(body())
    assert sk.seqs_of(run(_inspect(root)).events) == list(range(9))


async def _restore(root: Path, backup: str) -> Any:
    Path(backup).write_bytes(b"")  # a backup by name: the refusal comes before it is read
    store = open_store(root)
    try:
        return await backups.restore_backup(store, "s", backup, force=True)
    finally:
        await store.close()


async def _inspect(root: Path) -> Any:
    store = open_store(root)
    try:
        return await store.inspect("s")
    finally:
        await store.close()


def test_a_new_session_is_held_from_its_first_append(tmp_path: Path) -> None:
    root = tmp_path / "root"

    async def body() -> None:
        live = SessionStore(JsonlSessionPersistence(root, compression="none"), write_batch_max_delay_ms=1)
        try:
            session = await live.create("n", meta={"cwd": sk.WORK})
            session.append("turn/start", {"turn": 1})
            await live.flush("n")
            path = sk.artifact(root, sk.WORK, "n", "none")
            assert path.is_file() and jsonl_writer_holds(str(path)) is True
        finally:
            await live.close()
            await live.persistence.close()
        assert jsonl_writer_holds(str(path)) is False

    run(body())


CHILD = r"""
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from persistence import JsonlSessionPersistence, SessionStore

async def main() -> None:
    live = SessionStore(JsonlSessionPersistence(sys.argv[2], compression="zstd"), write_batch_max_delay_ms=1)
    session = await live.resume("s")
    session.append("turn/start", {"turn": 2})
    await live.flush("s")
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    await live.close()
    await live.persistence.close()

asyncio.run(main())
"""


def test_a_writer_in_another_process_is_seen_while_quiet(tmp_path: Path) -> None:
    root = balanced_root(tmp_path, "zstd")
    path = sk.artifact(root, sk.WORK, "s", "zstd")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(REPO), str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        age_files(root)
        plan = run(_plan(root))
        assert plan.liveness is not None
        assert [s.path for s in plan.liveness.signals if isinstance(s, WriterHolds)] == [str(path)], plan.liveness
        if sys.platform.startswith("linux"):  # its open handle is seen too (other platforms may not list it)
            assert child.pid in {getattr(s, "pid", None) for s in plan.liveness.signals if s.kind == "held-open"}
        with pytest.raises(repair.RepairRefused, match="a SessionScope writer holds"):
            run(_repair(root))
    finally:
        child.communicate("", timeout=30)
    assert child.returncode == 0


# ---------------------------------------------------------------- quiet is two facts, not a crash


def test_a_quiet_verdict_says_idle_and_whether_a_harness_was_looked_for(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"type":"session"}\n')
    os.utime(path, (1_000_000.0, 1_000_000.0))
    ref = ArtifactRef("jsonl", str(path))
    other = [ProcessFacts(7, "vim", ("vim",), "/elsewhere")]

    verdict = assess_liveness(ref, now=1_000_040.0, session_cwd=str(tmp_path), process_source=lambda _t: other)
    assert not verdict.live and verdict.state == "idle"
    assert verdict.idle == "idle for 40 s — no harness process found; possibly crashed"
    # Without the session's folder no harness could be looked for: the sentence says so, not "none found".
    blind = assess_liveness(ref, now=1_000_040.0, process_source=lambda _t: other)
    assert blind.idle is not None and blind.idle.startswith("idle for 40 s — no harness process could be looked for")
    assert blind.idle.endswith("; possibly crashed")
    # A long silence is still only "possibly crashed"; a signal makes it live, with no idle sentence at all.
    assert assess_liveness(ref, now=1_000_000.0 + 3 * HOUR, process_source=lambda _t: ()).idle == (
        "idle for 3.0 h — no harness process could be looked for (the session's folder or the process list is "
        "unknown); possibly crashed"
    )
    harness = [ProcessFacts(8, "dsh", ("dsh",), str(tmp_path))]
    live = assess_liveness(ref, now=1_000_040.0, session_cwd=str(tmp_path), process_source=lambda _t: harness)
    assert live.live and live.state == "live" and live.idle is None
    for v in (verdict, blind, live):
        text = (v.idle or "") + (v.reason or "")
        assert "crashed" not in text.replace("possibly crashed", "")


# ---------------------------------------------------------------- repair --dry-run --json (item 3)


def test_dry_run_json_carries_the_verdict_with_every_signal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = open_turn_root(tmp_path, "zstd")
    path = sk.artifact(root, sk.WORK, "s", "zstd")
    os.utime(path, None)  # just written: the mtime rule fires
    code, out, err = main_json(capsys, "repair", str(root), "s", "--dry-run")
    assert code == 0, err
    liveness = out["liveness"]
    assert liveness["state"] == "live" and liveness["live"] is True
    kinds = [s["kind"] for s in liveness["signals"]]
    assert kinds and kinds[0] == "recently-written"
    assert all(set(s) >= {"kind", "sentence"} for s in liveness["signals"])
    assert liveness["reason"] == "; ".join(s["sentence"] for s in liveness["signals"])

    age_files(root)
    plan = run(_plan(root))  # the window's plan: its preview carries the facts for the dialog
    assert plan.idle_note is not None and plan.preview.idle_note == plan.idle_note
    assert plan.idle_note.startswith("idle for ") and "no harness process found; possibly crashed" in plan.idle_note
    code, out, err = main_json(capsys, "repair", str(root), "s", "--dry-run")
    assert code == 0, err
    quiet = out["liveness"]
    assert quiet["state"] == "idle" and quiet["signals"] == [] and quiet["idleSeconds"] >= HOUR - 60
    assert quiet["idle"].startswith("idle for ") and quiet["idle"].endswith("; possibly crashed")
    code, text, err = main_text(capsys, "repair", str(root), "s", "--dry-run")
    assert code == 0, err
    assert "liveness guard: quiet (no sign of a running agent): idle for " in text and "possibly crashed" in text

    # A session a repair would not touch was not judged: the key says so (null), the shape stays.
    ok = balanced_root(tmp_path / "ok", "zstd")
    code, out, err = main_json(capsys, "repair", str(ok), "s", "--dry-run")
    assert code == 0, err
    assert out["liveness"] is None


def test_verdict_json_is_the_whole_verdict(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"x")
    os.utime(path, (1_000_000.0, 1_000_000.0))
    verdict = assess_liveness(ArtifactRef("jsonl", str(path)), now=1_000_004.0, process_source=lambda _t: ())
    out = verdict_json(verdict)
    assert out["state"] == "live" and [s["kind"] for s in out["signals"]] == ["recently-written"]
    assert out["idleSeconds"] == pytest.approx(4.0) and out["idle"] is None and out["notes"] == []
