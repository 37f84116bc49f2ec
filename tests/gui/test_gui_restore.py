"""Backups that hold records the log lacks are offered for restore; Restore and the accept-loss box in the window."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from guikit import WAIT_MS
from test_gui_actions import HOUR, _age, backups, make_root, open_on, record_done, wait_dialog, wait_done

from app.actions.artifacts import ArtifactRef
from app.actions.repair import backup_artifact
from app.gui.dialogs import RepairDialog, RestoreDialog
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none"])
def test_lost_records_in_a_backup_are_offered_and_restored(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, backend: str
) -> None:
    target, folder = make_root(arun, tmp_path, backend)
    w0 = open_on(qtbot, make_window, target, "calm")
    artifact = Path(w0.current_row().path)
    original = artifact.read_bytes()
    bak = backup_artifact(ArtifactRef("jsonl", str(artifact)))
    # What an interrupted two-step repair left behind: the log cut short, every record only in the backup.
    if backend == "jsonl-zstd":
        from persistence.jsonl.frames import scan_frames

        ranges, _torn = scan_frames(original)
        artifact.write_bytes(original[: ranges[1][1]])  # header and the first batch only
    else:
        cut = original.index(b"\n", len(original) // 3) + 1
        artifact.write_bytes(original[:cut])
    _age(folder, HOUR)

    w = make_window(target)
    qtbot.waitUntil(lambda: getattr(w, "restore_offer", None) is not None and w.restore_offer.isVisible(), timeout=WAIT_MS)
    assert "calm" in w.restore_offer.text() and "record(s)" in w.restore_offer.text()
    seen = record_done(w)
    restore = next(b for b in w.restore_offer.buttons() if b.text().startswith("Restore"))
    restore.click()
    dlg = wait_dialog(qtbot, w, RestoreDialog)
    assert dlg.chosen is not None and dlg.chosen.path == bak and dlg.chosen.lacking > 0
    assert dlg.restore_button.isEnabled()
    dlg.restore_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("restore", "done"), message
    assert artifact.read_bytes() == original
    assert len(backups(folder)) == 2  # the restored one and the state it replaced


def test_repair_dialog_requires_consent_to_cut_intact_records(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    target, folder = make_root(arun, tmp_path, "jsonl-none")
    w0 = open_on(qtbot, make_window, target, "crashed")
    artifact = Path(w0.current_row().path)
    data = artifact.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[1]
    rec = orjson.loads(last)
    nxt = dict(rec, seq=rec["seq"] + 1) if "seq" in rec else dict(rec, seq0=rec["seq0"] + 1)
    artifact.write_bytes(data + b"{damaged\n" + js_dumps(nxt) + b"\n")
    _age(folder, HOUR)
    w = open_on(qtbot, make_window, target, "crashed")
    seen = record_done(w)
    w.menus.repair.trigger()
    dlg = wait_dialog(qtbot, w, RepairDialog)
    assert dlg.accept_loss is not None and not dlg.repair_button.isEnabled()
    dlg.accept_loss.setChecked(True)
    assert dlg.repair_button.isEnabled()
    dlg.reject()
    assert wait_done(qtbot, seen, w)[:2] == ("repair", "cancelled")
    assert os.path.getsize(artifact) == len(data) + len(b"{damaged\n") + len(js_dumps(nxt)) + 1


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none", "sqlite"])
def test_banner_repair_then_restore_backup_undoes_it(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, backend: str
) -> None:
    """The banner of a crashed session offers "Repair …"; after the repair, "Restore backup …" puts the
    original back (the guard does not take the window's own repair for an agent), backing up the repaired state."""
    target, folder = make_root(arun, tmp_path, backend)
    w = open_on(qtbot, make_window, target, "crashed")
    artifact = target if backend == "sqlite" else Path(w.current_row().path)
    original = artifact.read_bytes()
    events_before = w.current_row().event_count
    qtbot.waitUntil(lambda: w.banner.repair_button.isVisible(), timeout=WAIT_MS)
    assert not w.banner.restore_button.isVisible()
    seen = record_done(w)
    w.banner.repair_button.click()
    dlg = wait_dialog(qtbot, w, RepairDialog)
    dlg.repair_button.click()
    assert wait_done(qtbot, seen, w)[:2] == ("repair", "done")
    qtbot.waitUntil(lambda: w.current_row().status == "ok" and w.banner.restore_button.isVisible(), timeout=WAIT_MS)
    assert not w.banner.repair_button.isVisible()
    [repair_backup] = backups(folder)

    w.banner.restore_button.click()
    dlg = wait_dialog(qtbot, w, RestoreDialog)
    assert dlg.liveness is None, dlg.liveness  # the repair a moment ago was the window's own write
    assert dlg.chosen is not None and dlg.chosen.path == str(repair_backup)
    dlg.restore_button.click()
    action, outcome, message = wait_done(qtbot, seen, w)
    assert (action, outcome) == ("restore", "done"), message
    assert len(backups(folder)) == 2  # the repair's backup and the repaired state the restore replaced
    if backend != "sqlite":
        assert artifact.read_bytes() == original
    qtbot.waitUntil(
        lambda: w.current_row().status == "open-turn" and w.current_row().event_count == events_before, timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: w.banner.repair_button.isVisible(), timeout=WAIT_MS)
