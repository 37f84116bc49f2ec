"""The benchmarks still run (issue 12): a smoke run at ``--quick`` sizes, exit status and table only.

Speed is never asserted here (numbers vary by machine and load); this only keeps the scripts from
rotting while the engine under them changes.  Each takes a few seconds at ``--quick`` sizes (the brief's
bar for ``@pytest.mark.slow`` is ~10 s), so both run in the default suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
BACKENDS = ("jsonl-zstd", "jsonl-none", "sqlite")


def _run(script: str, *args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
    )


def test_bench_engine_quick_prints_the_table(tmp_path: Path) -> None:
    proc = _run("bench_engine.py", "--quick", "--repeat", "1", "--workdir", str(tmp_path / "work"), cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = [line for line in lines if line.startswith("backend") and "ours/floor" in line and "ours/upstream" in line]
    assert len(header) == 1, proc.stdout
    for backend in BACKENDS:
        ops = {line.split()[1] for line in lines if line.startswith(backend + " ")}
        assert {"inspect", "load", "read_from(tail)", "list", "list_snapshots", "RSS"} <= ops, (backend, proc.stdout)
    assert any(line.startswith("jsonl-zstd  read_raw") for line in lines), proc.stdout


def test_bench_gui_quick_measures_every_backend(tmp_path: Path) -> None:
    proc = _run(
        "bench_gui.py", "--quick", "--skip-list", "--skip-follow", "--workdir", str(tmp_path / "work"), cwd=tmp_path, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("backend") and "full index ms" in line for line in lines), proc.stdout
    for backend in BACKENDS:
        assert any(line.startswith(backend + " ") for line in lines), (backend, proc.stdout)
