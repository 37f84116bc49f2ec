"""``benchmarks/bench_search.py`` still runs (a smoke run at ``--quick`` sizes; speed is never asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_search.py"

pytestmark = pytest.mark.timeout(300)


def test_bench_search_quick_prints_every_measurement(tmp_path: Path) -> None:
    env = {**os.environ, "SESSIONSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--repeat", "2", "--workdir", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for needle in ("cold index:", "index size:", "query p95", "append -> searchable", "jsonl-zstd: 5,", "target <"):
        assert needle in out, (needle, out)
