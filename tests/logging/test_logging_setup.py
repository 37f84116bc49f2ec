"""The log file (``app.logging_setup``), the version (``app.about``) and ``sessionscope --version``."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from app import about, logging_setup
from app.cli import main
from app.logging_setup import LOG_DIR_ENV, LOG_FILE_NAME, AppLogFile, configure_logging, current_log_file, log_dir

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def clean_root_logger() -> Iterator[None]:
    """Every test configures the root logger; put it back as it was (pytest's own handlers included)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in root.handlers:
        if h not in handlers:
            h.close()
    root.handlers[:] = handlers
    root.setLevel(level)


# ---------------------------------------------------------------- where


def test_log_dir_follows_each_platform(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert log_dir() == str(tmp_path / "state" / "sessionscope" / "log")
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # invalid per the XDG spec: ignored
    assert log_dir() == str(tmp_path / ".local" / "state" / "sessionscope" / "log")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert log_dir() == str(tmp_path / "Library" / "Logs" / "SessionScope")
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    assert log_dir() == os.path.join(str(tmp_path / "Local"), "SessionScope", "Logs")
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path / "portable"))
    assert log_dir() == str(tmp_path / "portable")


# ---------------------------------------------------------------- the file


def test_configure_writes_a_private_file_once_however_often_it_is_called(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    setup = configure_logging(str(folder))
    assert setup.path == str(folder / LOG_FILE_NAME) and setup.error is None
    assert configure_logging(str(folder)) == setup
    root = logging.getLogger()
    assert sum(isinstance(h, AppLogFile) for h in root.handlers) == 1
    assert sum(type(h) is logging.StreamHandler and h.stream is sys.stderr for h in root.handlers) == 1  # type: ignore[attr-defined]
    logging.getLogger("app.somewhere").info("hello %s", "log")
    logging.getLogger("app.somewhere").debug("not at INFO")
    text = (folder / LOG_FILE_NAME).read_text()
    assert text.count("hello log") == 1 and "INFO app.somewhere: hello log" in text and "not at INFO" not in text
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder / LOG_FILE_NAME).st_mode) == 0o600
    assert current_log_file() == setup.path

    other = configure_logging(str(tmp_path / "elsewhere"))  # re-pointed: still one file handler
    assert other.path == str(tmp_path / "elsewhere" / LOG_FILE_NAME)
    assert [h.baseFilename for h in root.handlers if isinstance(h, AppLogFile)] == [other.path]


def test_the_file_rotates_by_size_and_keeps_the_set_number_of_copies(tmp_path: Path) -> None:
    max_bytes, backups = 4_000, 2
    setup = configure_logging(str(tmp_path), max_bytes=max_bytes, backups=backups)
    assert setup.path is not None
    log = logging.getLogger("app.rotation")
    for i in range(400):  # about 40 KB: ten files' worth
        log.info("line %04d %s", i, "x" * 40)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [LOG_FILE_NAME, f"{LOG_FILE_NAME}.1", f"{LOG_FILE_NAME}.2"]
    assert all((tmp_path / n).stat().st_size <= max_bytes for n in names)
    assert "line 0399" in (tmp_path / LOG_FILE_NAME).read_text()  # the newest is in the live file
    for n in names:
        assert stat.S_IMODE((tmp_path / n).stat().st_mode) == 0o600  # rotation keeps the files private


def test_an_unwritable_folder_is_reported_not_raised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    setup = configure_logging(str(blocker / "logs"))
    assert setup.path is None and setup.error is not None and "cannot write the log file" in setup.error
    assert current_log_file() is None
    assert "cannot write the log file" in capsys.readouterr().err  # the stderr handler carries it


def test_startup_line_and_unhandled_exceptions_reach_the_file(tmp_path: Path) -> None:
    setup = configure_logging(str(tmp_path))
    assert setup.path is not None
    logging_setup.log_startup("window", "/some/root")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        exc_type, exc, tb = sys.exc_info()
        assert exc_type is not None and exc is not None
        logging_setup.log_unhandled((exc_type, exc, tb), "the window")
    text = Path(setup.path).read_text()
    assert f"SessionScope {about.app_version()} starting (window), root /some/root" in text
    assert "unhandled exception in the window" in text and "Traceback" in text and "RuntimeError: boom" in text


# ---------------------------------------------------------------- the version


def _pyproject_version() -> str:
    with (REPO / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def test_the_version_falls_back_to_pyproject_then_unknown(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def not_installed(_name: str) -> str:
        raise metadata.PackageNotFoundError(_name)

    monkeypatch.setattr(about.metadata, "version", not_installed)
    assert about.app_version() == _pyproject_version()
    monkeypatch.setattr(about, "PYPROJECT", tmp_path / "missing.toml")  # a frozen build without metadata
    assert about.app_version() == "unknown"
    (tmp_path / "broken.toml").write_text("[project\n")
    monkeypatch.setattr(about, "PYPROJECT", tmp_path / "broken.toml")
    assert about.app_version() == "unknown"


def test_about_facts_name_the_formats_the_engine_reads() -> None:
    import persistence

    facts = about.about_facts()
    assert facts.session_formats == (persistence.SESSION_FORMAT_VERSION,)
    assert facts.sqlite_schemas == (persistence.SQLITE_SCHEMA_VERSION,) and facts.sqlite_schemas == (17,)


def test_version_flag_prints_name_and_version_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"sessionscope {about.app_version()}\n"


@pytest.mark.parametrize("module", ["app", "app.cli"])
def test_version_flag_in_a_fresh_process_imports_no_qt(module: str) -> None:
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['sessionscope', '--version']\n"
        "try:\n"
        f"    runpy.run_module({module!r}, run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "print('qt-imported' if any(m.startswith('PySide6') for m in sys.modules) else 'no-qt')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines() == [f"sessionscope {about.app_version()}", "no-qt"]
