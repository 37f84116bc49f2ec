"""What SessionScope says about itself: its version and the file formats its engine reads.

One place for ``sessionscope --version``, the Help > About box and the log's startup line, so the
three never disagree.  The version comes from the installed distribution's metadata; a source
checkout that was never installed reads ``pyproject.toml`` instead, and a build that carries neither
(a frozen app packaged without its metadata) says ``unknown`` rather than a made-up number.

It also finds the license texts Help > About > Licenses shows (``license_documents``): SessionScope's
``LICENSE``, the ``THIRD_PARTY_NOTICES`` and the full texts they name.  A source tree keeps those at
its root and in ``resources/licenses/``; a frozen app (``<bundle>/licenses``) and a wheel install
(``<prefix>/share/sessionscope/licenses``) keep all of them in one folder.

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
SOURCE_ROOT = PYPROJECT.parent
LICENSE_NAME = "LICENSE"
NOTICES_NAME = "THIRD_PARTY_NOTICES"
LICENSE_TEXTS = Path("resources") / "licenses"  # in the source tree
LICENSES_DIR_NAME = "licenses"  # in a frozen app, and under <prefix>/share/sessionscope


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


@dataclass(frozen=True, slots=True)
class LicenseDocument:
    """One text Help > About > Licenses lists: its title and its file."""

    title: str
    path: Path


def _license_folders() -> tuple[Path, Path] | None:
    """(folder of LICENSE and the notices, folder of the full texts), the first layout found."""
    bundled = getattr(sys, "_MEIPASS", None)  # a PyInstaller bundle
    candidates = [(Path(bundled) / LICENSES_DIR_NAME,) * 2] if bundled else []
    candidates.append((SOURCE_ROOT, SOURCE_ROOT / LICENSE_TEXTS))
    installed = Path(sys.prefix) / "share" / DISTRIBUTION / LICENSES_DIR_NAME
    candidates.append((installed, installed))
    for top, texts in candidates:
        if (top / LICENSE_NAME).is_file() and (top / NOTICES_NAME).is_file():
            return top, texts
    return None


def license_documents() -> tuple[LicenseDocument, ...]:
    """SessionScope's license, the third-party notices, then each full license text (empty if none ship)."""
    found = _license_folders()
    if found is None:
        return ()
    top, texts = found
    docs = [
        LicenseDocument(f"{DISPLAY_NAME} (MIT License)", top / LICENSE_NAME),
        LicenseDocument("Third-party notices", top / NOTICES_NAME),
    ]
    if texts.is_dir():
        docs += [LicenseDocument(p.stem, p) for p in sorted(texts.glob("*.txt"))]
    return tuple(docs)


__all__ = [
    "DISPLAY_NAME",
    "DISTRIBUTION",
    "AboutFacts",
    "LicenseDocument",
    "about_facts",
    "app_version",
    "license_documents",
    "version_line",
]
