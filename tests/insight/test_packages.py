"""The packages' own promise: importing them (and exporting a session) loads no Qt and no window code, and
the exports load neither the actions nor the command line (the command line will import the exports)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("app.insight", ("PySide6", "shiboken6", "app.gui", "app.cli", "app.actions", "app.export")),
        ("app.export", ("PySide6", "shiboken6", "app.gui", "app.cli", "app.actions")),
    ],
)
def test_importing_loads_no_qt_and_no_window_code(package: str, forbidden: tuple[str, ...]) -> None:
    code = (
        f"import sys, {package}; "
        f"bad = sorted(m for m in sys.modules if any(m == f or m.startswith(f + '.') for f in {forbidden!r})); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_export_run_loads_no_qt(tmp_path: Path) -> None:
    code = (
        "import sys, asyncio, json; sys.path.insert(0, 'tests'); import sessionkit as sk; "
        "from persistence import open_store; from app.export import run_export; "
        f"root = {str(tmp_path / 'root')!r}; "
        "s = open_store(root, 'jsonl-zstd'); "
        "asyncio.run(s.create(sk.meta('x', '/w'))); asyncio.run(s.append('x', sk.one_turn_log())); asyncio.run(s.close()); "
        f"text, code = run_export(root, 'x', 'html', {str(tmp_path / 'x.html')!r}); "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6') or m.startswith('app.gui')); "
        "print(code, bad); sys.exit(1 if bad or code else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "x.html").is_file()
