"""``--tab``, ``--theme`` and ``--size`` with ``--screenshot`` (issue 24 item 11): the saved PNG is of that tab, in
that theme, at that size."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QImage

from app.gui.window.screenshot import capture

pytestmark = pytest.mark.timeout(120)
REPO = Path(__file__).resolve().parents[2]


def _mean_lightness(img: QImage) -> float:
    step = 16
    values = [img.pixelColor(x, y).lightness() for x in range(0, img.width(), step) for y in range(0, img.height(), step)]
    return sum(values) / len(values)


@pytest.mark.parametrize(("theme", "size"), [("dark", (1024, 700)), ("light", (1400, 900))])
def test_the_screenshot_is_of_the_tab_in_the_theme_at_the_size(
    demo_root: str, tmp_path: Path, theme: str, size: tuple[int, int]
) -> None:
    out = tmp_path / f"raw-{theme}.png"
    logs = tmp_path / "log"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO), SESSIONSCOPE_LOG_DIR=str(logs))
    env["SESSIONSCOPE_DATA_DIR"] = str(Path(demo_root).parent)  # the demo built for this test session
    argv = ["--demo", "--tab", "raw", "--theme", theme, "--size", f"{size[0]}x{size[1]}", "--screenshot", str(out)]
    proc = subprocess.run([sys.executable, "-m", "app", *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr[-2000:]
    img = QImage(str(out))
    assert (img.width(), img.height()) == size
    lightness = _mean_lightness(img)
    assert lightness < 90 if theme == "dark" else lightness > 170, lightness
    logged = "".join(p.read_text(encoding="utf-8") for p in logs.glob("sessionscope.log*"))
    assert f"screenshot: tab raw, {size[0]}x{size[1]}" in logged


def test_a_tab_that_is_not_there_fails_the_screenshot(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    w = make_window(tmp_path)
    assert arun(capture(w, str(tmp_path / "x.png"), tab="nonesuch", timeout=20), timeout_ms=30_000) == 1
    assert arun(capture(w, str(tmp_path / "y.png"), tab="raw", timeout=20), timeout_ms=30_000) == 0
    assert w.content_tabs.current() == "raw"
