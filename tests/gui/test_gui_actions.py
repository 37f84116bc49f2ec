"""Repair, fork, resume and copy-raw driven through the window (dialogs clicked with pytest-qt).

Sessions are written by the engine into temp roots and dated an hour back (so the liveness guard
is quiet) unless a test wants a "just written" artifact.  The upstream comparison reads the shared
fixtures and skips without them.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from guikit import UPSTREAM, WAIT_MS, copy_private, make_turn, need_upstream, wait_listed, wait_opened
from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog

from app.gui.dialogs import ConfirmDialog, RepairDialog, ResumeDialog
from app.timeline import INTERRUPTED
from persistence import JsonlSessionPersistence, open_store

pytestmark = pytest.mark.timeout(120)

BACKUP_RE = re.compile(r"\.bak-\d{8}T\d{6}Z(-\d+)?$")
CWD = "/proj/app"
HOUR = 3600.0


# ---------------------------------------------------------------- data


async def _write_root(target: Path, backend: str, *, crashed_turns: int = 1) -> None:
    """calm: two completed turns; crashed: completed turn(s) then an open one; broken: garbage (JSONL only)."""
    if backend == "sqlite":
        store = open_store(str(target), "sqlite")
    else:
        store = JsonlSessionPersistence(target, compression="zstd" if backend == "jsonl-zstd" else "none")
    try:
        for i, (sid, closed, open_turn) in enumerate((("calm", 2, False), ("crashed", crashed_turns, True))):
            await store.create({"id": sid, "createdAt": 1767600000000 + i, "cwd": CWD})
            seq = 0
            for t in range(1, closed + 2):
                if t > closed and not open_turn:
                    break
                evs = make_turn(seq, t, f"prompt {t} of {sid}", close=t <= closed)
                await store.append(sid, evs)
                seq += len(evs)
    finally:
        await store.close()


def _age(root: Path, seconds: float) -> None:
    stamp = time.time() - seconds
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(dirpath, name), (stamp, stamp))


def make_root(arun: Any, tmp: Path, backend: str = "jsonl-zstd", *, age: float | None = HOUR) -> tuple[Path, Path]:
    """(what the window opens, the directory holding every file)."""
    folder = tmp / "data"
    folder.mkdir(mode=0o700)
    target = folder / "sessions.sqlite" if backend == "sqlite" else folder / "root"
    arun(_write_root(target, backend))
    if backend != "sqlite":
        broken = target / "-broken" / "0190aaaa-0000-7000-8000-000000000000"
        broken.mkdir(parents=True, mode=0o700)
        (broken / ("session.jsonl.zstd" if backend == "jsonl-zstd" else "session.jsonl")).write_bytes(
            b"\x00\x01 this is not a session log \xff" * 8
        )
    if age is not None:
        _age(folder, age)
    return target, folder


def digest(folder: Path) -> dict[str, str]:
    out = {}
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            if name.endswith("-shm"):
                continue  # SQLite's shared-memory index is rewritten by every reader
            p = Path(dirpath) / name
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def backups(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and BACKUP_RE.search(p.name))


def open_on(qtbot: Any, make_window: Any, target: Path, sid: str) -> Any:
    w = make_window(target, session=sid)
    wait_listed(qtbot, w)
    wait_opened(qtbot, w, w.session_model.find_id(sid).key)
    return w


def wait_dialog(qtbot: Any, w: Any, kind: type) -> Any:
    qtbot.waitUntil(lambda: isinstance(w.session_ops.dialog, kind) and w.session_ops.dialog.isVisible(), timeout=WAIT_MS)
    return w.session_ops.dialog


def record_done(w: Any) -> list[tuple[str, str, str]]:
    seen: list[tuple[str, str, str]] = []
    w.session_ops.done.connect(lambda a, o, m: seen.append((a, o, m)))
    return seen


def wait_done(qtbot: Any, seen: list[Any], w: Any) -> tuple[str, str, str]:
    """The next outcome not yet consumed, once the action's job has wound up."""
    qtbot.waitUntil(lambda: bool(seen) and not w.session_ops.busy, timeout=WAIT_MS)
    return seen.pop(0)  # type: ignore[no-any-return]


# ---------------------------------------------------------------- repair


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none", "sqlite"])
def test_repair_previews_backs_up_commits_and_reloads(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, backend: str
) -> None:
    target, folder = make_root(arun, tmp_path, backend)
    w = open_on(qtbot, make_window, target, "crashed")
    row = w.current_row()
    assert row.status == "open-turn" and w.menus.repair.isEnabled()
    artifact = Path(row.path) if backend != "sqlite" else target
    original = artifact.read_bytes()
    seen = record_done(w)

    w.menus.repair.trigger()
    dlg = wait_dialog(qtbot, w, RepairDialog)
    text = dlg.details.toPlainText()
    assert '"type":"turn/end"' in text and '"interrupted"' in text and "synthetic event" in text
    assert dlg.override is None and dlg.repair_button.isEnabled()
    before = digest(folder)
    assert not backups(folder)
    dlg.repair_button.click()

    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("repair", "done"), message
    [bak] = backups(folder)
    assert bak.name.startswith(artifact.name + ".bak-")
    if backend == "sqlite":
        assert bak.stat().st_size > 0
    else:
        assert bak.read_bytes() == original
    assert stat.S_IMODE(bak.stat().st_mode) == 0o600
    assert digest(folder) != before
    qtbot.waitUntil(lambda: w.session_model.find_id("crashed").status == "ok", timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: w.loader.current is not None and w.loader.current.loaded and w.loader.current.diagnosis.status == "ok",
        timeout=WAIT_MS,
    )
    last_turn = w.timeline_model.node(w.timeline_model.index(w.timeline_model.rowCount() - 1, 0))
    assert last_turn.label == "Turn 2" and INTERRUPTED in last_turn.flags
    assert not w.menus.repair.isEnabled()


def test_repair_cancel_writes_nothing(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "crashed")
    before = digest(folder)
    seen = record_done(w)
    w.menus.repair.trigger()
    dlg = wait_dialog(qtbot, w, RepairDialog)
    dlg.reject()
    assert wait_done(qtbot, seen, w)[:2] == ("repair", "cancelled")
    assert digest(folder) == before and not backups(folder)
    assert w.session_model.find_id("crashed").status == "open-turn"


def test_repair_liveness_guard_needs_an_explicit_override(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, folder = make_root(arun, tmp_path, age=None)  # just written: an agent may still be running
    w = open_on(qtbot, make_window, target, "crashed")
    seen = record_done(w)
    w.menus.repair.trigger()
    dlg = wait_dialog(qtbot, w, RepairDialog)
    assert dlg.liveness is not None and "changed" in dlg.liveness
    assert not dlg.repair_button.isEnabled()
    before = digest(folder)
    dlg.override.setChecked(True)
    assert dlg.repair_button.isEnabled()
    dlg.repair_button.click()
    assert wait_done(qtbot, seen, w)[:2] == ("repair", "done")
    assert len(backups(folder)) == 1 and digest(folder) != before


def test_repair_refuses_if_the_log_changed_after_the_preview(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "crashed")
    seen = record_done(w)
    w.menus.repair.trigger()
    dlg = wait_dialog(qtbot, w, RepairDialog)
    path = Path(w.current_row().path)
    with open(path, "ab") as f:  # a writer appended (half a frame) while the dialog was open
        f.write(b"\x28\xb5\x2f\xfd")
    _age(folder, HOUR)  # the guard alone would not object
    dlg.repair_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("repair", "refused") and "changed since" in message
    assert not backups(folder)
    qtbot.waitUntil(lambda: w.session_ops.error_box is not None and w.session_ops.error_box.isVisible(), timeout=WAIT_MS)


def test_corrupt_log_is_never_repaired_but_can_be_copied(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, folder = make_root(arun, tmp_path)
    w = make_window(target)
    wait_listed(qtbot, w)
    broken = next(r for r in w.session_model.rows() if r.status == "corrupt")
    assert w.list_pane.select_key(broken.key)
    qtbot.waitUntil(lambda: w.current_row() is not None and w.current_row().key == broken.key, timeout=WAIT_MS)
    assert w.menus.repair.isEnabled() and w.menus.copy_raw.isEnabled() and not w.menus.resume.isEnabled()
    before = digest(folder)
    seen = record_done(w)
    w.menus.repair.trigger()
    dlg = wait_dialog(qtbot, w, RepairDialog)
    assert dlg.repair_button is None and dlg.copy_button is not None
    dlg.copy_button.click()
    assert wait_done(qtbot, seen, w)[:2] == ("repair", "cancelled")
    qtbot.waitUntil(lambda: w.session_ops.file_dialog is not None and w.session_ops.file_dialog.isVisible(), timeout=WAIT_MS)
    w.session_ops.file_dialog.reject()
    dest = tmp_path / "out" / "evidence.bin"
    dest.parent.mkdir()
    w.session_ops.copy_raw(broken, str(dest))
    assert wait_done(qtbot, seen, w)[:2] == ("copy", "done")
    assert dest.read_bytes() == Path(broken.path).read_bytes()
    assert digest(folder) == before


@pytest.mark.parametrize("scenario", ["interrupted", "torn-tail/cut-multiblock-frame"])
def test_window_repair_of_upstream_fixture_matches_upstream_after(
    qtbot: Any, make_window: Any, tmp_path: Path, scenario: str
) -> None:
    need_upstream()
    base = UPSTREAM / "jsonl-zstd" / scenario
    root = copy_private(base / "before" / "root", tmp_path / "root")
    _age(root, HOUR)
    w = make_window(root)
    wait_listed(qtbot, w)
    row = next(r for r in w.session_model.rows() if r.status in ("open-turn", "torn-tail"))
    w.list_pane.select_key(row.key)
    wait_opened(qtbot, w, row.key)
    seen = record_done(w)
    w.menus.repair.trigger()
    wait_dialog(qtbot, w, RepairDialog).repair_button.click()
    assert wait_done(qtbot, seen, w)[:2] == ("repair", "done")
    rel = Path(row.path).relative_to(root)
    assert Path(row.path).read_bytes() == (base / "after" / "root" / rel).read_bytes()


# ---------------------------------------------------------------- fork


def _select_turn(w: Any, turn: int) -> None:
    tl = w.timeline_model
    while tl.canFetchMore(tl.index(0, 0)):
        tl.fetchMore(tl.index(0, 0))
    for i in range(tl.rowCount()):
        idx = tl.index(i, 0)
        if tl.data(idx) == f"Turn {turn}":
            w.timeline_pane.select_index(tl.index(0, 0, idx))  # a row inside the turn
            return
    raise AssertionError(f"no Turn {turn} row")


def test_fork_here_creates_selects_and_shows_lineage(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, _folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    parent_before = Path(w.current_row().path).read_bytes()
    _select_turn(w, 1)
    assert w.menus.fork_here.isEnabled() and "after turn 1" in w.menus.fork_here.text()
    seen = record_done(w)
    w.menus.fork_here.trigger()
    wait_dialog(qtbot, w, ConfirmDialog).accept_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("fork", "done"), message
    child = w.current_row()
    assert child.session_id != "calm" and child.parent_id == "calm" and child.lineage == "fork"
    assert w.tabs.currentIndex() == 0
    fields = {r.name: r for r in w.header_model.rows()}
    assert fields["parent"].link == w.session_model.find_id("calm").key
    assert Path(w.session_model.find_id("calm").path).read_bytes() == parent_before

    async def load() -> tuple[Any, list[Any], list[Any]]:
        store = open_store(str(target))
        try:
            c = await store.load(child.session_id)
            p = await store.load("calm")
            return c.meta.to_json(), c.events.to_json(), p.events.to_json()
        finally:
            await store.close()

    meta, child_events, parent_events = arun(load())
    turn1_end = next(e["seq"] for e in parent_events if e["type"] == "turn/end" and e["data"]["turn"] == 1)
    assert meta["parentSession"] == "calm" and meta["seedLength"] == turn1_end + 1
    assert [e["type"] for e in child_events[: turn1_end + 1]] == [e["type"] for e in parent_events[: turn1_end + 1]]
    # The seed still ends in the end-seed marker; issue 14 adds the fork's name after it, in the child only.
    assert child_events[turn1_end + 1]["type"] == "session/end-seed"
    assert child_events[-1]["type"] == "session/title"
    assert child_events[-1]["data"]["title"] == "Untitled session (fork after turn 1)"


def test_fork_cancel_and_open_turn_offer_nothing(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "crashed")
    _select_turn(w, 2)
    assert not w.menus.fork_here.isEnabled() and "has not completed" in w.menus.fork_here.text()
    pos = w.timeline_pane.tree.visualRect(w.timeline_pane.tree.currentIndex()).center()
    w.timeline_pane._context_menu(pos)
    [entry] = w.timeline_pane.last_menu.actions()
    assert not entry.isEnabled()
    w.timeline_pane.last_menu.close()
    before = digest(folder)
    seen = record_done(w)
    w.menus.fork_last.trigger()  # from the list: the last completed turn (turn 1)
    dlg = wait_dialog(qtbot, w, ConfirmDialog)
    assert "last completed turn" in dlg.findChildren(type(w.session_label))[0].text()
    dlg.reject()
    assert wait_done(qtbot, seen, w)[:2] == ("fork", "cancelled")
    assert digest(folder) == before and w.session_model.total == 3


def test_fork_from_the_list_menu_on_sqlite(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, _folder = make_root(arun, tmp_path, "sqlite")
    w = open_on(qtbot, make_window, target, "crashed")
    key = w.session_model.find_id("crashed").key
    w._list_menu(key, QPoint(10, 10))
    menu_texts = [a.text() for a in w.list_pane.last_menu.actions()]
    w.list_pane.last_menu.close()
    assert any("last completed turn" in t for t in menu_texts)
    seen = record_done(w)
    w.menus.fork_last.trigger()
    wait_dialog(qtbot, w, ConfirmDialog).accept_button.click()
    assert wait_done(qtbot, seen, w)[:2] == ("fork", "done")
    qtbot.waitUntil(lambda: w.current_row() is not None and w.current_row().parent_id == "crashed", timeout=WAIT_MS)
    assert w.session_model.total == 3


# ---------------------------------------------------------------- resume


@pytest.fixture
def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``dsh`` and an ``x-terminal-emulator`` first on PATH; the terminal records its argv in ``calls``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "calls"
    for name, body in (("dsh", "exit 0"), ("x-terminal-emulator", f'printf "%s\\n" "$@" > "{calls}"')):
        p = bindir / name
        p.write_text(f"#!/bin/sh\n{body}\n")
        p.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    return calls


def test_resume_opens_the_template_command_in_a_terminal(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, fake_tools: Path
) -> None:
    target, folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    before = digest(folder)
    seen = record_done(w)
    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    assert dlg.confirm_repair is None and dlg.terminal_button.isEnabled()
    assert dlg.command_label.text() == "dsh --profile tui --resume calm"
    dlg.template.setText("dsh --resume {id} --in {cwd} --root {root}")
    assert dlg.command_label.text() == f"dsh --resume calm --in {CWD} --root {target}"
    dlg.terminal_button.click()
    assert wait_done(qtbot, seen, w)[:2] == ("resume", "done")
    qtbot.waitUntil(fake_tools.exists, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: fake_tools.read_text().strip() != "", timeout=WAIT_MS)
    assert fake_tools.read_text().splitlines() == ["-e", f"dsh --resume calm --in {CWD} --root {target}"]
    assert w.settings.resume_template() == "dsh --resume {id} --in {cwd} --root {root}"
    assert digest(folder) == before  # a balanced session is resumed without any write


def test_resume_of_a_crashed_session_repairs_only_after_confirmation(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, fake_tools: Path
) -> None:
    target, folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "crashed")
    seen = record_done(w)
    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    assert dlg.confirm_repair is not None
    assert not dlg.terminal_button.isEnabled() and not dlg.copy_button.isEnabled()
    dlg.confirm_repair.setChecked(True)
    assert dlg.copy_button.isEnabled()
    dlg.copy_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("resume", "done"), message
    assert QGuiApplication.clipboard().text() == "dsh --profile tui --resume crashed"
    assert len(backups(folder)) == 1
    qtbot.waitUntil(lambda: w.session_model.find_id("crashed").status == "ok", timeout=WAIT_MS)


def test_resume_cancel_and_missing_harness_write_nothing(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, fake_tools: Path
) -> None:
    target, folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "crashed")
    before = digest(folder)
    seen = record_done(w)
    w.menus.resume.trigger()
    wait_dialog(qtbot, w, ResumeDialog).reject()
    assert wait_done(qtbot, seen, w)[:2] == ("resume", "cancelled")

    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    dlg.template.setText("no-such-harness-for-sessionscope --resume {id}")
    dlg.confirm_repair.setChecked(True)
    dlg.terminal_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("resume", "failed") and "not found on PATH" in message
    qtbot.waitUntil(lambda: w.session_ops.error_box is not None and w.session_ops.error_box.isVisible(), timeout=WAIT_MS)
    assert digest(folder) == before and not backups(folder) and not fake_tools.exists()

    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    dlg.template.setText("dsh --resume {id")
    assert not dlg.terminal_button.isEnabled() and "malformed" in dlg.command_label.text()
    dlg.done(QDialog.DialogCode.Rejected)
    assert wait_done(qtbot, seen, w)[:2] == ("resume", "cancelled")


def test_actions_follow_the_selected_status(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, _folder = make_root(arun, tmp_path)
    w = open_on(qtbot, make_window, target, "calm")
    assert not w.menus.repair.isEnabled() and w.menus.fork_last.isEnabled() and w.menus.resume.isEnabled()
    w.select_session("crashed")
    qtbot.waitUntil(lambda: w.current_row().session_id == "crashed", timeout=WAIT_MS)
    assert w.menus.repair.isEnabled()


def test_resume_with_the_guard_overridden_repairs_then_launches(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, fake_tools: Path
) -> None:
    """Every choice is read before the dialog goes away (it is deleted while the launch is checked)."""
    target, folder = make_root(arun, tmp_path, age=None)  # just written: the guard objects
    w = open_on(qtbot, make_window, target, "crashed")
    seen = record_done(w)
    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    assert dlg.liveness is not None and not dlg.terminal_button.isEnabled()
    dlg.confirm_repair.setChecked(True)
    assert not dlg.terminal_button.isEnabled()
    dlg.override.setChecked(True)
    dlg.terminal_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("resume", "done"), message
    assert len(backups(folder)) == 1 and "backup at" in message
    qtbot.waitUntil(lambda: fake_tools.exists() and fake_tools.read_text().strip() != "", timeout=WAIT_MS)
    assert fake_tools.read_text().splitlines() == ["-e", "dsh --profile tui --resume crashed"]


def test_resuming_a_session_that_is_being_written_needs_the_override(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    target, _folder = make_root(arun, tmp_path, age=None)
    w = open_on(qtbot, make_window, target, "calm")  # balanced, but written a moment ago
    seen = record_done(w)
    w.menus.resume.trigger()
    dlg = wait_dialog(qtbot, w, ResumeDialog)
    assert dlg.confirm_repair is None and dlg.liveness is not None
    # Issue 16 bug 5: the guard holds back what would run the agent, never "Copy command" (it writes nothing).
    assert dlg.copy_button.isEnabled() and not dlg.terminal_button.isEnabled()
    dlg.override.setChecked(True)
    assert dlg.copy_button.isEnabled()
    dlg.reject()
    assert wait_done(qtbot, seen, w)[:2] == ("resume", "cancelled")
