"""What SessionScope says about itself: its version and the file formats its engine reads.

One place for ``sessionscope --version``, the Help > About box and the log's startup line, so the
three never disagree.  The version comes from the installed distribution's metadata; a source
checkout that was never installed reads ``pyproject.toml`` instead, and a build that carries neither
(a frozen app packaged without its metadata) says ``unknown`` rather than a made-up number.

Qt-free (the command line prints the version without importing Qt).  May import the standard
library and the engine's public constants.
"""

from __future__ import annotations

import platform
import sys
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from persistence import SESSION_FORMAT_VERSION, SQLITE_SCHEMA_VERSION

DISTRIBUTION = "sessionscope"
DISPLAY_NAME = "SessionScope"
UNKNOWN_VERSION = "unknown"
# The source tree's project file: the version of a checkout that was never pip-installed.
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def app_version() -> str:
    """The installed distribution's version, else the source tree's ``pyproject.toml``, else ``unknown``."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    try:
        with PYPROJECT.open("rb") as f:
            version = tomllib.load(f).get("project", {}).get("version")
    except (OSError, tomllib.TOMLDecodeError):
        return UNKNOWN_VERSION
    return version if isinstance(version, str) and version else UNKNOWN_VERSION


def version_line() -> str:
    """``sessionscope 0.1.0``: what ``--version`` prints."""
    return f"{DISTRIBUTION} {app_version()}"


@dataclass(frozen=True, slots=True)
class AboutFacts:
    """The Qt-free half of the About box (the window adds the Qt version and the settings file)."""

    version: str
    # Header ``version`` values of JSONL session logs the engine reads (any other is refused).
    session_formats: tuple[int, ...]
    # ``PRAGMA user_version`` values of SQLite stores the engine opens (any other is refused).
    sqlite_schemas: tuple[int, ...]
    python: str
    platform: str
    executable: str


def about_facts() -> AboutFacts:
    return AboutFacts(
        version=app_version(),
        session_formats=(SESSION_FORMAT_VERSION,),
        sqlite_schemas=(SQLITE_SCHEMA_VERSION,),
        python=f"{platform.python_implementation()} {platform.python_version()}",
        platform=platform.platform(terse=True),
        executable=sys.executable,
    )


__all__ = ["DISPLAY_NAME", "DISTRIBUTION", "AboutFacts", "about_facts", "app_version", "version_line"]
