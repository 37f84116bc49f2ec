"""Resume, repair, fork, restore and copy through their plan/execute pairs, and the one resume both
front ends run: ``sessionscope resume`` now meets the liveness guard on a balanced session, as the
window always did (issue 11 §4).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import backups_under, main_json, main_text, privatize, run, tree_digest

from app.actions import copy_artifact, fork, repair, resume
from app.actions.artifacts import artifact_of
from app.actions.liveness import FORCE_RISK
from persistence import CoordinatedPersistence, open_store

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("fast_fsync")]

WORK = "/proj/resume-plan"  # a cwd no harness process runs in


def _write(root: Path, *, crashed: bool = False, cwd: str = WORK) -> None:
    async def go() -> None:
        store = open_store(root)
        try:
            await store.create(sk.meta("s1", cwd))
            await store.append("s1", sk.one_turn_log() + (sk.open_turn2() if crashed else []))
        finally:
            await store.close()

    run(go())


def _with_store(root: Path, body: Any) -> Any:
    async def go() -> Any:
        store = open_store(root, create=False)
        try:
            return await body(store)
        finally:
            await store.close()

    return run(go())


# ---------------------------------------------------------------- the command line meets the guard


def test_cli_resume_of_a_just_written_balanced_session_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    _write(root)  # written a moment ago: an agent may still be running it
    before = tree_digest(root)
    code, text, err = main_text(capsys, "resume", str(root), "s1", "--print")
    assert code == 1 and text == ""
    assert err.startswith('sessionscope: Error: refusing to resume "s1": the artifact changed ')
    assert "an agent may still be writing it" in err and "Nothing was changed." in err
    assert err.endswith(f"{FORCE_RISK}.\n")
    code, out, err = main_json(capsys, "resume", str(root), "s1", "--print")
    assert code == 1 and out["error"]["class"] == "Error"
    assert out["error"]["message"].startswith('refusing to resume "s1": the artifact changed ')
    assert tree_digest(root) == before

    code, text, err = main_text(capsys, "resume", str(root), "s1", "--print", "--force")
    assert (code, err) == (0, "")
    assert text == "dsh --profile tui --resume s1\n"
    assert tree_digest(root) == before and backups_under(root) == []  # a balanced session: nothing written


def test_cli_resume_quiet_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    _write(root)
    privatize(root, age=60.0)  # a minute old: quiet for the default 10 s, live for a 5 min window
    code, text, err = main_text(capsys, "resume", str(root), "s1", "--print")
    assert (code, text, err) == (0, "dsh --profile tui --resume s1\n", "")
    code, text, err = main_text(capsys, "resume", str(root), "s1", "--print", "--quiet-seconds", "300")
    assert code == 1 and err.startswith('sessionscope: Error: refusing to resume "s1": the artifact changed ')


def test_cli_guard_comes_before_the_pending_repair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    _write(root, crashed=True)
    code, _text, err = main_text(capsys, "resume", str(root), "s1", "--print")
    assert code == 1 and err.startswith('sessionscope: Error: refusing to resume "s1": ')
    privatize(root)
    code, _text, err = main_text(capsys, "resume", str(root), "s1", "--print")
    assert code == 1 and err.startswith('sessionscope: Error: session "s1" needs repair first (')
    assert backups_under(root) == []


# ---------------------------------------------------------------- resume: the shared pair


def test_plan_resume_reads_only_and_carries_everything(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root, crashed=True)
    before = tree_digest(root)

    async def body(store: CoordinatedPersistence) -> resume.ResumePlan:
        return await resume.plan_resume(store, "s1", "h --resume {id} --in {cwd} --root {root}")

    plan = _with_store(root, body)
    assert tree_digest(root) == before
    assert plan.session_id == "s1" and plan.cwd == WORK and plan.root == str(root)
    assert plan.needs_repair and plan.preview.status == "open-turn"
    assert plan.liveness is not None and plan.liveness.live
    assert plan.objection == f"{plan.liveness.reason}. {FORCE_RISK}"
    assert plan.command is not None and plan.command.argv == ["h", "--resume", "s1", "--in", WORK, "--root", str(root)]
    bad = plan.with_template("h {id")
    assert bad.command is None and bad.template_error is not None and "malformed" in bad.template_error
    with pytest.raises(resume.ResumeLaunchError, match="malformed"):
        bad.require_command()
    assert plan.with_template("x {id}").command.argv == ["x", "s1"]  # type: ignore[union-attr]


@pytest.mark.parametrize("cwd_exists", [False, True])
def test_execute_resume_refuses_in_order_and_writes_only_when_allowed(tmp_path: Path, cwd_exists: bool) -> None:
    root = tmp_path / "root"
    # The recorded cwd is the test's own folder, present or not as the test says: never a host folder
    # (the outcome's cwd is the recorded one only where that folder exists on this machine).
    work = tmp_path / "project"
    if cwd_exists:
        work.mkdir()
    _write(root, crashed=True, cwd=str(work))
    before = tree_digest(root)

    async def refused(store: CoordinatedPersistence) -> list[str]:
        plan = await resume.plan_resume(store, "s1")
        out = []
        for kw in ({"repair_confirmed": True, "force": False}, {"repair_confirmed": False, "force": True}):
            with pytest.raises(repair.RepairRefused) as caught:
                await resume.execute_resume(store, plan, open_terminal=False, **kw)
            out.append(str(caught.value))
        return out

    live, unconfirmed = _with_store(root, refused)
    assert live.startswith('refusing to resume "s1": the artifact changed ') and FORCE_RISK in live
    assert unconfirmed.startswith('session "s1" needs repair first (interrupted turn')
    assert tree_digest(root) == before and backups_under(root) == []

    async def allowed(store: CoordinatedPersistence) -> resume.ResumeOutcome:
        plan = await resume.plan_resume(store, "s1")
        return await resume.execute_resume(store, plan, repair_confirmed=True, force=True, open_terminal=False)

    outcome = _with_store(root, allowed)
    [bak] = backups_under(root)
    assert outcome.backup == str(bak) and outcome.launched is False
    assert outcome.to_json() == {
        "id": "s1",
        "command": ["dsh", "--profile", "tui", "--resume", "s1"],
        "cwd": str(work) if cwd_exists else None,
        "backup": str(bak),
        "launched": False,
    }


def test_resume_refuses_what_no_harness_can_resume(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root)

    async def body(store: CoordinatedPersistence) -> None:
        with pytest.raises(repair.RepairRefused, match='cannot resume "absent": session "absent" not found'):
            await resume.plan_resume(store, "absent")

    _with_store(root, body)


def test_launch_failure_after_a_repair_names_the_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    _write(root, crashed=True)
    privatize(root)
    monkeypatch.setattr(resume, "terminal_argv", lambda command, platform="": ["term", *command.argv])

    def broken(_command: resume.ResumeCommand) -> Any:
        raise resume.ResumeLaunchError("could not start term: boom")

    monkeypatch.setattr(resume, "launch", broken)

    async def body(store: CoordinatedPersistence) -> None:
        plan = await resume.plan_resume(store, "s1")
        with pytest.raises(resume.ResumeLaunchError, match=r"could not start term: boom \(repaired first; backup at "):
            await resume.execute_resume(store, plan, repair_confirmed=True, force=False, open_terminal=True)

    _with_store(root, body)
    assert len(backups_under(root)) == 1


# ---------------------------------------------------------------- repair, fork, copy: the shared pairs


def test_plan_repair_then_execute_is_pinned_to_the_plan(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root, crashed=True)
    privatize(root)

    async def plan_then_append(store: CoordinatedPersistence) -> str:
        plan = await repair.plan_repair(store, "s1")
        assert plan.preview.repairable and plan.liveness is not None and not plan.liveness.live
        assert plan.objection is None
        ref = artifact_of(store, "s1")
        assert ref is not None
        with open(ref.path, "ab") as f:  # a writer appended (half a frame) after the preview
            f.write(b"\x28\xb5\x2f\xfd")
        with pytest.raises(repair.RepairRefused) as caught:
            await repair.execute_repair(store, plan)
        return str(caught.value)

    message = _with_store(root, plan_then_append)
    assert message == 'session "s1" changed since its repair was previewed; nothing was changed — preview it again'
    assert backups_under(root) == []


def test_plan_repair_assesses_only_when_a_repair_would_write(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root)

    async def body(store: CoordinatedPersistence) -> tuple[Any, Any]:
        balanced = await repair.plan_repair(store, "s1")
        result = await repair.execute_repair(store, balanced)
        return balanced, result

    plan, result = _with_store(root, body)
    assert plan.liveness is None and plan.objection is None
    assert result.backup is None and result.notes == ["nothing to repair"]


def test_fork_pair_and_its_json(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root, crashed=True)

    async def body(store: CoordinatedPersistence) -> tuple[fork.ForkPlan, fork.ForkResult]:
        plan = await fork.plan_fork(store, "s1", None)
        return plan, await fork.execute_fork(store, plan, "child")

    plan, result = _with_store(root, body)
    assert (plan.session_id, plan.turn) == ("s1", 1)
    assert result.child_id == "child" and result.parent_id == "s1" and result.after_turn == 1
    assert result.location is not None and os.path.isfile(result.location.path)
    out = result.to_json()
    assert list(out) == ["id", "parentSession", "afterTurn", "seedLength", "events", "header"]
    assert out["seedLength"] == plan.boundary + 1 and out["events"] == plan.boundary + 2


def test_copy_pair(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root)
    ref = _with_store(root, lambda store: _artifact(store))
    with pytest.raises(repair.RepairRefused, match="this session has no artifact file to copy"):
        copy_artifact.plan_copy("s1", None)
    plan = copy_artifact.plan_copy("s1", ref)
    assert plan.suggested_name == "s1-" + os.path.basename(ref.path)
    dest = copy_artifact.execute_copy(plan, str(tmp_path / "out.bin"))
    assert Path(dest).read_bytes() == Path(ref.path).read_bytes()


async def _artifact(store: CoordinatedPersistence) -> Any:
    return artifact_of(store, "s1")
