"""The backend fixture of the contract suite: one fresh, private store per test and parameter.

``jsonl-zstd`` and ``jsonl-none`` always run; ``sqlite`` runs only when
``persistence.sqlite.backend`` imports (it is skipped, with the reason, otherwise).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_backends import BACKEND_PARAMS, BackendKit


@pytest.fixture(params=BACKEND_PARAMS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BackendKit]:
    private = tmp_path / "store"
    private.mkdir(mode=0o700)
    os.chmod(private, 0o700)
    storage = private / "sessions.sqlite" if request.param == "sqlite" else private / "root"
    kit = BackendKit(request.param, storage)
    yield kit
    kit.close_all()
