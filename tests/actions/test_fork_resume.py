"""Fork after a completed turn and resume in the harness, through the functions and the command line.

Every result is read back with a fresh store's ``load`` (the round trip the issue asks for).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import (
    assert_untouched,
    backups_under,
    cli,
    copy_private,
    expected_of,
    main_json,
    main_text,
    needs_shared,
    needs_sqlite,
    run,
    scenario_dir,
    sqlite_rows,
    store_path,
    tree_digest,
)

from app.actions import fork, resume
from persistence import SessionPersistenceError, open_store

pytestmark = pytest.mark.timeout(60)

BACKENDS = [
    pytest.param("jsonl-zstd", marks=needs_shared),
    pytest.param("jsonl-none", marks=needs_shared),
    pytest.param("sqlite", marks=[needs_shared, needs_sqlite]),
]


def fixture_root(backend: str, scenario: str, tmp: Path, sub: str = "root") -> tuple[Path, dict[str, Any]]:
    d = scenario_dir(backend, scenario)
    src = d / sub if (d / sub).is_dir() else d / "before" / "root"
    return copy_private(src, tmp / "work" / "root"), expected_of(d)


async def _load(target: Path, sid: str) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    store = open_store(target)
    try:
        ins = await store.load(sid)
        diag = await store.diagnose(sid)
        return ins.meta.to_json(), ins.events.to_json(), diag.status
    finally:
        await store.close()


def turn_end_seq(events: list[dict[str, Any]], turn: int) -> int:
    return next(e["seq"] for e in events if e["type"] == "turn/end" and e["data"]["turn"] == turn)


def assert_child(
    meta: dict[str, Any], events: list[dict[str, Any]], parent_id: str, parent_events: list[dict[str, Any]], boundary: int
) -> None:
    seed_length = boundary + 1
    assert meta["parentSession"] == parent_id
    assert meta["seedLength"] == seed_length
    assert events[:seed_length] == parent_events[:seed_length]
    marker = events[seed_length]
    assert marker["type"] == "session/end-seed" and marker["seq"] == seed_length and marker["data"] == {}
    assert len(events) == seed_length + 1
    assert [e["seq"] for e in events] == list(range(len(events)))


# ---------------------------------------------------------------- fork


@pytest.mark.parametrize("backend", BACKENDS)
def test_fork_function_round_trips_through_load(backend: str, tmp_path: Path) -> None:
    root, exp = fixture_root(backend, "balanced", tmp_path)
    target = store_path(backend, root)
    sid = exp["sessions"][0]["id"]
    parent_meta, parent_events, _ = run(_load(target, sid))
    parent_before = sqlite_rows(target)["events"] if backend == "sqlite" else tree_digest(root)

    async def go(turn: int | None, new_id: str | None = None) -> dict[str, Any]:
        store = open_store(target)
        try:
            return await fork.fork_after_turn(store, sid, turn, new_id)
        finally:
            await store.close()

    out = run(go(1))
    boundary = turn_end_seq(parent_events, 1)
    assert set(out) == {"id", "parentSession", "afterTurn", "seedLength", "events", "header"}
    child_id = out["id"]
    assert uuid.UUID(child_id).version == 4 and str(uuid.UUID(child_id)) == child_id
    assert (out["parentSession"], out["afterTurn"], out["seedLength"], out["events"]) == (sid, 1, boundary + 1, boundary + 2)
    assert out["header"]["id"] == child_id and out["header"]["cwd"] == parent_meta["cwd"]
    meta, events, status = run(_load(target, child_id))
    assert status == "ok"
    assert_child(meta, events, sid, parent_events, boundary)
    assert meta["cwd"] == parent_meta["cwd"] and "origin" not in meta

    # Default turn: the last completed one; an explicit id is used verbatim.
    last = run(go(None, "child-of-everything"))
    assert last["id"] == "child-of-everything" and last["afterTurn"] == 2
    meta, events, _ = run(_load(target, "child-of-everything"))
    assert_child(meta, events, sid, parent_events, turn_end_seq(parent_events, 2))

    # The parent was never written.
    if backend == "sqlite":
        assert [r for r in sqlite_rows(target)["events"] if r[0] == sid] == [r for r in parent_before if r[0] == sid]
    else:
        assert_untouched(root, parent_before, new_files=True)  # type: ignore[arg-type]
        child_dir = root / "--home-dev-projects-alpha--" / child_id
        assert sorted(p.name for p in child_dir.iterdir()) == ["session.jsonl" + (".zstd" if backend == "jsonl-zstd" else "")]


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none"])
@needs_shared
def test_fork_reproduces_upstreams_seed_batch(backend: str, tmp_path: Path) -> None:
    """Forking the ``fork`` fixture's parent after turn 1 writes the same seed lines upstream's child holds."""
    root, exp = fixture_root(backend, "fork", tmp_path)
    parent, up_child = exp["sessions"][0], exp["sessions"][1]
    assert up_child["seedLength"] == 232

    async def go() -> dict[str, Any]:
        store = open_store(root)
        try:
            return await fork.fork_after_turn(store, parent["id"], 1)
        finally:
            await store.close()

    out = run(go())
    assert out["seedLength"] == 232
    compression = "zstd" if backend == "jsonl-zstd" else "none"
    ours = sk.plaintext(sk.artifact(root, parent["cwd"], out["id"], compression).read_bytes(), compression)
    theirs = sk.plaintext(sk.artifact(root, parent["cwd"], up_child["id"], compression).read_bytes(), compression)
    our_lines, their_lines = ours.splitlines(keepends=True), theirs.splitlines(keepends=True)
    header = json.loads(our_lines[0])
    assert header == {
        "type": "session",
        "version": 0,
        "id": out["id"],
        "createdAt": header["createdAt"],
        "cwd": parent["cwd"],
        "parentSession": parent["id"],
        "seedLength": 232,
        "delegationDepth": 0,
    }
    end = next(i for i, line in enumerate(their_lines) if b'"session/end-seed"' in line)
    assert our_lines[1:end] == their_lines[1:end]  # byte-identical seed, chunk rows packed the same way
    assert re.fullmatch(rb'\{"type":"session/end-seed","seq":232,"time":\d+,"data":\{\}\}\n', our_lines[end])
    assert len(our_lines) == end + 1
    if compression == "zstd":
        assert len(sk.zstd_frames(sk.artifact(root, parent["cwd"], out["id"], compression).read_bytes())) == 2


@needs_shared
def test_fork_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, exp = fixture_root("jsonl-zstd", "balanced", tmp_path)
    sid = exp["sessions"][0]["id"]
    code, out, err = main_json(capsys, "fork", str(root), sid, "--after-turn", "1")
    assert code == 0, err
    assert set(out) == {"id", "parentSession", "afterTurn", "seedLength", "events", "header"}
    assert uuid.UUID(out["id"]).version == 4
    _pm, parent_events, _ = run(_load(root, sid))
    meta, events, _ = run(_load(root, out["id"]))
    assert_child(meta, events, sid, parent_events, turn_end_seq(parent_events, 1))
    assert meta == {**out["header"], "delegationDepth": 0}  # JSONL metadata always reports delegationDepth

    code, text, err = main_text(capsys, "fork", str(root), sid, "--after-turn", "2", "--id", "named child")
    assert code == 0, err
    assert text == f"forked {sid} after turn 2 -> named child ({turn_end_seq(parent_events, 2) + 2} events)\n"
    meta, events, _ = run(_load(root, "named child"))
    assert_child(meta, events, sid, parent_events, turn_end_seq(parent_events, 2))

    done = cli("fork", str(root), sid, "--after-turn", "1", "--id", "named child")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert 'session "named child" already has a persisted log on disk' in done.stderr

    code, text, err = main_text(capsys, "fork", str(root), sid, "--after-turn", "7")
    assert code == 1
    assert err == f'sessionscope: SessionForkError: session "{sid}" has no completed turn 7 (completed: 1, 2)\n'
    code, out, _err = main_json(capsys, "fork", str(root), "nobody", "--after-turn", "1")
    assert code == 1 and out == {"error": {"class": "Error", "message": 'session "nobody" not found'}}


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none"])
@needs_shared
def test_fork_of_an_interrupted_session_leaves_the_parent_unrepaired(
    backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, exp = fixture_root(backend, "interrupted", tmp_path)
    sid = exp["sessions"][0]["id"]
    before = tree_digest(root)
    # Turn 2 crashed: only inspect's synthetic closers end it, so it is not a completed turn to fork after.
    code, _text, err = main_text(capsys, "fork", str(root), sid, "--after-turn", "2")
    assert code == 1 and err == f'sessionscope: SessionForkError: session "{sid}" has no completed turn 2 (completed: 1)\n'
    code, out, err = main_json(capsys, "fork", str(root), sid, "--after-turn", "1")
    assert code == 0, err
    assert_untouched(root, before, new_files=True)  # the parent's crash artifact is exactly as it was
    store = open_store(root)
    try:
        diag = run(store.diagnose(sid))
    finally:
        run(store.close())
    assert diag.status == "open-turn"
    meta, events, status = run(_load(root, out["id"]))
    assert status == "ok" and meta["seedLength"] == out["seedLength"]
    assert events[-1]["type"] == "session/end-seed"
    assert all(e["data"].get("reason") != {"kind": "interrupted"} for e in events if e["type"] == "turn/end")
    _pm, parent_events, _ = run(_load(root, sid))  # commits the parent's repair now
    assert_child(meta, events, sid, parent_events, turn_end_seq(parent_events, 1))


def test_fork_refuses_a_session_without_a_completed_turn(tmp_path: Path) -> None:
    root = tmp_path / "root"

    async def go() -> None:
        store = open_store(root)
        try:
            await store.create(sk.meta("open", sk.WORK))
            await store.append("open", [sk.turn_start(0, 1), sk.step_start(1, 1, 1)])
            # inspect() closes the turn in memory; that synthetic turn/end is not a completed turn.
            assert (await store.inspect("open")).events.to_json()[-1]["type"] == "turn/end"
            with pytest.raises(SessionPersistenceError, match='session "open" has no completed turn to fork after'):
                await fork.fork_after_turn(store, "open", None)
            await store.create(sk.meta("two", sk.WORK))
            await store.append("two", sk.one_turn_log() + sk.open_turn2())
            out = await fork.fork_after_turn(store, "two", None)
            assert (out["afterTurn"], out["seedLength"]) == (1, 6)
            with pytest.raises(SessionPersistenceError, match=r"has no completed turn 2 \(completed: 1\)"):
                await fork.fork_after_turn(store, "two", 2)
        finally:
            await store.close()

    run(go())


# ---------------------------------------------------------------- resume --print


FIXTURE_CWD = "/home/dev/projects/alpha"  # the cwd upstream's fixture sessions recorded


def _recorded_folder(monkeypatch: pytest.MonkeyPatch, path: str, *, exists: bool) -> None:
    """Whether the fixture's recorded cwd exists is the test's choice, not the host's: ``os.path.isdir``
    answers ``exists`` for that one path (and as before for every other)."""
    real = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: exists if os.fspath(p) == path else real(p))


@pytest.mark.parametrize("backend", BACKENDS)
def test_resume_print_default_and_template(
    backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, exp = fixture_root(backend, "balanced", tmp_path)
    target = store_path(backend, root)
    sid = exp["sessions"][0]["id"]
    before = tree_digest(root)
    _recorded_folder(monkeypatch, FIXTURE_CWD, exists=False)
    code, text, err = main_text(capsys, "resume", str(target), sid, "--print")
    assert code == 0, err
    assert text == f"dsh --profile tui --resume {sid}\n"
    template = ("--template", "my-harness --cwd {cwd} --root {root} --resume={id}")
    code, out, err = main_json(capsys, "resume", str(target), sid, "--print", *template)
    assert code == 0, err
    assert out == {
        "id": sid,
        "command": ["my-harness", "--cwd", FIXTURE_CWD, "--root", str(target), f"--resume={sid}"],
        "cwd": None,
        "backup": None,
        "launched": False,
    }
    # Where the recorded folder exists, the command runs there.
    _recorded_folder(monkeypatch, FIXTURE_CWD, exists=True)
    code, out, err = main_json(capsys, "resume", str(target), sid, "--print", *template)
    assert code == 0, err
    assert out["cwd"] == FIXTURE_CWD and out["command"][2] == FIXTURE_CWD
    if backend != "sqlite":
        assert_untouched(root, before)  # resuming a balanced session commits nothing
    _meta, _events, status = run(_load(target, sid))
    assert status == "ok"


@needs_shared
def test_resume_print_quotes_awkward_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _exp = fixture_root("jsonl-zstd", "many-sessions", tmp_path)
    for sid in ("weird id/with:slash ~tilde", "..", "UPPER-lower.dots_under"):
        code, text, err = main_text(capsys, "resume", str(root), sid, "--print")
        assert code == 0, err
        assert shlex.split(text) == ["dsh", "--profile", "tui", "--resume", sid]
    assert text == "dsh --profile tui --resume UPPER-lower.dots_under\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_resume_commits_repair_only_with_force(backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, exp = fixture_root(backend, "interrupted", tmp_path)
    target = store_path(backend, root)
    sid = exp["sessions"][0]["id"]
    before = tree_digest(root)
    code, text, err = main_text(capsys, "resume", str(target), sid, "--print")
    assert code == 1 and text == ""
    assert err.startswith(f'sessionscope: Error: session "{sid}" needs repair first (interrupted turn: 4 synthetic closer(s)')
    assert "--force" in err
    if backend != "sqlite":
        assert_untouched(root, before)
    assert backups_under(root) == []

    code, out, err = main_json(capsys, "resume", str(target), sid, "--print", "--force")
    assert code == 0, err
    assert out["command"] == ["dsh", "--profile", "tui", "--resume", sid] and out["launched"] is False
    [b] = backups_under(root)
    assert out["backup"] == str(b)
    meta, events, status = run(_load(target, sid))
    assert status == "ok" and meta["id"] == sid
    assert events[-1]["type"] == "turn/end" and events[-1]["data"]["reason"] == {"kind": "interrupted"}
    after = scenario_dir(backend, "interrupted") / "after" / "root"
    if backend == "sqlite":
        assert sqlite_rows(target) == sqlite_rows(copy_private(after, tmp_path / "after" / "root") / "sessions.sqlite")
    else:
        rel = exp["sessions"][0]["artifact"].replace("<ROOT>/", "", 1)
        assert (root / rel).read_bytes() == (after / rel).read_bytes()


def test_resume_refuses_corrupt_and_unsupported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"

    async def go() -> None:
        store = open_store(root)
        try:
            for sid in ("bad", "new"):
                await store.create(sk.meta(sid, sk.WORK))
                await store.append(sid, sk.one_turn_log())
        finally:
            await store.close()

    run(go())
    bad = sk.artifact(root, sk.WORK, "bad", "zstd")
    data = bytearray(bad.read_bytes())
    data[-6] ^= 0xFF
    bad.write_bytes(bytes(data))
    new = sk.artifact(root, sk.WORK, "new", "zstd")
    plain = sk.plaintext(new.read_bytes(), "zstd").replace(b'"version":0', b'"version":3', 1)
    from persistence.jsonl.frames import compress_frame

    nl = plain.index(b"\n") + 1
    new.write_bytes(compress_frame(plain[:nl]) + compress_frame(plain[nl:]))
    before = tree_digest(root)
    code, _text, err = main_text(capsys, "resume", str(root), "bad", "--print", "--force")
    assert code == 1 and err.startswith('sessionscope: Error: cannot resume "bad": corrupt Zstandard session log')
    code, _text, err = main_text(capsys, "resume", str(root), "new", "--print", "--force")
    assert code == 1 and err.startswith('sessionscope: Error: cannot resume "new": session "new" uses log format v3')
    code, _text, err = main_text(capsys, "resume", str(root), "absent", "--print")
    assert code == 1 and err == 'sessionscope: Error: cannot resume "absent": session "absent" not found\n'
    assert_untouched(root, before)


# ---------------------------------------------------------------- resume: launching


FAKE_HARNESS = "sessionscope-test-no-such-harness-" + uuid.uuid4().hex[:8]
MISSING = (
    f"the harness command '{FAKE_HARNESS}' was not found on PATH; install it or change the resume command "
    "template (the command can also be copied to the clipboard)"
)


@needs_shared
def test_resume_missing_harness_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, exp = fixture_root("jsonl-none", "balanced", tmp_path)
    sid = exp["sessions"][0]["id"]
    started: list[Any] = []
    monkeypatch.setattr(resume.subprocess, "Popen", lambda *a, **k: started.append(a))
    template = f"{FAKE_HARNESS} --resume {{id}}"
    code, text, err = main_text(capsys, "resume", str(root), sid, "--template", template)
    assert code == 1 and text == ""
    assert err == f"sessionscope: Error: {MISSING}\n"
    code, out, err = main_json(capsys, "resume", str(root), sid, "--template", template)
    assert code == 1 and out == {"error": {"class": "Error", "message": MISSING}}
    assert started == []
    # --print never looks the harness up: the command can still be copied.
    code, text, err = main_text(capsys, "resume", str(root), sid, "--template", template, "--print")
    assert code == 0 and text == f"{FAKE_HARNESS} --resume {sid}\n"
    monkeypatch.undo()  # resume.subprocess is the subprocess module
    done = cli("resume", str(root), sid, "--template", template)
    assert done.returncode == 1 and done.stderr == f"sessionscope: Error: {MISSING}\n"


def test_build_command_quotes_and_rejects_bad_templates(tmp_path: Path) -> None:
    cmd = resume.build_command("dsh --resume {id} --cwd {cwd}", session_id="a b'c", cwd=str(tmp_path), root="/r")
    assert cmd.argv == ["dsh", "--resume", "a b'c", "--cwd", str(tmp_path)]
    assert cmd.cwd == str(tmp_path) and shlex.split(cmd.text) == cmd.argv
    assert resume.build_command("dsh {id}", session_id="x", cwd="/does/not/exist/here", root="/r").cwd is None
    assert resume.build_command("dsh {cwd}", session_id="x", cwd=None, root="/r").argv == ["dsh", ""]
    for bad in ("dsh --resume {session}", "dsh {0}", "dsh {id", "dsh '{id}", "echo {{json}} {id}}"):
        with pytest.raises(resume.ResumeLaunchError, match=r"the resume command template .* is malformed"):
            resume.build_command(bad, session_id="x", cwd=None, root="/r")
    assert resume.build_command("echo {{json}} {id}", session_id="x", cwd=None, root="/r").argv == ["echo", "{json}", "x"]
    for empty in ("", "   "):
        with pytest.raises(resume.ResumeLaunchError, match="template is empty"):
            resume.build_command(empty, session_id="x", cwd=None, root="/r")


def _cmd(cwd: str | None = None) -> resume.ResumeCommand:
    return resume.ResumeCommand([sys.executable, "--resume", "a b"], cwd)


def test_terminal_argv_per_platform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    odd = tmp_path / 'dir "quoted" \\ back'
    odd.mkdir()
    argv = resume.terminal_argv(_cmd(str(odd)), platform="darwin")
    assert argv[:2] == ["osascript", "-e"]
    script = f"cd {shlex.quote(str(odd))} && {shlex.quote(sys.executable)} --resume 'a b'"
    escaped = script.replace("\\", "\\\\").replace('"', '\\"')
    assert argv[2] == f'tell application "Terminal" to do script "{escaped}"'
    assert resume.terminal_argv(_cmd(), platform="win32") == ["cmd", "/c", "start", "", sys.executable, "--resume", "a b"]

    real_which = resume.shutil.which

    def only(*names: str) -> Any:
        return lambda name, *a, **k: (
            (f"/usr/bin/{name}" if name in names else None) if name != sys.executable else real_which(name)
        )

    monkeypatch.setattr(resume.shutil, "which", only("gnome-terminal", "xterm"))
    assert resume.terminal_argv(_cmd(), platform="linux") == ["gnome-terminal", "--", sys.executable, "--resume", "a b"]
    monkeypatch.setattr(resume.shutil, "which", only("konsole"))
    assert resume.terminal_argv(_cmd(), platform="linux") == ["konsole", "-e", sys.executable, "--resume", "a b"]
    monkeypatch.setattr(resume.shutil, "which", only("xterm"))
    assert resume.terminal_argv(_cmd(), platform="linux") == ["xterm", "-e", _cmd().text]
    monkeypatch.setattr(resume.shutil, "which", only())
    with pytest.raises(resume.ResumeLaunchError, match=r"no terminal emulator found \(tried x-terminal-emulator, "):
        resume.terminal_argv(_cmd(), platform="linux")


def test_launch_starts_the_terminal_detached_or_explains(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[tuple[Any, ...]] = []

    def fake_popen(argv: list[str], **kw: Any) -> str:
        calls.append((argv, kw))
        return "proc"

    monkeypatch.setattr(resume.subprocess, "Popen", fake_popen)
    monkeypatch.setattr(resume, "terminal_argv", lambda command: ["term", "-e", *command.argv])
    assert resume.launch(_cmd(str(tmp_path))) == "proc"
    assert calls == [(["term", "-e", sys.executable, "--resume", "a b"], {"cwd": str(tmp_path), "start_new_session": True})]

    def broken(argv: list[str], **kw: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(resume.subprocess, "Popen", broken)
    with pytest.raises(resume.ResumeLaunchError, match=r"could not start term: \[Errno 13\] Permission denied"):
        resume.launch(_cmd())
