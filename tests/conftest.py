"""Suite-wide configuration: the Hypothesis profile, and every test on a private host.

Loading this file puts ``tests/`` on ``sys.path`` (pytest's default ``prepend`` import mode),
so test modules import the shared builders with ``import sessionkit``.

Why a private host: a test that reads the machine's folders passes or fails by machine (three resume
tests failed wherever the fixture's recorded cwd existed, issue 21 item 13), and one that writes there
leaves litter in the user's home.  So each test runs with ``HOME`` and the XDG base folders pointing
into its own temporary folder, in a private working folder, with none of the user's SessionScope or
harness overrides; Qt's ``QStandardPaths`` and ``app.paths`` read the environment when asked, so both
see the private folders.  A test about a host folder (a recorded cwd that exists or not) creates it, or
names a path under ``tmp_path`` that does not exist.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import hypothesis_profiles
import pytest
import sessionkit

T = TypeVar("T")

# `dev` (derandomized, small) on a workstation, `ci` (randomized, seeded by .ci/run) in CI.
hypothesis_profiles.load()

# The XDG base folders a program writes to (config, cache, data, state, runtime), each a private folder.
HOST_FOLDERS = {
    "HOME": "home",
    "XDG_CONFIG_HOME": "config",
    "XDG_CACHE_HOME": "cache",
    "XDG_DATA_HOME": "data",
    "XDG_STATE_HOME": "state",
    "XDG_RUNTIME_DIR": "runtime",
}
# The user's own overrides would send a test's reads and writes to the user's folders: never inherited.
# (tests/gui/conftest.py and some tests set their own private values after this.)
USER_OVERRIDES = ("DSH_HOME", "SESSIONSCOPE_DATA_DIR", "SESSIONSCOPE_CACHE_DIR", "SESSIONSCOPE_LOG_DIR")
for _name in USER_OVERRIDES:
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def private_host(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test: ``HOME``, ``XDG_{CONFIG,CACHE,DATA,STATE}_HOME``, ``XDG_RUNTIME_DIR`` and the working
    folder are fresh private folders (outside ``tmp_path``, which some tests list).  Yields their parent."""
    base = tmp_path_factory.mktemp("host")
    for name, sub in HOST_FOLDERS.items():
        folder = base / sub
        folder.mkdir(mode=0o700)  # the XDG spec requires 0700 for the runtime folder (Qt warns otherwise)
        monkeypatch.setenv(name, str(folder))
    monkeypatch.delenv("DSH_HOME", raising=False)
    cwd = base / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    yield base


@pytest.fixture
def run() -> Callable[[Coroutine[Any, Any, T]], T]:
    """``run(coro)``: drive one coroutine to completion with ``asyncio.run``."""
    return sessionkit.run


def _fsync_without_flush(fd: int) -> None:
    # Still fails like fsync on a bad descriptor (EBADF), but skips the disk flush.
    os.fstat(fd)


@pytest.fixture
def fast_fsync(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Opt-in (``pytestmark = pytest.mark.usefixtures("fast_fsync")``): ``os.fsync`` validates the fd but
    does not flush.  Durability itself is not observable in these tests, and the flushes were a third of
    the suite's wall time; tests about fsync failures patch ``os.fsync`` themselves on top of this."""
    monkeypatch.setattr(os, "fsync", _fsync_without_flush)
    yield
