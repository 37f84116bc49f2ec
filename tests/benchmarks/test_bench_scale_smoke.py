"""``benchmarks/bench_scale.py`` still runs (issue 25 item 5): at ``--quick`` sizes every step finishes
and the summary table names each issue-25 target once per backend.  Speed is never asserted.

About 30-60 s on 2 cores (it runs six benchmarks, each in a subprocess, and opens offscreen windows),
so it is marked slow: ``pytest -m slow tests/benchmarks/test_bench_scale_smoke.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.slow
def test_bench_scale_quick_prints_every_target(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_scale.py"), "--quick", "--workdir", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    table = proc.stdout[proc.stdout.index("issue 25 scale summary") :]
    assert "machine: " in table and "load average" in table and "sqlite " in table, table
    for section in ("follow", "gui", "diagnosis", "search", "engine", "sqlite"):
        assert f"-- {section}\n" in table, (section, table)
    for backend in ("jsonl-zstd", "jsonl-none", "sqlite"):
        assert f"follow {backend} view() <= 0.15x cold" in table, table
        assert f"window follow {backend} < 60 ms" in table, table
        assert f"inspect 3206 {backend}" in table and f"load 3206 {backend}" in table, table
    for target in ("verify cold <= 6x list", "verify warm <= 1.5x list", "warm reopen: every status <= 0.5 s"):
        assert target in table, table
    assert "cold search (CLI) <= 12x list" in table and "sqlite many list (fresh)" in table, table
    assert "targets not judged at --quick sizes" in table, table  # quick sizes are not the targets' sizes
