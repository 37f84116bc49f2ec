"""The window's process-wide knobs: applied once by the launcher, and one owner of the collector."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import pytest
from guikit import UPSTREAM, copy_private, need_upstream

from app.gui.runtime.collector import COLLECTOR
from app.gui.runtime.responsiveness import GUI_SWITCH_INTERVAL_S, apply_responsiveness_knobs
from persistence import open_store

pytestmark = pytest.mark.timeout(60)


def test_knobs_are_applied_once_and_the_window_sets_none(make_window: Any) -> None:
    first = apply_responsiveness_knobs()
    assert apply_responsiveness_knobs() is first
    assert first.switch_interval_s == pytest.approx(GUI_SWITCH_INTERVAL_S) and GUI_SWITCH_INTERVAL_S == 0.0002
    saved = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        make_window()
        assert sys.getswitchinterval() == 0.005  # MainWindow.__init__ leaves the interpreter alone
    finally:
        sys.setswitchinterval(saved)


def test_the_engines_pause_nests_inside_the_windows(arun: Any, tmp_path: Path) -> None:
    """Inside the window's pause an engine read never turns the collector back on."""
    need_upstream()
    root = copy_private(UPSTREAM / "jsonl-zstd" / "balanced" / "root", tmp_path / "r")
    sid = "a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    store = open_store(str(root), read_only=True, create=False)
    gc.enable()
    try:
        with COLLECTOR.paused():
            with COLLECTOR.paused():  # nested pauses keep one count
                assert COLLECTOR.depth == 2
            events = arun(store.inspect(sid)).events
            assert len(events) > 0
            assert not gc.isenabled()  # an engine read never turns the window's pause off
        assert COLLECTOR.depth == 0 and gc.isenabled()  # the last pause ended: resumed
        assert gc.get_freeze_count() > 0  # and what the read built was frozen
    finally:
        arun(store.close())
        gc.unfreeze()
        gc.enable()
