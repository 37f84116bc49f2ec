"""``benchmarks/bench_follow.py`` still runs (issue 25): at ``--quick`` size every backend's view after an
appended turn took the incremental path and equalled a fresh store's view.  Speed is never asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_bench_follow_quick_extends_and_matches_a_fresh_read(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_follow.py"), "--quick", "--runs", "5", "--workdir", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.split()[:1] in (["jsonl-zstd"], ["jsonl-none"], ["sqlite"])]
    assert {(r[0], r[1]) for r in rows} == {
        ("jsonl-zstd", "view()"),
        ("jsonl-zstd", "view(raw)"),
        ("jsonl-none", "view()"),
        ("jsonl-none", "view(raw)"),
        ("sqlite", "view()"),
    }, proc.stdout
    for row in rows:
        assert row[-2:] == ["extended", "yes"], proc.stdout  # the path taken, and equal to a fresh view
