"""The search tests never touch the user's cache folder: every test gets its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.paths import CACHE_DIR_ENV


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))
    return cache
