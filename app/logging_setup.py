"""The log file: a size-rotated ``sessionscope.log`` in the user's log folder, plus warnings on stderr.

Why a file: a desktop app started from a menu has no terminal, so an error that only reaches stderr
is lost; the crash dialog and Help > About name this file so a user can attach it to a report.
Rotation by size keeps it bounded (``LOG_FILE_MAX_BYTES`` x (1 + ``LOG_FILE_BACKUPS``) on disk).

The folder follows each platform's convention for logs (what ``platformdirs.user_log_dir`` answers,
without the dependency): ``$XDG_STATE_HOME/sessionscope/log`` or ``~/.local/state/sessionscope/log``
on Linux, ``~/Library/Logs/SessionScope`` on macOS, ``%LOCALAPPDATA%\\SessionScope\\Logs`` on
Windows; ``$SESSIONSCOPE_LOG_DIR`` overrides it (tests, portable installs).  Like ``app.paths``,
every function reads the environment when called, never at import.

Qt-free: the command line may configure it too.  May import the standard library and ``app.about``.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from io import TextIOWrapper
from logging.handlers import RotatingFileHandler
from types import TracebackType

from app.about import DISPLAY_NAME, app_version

LOG_DIR_ENV = "SESSIONSCOPE_LOG_DIR"
XDG_STATE_ENV = "XDG_STATE_HOME"
LOG_DIR_NAME = "sessionscope"
LOG_FILE_NAME = "sessionscope.log"
# 1 MiB per file holds thousands of startup lines or a few hundred tracebacks (2-5 KB each); with 3
# rotated copies the log never takes more than 4 MiB.
LOG_FILE_MAX_BYTES = 1_048_576
LOG_FILE_BACKUPS = 3
# The log may quote session paths and message text: only the user may read it (as the engine's stores).
LOG_DIR_MODE = 0o700
LOG_FILE_MODE = 0o600
FILE_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
STDERR_FORMAT = "sessionscope: %(levelname)s: %(message)s"  # what the launcher printed before the file existed

log = logging.getLogger("sessionscope")


def log_dir() -> str:
    """The user log folder (see the module docstring for each platform's answer)."""
    base = os.environ.get(LOG_DIR_ENV)
    if base:
        return base
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(local, DISPLAY_NAME, "Logs")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Logs", DISPLAY_NAME)
    state = os.environ.get(XDG_STATE_ENV)
    # The XDG spec: a relative value is invalid and must be ignored.
    if state and os.path.isabs(state):
        return os.path.join(state, LOG_DIR_NAME, "log")
    return os.path.join(home, ".local", "state", LOG_DIR_NAME, "log")


class AppLogFile(RotatingFileHandler):
    """The app's own handler (found again by type, so configuring twice never writes every line twice)."""

    def _open(self) -> TextIOWrapper:
        stream = super()._open()
        try:  # each rotation opens a fresh file under the umask: narrow it every time
            os.chmod(self.baseFilename, LOG_FILE_MODE)
        except OSError:
            pass  # a file system without modes (FAT, some network shares): still log
        return stream


@dataclass(frozen=True, slots=True)
class LogSetup:
    """Where the log goes: ``path`` is None when the folder could not be written (``error`` says why)."""

    path: str | None
    error: str | None = None


def current_log_file() -> str | None:
    """The file the app logs to, or None before ``configure_logging`` (or when it failed)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, AppLogFile):
            return handler.baseFilename
    return None


def configure_logging(
    directory: str | None = None,
    *,
    max_bytes: int = LOG_FILE_MAX_BYTES,
    backups: int = LOG_FILE_BACKUPS,
    file_level: int = logging.INFO,
) -> LogSetup:
    """Log INFO and up to ``<directory>/sessionscope.log`` (default ``log_dir()``), WARNING and up to stderr.

    Idempotent: a second call keeps one file handler (re-pointed if ``directory`` changed) and one
    stderr handler.  An unwritable folder is reported on stderr and in the result, never raised: the
    app runs without a log file rather than not at all.
    """
    root = logging.getLogger()
    root.setLevel(min(file_level, logging.WARNING))  # the root's level gates every handler below it
    if not any(type(h) is logging.StreamHandler and getattr(h, "stream", None) is sys.stderr for h in root.handlers):
        stderr = logging.StreamHandler(sys.stderr)
        stderr.setLevel(logging.WARNING)
        stderr.setFormatter(logging.Formatter(STDERR_FORMAT))
        root.addHandler(stderr)
    folder = os.path.abspath(directory or log_dir())
    path = os.path.join(folder, LOG_FILE_NAME)
    for handler in [h for h in root.handlers if isinstance(h, AppLogFile)]:
        if handler.baseFilename == path:
            return LogSetup(path)
        root.removeHandler(handler)
        handler.close()
    try:
        os.makedirs(folder, mode=LOG_DIR_MODE, exist_ok=True)
        handler = AppLogFile(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    except OSError as err:
        message = f"cannot write the log file {path}: {err.strerror or err}"
        log.warning("%s; logging to stderr only", message)
        return LogSetup(None, message)
    handler.setLevel(file_level)
    handler.setFormatter(logging.Formatter(FILE_FORMAT))
    root.addHandler(handler)
    return LogSetup(path)


def log_startup(what: str, root: str | None) -> None:
    """The first line of a run: which version started, as what, on which root (what a bug report needs)."""
    log.info(
        "%s %s starting (%s), root %s, Python %s, pid %d",
        DISPLAY_NAME,
        app_version(),
        what,
        root if root is not None else "(none)",
        sys.version.split()[0],
        os.getpid(),
    )


ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


def log_unhandled(exc_info: ExcInfo, where: str) -> None:
    """Write an exception nobody caught to the log, with its traceback."""
    log.error("unhandled exception in %s", where, exc_info=exc_info)


__all__ = [
    "LOG_DIR_ENV",
    "LOG_FILE_BACKUPS",
    "LOG_FILE_MAX_BYTES",
    "LOG_FILE_NAME",
    "AppLogFile",
    "ExcInfo",
    "LogSetup",
    "configure_logging",
    "current_log_file",
    "log_dir",
    "log_startup",
    "log_unhandled",
]
