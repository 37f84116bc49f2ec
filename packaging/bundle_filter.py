"""What the frozen build keeps of Qt: the spec filters PyInstaller's analysis through ``keep_entry``.

Why a module of its own (and not inline in the spec): the rules are the whole difference between a
221 MB bundle and a ~100 MB one, so tests/packaging/ checks them without running PyInstaller, and the
spec, the build script and the tests share one list.

The app imports QtCore, QtGui and QtWidgets only (the charts are our own widget).  PyInstaller's Qt
hooks collect whole plugin folders, and each plugin pulls in the Qt library it links (the virtual
keyboard input context pulls Qml, Quick and VirtualKeyboard; the pdf image format pulls Pdf), so a
plugin is kept only if a desktop session needs it, and a Qt library only if it is on ``QT_MODULES``.

May import: the standard library only (the spec runs it inside PyInstaller).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

# Qt modules (as in libQt6<Name>.so, Qt6<Name>.dll, Qt<Name>.framework, PySide6/Qt<Name>.abi3.so) the
# bundle keeps: the three the app imports, what they link on each platform, and the Linux platform
# plugins' own libraries (xcb, Wayland).
QT_MODULES: frozenset[str] = frozenset(
    {
        "Core",
        "Gui",
        "Widgets",
        "DBus",  # QtGui links it on Linux (portal file dialogs, tray, accessibility)
        "OpenGL",  # the xcb GLX/EGL integrations
        "Svg",  # the svg icon engine and image format: the app icon is an SVG
        "XcbQpa",
        "WaylandClient",
        "WaylandEglClientHwIntegration",
        "WlShellIntegration",
    }
)

# Plugin folder -> plugin names kept (None keeps the whole folder).  A name is the file's stem without
# "lib", a leading "q" and the suffix: libqxcb.so -> "xcb", qwindows.dll -> "windows".
PLUGINS: dict[str, frozenset[str] | None] = {
    "platforms": frozenset({"xcb", "wayland", "wayland-egl", "offscreen", "minimal", "windows", "cocoa"}),
    # xdgdesktopportal: native file dialogs through the portal.  gtk3 is left out: it links GTK 3, which
    # the .deb would then have to depend on for a theme hint only.
    "platformthemes": frozenset({"xdgdesktopportal"}),
    "platforminputcontexts": frozenset({"composeplatforminputcontextplugin", "ibusplatforminputcontextplugin"}),
    # svg for the icon, ico/icns for Windows and macOS.  No jpeg: the app shows no photos, and qjpeg embeds
    # its own libjpeg (lintian: embedded-library).
    "imageformats": frozenset({"svg", "ico", "icns"}),
    "iconengines": frozenset({"svgicon"}),
    "xcbglintegrations": None,
    "wayland-shell-integration": None,
    "wayland-decoration-client": None,
    "wayland-graphics-integration-client": None,
    "styles": None,  # Windows 11 / macOS native styles
}

# Python modules the analysis must not follow: every PySide6 module but the three, Tk, and zstandard's
# cffi backend (the C backend is the one zstandard picks first; shipping both doubled it).
EXCLUDED_MODULES: tuple[str, ...] = (
    "tkinter",
    "_tkinter",
    "cffi",
    "_cffi_backend",
    "zstandard.backend_cffi",
    "zstandard._cffi",
    *(
        f"PySide6.Qt{name}"
        for name in (
            "3DAnimation 3DCore 3DExtras 3DInput 3DLogic 3DRender Bluetooth Charts Concurrent DataVisualization "
            "Designer Graphs GraphsWidgets Help HttpServer Location Multimedia MultimediaWidgets Network "
            "NetworkAuth Nfc OpenGL OpenGLWidgets Pdf PdfWidgets Positioning PrintSupport Qml Quick Quick3D "
            "QuickControls2 QuickTest QuickWidgets RemoteObjects Scxml Sensors SerialBus SerialPort "
            "SpatialAudio Sql StateMachine Svg SvgWidgets Test TextToSpeech UiTools WebChannel WebEngineCore "
            "WebEngineQuick WebEngineWidgets WebSockets WebView Xml"
        ).split()
    ),
)

_PLUGIN = re.compile(r"(?:^|/)plugins/([^/]+)/([^/]+)$")
# libQt6Core.so.6, Qt6Core.dll, QtCore.framework/..., PySide6/QtCore.abi3.so, QtCore.pyd, QtCore.pyi
_QT_LIBRARY = re.compile(r"(?:^|/)(?:lib)?Qt6?([A-Z][A-Za-z0-9]*?)(?:\.abi3)?(?:\.so|\.dll|\.dylib|\.pyd|\.pyi|\.framework)")
_DROPPED = re.compile(
    r"(?:^|/)(?:"
    r"zstandard/_cffi|zstandard/backend_cffi|_cffi_backend"  # the second zstandard backend
    r"|(?:lib)?pyside6qml"  # PySide6's Qml binding support library
    r"|translations/(?!qtbase_)[^/]+\.qm$"  # only qtbase's translations: the other modules are not shipped
    r"|Qt/qml/|Qt/resources/|Qt/libexec/"  # Qml imports, WebEngine resources and helper programs
    r")"
)


# Linux libraries left to the system (basenames): the desktop stack Qt's xcb and Wayland platforms link.
# Bundling them breaks on newer systems (a bundled libstdc++ older than the one the system's Mesa driver
# needs; an X11/GL/glib that disagrees with the running server or session), so the .deb depends on
# their packages instead (packaging/deb_depends.py maps them) and the README lists them for the tarball.
SYSTEM_LIBRARIES = re.compile(
    r"^lib(?:"
    r"X11|X11-xcb|Xau|Xdmcp|Xext|Xrender|Xfixes|Xi|Xinerama|Xrandr|Xcursor|Xcomposite|Xdamage|SM|ICE"
    r"|xcb(?:-[a-z0-9-]+)?|xkbcommon(?:-x11)?|wayland-[a-z]+"
    r"|EGL|GL|GLX|GLdispatch|OpenGL|drm|gbm|fontconfig|freetype|dbus-1|systemd"
    r"|glib-2\.0|gobject-2\.0|gio-2\.0|gmodule-2\.0|gthread-2\.0"
    r"|stdc\+\+|gcc_s"
    r"|z|bz2"  # zlib and bzip2: every system has them, and lintian counts a bundled copy as an error
    r")\.so(?:\.[0-9]+)*$"
)

# A PyInstaller TOC entry: (path in the bundle, source path or symlink target, type code).
TocEntry = tuple[str, str, str]


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def prune_unreachable(binaries: list[TocEntry], needed: Callable[[str], Iterable[str]]) -> list[TocEntry]:
    """The binaries still needed once ``keep_entry`` dropped some (Linux).

    Dropping a plugin does not drop the libraries only it linked (the gtk3 theme left GTK, cairo and
    pango behind).  Roots are what Python or Qt load by path: extension modules, plugins and libpython;
    a plain shared library stays only if a kept binary links it (``needed(source)`` gives the sonames
    a file links), and a system library (``SYSTEM_LIBRARIES``) never stays.
    """
    by_name: dict[str, TocEntry] = {}
    for entry in binaries:
        if entry[2] != "SYMLINK":
            by_name.setdefault(_basename(entry[0]), entry)

    def is_root(entry: TocEntry) -> bool:
        dest, _, kind = entry
        name = _basename(dest)
        return kind == "EXTENSION" or "/plugins/" in dest.replace("\\", "/") or name.startswith("libpython")

    kept: dict[str, TocEntry] = {}
    todo = [entry for entry in binaries if entry[2] != "SYMLINK" and is_root(entry)]
    while todo:
        entry = todo.pop()
        if entry[0] in kept or SYSTEM_LIBRARIES.match(_basename(entry[0])):
            continue
        kept[entry[0]] = entry
        for soname in needed(entry[1]):
            dependency = by_name.get(_basename(soname))
            if dependency is not None and dependency[0] not in kept:
                todo.append(dependency)
    symlinks = [entry for entry in binaries if entry[2] == "SYMLINK" and _resolve(entry) in kept]
    return [entry for entry in binaries if entry[0] in kept] + symlinks


def _resolve(symlink: TocEntry) -> str:
    """The bundle path a SYMLINK entry points to (its target is relative to the link's folder)."""
    folder = symlink[0].replace("\\", "/").rsplit("/", 1)[0] if "/" in symlink[0].replace("\\", "/") else ""
    parts = [*(folder.split("/") if folder else []), *symlink[1].replace("\\", "/").split("/")]
    resolved: list[str] = []
    for part in parts:
        if part == "..":
            if resolved:
                resolved.pop()
        elif part not in ("", "."):
            resolved.append(part)
    return "/".join(resolved)


def _plugin_name(filename: str) -> str:
    stem = filename.split(".", 1)[0]
    stem = stem.removeprefix("lib")
    return stem.removeprefix("q") if stem.startswith("q") else stem


def keep_entry(dest: str) -> bool:
    """Whether a file PyInstaller collected (its path inside the bundle) goes into the build."""
    path = dest.replace("\\", "/")
    if _DROPPED.search(path):
        return False
    plugin = _PLUGIN.search(path)
    if plugin:
        folder, filename = plugin.groups()
        if folder not in PLUGINS:
            return False
        names = PLUGINS[folder]
        return names is None or _plugin_name(filename) in names
    library = _QT_LIBRARY.search(path)
    if library and library.group(1) not in QT_MODULES:
        return False
    return True


__all__ = ["EXCLUDED_MODULES", "PLUGINS", "QT_MODULES", "SYSTEM_LIBRARIES", "keep_entry", "prune_unreachable"]
