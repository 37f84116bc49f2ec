"""The fixture the view tests share: a private store of every status (``viewkit.build_store``) per backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from livekit import BACKEND_NAMES, storage_path
from viewkit import build_store


@pytest.fixture(params=BACKEND_NAMES)
def built(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(backend name, storage path) of a fresh store holding one session of each ``viewkit.STATUSES``."""
    private = tmp_path / "store"
    private.mkdir(mode=0o700)
    storage = storage_path(request.param, private)
    build_store(request.param, storage)
    yield request.param, storage
