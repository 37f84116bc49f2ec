"""Following a live session: a cold ``view`` against the same instance's ``view`` after one appended turn.

    python benchmarks/bench_follow.py [--events 202000] [--runs 7] [--backend NAME]... [--workdir DIR] [--quick]

For every backend (jsonl-zstd, jsonl-none, sqlite) one ``--events`` session (202k by default, the issue-12
"202k" session, written once under ``--workdir`` and reused) is read by a fresh store (cold ``view``);
another store then appends one closed turn (10 events: turn/start, user/message, step/start, 5 text
deltas packed as one chunk row, step/end, turn/end), and the first store's next ``view`` is timed
(incremental: ``persistence.incremental``).  JSONL is timed twice: ``view()`` and ``view(raw=True)``
(what the window's follow asks for: the Raw tab grows from the same read).  The turn is then removed
again (JSONL: truncated away; SQLite: its rows deleted), so every run starts from the same log.

Printed per backend and mode: median cold ms, median incremental ms, their ratio (issue 25 target: at
most 0.15), the read path each incremental view took (``extended`` expected), and whether it equalled a
fresh store's view.  Medians of ``--runs`` (at least 5).  Absolute times vary with the machine's load;
the ratio is measured within one run, cold and incremental alternating.

The window's follow (another process appends, the open timeline shows it; issue 25 target: under 60 ms)
is measured by ``python benchmarks/bench_gui.py --skip-list`` (``follow ms``), on the same generated
sessions when given the same ``--workdir``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Final

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from common import BIG_ID, big_session, open_store_at, take_back  # noqa: E402
from synthetic import closed_turn  # noqa: E402

from persistence.incremental import STATS  # noqa: E402

BACKENDS: Final = ("jsonl-zstd", "jsonl-none", "sqlite")
DEFAULT_EVENTS: Final = 202_000
QUICK_EVENTS: Final = 3_000  # ``--quick``: a smoke run (tests/benchmarks), the ratios mean nothing there
TARGET_RATIO: Final = 0.15  # issue 25: incremental view at most 0.15x of a cold view


def same_view(a: Any, b: Any) -> bool:
    """Whether two views agree on everything a fresh read decides."""
    return (
        a.diagnosis == b.diagnosis
        and a.header == b.header
        and a.closer_start == b.closer_start
        and a.closers == b.closers
        and a.torn == b.torn
        and len(a.events) == len(b.events)
        and a.events.record_table() == b.events.record_table()
        and (a.raw is None) == (b.raw is None)
        and (a.raw is None or a.raw.data == b.raw.data)
    )


async def one_run(kind: str, root: str, raw: bool) -> tuple[float, float, str, bool]:
    """(cold ms, incremental ms, the path the incremental view took, equal to a fresh view)."""
    reader = open_store_at(kind, root)
    writer = open_store_at(kind, root)
    path = None
    try:
        t0 = time.perf_counter()
        cold = await reader.view(BIG_ID, raw=raw)
        t_cold = time.perf_counter() - t0
        n = cold.closer_start
        last = cold.events.record_table()[n - 1]
        if kind != "sqlite":
            loc = reader.locate(cold.header) if cold.header is not None else None
            path = loc.path if loc is not None else None
        size = os.path.getsize(path) if path else 0
        turns = [
            ev["data"]["turn"] for _i, ev in cold.events.record_table().scalars(max(0, n - 5000), n) if ev["type"] == "turn/start"
        ]
        await writer.append(BIG_ID, closed_turn(n, (max(turns) if turns else 0) + 1, int(last["time"]) + 1, deltas=5))
        STATS.reset()
        t0 = time.perf_counter()
        grown = await reader.view(BIG_ID, raw=raw)
        t_inc = time.perf_counter() - t0
        taken = "extended" if STATS.extended else "whole" if STATS.whole else "unchanged"
        fresh_store = open_store_at(kind, root)
        try:
            fresh = await fresh_store.view(BIG_ID, raw=raw)
        finally:
            await fresh_store.close()
        equal = same_view(grown, fresh) and grown.closer_start == n + 10
    finally:
        await reader.close()
        await writer.close()
        take_back(kind, root, path, size, n)
    return t_cold * 1000, t_inc * 1000, taken, equal


async def bench(kind: str, root: str, raw: bool, runs: int) -> dict[str, Any]:
    cold, inc, paths, equal = [], [], set(), True
    for _ in range(runs):
        c, i, taken, eq = await one_run(kind, root, raw)
        cold.append(c)
        inc.append(i)
        paths.add(taken)
        equal = equal and eq
    c, i = statistics.median(cold), statistics.median(inc)
    return {"cold_ms": c, "incremental_ms": i, "ratio": i / c, "paths": ",".join(sorted(paths)), "equal": equal}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=DEFAULT_EVENTS)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--backend", action="append", choices=BACKENDS)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "sessionscope-bench-follow"))
    ap.add_argument("--quick", action="store_true", help=f"a {QUICK_EVENTS}-event session (a smoke run)")
    ap.add_argument("--json", help="also write the results to this JSON file (read by bench_scale.py)")
    args = ap.parse_args()
    if args.quick:
        args.events = QUICK_EVENTS
    runs = max(5, args.runs)
    os.makedirs(args.workdir, exist_ok=True)
    results: list[dict[str, Any]] = []
    print(f"{'backend':12s} {'mode':9s} {'cold ms':>8s} {'incr ms':>8s} {'ratio':>6s} {'<=0.15':>6s} {'path':>9s} {'equal':>6s}")
    for kind in [k for k in BACKENDS if not args.backend or k in args.backend]:
        root = big_session(args.workdir, kind, args.events)
        for raw in (False, True) if kind != "sqlite" else (False,):
            r = asyncio.run(bench(kind, root, raw, runs))
            mode = "view(raw)" if raw else "view()"
            results.append({"backend": kind, "mode": mode, "runs": runs, **r})
            ok = "yes" if r["ratio"] <= TARGET_RATIO else "NO"
            print(
                f"{kind:12s} {mode:9s} {r['cold_ms']:8.1f} {r['incremental_ms']:8.1f} {r['ratio']:6.3f} {ok:>6s} "
                f"{r['paths']:>9s} {('yes' if r['equal'] else 'NO'):>6s}",
                flush=True,
            )
    print(f"medians of {runs} runs; cold and incremental alternate within each run")
    if args.json:
        with open(args.json, "wb") as f:
            f.write(json.dumps({"events": args.events, "target": TARGET_RATIO, "rows": results}).encode())


if __name__ == "__main__":
    main()
