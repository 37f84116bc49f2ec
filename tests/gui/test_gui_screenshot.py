"""``--screenshot``: the window is saved once its list and selected session are loaded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QImage

from app.gui.window.screenshot import capture

pytestmark = pytest.mark.timeout(90)
REPO = Path(__file__).resolve().parents[2]


def _check_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    img = QImage(str(path))
    assert not img.isNull() and img.width() >= 800 and img.height() >= 500


def test_capture_in_process(qtbot: Any, make_window: Any, arun: Any, demo_root: str, tmp_path: Path) -> None:
    crashed = next(p.name for p in Path(demo_root).glob("*/crashed-*"))
    w = make_window(demo_root, session=crashed)
    out = tmp_path / "window.png"
    assert arun(capture(w, str(out), tab="timeline", timeout=30), timeout_ms=40_000) == 0
    _check_png(out)
    assert w.loader.current is not None and w.loader.current.row.session_id == crashed


def test_cli_screenshot_smoke(demo_root: str, tmp_path: Path) -> None:
    out = tmp_path / "cli.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    env["SESSIONSCOPE_DATA_DIR"] = str(Path(demo_root).parent)  # reuse the demo built for this test session
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--demo", "--screenshot", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=80,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    _check_png(out)
