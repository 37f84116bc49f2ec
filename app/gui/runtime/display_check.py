"""Can Qt open a window here?  Asked before ``QApplication`` exists (issue 21 item 11).

Why: without a display (no ``DISPLAY``/``WAYLAND_DISPLAY`` and no platform that needs none in
``QT_QPA_PLATFORM``), or with a library the xcb platform plugin links missing, Qt aborts the process
(exit 134) and suggests reinstalling the application, which helps nobody.  This check names what is
missing, gives the exact ``apt install`` line for the missing libraries and the offscreen way for a
screenshot; the launcher prints it and exits 2.

Linux only (Windows and macOS always have their one platform).  The libraries are the direct links
(``DT_NEEDED``) of PySide6 6.x's ``libQt6Gui``, ``libqxcb``/``libQt6XcbQpa`` and ``libqwayland``,
with the Debian packages of packaging/deb_depends.py and the README's Install section.  A library
counts as present when the dynamic loader can load it by soname (``ctypes.CDLL``), which is exactly
what Qt will ask the loader for; ``find_library`` would run ``ldconfig`` per name and miss
``LD_LIBRARY_PATH``.  The finder is a parameter, so the tests inject one.

Qt-free (it runs before Qt is imported).  May import the standard library only.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# Qt's own libraries (QtGui, QtCore): needed by every platform, offscreen included.
COMMON_NEEDS: dict[str, str] = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
}
# The xcb platform plugin (libqxcb.so and libQt6XcbQpa.so.6).
XCB_NEEDS: dict[str, str] = {
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
}
# The Wayland platform plugin (libqwayland.so and libQt6WaylandClient.so.6).
WAYLAND_NEEDS: dict[str, str] = {
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
}
OFFSCREEN_HINT = "QT_QPA_PLATFORM=offscreen sessionscope --demo --screenshot window.png"


def library_loadable(soname: str) -> bool:
    """Whether the dynamic loader finds ``soname`` (a frozen app's own folder counts too)."""
    bundled = getattr(sys, "_MEIPASS", None)
    if bundled and os.path.exists(os.path.join(bundled, soname)):
        return True
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class DisplayProblem:
    """Why no window can open: the reasons, and the missing libraries with their packages."""

    reasons: tuple[str, ...]
    missing: tuple[str, ...]  # sonames, sorted
    packages: tuple[str, ...]  # Debian packages, in the order of ``missing``, without repeats

    def message(self) -> str:
        lines = ["sessionscope: cannot open the window:"]
        lines += [f"  - {reason}" for reason in self.reasons]
        if self.packages:
            lines.append("Install the missing libraries (Debian, Ubuntu):")
            lines.append(f"  sudo apt install {' '.join(self.packages)}")
        lines.append("Without a display, a screenshot still works offscreen:")
        lines.append(f"  {OFFSCREEN_HINT}")
        lines.append("The command line needs no display: sessionscope --help")
        return "\n".join(lines) + "\n"


def _missing(needs: Mapping[str, str], has_library: Callable[[str], bool]) -> list[str]:
    return [soname for soname in needs if not has_library(soname)]


def display_problem(
    env: Mapping[str, str],
    has_library: Callable[[str], bool] = library_loadable,
    *,
    platform: str = sys.platform,
) -> DisplayProblem | None:
    """None when Qt can open a window (or this is not Linux); else what stands in the way."""
    if not platform.startswith("linux"):
        return None
    common = _missing(COMMON_NEEDS, has_library)
    missing = list(common)
    reasons: list[str] = []
    if common:
        reasons.append("Qt's libraries need system libraries this system lacks: " + ", ".join(sorted(common)))
    # QT_QPA_PLATFORM may list several ("wayland;xcb"), each with options after a colon; unset, Qt
    # tries Wayland in a Wayland session and X11 otherwise: any one that works will do.
    requested = [p.split(":", 1)[0].strip().lower() for p in env.get("QT_QPA_PLATFORM", "").split(";") if p.strip()]
    if not requested and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        reasons.append("no display: neither DISPLAY nor WAYLAND_DISPLAY is set (and QT_QPA_PLATFORM names no other platform)")
    usable = False
    for name in requested or ["wayland", "xcb"]:
        if name == "xcb":
            display, needs, what = env.get("DISPLAY"), XCB_NEEDS, "no X11 display: DISPLAY is not set"
        elif name.startswith("wayland"):
            display, needs, what = env.get("WAYLAND_DISPLAY"), WAYLAND_NEEDS, "no Wayland display: WAYLAND_DISPLAY is not set"
        else:
            usable = True  # offscreen, minimal, vnc, eglfs, ...: Qt needs no display server for these
            continue
        if not display and requested:
            reasons.append(what)
        # X11's libraries are checked even without a display (the apt line is the next thing a user needs);
        # Wayland's only in a Wayland session (an X11 desktop runs Qt without them).
        libs = _missing(needs, has_library) if display or name == "xcb" else []
        if libs:
            reasons.append(f"Qt's {name} platform plugin needs libraries this system lacks: " + ", ".join(sorted(libs)))
            missing += libs
        usable = usable or (bool(display) and not libs)
    if usable and not common:
        return None
    sonames = tuple(sorted(set(missing)))
    table = {**COMMON_NEEDS, **XCB_NEEDS, **WAYLAND_NEEDS}
    packages = tuple(dict.fromkeys(table[s] for s in sonames))
    return DisplayProblem(tuple(dict.fromkeys(reasons)), sonames, packages)


__all__ = ["COMMON_NEEDS", "WAYLAND_NEEDS", "XCB_NEEDS", "DisplayProblem", "display_problem", "library_loadable"]
