"""The desktop entry and the AppStream metainfo the .deb and the tarball ship (issue 15).

``desktop-file-validate`` rejected the entry (``Version=1.5``, three main categories); the validators
run here when installed (CI installs them), and the facts the app relies on are checked either way.
"""

from __future__ import annotations

import configparser
import shutil
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import icons
import pytest

from app import links

REPO = Path(__file__).resolve().parents[2]
DESKTOP = REPO / "packaging" / "sessionscope.desktop"
METAINFO = next((REPO / "packaging").glob("*.metainfo.xml"))
# The freedesktop main categories: an entry in more than one shows up twice in menus.
MAIN_CATEGORIES = {
    "AudioVideo",
    "Audio",
    "Video",
    "Development",
    "Education",
    "Game",
    "Graphics",
    "Network",
    "Office",
    "Science",
    "Settings",
    "System",
    "Utility",
}


def entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DESKTOP, encoding="utf-8")
    return parser["Desktop Entry"]


def test_the_desktop_entry_registers_the_link_scheme_and_opens_links() -> None:
    section = entry()
    assert f"x-scheme-handler/{links.SCHEME}" in section["MimeType"].split(";")
    assert section["Exec"].split()[0] == links.PROGRAM and "%u" in section["Exec"].split()
    assert section["Icon"] == icons.NAME
    assert section["Version"] in {"1.0", "1.1", "1.2", "1.3", "1.4"}  # what the validators here know
    main = [c for c in section["Categories"].split(";") if c in MAIN_CATEGORIES]
    assert len(main) == 1, main


def test_the_metainfo_names_the_desktop_entry_and_the_current_version() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.get("type") == "desktop-application"
    component_id = root.findtext("id")
    assert METAINFO.name == f"{component_id}.metainfo.xml"
    assert root.findtext("launchable") == DESKTOP.name
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    releases = [r.get("version") for r in root.iter("release")]
    assert releases and releases[0] == version, "add the release to the metainfo when bumping the version"


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils not installed")
def test_desktop_file_validate_is_clean() -> None:
    done = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstream not installed")
def test_appstreamcli_validate_is_clean() -> None:
    done = subprocess.run(["appstreamcli", "validate", "--no-net", str(METAINFO)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
