"""The package's own promises: it imports no Qt and no window code, and its span helpers agree with the fold."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from guikit import make_turn

from app.timeline import block_spans, derive, derive_growth, derive_older, derive_tail, older_start

ROOT = Path(__file__).resolve().parents[2]


def _shape(nodes: list[Any]) -> list[Any]:
    return [(n.key, n.label, n.summary, n.info, sorted(n.flags), n.seqs, _shape(n.children)) for n in nodes]


def _log(turns: int, *, open_last: bool = False) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for t in range(1, turns + 1):
        records += make_turn(len(records), t, f"prompt {t}", close=not (open_last and t == turns))
    return records


def test_importing_the_timeline_loads_no_qt_and_no_window_code() -> None:
    code = (
        "import sys, app.timeline; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6') or m.startswith('app.gui')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_tail_first_view_and_older_blocks_add_up_to_the_whole_fold() -> None:
    records = _log(300)
    whole = derive(records)
    spans, first, tail = derive_tail(records, len(records))
    assert spans == block_spans(records) and first > 0
    assert _shape(derive_older(records, spans, first)) + _shape(tail) == _shape(whole)


def test_a_grown_log_rederived_from_its_last_block_matches_the_whole_fold() -> None:
    before = _log(5, open_last=True)
    grown = before + make_turn(len(before), 6, "next")  # the open turn 5 stays open; turn 6 follows
    growth = derive_growth(grown, len(grown), block_spans(before))
    assert growth.spans == block_spans(grown)
    assert growth.from_span == len(block_spans(before)) - 1
    assert _shape(growth.nodes) == _shape(derive(grown)[growth.from_span :])
    empty = derive_growth(grown, len(grown), [])
    assert empty.from_span == 0 and _shape(empty.nodes) == _shape(derive(grown))


def test_load_older_steps_respect_their_budgets() -> None:
    spans = [(i * 10, i * 10 + 10) for i in range(100)]  # 100 blocks of 10 events
    assert older_start(spans, 100) == 60  # 40 blocks at most
    assert older_start(spans, 100, event_budget=25) == 98  # blocks wholly within 25 events of the end: 2
    assert older_start(spans, 100, event_budget=0) == 99  # always at least one block
    assert older_start(spans, 50, until_span=7) == 7
    assert older_start(spans, 50, until_span=70) == 49
    assert older_start(spans, 1) == 0
