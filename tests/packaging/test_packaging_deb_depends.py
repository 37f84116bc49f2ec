"""The .deb's Depends (packaging/deb_depends.py) covers what Qt's platform plugins link.

Issue 15: the first launch on a real X display failed on libxcb-icccm4 and libxcb-keysyms1, which no
list named.  Every system library the installed Qt's xcb and Wayland plugins link directly must map to
a Debian package, whether or not this machine has it installed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import deb_depends
import PySide6
import pytest

QT = Path(PySide6.__file__).parent / "Qt"
LIBC_FAMILY = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2"}


@pytest.mark.skipif(shutil.which("objdump") is None or not (QT / "plugins").is_dir(), reason="needs objdump and a Linux PySide6")
def test_every_system_library_the_platform_plugins_link_has_a_package() -> None:
    plugins = [QT / "plugins" / "platforms" / name for name in ("libqxcb.so", "libqwayland.so")]
    libraries = [QT / "lib" / name for name in ("libQt6XcbQpa.so.6", "libQt6Gui.so.6", "libQt6WaylandClient.so.6")]
    linked: set[str] = set()
    for path in [*plugins, *libraries]:
        if path.exists():
            linked.update(deb_depends.needed(path))
    assert "libxcb-icccm.so.4" in linked and "libxcb-keysyms.so.1" in linked
    system = {name for name in linked if not name.startswith(("libQt6", "libicu")) and name not in LIBC_FAMILY}
    unmapped = system - deb_depends.SONAME_PACKAGES.keys()
    assert not unmapped, f"add to deb_depends.SONAME_PACKAGES: {sorted(unmapped)}"
    assert deb_depends.SONAME_PACKAGES["libxcb-icccm.so.4"] == "libxcb-icccm4"
    assert deb_depends.SONAME_PACKAGES["libxcb-keysyms.so.1"] == "libxcb-keysyms1"


@pytest.mark.skipif(shutil.which("objdump") is None or not (QT / "lib").is_dir(), reason="needs objdump and a Linux PySide6")
def test_the_symbol_version_floors_are_read_from_the_binaries() -> None:
    # The PySide6 wheels are manylinux_2_34 builds: Qt needs at least glibc 2.17 and some GLIBCXX_3.4.x.
    core = [QT / "lib" / "libQt6Core.so.6"]
    glibc = deb_depends.symbol_floor(core, "GLIBC")
    assert (2, 17) <= glibc < (3,)
    glibcxx = deb_depends.symbol_floor(core, "GLIBCXX")
    assert glibcxx[:2] == (3, 4) and glibcxx[2] in deb_depends.GLIBCXX_GCC
