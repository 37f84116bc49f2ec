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


@pytest.mark.parametrize("subject", ["about", "crash"])
def test_cli_screenshot_of_a_dialog(demo_root: str, tmp_path: Path, subject: str) -> None:
    """``--screenshot-of about|crash``: Help > About, or the crash dialog of a deliberate error raised in a
    Qt slot (the real launch path's reporter catches it, logs it and shows it; the window keeps running)."""
    out = tmp_path / f"{subject}.png"
    logs = tmp_path / "log"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO), SESSIONSCOPE_LOG_DIR=str(logs))
    env["SESSIONSCOPE_DATA_DIR"] = str(Path(demo_root).parent)
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--demo", "--screenshot", str(out), "--screenshot-of", subject],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=80,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    img = QImage(str(out))
    assert not img.isNull() and img.width() >= 300 and img.height() >= 150
    assert img.width() < 1200  # the dialog, not the window
    logged = "".join(p.read_text(encoding="utf-8") for p in logs.glob("sessionscope.log*"))
    assert ("ScreenshotCrash: a deliberate error" in logged) == (subject == "crash")
