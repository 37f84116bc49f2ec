"""``benchmarks/bench_sqlite.py`` still runs (issue 25 item 4): at a small size it prints every row of its
table with a floor beside each number.  Speed is never asserted (numbers vary by machine and load)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_sqlite.py"


def test_bench_sqlite_prints_each_operation_beside_its_floor(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--sessions", "100", "--repeat", "5", "--workdir", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {line.split("  ")[0].strip(): line for line in proc.stdout.splitlines() if line.startswith(("many ", "rich ", "one "))}
    for store in ("many", "one"):
        for op in ("list", "list_snapshots", "list_entries"):
            for mode in ("warm", "fresh"):
                assert f"{store} {op} ({mode})" in rows, proc.stdout
        for op in ("inspect small (fresh)", "load small (fresh)", "read_from(0) small (fresh)"):
            assert re.search(r"\)\s+[\d.]+\s+[\d.]+\s+[\d.]+x", rows[f"{store} {op}"]), rows  # ours, floor, ratio
    for op in ("list", "list_snapshots", "list_entries"):
        assert re.search(r"\)\s+[\d.]+\s+[\d.]+\s+[\d.]+x", rows[f"rich {op} (fresh)"]), rows  # ours, floor, ratio
    assert "upstream figures are for 10,000 sessions" in proc.stdout
