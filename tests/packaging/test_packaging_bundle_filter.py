"""The frozen build's trimming rules (packaging/bundle_filter.py), checked without running PyInstaller.

Issue 15: the one-folder build weighed 221 MB because Qml, Quick, Pdf and VirtualKeyboard came in
through plugins despite the excludes, and zstandard shipped both backends.
"""

from __future__ import annotations

import re
from pathlib import Path

import bundle_filter
import pytest
from bundle_filter import EXCLUDED_MODULES, QT_MODULES, SYSTEM_LIBRARIES, keep_entry, prune_unreachable

REPO = Path(__file__).resolve().parents[2]


def app_qt_modules() -> set[str]:
    """The PySide6 modules app/ and persistence/ import (QtCore -> "Core")."""
    found: set[str] = set()
    for path in [*REPO.joinpath("app").rglob("*.py"), *REPO.joinpath("persistence").rglob("*.py")]:
        for match in re.finditer(r"^\s*(?:from|import)\s+PySide6\.Qt(\w+)", path.read_text(encoding="utf-8"), re.M):
            found.add(match.group(1))
    return found


def test_the_bundle_keeps_every_qt_module_the_app_imports_and_excludes_none_of_them() -> None:
    imported = app_qt_modules()
    assert {"Core", "Gui", "Widgets"} <= imported
    assert imported <= QT_MODULES, f"add to bundle_filter.QT_MODULES: {sorted(imported - QT_MODULES)}"
    excluded = {name.removeprefix("PySide6.Qt") for name in EXCLUDED_MODULES if name.startswith("PySide6.Qt")}
    assert not imported & excluded
    for name in imported:
        assert keep_entry(f"PySide6/Qt{name}.abi3.so")
        assert keep_entry(f"PySide6/Qt/lib/libQt6{name}.so.6")


@pytest.mark.parametrize(
    "dest",
    [
        "PySide6/Qt/lib/libQt6Qml.so.6",
        "PySide6/Qt/lib/libQt6Quick.so.6",
        "PySide6/Qt/lib/libQt6Pdf.so.6",
        "PySide6/Qt/lib/libQt6VirtualKeyboard.so.6",
        "PySide6/Qt/lib/libQt6WebEngineCore.so.6",
        "PySide6/QtQml.abi3.so",
        "PySide6/libpyside6qml.abi3.so.6.12",
        "PySide6/Qt/plugins/platforminputcontexts/libqtvirtualkeyboardplugin.so",
        "PySide6/Qt/plugins/imageformats/libqpdf.so",
        "PySide6/Qt/plugins/platforms/libqeglfs.so",
        "PySide6/Qt/plugins/platformthemes/libqgtk3.so",
        "PySide6/Qt/plugins/egldeviceintegrations/libqeglfs-kms-integration.so",
        "PySide6/Qt/plugins/tls/libqopensslbackend.so",
        "PySide6/Qt/translations/qtdeclarative_de.qm",
        "PySide6/Qt/qml/QtQuick/Controls/libqtquickcontrols2plugin.so",
        "zstandard/_cffi.cpython-311-x86_64-linux-gnu.so",
        "PySide6\\plugins\\platforms\\qdirect2d.dll",  # Windows paths, backslashes
        "PySide6\\Qt6Qml.dll",
        "PySide6/Qt/lib/QtQuick.framework/Versions/A/QtQuick",  # macOS
    ],
)
def test_unneeded_qt_parts_and_the_second_zstandard_backend_are_dropped(dest: str) -> None:
    assert not keep_entry(dest)


@pytest.mark.parametrize(
    "dest",
    [
        "PySide6/Qt/plugins/platforms/libqxcb.so",
        "PySide6/Qt/plugins/platforms/libqwayland.so",
        "PySide6/Qt/plugins/platforms/libqoffscreen.so",
        "PySide6/Qt/plugins/xcbglintegrations/libqxcb-glx-integration.so",
        "PySide6/Qt/plugins/wayland-shell-integration/libxdg-shell.so",
        "PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so",
        "PySide6/Qt/plugins/iconengines/libqsvgicon.so",
        "PySide6/Qt/plugins/imageformats/libqsvg.so",
        "PySide6/Qt/translations/qtbase_de.qm",
        "PySide6/Qt/lib/libicudata.so.73",
        "zstandard/backend_c.cpython-311-x86_64-linux-gnu.so",
        "PySide6\\plugins\\platforms\\qwindows.dll",
        "PySide6\\Qt6Widgets.dll",
        "PySide6/Qt/plugins/platforms/libqcocoa.dylib",
        "PySide6/Qt/lib/QtWidgets.framework/Versions/A/QtWidgets",
        "libpython3.11.so.1.0",
    ],
)
def test_what_a_desktop_session_needs_is_kept(dest: str) -> None:
    assert keep_entry(dest)


def test_the_system_desktop_stack_is_left_to_the_system_and_the_rest_is_not() -> None:
    for name in (
        "libX11.so.6",
        "libxcb-icccm.so.4",
        "libxkbcommon-x11.so.0",
        "libGL.so.1",
        "libEGL.so.1",
        "libglib-2.0.so.0",
        "libfontconfig.so.1",
        "libdbus-1.so.3",
        "libstdc++.so.6",
        "libz.so.1",
    ):
        assert SYSTEM_LIBRARIES.match(name), name
    for name in (
        "libpython3.11.so.1.0",
        "libQt6Core.so.6",
        "libicuuc.so.73",
        "libssl.so.3",
        "libsqlite3.so.0",
        "libzstd.so.1",
        "libffi.so.8",
    ):
        assert not SYSTEM_LIBRARIES.match(name), name


def test_prune_keeps_only_what_kept_binaries_link() -> None:
    # The gtk3 theme plugin was dropped by keep_entry; GTK, which only it linked, must go too, while the
    # libraries Qt itself links stay, and a symlink stays exactly when its target does.
    binaries = [
        ("PySide6/Qt/plugins/platforms/libqxcb.so", "/src/libqxcb.so", "BINARY"),
        ("PySide6/QtCore.abi3.so", "/src/QtCore.abi3.so", "EXTENSION"),
        ("PySide6/Qt/lib/libQt6Core.so.6", "/src/libQt6Core.so.6", "BINARY"),
        ("PySide6/Qt/lib/libQt6XcbQpa.so.6", "/src/libQt6XcbQpa.so.6", "BINARY"),
        ("PySide6/Qt/lib/libicuuc.so.73", "/src/libicuuc.so.73", "BINARY"),
        ("libgtk-3.so.0", "/usr/lib/libgtk-3.so.0", "BINARY"),
        ("libcairo.so.2", "/usr/lib/libcairo.so.2", "BINARY"),
        ("libX11.so.6", "/usr/lib/libX11.so.6", "BINARY"),
        ("libpython3.11.so.1.0", "/src/libpython3.11.so.1.0", "BINARY"),
        ("libQt6Core.so.6", "PySide6/Qt/lib/libQt6Core.so.6", "SYMLINK"),
        ("libgtk-3.so", "libgtk-3.so.0", "SYMLINK"),
    ]
    links = {
        "/src/libqxcb.so": ["libQt6XcbQpa.so.6", "libX11.so.6", "libc.so.6"],
        "/src/QtCore.abi3.so": ["libQt6Core.so.6"],
        "/src/libQt6XcbQpa.so.6": ["libQt6Core.so.6", "libX11.so.6"],
        "/src/libQt6Core.so.6": ["libicuuc.so.73"],
        "/usr/lib/libgtk-3.so.0": ["libcairo.so.2", "libX11.so.6"],
    }
    kept = {dest for dest, _, _ in prune_unreachable(binaries, lambda source: links.get(source, []))}
    assert kept == {
        "PySide6/Qt/plugins/platforms/libqxcb.so",
        "PySide6/QtCore.abi3.so",
        "PySide6/Qt/lib/libQt6Core.so.6",
        "PySide6/Qt/lib/libQt6XcbQpa.so.6",
        "PySide6/Qt/lib/libicuuc.so.73",
        "libpython3.11.so.1.0",
        "libQt6Core.so.6",
    }


def test_the_spec_uses_the_filter() -> None:
    spec = (REPO / "packaging" / "sessionscope.spec").read_text(encoding="utf-8")
    assert "excludes=list(EXCLUDED_MODULES)" in spec
    assert "keep_entry(entry[0])" in spec and "prune_unreachable(" in spec
    assert bundle_filter.__doc__
