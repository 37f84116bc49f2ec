"""Without a usable display the window is not attempted: what is missing, the apt line, exit 2 (issue 21 item 11).

Before: Qt's xcb plugin aborted the process (exit 134) with a hint about reinstalling the application.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from app.gui.runtime.display_check import COMMON_NEEDS, WAYLAND_NEEDS, XCB_NEEDS, display_problem

REPO = Path(__file__).resolve().parents[2]


def finder(missing: Iterable[str] = ()) -> object:
    """A library finder that has every soname except ``missing``, and records what it was asked."""
    gone = set(missing)
    asked: list[str] = []

    def has(soname: str) -> bool:
        asked.append(soname)
        return soname not in gone

    has.asked = asked  # type: ignore[attr-defined]
    return has


def test_no_display_variable_is_a_problem_that_names_both_and_the_offscreen_way() -> None:
    problem = display_problem({}, finder(), platform="linux")
    assert problem is not None
    text = problem.message()
    assert "DISPLAY" in text and "WAYLAND_DISPLAY" in text
    assert "QT_QPA_PLATFORM=offscreen" in text and "--screenshot" in text
    assert "apt install" not in text  # nothing is missing but the display itself


def test_missing_xcb_libraries_give_the_exact_apt_line() -> None:
    missing = ["libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxkbcommon-x11.so.0"]
    problem = display_problem({"DISPLAY": ":0"}, finder(missing), platform="linux")
    assert problem is not None
    assert problem.missing == tuple(sorted(missing))
    assert "sudo apt install libxcb-cursor0 libxcb-icccm4 libxkbcommon-x11-0\n" in problem.message()
    for soname in missing:
        assert soname in problem.message()


def test_every_soname_checked_maps_to_a_package() -> None:
    for table in (COMMON_NEEDS, XCB_NEEDS, WAYLAND_NEEDS):
        assert table and all(soname.startswith("lib") and ".so." in soname and package for soname, package in table.items())


def test_a_display_with_its_libraries_is_fine_and_xcb_libraries_are_asked() -> None:
    has = finder()
    assert display_problem({"DISPLAY": ":0"}, has, platform="linux") is None
    assert set(XCB_NEEDS) <= set(has.asked)  # type: ignore[attr-defined]


def test_wayland_needs_its_own_libraries() -> None:
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}, finder(), platform="linux") is None
    problem = display_problem({"WAYLAND_DISPLAY": "wayland-0"}, finder(["libwayland-client.so.0"]), platform="linux")
    assert problem is not None and "sudo apt install libwayland-client0" in problem.message()
    # Either platform will do: a working X display beside a broken Wayland one is fine.
    env = {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}
    assert display_problem(env, finder(["libwayland-client.so.0"]), platform="linux") is None


@pytest.mark.parametrize("platform_name", ["offscreen", "minimal", "vnc", "offscreen;xcb"])
def test_a_platform_that_needs_no_display_is_fine(platform_name: str) -> None:
    assert display_problem({"QT_QPA_PLATFORM": platform_name}, finder(list(XCB_NEEDS)), platform="linux") is None


def test_an_explicit_xcb_platform_without_display_is_a_problem() -> None:
    problem = display_problem({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "w"}, finder(), platform="linux")
    assert problem is not None and "DISPLAY" in problem.message()


def test_qt_s_own_libraries_missing_is_a_problem_even_offscreen() -> None:
    problem = display_problem({"QT_QPA_PLATFORM": "offscreen"}, finder(["libEGL.so.1"]), platform="linux")
    assert problem is not None and "sudo apt install libegl1\n" in problem.message()


def test_other_systems_are_not_checked() -> None:
    assert display_problem({}, finder(), platform="win32") is None
    assert display_problem({}, finder(), platform="darwin") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is for Linux desktops")
def test_the_app_without_a_display_exits_2_with_the_message(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}}
    env.update(PYTHONPATH=str(REPO), SESSIONSCOPE_LOG_DIR=str(tmp_path / "log"), SESSIONSCOPE_INPROCESS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--root", str(tmp_path)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "cannot open the window" in proc.stderr
    assert "DISPLAY" in proc.stderr and "QT_QPA_PLATFORM=offscreen" in proc.stderr
    assert "Traceback" not in proc.stderr
