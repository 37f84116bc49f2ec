"""The record helpers' own promises: a Qt-free package every reader of records shares, with one usage type."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from guikit import make_turn

import app.insight
import app.records
from app.timeline import derive

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_records_loads_no_qt_and_no_viewer_code() -> None:
    forbidden = (
        "PySide6",
        "shiboken6",
        "app.gui",
        "app.actions",
        "app.cli",
        "app.timeline",
        "app.insight",
        "app.search",
        "app.export",
    )
    code = (
        "import sys, app.records; "
        f"bad = sorted(m for m in sys.modules if any(m == f or m.startswith(f + '.') for f in {forbidden!r})); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_timeline_and_the_statistics_share_one_usage_type() -> None:
    records = make_turn(0, 1, "hello")
    step = derive(records)[0].children[0]
    assert step.usage is not None
    assert type(step.usage) is app.records.Tokens is app.insight.Tokens
    stats = app.insight.fold_stats(records)
    assert stats.tokens == step.usage == app.records.Tokens(input=100, output=20)


def test_insight_search_and_the_exports_read_records_without_the_timeline() -> None:
    code = (
        "import sys, app.insight, app.search, app.search.extract, app.export, app.export.transcript; "
        "bad = sorted(m for m in sys.modules if m == 'app.timeline' or m.startswith('app.timeline.')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
