"""Fixtures every diagnosis-cache test shares: a private cache folder, and a spy on which sessions were judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import app.diagnosis.parallel as parallel
from app.diagnosis.verdicts import Verdict


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own cache folder (the window tests' conftest points every test at one shared folder)."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("SESSIONSCOPE_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The session ids read (not taken from the cache) by the command line, in this process."""
    seen: list[str] = []
    real = parallel.judge

    async def spy(store: Any, session_id: str, place: str = "", expected: str | None = None) -> Verdict:
        seen.append(session_id)
        return await real(store, session_id, place, expected)

    monkeypatch.setattr(parallel, "judge", spy)
    return seen
