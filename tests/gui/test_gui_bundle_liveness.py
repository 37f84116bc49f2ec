"""A received support bundle is never "live" (integration bug, issue 24): its extraction is ours alone, so
nothing can be writing into it.  Before, the extraction gave every file a fresh mtime and the window's
liveness rule (a recent write) called a crashed turn "● live — a writer is active".  Both ends are fixed:
the extracted files carry their zip entry's date, and a read-only received source is never judged live.
"""

from __future__ import annotations

import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from guikit import WAIT_MS, wait_listed, wait_opened

from app.export.exporter import export_session
from app.sources.bundle import close_bundle, open_bundle
from persistence import JsonlSessionPersistence, open_store

pytestmark = pytest.mark.timeout(120)

SID = "crashed-turn"


async def _export(root: Path, target: Path) -> None:
    store = JsonlSessionPersistence(root, compression="zstd")
    try:
        await store.create(sk.meta(SID, "/w/proj"))
        await store.append(SID, sk.one_turn_log() + sk.open_turn2())  # the harness died mid-turn
    finally:
        await store.close()
    reader = open_store(str(root), read_only=True, create=False)
    try:
        await export_session(reader, SID, "bundle", str(target))
    finally:
        await reader.close()


def test_extracted_files_carry_their_zip_entry_dates(arun: Any, tmp_path: Path) -> None:
    bundle = tmp_path / "case.zip"
    arun(_export(tmp_path / "root", bundle))
    # Dates a day back in the zip (as a bundle received tomorrow has them).
    old = time.localtime(time.time() - 86_400)
    aged = tmp_path / "aged.zip"
    with zipfile.ZipFile(bundle) as src, zipfile.ZipFile(aged, "w") as dst:
        for info in src.infolist():
            info.date_time = old[:6]
            dst.writestr(info, src.read(info.filename))
    opened = open_bundle(aged, cache_root=tmp_path / "cache")
    try:
        with zipfile.ZipFile(aged) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                want = time.mktime((*info.date_time, 0, 0, -1))
                got = (opened.folder / info.filename).stat().st_mtime
                assert abs(got - want) <= 2, info.filename  # zip dates have a 2-second resolution
    finally:
        close_bundle(opened)


def test_a_bundle_just_exported_opens_with_its_crashed_turn_not_live(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    bundle = tmp_path / "inbox" / "case.zip"
    bundle.parent.mkdir()
    arun(_export(tmp_path / "root", bundle))  # written seconds ago: every date in it is recent
    w = make_window()
    w.sources.open(str(bundle))
    qtbot.waitUntil(lambda: w.sources.current is not None, timeout=WAIT_MS)
    wait_listed(qtbot, w)
    row = w.session_model.find_id(SID)
    assert row is not None and row.status == "open-turn"
    wait_opened(qtbot, w, row.key)
    qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.snapshot is not None, timeout=WAIT_MS)
    snap = w.loader.current.snapshot
    assert not snap.live
    assert "live" not in w.banner.label.text() and "writer is active" not in w.timeline_pane.banner.text()
