"""The insight and export tests never touch the user's folders: every test gets its own cache and data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.paths import CACHE_DIR_ENV, DATA_DIR_ENV


@pytest.fixture(autouse=True)
def private_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    return cache
