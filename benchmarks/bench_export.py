"""Export benchmark (issue 14). Prints numbers beside the issue's targets; asserts nothing.

    python benchmarks/bench_export.py [--events 202000] [--backend NAME]... [--format FMT]... [--repeat N]
        [--dashboard 10000] [--skip-dashboard] [--workdir DIR] [--quick]

1. One ``--events`` session (``synthetic.session_events``: 202,761 events for the default, the issue's
   "202k" session) written through the engine per ``--backend`` (default jsonl-zstd), then exported in
   each ``--format`` (default md, html, jsonl, bundle).  Every export runs in a fresh process, so its
   peak RSS (``VmHWM``: the whole process, interpreter and imports included) is the export's alone;
   the time is the ``export_session`` call (read + fold + encode + fsync + rename), median of ``--repeat``.
   Targets (issue 14): Markdown and HTML under 10 s and under 300 MB RSS.  JSONL and the bundle
   have no target and are printed for reference.
2. The dashboard: ``--dashboard`` cached session summaries (folded from generated sessions of
   varied sizes, spread over 90 days and 40 projects) in a statistics cache file, then the time to
   open a reader and compute the root totals (``aggregate``), with and without a price table,
   median of ``--repeat``.  Target (issue 14): under 1 s for 10,000 sessions once computed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from typing import Any, Final

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from synthetic import batches, session_events  # noqa: E402

from app.export import export_session  # noqa: E402
from app.insight import InsightCache, ModelPrice, PriceTable, RootFilter, aggregate, fold_stats, summary_of  # noqa: E402
from persistence import open_store  # noqa: E402

DEFAULT_EVENTS: Final = 202_000  # session_events(202_000) yields 202,761 events
QUICK_EVENTS: Final = 5_000
DEFAULT_DASHBOARD: Final = 10_000
QUICK_DASHBOARD: Final = 500
BACKENDS: Final = ("jsonl-zstd", "jsonl-none", "sqlite")
FORMATS: Final = ("md", "html", "jsonl", "bundle")
BIG_ID: Final = "bench-export"
MIB: Final = 1024 * 1024

# Issue-14 targets.
TARGET_EXPORT_S: Final = 10.0  # Markdown and HTML of a 200k-event session
TARGET_EXPORT_RSS_MB: Final = 300.0
TARGET_DASHBOARD_S: Final = 1.0  # root totals of 10,000 cached sessions
TARGETED: Final = ("md", "html")


def peak_rss_bytes() -> int:
    """This process's own peak resident set: ``VmHWM`` on Linux (``ru_maxrss`` elsewhere; see bench_engine)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def store_path(work: str, backend: str) -> str:
    base = os.path.join(work, backend)
    return os.path.join(base, "sessions.sqlite") if backend == "sqlite" else base


async def write_big(path: str, backend: str, n_events: int) -> int:
    if backend == "sqlite":
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    events = session_events(n_events)
    store = open_store(path, backend)
    try:
        await store.create({"version": 0, "id": BIG_ID, "createdAt": 1_767_225_600_000, "cwd": "/bench/project"})
        for part in batches(events):
            await store.append(BIG_ID, part)
    finally:
        await store.close()
    return len(events)


def child(backend: str, path: str, fmt: str, out: str) -> None:
    """In a fresh process: one export, its time and this process's peak RSS (printed as JSON)."""
    gc.collect()

    async def go() -> Any:
        store = open_store(path, backend, read_only=True, create=False)
        try:
            t0 = time.perf_counter()
            result = await export_session(store, BIG_ID, fmt, out, force=True)  # each repeat replaces the last one
            return time.perf_counter() - t0, result
        finally:
            await store.close()

    seconds, result = asyncio.run(go())
    print(json.dumps({"seconds": seconds, "peak": peak_rss_bytes(), "bytes": result.bytes, "events": result.events}))


def run_child(backend: str, path: str, fmt: str, out: str) -> dict[str, Any]:
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        backend,
        "--child-path",
        path,
        "--child-format",
        fmt,
        "--child-out",
        out,
    ]
    got = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(got.strip().splitlines()[-1]))


def bench_exports(args: argparse.Namespace, work: str) -> None:
    print(f"{'backend':10s} {'format':7s} {'seconds':>8s} {'peak RSS MB':>11s} {'output MB':>9s}  {'target':22s} holds")
    for backend in args.backend or ("jsonl-zstd",):
        path = store_path(work, backend)
        marker = path + f".{args.events}.complete"
        if not os.path.exists(marker):
            if os.path.exists(os.path.dirname(path) if backend == "sqlite" else path):
                shutil.rmtree(os.path.dirname(path) if backend == "sqlite" else path)
            t0 = time.perf_counter()
            n = asyncio.run(write_big(path, backend, args.events))
            open(marker, "w").close()
            print(f"# {backend}: wrote {n:,} events in {time.perf_counter() - t0:.1f} s")
        for fmt in args.format or FORMATS:
            out = os.path.join(work, f"out-{backend}.{fmt}")
            runs = [run_child(backend, path, fmt, out) for _ in range(args.repeat)]
            seconds = statistics.median(r["seconds"] for r in runs)
            peak_mb = max(r["peak"] for r in runs) / 1e6
            size_mb = runs[-1]["bytes"] / 1e6
            if fmt in TARGETED:
                target = f"< {TARGET_EXPORT_S:.0f} s, < {TARGET_EXPORT_RSS_MB:.0f} MB"
                holds = "yes" if seconds < TARGET_EXPORT_S and peak_mb < TARGET_EXPORT_RSS_MB else "NO"
            else:
                target, holds = "(reference)", "-"
            print(f"{backend:10s} {fmt:7s} {seconds:8.2f} {peak_mb:11.1f} {size_mb:9.1f}  {target:22s} {holds}")


def bench_dashboard(args: argparse.Namespace, work: str) -> None:
    n = args.dashboard
    root = os.path.join(work, "dashboard-root")
    os.makedirs(root, mode=0o700, exist_ok=True)
    store = open_store(root, "jsonl-zstd")
    cache = InsightCache(store, cache_file=os.path.join(work, f"dashboard-{n}.sqlite"))
    try:
        if len(cache.summaries()) != n:
            shapes = [fold_stats(session_events(size, seed=k)) for k, size in enumerate((40, 120, 400, 1200, 3000, 60, 200, 800))]
            t0 = time.perf_counter()
            for i in range(n):
                stats = shapes[i % len(shapes)]
                created = 1_767_225_600_000 + (i % 90) * 86_400_000 + i * 1000
                summary = replace(
                    summary_of("x", None, "ok", "balanced log", None, stats),
                    session_id=f"s-{i:05d}",
                    project=f"/bench/p{i % 40}",
                    created_ms=created,
                    revision=str(i),
                )
                cache.put(summary, stats)
            print(f"# dashboard: cached {n:,} session summaries in {time.perf_counter() - t0:.1f} s")
        prices = PriceTable("USD", {"deepseek/deepseek-chat": ModelPrice(0.27, 1.1, 0.07, 0.27)})
        for label, table in (("no prices", None), ("with prices", prices)):
            samples = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                conn = cache.reader()
                totals = aggregate(conn, RootFilter(), table)
                if conn is not cache.conn:
                    conn.close()
                samples.append(time.perf_counter() - t0)
            s = statistics.median(samples)
            holds = "yes" if s < TARGET_DASHBOARD_S else "NO"
            print(
                f"dashboard {n:,} sessions ({label}): {s * 1000:.0f} ms  ({len(totals.per_day)} days, "
                f"{len(totals.per_project)} projects)  target < {TARGET_DASHBOARD_S:.0f} s  {holds}"
            )
    finally:
        cache.close()
        asyncio.run(store.close())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=DEFAULT_EVENTS, help="events asked of the big session")
    ap.add_argument("--backend", action="append", choices=BACKENDS, help="only this backend (repeatable; default jsonl-zstd)")
    ap.add_argument("--format", action="append", choices=FORMATS, help="only this format (repeatable; default all)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per number (the median is printed)")
    ap.add_argument("--dashboard", type=int, default=DEFAULT_DASHBOARD, help="cached sessions of the dashboard benchmark")
    ap.add_argument("--skip-dashboard", action="store_true")
    ap.add_argument("--skip-exports", action="store_true")
    ap.add_argument("--workdir", help="build the stores here once and reuse them (default: a temp dir, removed)")
    ap.add_argument("--quick", action="store_true", help=f"small sizes ({QUICK_EVENTS} events, {QUICK_DASHBOARD} sessions)")
    ap.add_argument("--child", choices=BACKENDS, help=argparse.SUPPRESS)
    ap.add_argument("--child-path", help=argparse.SUPPRESS)
    ap.add_argument("--child-format", help=argparse.SUPPRESS)
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.child_path, args.child_format, args.child_out)
        return
    if args.quick:
        args.events, args.dashboard = QUICK_EVENTS, QUICK_DASHBOARD
    work = args.workdir or tempfile.mkdtemp(prefix="bench-export-")
    os.makedirs(work, exist_ok=True)
    # The benchmark's own cache and data folders: never the user's.
    os.environ.setdefault("SESSIONSCOPE_CACHE_DIR", os.path.join(work, "cache"))
    os.environ.setdefault("SESSIONSCOPE_DATA_DIR", os.path.join(work, "data"))
    try:
        if not args.skip_exports:
            bench_exports(args, work)
        if not args.skip_dashboard:
            bench_dashboard(args, work)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
