"""``benchmarks/bench_diagnosis.py`` still runs (a smoke run at a tiny size: its table, never its speed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_diagnosis.py"

pytestmark = pytest.mark.timeout(300)


def test_bench_diagnosis_prints_every_ratio(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONSCOPE_CACHE_DIR"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    args = ["--sessions", "30", "--runs", "1", "--workdir", str(tmp_path / "work")]
    proc = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=280, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for line in ("sessionscope list", "verify (cold)", "verify (warm)", "one core", "window warm reopen"):
        assert line in out, out
    # Every row's status from the cache (the session the window opens may get its own from that load first).
    found = re.search(r"(\d+) statuses from the cache", out)
    assert found is not None and int(found[1]) >= 29, out
