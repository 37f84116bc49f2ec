"""SessionScope's license and the third-party notices its installers carry (issue 21 item 12).

Before: no LICENSE, and the .deb's copyright file said "has not declared a license yet".  Now: MIT in
``LICENSE``, the notices in ``THIRD_PARTY_NOTICES``, the full texts in ``resources/licenses/``; the
.deb's copyright file is built from the first two (``packaging/deb_copyright.py``), the frozen app
carries all three in ``_internal/licenses`` (the spec), a wheel in ``share/sessionscope/licenses``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import deb_copyright
import pytest

from app import about

REPO = Path(__file__).resolve().parents[2]
LICENSE = REPO / "LICENSE"
NOTICES = REPO / "THIRD_PARTY_NOTICES"
TEXTS = REPO / "resources" / "licenses"


def project() -> dict[str, object]:
    with (REPO / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def runtime_dependencies() -> list[str]:
    """The distribution names of pyproject's runtime dependencies (``PySide6-Essentials>=6.6`` -> ``PySide6-Essentials``)."""
    deps = project()["project"]["dependencies"]  # type: ignore[index]
    return [re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0] for d in deps]  # type: ignore[union-attr]


def test_license_is_mit_of_the_sessionscope_authors() -> None:
    text = LICENSE.read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 The SessionScope authors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_the_notices_name_every_runtime_dependency_and_python() -> None:
    notices = NOTICES.read_text(encoding="utf-8")
    deps = runtime_dependencies()
    assert len(deps) >= 6
    for dep in deps:
        # PySide6-Essentials is PySide6 (and the Qt it bundles) under its distribution name.
        assert dep in notices or dep.split("-")[0] in notices, dep
    for name in ("Qt 6", "Python", "LGPL-3.0", "Shiboken6"):
        assert name in notices, name
    assert "replacing them" in notices and "libQt6" in notices  # how to replace the Qt libraries


def test_every_text_the_notices_name_ships_and_every_shipped_text_is_named() -> None:
    notices = NOTICES.read_text(encoding="utf-8")
    named = set(re.findall(r"[\w.-]+\.txt", notices))
    shipped = {p.name for p in TEXTS.glob("*.txt")}
    assert named == shipped
    lgpl = (TEXTS / "LGPL-3.0.txt").read_text(encoding="utf-8")
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in lgpl and "Version 3" in lgpl
    assert "GNU GENERAL PUBLIC LICENSE" in (TEXTS / "GPL-3.0.txt").read_text(encoding="utf-8")  # the LGPL supplements it


def test_the_deb_copyright_file_carries_the_license_and_the_notices(tmp_path: Path) -> None:
    out = tmp_path / "copyright"
    proc = subprocess.run(
        [sys.executable, str(REPO / "packaging" / "deb_copyright.py"), str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    assert text == deb_copyright.copyright_text()
    assert LICENSE.read_text(encoding="utf-8") in text
    assert NOTICES.read_text(encoding="utf-8").rstrip("\n") in text
    assert "not declared a license" not in text
    # lintian: no full GPL or Apache text in a copyright file (they are in /usr/share/common-licenses).
    assert "TERMS AND CONDITIONS" not in text and "END OF TERMS AND CONDITIONS" not in text
    assert "/usr/share/common-licenses/" in text and "/opt/sessionscope/_internal/licenses/" in text


def test_the_deb_staging_and_the_tarball_use_them() -> None:
    build = (REPO / "packaging" / "build.sh").read_text(encoding="utf-8")
    assert '"$PYTHON" packaging/deb_copyright.py build/copyright' in build
    assert 'install -Dm644 build/copyright "$stage/usr/share/doc/sessionscope/copyright"' in build
    assert 'install -m644 LICENSE THIRD_PARTY_NOTICES "build/tar/$top/"' in build
    spec = (REPO / "packaging" / "sessionscope.spec").read_text(encoding="utf-8")
    for entry in ('"LICENSE"), "licenses")', '"THIRD_PARTY_NOTICES"), "licenses")', '"licenses", "*.txt"), "licenses")'):
        assert entry in spec, entry
    check = (REPO / "packaging" / "ci_check.sh").read_text(encoding="utf-8")
    assert "usr/share/doc/sessionscope/copyright" in check and "_internal/licenses" in check


def test_pyproject_declares_mit_and_ships_the_notices_as_data_files() -> None:
    data = project()
    assert data["project"]["license"] in ("MIT", {"text": "MIT"})  # type: ignore[index]
    files = data["tool"]["setuptools"]["data-files"]["share/sessionscope/licenses"]  # type: ignore[index]
    assert "LICENSE" in files and "THIRD_PARTY_NOTICES" in files
    assert {Path(f).name for f in files if f.startswith("resources/licenses/")} == {p.name for p in TEXTS.glob("*.txt")}


@pytest.mark.parametrize("layout", ["frozen", "wheel"])
def test_license_documents_are_found_in_an_installed_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    folder = tmp_path / "licenses" if layout == "frozen" else tmp_path / "share" / "sessionscope" / "licenses"
    folder.mkdir(parents=True)
    for src in (LICENSE, NOTICES, TEXTS / "LGPL-3.0.txt"):
        (folder / src.name).write_bytes(src.read_bytes())
    monkeypatch.setattr(about, "SOURCE_ROOT", tmp_path / "no-source-tree")
    if layout == "frozen":
        monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    else:
        monkeypatch.setattr(sys, "prefix", str(tmp_path))
    docs = about.license_documents()
    assert [d.path for d in docs] == [folder / "LICENSE", folder / "THIRD_PARTY_NOTICES", folder / "LGPL-3.0.txt"]
