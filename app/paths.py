"""Where SessionScope looks and writes by default: the harness's session root, our own data folder
and our cache folder (the search index).

One module so the command line, the window and the demo agree (``default_root`` used to exist twice).
Every function reads the environment when it is called, never at import, so tests can point each
folder somewhere private.

May import: the standard library; PySide6 only lazily, inside ``data_dir``, to ask Qt where the user
data folder is (the window's own answer, so an installed app keeps finding its demo); never at import
time, so the command line works without Qt.
"""

from __future__ import annotations

import os
import sys

APP_NAME = "SessionScope"
DEMO_DIR_NAME = "demo-root"
# Overrides the user data folder (tests, the packaging smoke test, portable installs).
DATA_DIR_ENV = "SESSIONSCOPE_DATA_DIR"
# The harness's home; its sessions live in ``$DSH_HOME/sessions``.
HARNESS_HOME_ENV = "DSH_HOME"
# Overrides the user cache folder (tests, portable installs); the search index lives there.
CACHE_DIR_ENV = "SESSIONSCOPE_CACHE_DIR"
# The XDG base-directory variable for caches (Linux and other free desktops).
XDG_CACHE_ENV = "XDG_CACHE_HOME"
CACHE_DIR_NAME = "sessionscope"


def default_root() -> str:
    """``$DSH_HOME/sessions``, else ``~/.dsh/sessions`` (the harness's own default)."""
    home = os.environ.get(HARNESS_HOME_ENV)
    if home:
        return os.path.join(home, "sessions")
    return os.path.join(home_dir(), ".dsh", "sessions")


def home_dir() -> str:
    """The user's home folder (where a copied artifact is offered to go by default)."""
    return os.path.expanduser("~")


def data_dir() -> str:
    """The user data folder: ``$SESSIONSCOPE_DATA_DIR``, else Qt's application data folder, else
    ``~/.local/share/SessionScope`` (Qt has no answer, or is not installed)."""
    base = os.environ.get(DATA_DIR_ENV)
    if base:
        return base
    try:
        from PySide6.QtCore import QStandardPaths
    except ImportError:  # the command line on a machine without Qt
        return _fallback_data_dir()
    return QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppLocalDataLocation) or _fallback_data_dir()


def _fallback_data_dir() -> str:
    return os.path.join(home_dir(), ".local", "share", APP_NAME)


def cache_dir() -> str:
    """The user cache folder (rebuildable data such as the search index; never beside the user's logs):
    ``$SESSIONSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/sessionscope`` or ``~/.cache/sessionscope``
    on Linux, ``~/Library/Caches/SessionScope`` on macOS, ``%LOCALAPPDATA%\\SessionScope\\Cache`` on
    Windows.  Plain environment and path rules (no Qt): the command line indexes without the window."""
    base = os.environ.get(CACHE_DIR_ENV)
    if base:
        return base
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or os.path.join(home_dir(), "AppData", "Local")
        return os.path.join(local, APP_NAME, "Cache")
    if sys.platform == "darwin":
        return os.path.join(home_dir(), "Library", "Caches", APP_NAME)
    xdg = os.environ.get(XDG_CACHE_ENV)
    # The XDG spec: a relative value is invalid and must be ignored.
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, CACHE_DIR_NAME)
    return os.path.join(home_dir(), ".cache", CACHE_DIR_NAME)


def demo_root_path() -> str:
    """Where the demo root lives: ``demo-root`` in the user data folder."""
    return os.path.join(data_dir(), DEMO_DIR_NAME)


__all__ = ["CACHE_DIR_ENV", "DEMO_DIR_NAME", "cache_dir", "data_dir", "default_root", "demo_root_path", "home_dir"]
