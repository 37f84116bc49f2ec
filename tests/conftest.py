"""Suite-wide configuration.

Loading this file puts ``tests/`` on ``sys.path`` (pytest's default ``prepend`` import mode),
so test modules import the shared builders with ``import sessionkit``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest
import sessionkit
from hypothesis import HealthCheck, settings

T = TypeVar("T")

# Property tests stay small and deterministic enough for CI (whole suite < 60 s on 2 cores).
settings.register_profile(
    "sessionscope",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
settings.load_profile("sessionscope")


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
