"""The suite's own guarantees: every test runs on a private host (issue 21 item 13), and the Hypothesis
profile is the one the environment asks for (issue 21 item 14)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import hypothesis_profiles as hp
import pytest
from hypothesis import settings

from app import logging_setup, paths

REPO = Path(__file__).resolve().parents[2]


def _inside(path: str | os.PathLike[str], base: Path) -> bool:
    return Path(path).resolve().is_relative_to(base.resolve())


def test_home_xdg_and_cwd_are_private(private_host: Path) -> None:
    real_home = Path(os.path.expanduser("~")).resolve()
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
        folder = Path(os.environ[name])
        assert folder.is_dir() and _inside(folder, private_host), name
    assert real_home == Path(os.environ["HOME"]).resolve()
    assert oct(os.stat(os.environ["XDG_RUNTIME_DIR"]).st_mode & 0o777) == oct(0o700)
    assert _inside(os.getcwd(), private_host) and not _inside(os.getcwd(), REPO)
    assert "DSH_HOME" not in os.environ


def test_the_host_is_outside_tmp_path(private_host: Path, tmp_path: Path) -> None:
    # Tests list and digest their tmp_path: the private host must not show up there.
    assert not _inside(private_host, tmp_path) and not _inside(tmp_path, private_host)


def test_app_paths_see_the_private_folders(private_host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(paths.CACHE_DIR_ENV, raising=False)
    monkeypatch.delenv(paths.DATA_DIR_ENV, raising=False)
    monkeypatch.delenv(logging_setup.LOG_DIR_ENV, raising=False)
    assert paths.default_root() == str(private_host / "home" / ".dsh" / "sessions")
    assert paths.home_dir() == str(private_host / "home")
    assert _inside(paths.cache_dir(), private_host / "cache")
    assert _inside(paths.data_dir(), private_host)  # Qt's answer (XDG_DATA_HOME) or the fallback under HOME
    assert _inside(logging_setup.log_dir(), private_host / "state")


def test_qt_standard_paths_see_the_private_folders(private_host: Path) -> None:
    qtcore = pytest.importorskip("PySide6.QtCore")
    where = qtcore.QStandardPaths.writableLocation
    loc = qtcore.QStandardPaths.StandardLocation
    assert _inside(where(loc.GenericConfigLocation), private_host / "config")
    assert _inside(where(loc.GenericDataLocation), private_host / "data")
    assert _inside(where(loc.GenericCacheLocation), private_host / "cache")
    assert _inside(where(loc.RuntimeLocation), private_host / "runtime")
    assert _inside(qtcore.QDir.homePath(), private_host / "home")


# ---------------------------------------------------------------- Hypothesis profiles


@pytest.mark.parametrize(
    ("environ", "name"),
    [
        ({}, "dev"),
        ({"CI": "true"}, "ci"),
        ({"CI": "false"}, "dev"),
        ({"HYPOTHESIS_PROFILE": "dev", "CI": "true"}, "dev"),
        ({"HYPOTHESIS_PROFILE": "ci"}, "ci"),
    ],
)
def test_the_environment_names_the_profile(environ: dict[str, str], name: str) -> None:
    assert hp.profile_name(environ) == name


def test_an_unknown_profile_is_an_error() -> None:
    with pytest.raises(ValueError, match="HYPOTHESIS_PROFILE='fast' names no profile; use one of ci, dev"):
        hp.profile_name({"HYPOTHESIS_PROFILE": "fast"})


def test_the_loaded_profile_is_the_one_the_environment_asks_for() -> None:
    name = hp.profile_name(os.environ)
    want = hp.PROFILES[name]
    loaded = settings.default
    assert (loaded.max_examples, loaded.derandomize, loaded.print_blob) == (want.max_examples, want.derandomize, want.print_blob)
    assert loaded.database is None and loaded.deadline is None
    assert hp.active() == want and hp.examples(10) == round(10 * want.scale)


def test_dev_is_fixed_and_ci_draws_fresh_inputs() -> None:
    dev, ci = hp.PROFILES["dev"], hp.PROFILES["ci"]
    assert dev.derandomize and not ci.derandomize and ci.print_blob
    assert ci.max_examples > dev.max_examples and ci.scale > dev.scale


def test_pytest_loads_the_profile_the_environment_asks_for(tmp_path: Path) -> None:
    """End to end: a pytest run with ``HYPOTHESIS_PROFILE=ci`` runs its property tests under ``ci``."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": "ci"}
    env.pop("PYTEST_XDIST_WORKER", None)
    this = f"{Path(__file__)}::test_the_loaded_profile_is_the_one_the_environment_asks_for"
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-rA", this]
    done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
