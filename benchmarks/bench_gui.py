"""Desktop window benchmark (offscreen). Prints numbers; asserts nothing.

    python benchmarks/bench_gui.py [--sessions 10000] [--events 202000] [--backend NAME]... [--workdir DIR]
        [--skip-list] [--skip-session] [--skip-follow] [--quick]

1. A JSONL root with ``--sessions`` small sessions: time to the first rows, to the full header listing,
   to every row diagnosed, and the longest GUI-thread stall meanwhile.
2. For EVERY backend (jsonl-zstd, jsonl-none, sqlite), one ``--events`` session (202,761 events by
   default: the issue-12 "202k" session): time to the first timeline content at the tail, to the first
   view with raw (timeline tail + raw text: the loader's ``loaded``), to the full index, raw lines, the
   longest GUI-thread stall meanwhile, peak RSS, and how long after another writer's flushed append the
   open timeline shows the new turn.

Each measurement runs in a fresh subprocess (one for the listing, one per backend) so one window's
peak RSS and caches cannot pollute the next.  Issue-12 targets, judged per backend: full index
< 500 ms, first view with raw < 300 ms, peak RSS < 300 MB (reported in MiB, as this script always has).

Roots are generated once under ``--workdir`` (default: the temp dir) and reused by later runs.
Stalls are measured by a 5 ms precise timer on the GUI thread: the largest gap between two ticks
minus the interval.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Final

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
os.environ["QT_QPA_PLATFORM"] = "offscreen"  # never a visible window, on any machine

# Peak RSS in MiB: VmHWM on Linux, since a child's ``ru_maxrss`` starts at its parent's peak and this
# parent may have just written 202k events (bench_gui_search.py imports it from here).
from bench_engine import peak_rss_mb  # noqa: E402
from common import BIG_ID, big_session, take_back, until  # noqa: E402
from synthetic import closed_turn, session_events  # noqa: E402

from persistence import JsonlSessionPersistence, SessionHeader, js_dumps  # noqa: E402
from persistence.jsonl.frames import compress_frame, scan_frames  # noqa: E402

BACKENDS: Final = ("jsonl-zstd", "jsonl-none", "sqlite")
DEFAULT_EVENTS: Final = 202_000
DEFAULT_SESSIONS: Final = 10_000
QUICK_EVENTS: Final = 3_000
QUICK_SESSIONS: Final = 200
RESULT_PREFIX: Final = "RESULT "

# Issue-12 targets for the 202k-event session, on every backend.
TARGET_INDEX_S: Final = 0.500
TARGET_FIRST_VIEW_S: Final = 0.300
TARGET_PEAK_RSS_MB: Final = 300.0


# ---------------------------------------------------------------- roots


def build_many(root: str, n: int) -> None:
    """``n`` JSONL-zstd sessions of ~60 events: one written by the engine, the rest share its body frames."""
    done = root + ".complete"
    if os.path.exists(done):
        return
    shutil.rmtree(root, ignore_errors=True)
    template_root = root + ".template"
    shutil.rmtree(template_root, ignore_errors=True)
    template_meta = {"version": 0, "id": "template", "createdAt": 1, "cwd": "/bench/p0"}

    async def template() -> bytes:
        store = JsonlSessionPersistence(template_root)
        await store.create(template_meta)
        await store.append("template", session_events(60, seed=3))
        await store.close()
        loc = store.locate(template_meta)
        assert loc is not None
        with open(loc.path, "rb") as f:
            data = f.read()
        ranges, _ = scan_frames(data)
        return data[ranges[0][1] :]

    body = asyncio.run(template())
    shutil.rmtree(template_root, ignore_errors=True)
    locator = JsonlSessionPersistence(root)
    for i in range(n):
        cwd = f"/bench/project-{i % 20}"
        meta = {"version": 0, "id": f"s-{i:06d}", "createdAt": 1_767_225_600_000 + i, "cwd": cwd}
        loc = locator.locate(meta)
        assert loc is not None
        os.makedirs(os.path.dirname(loc.path), exist_ok=True)
        header = compress_frame(js_dumps(SessionHeader.from_json(meta).header_line()) + b"\n")
        with open(loc.path, "wb") as f:
            f.write(header + body)
    open(done, "w").close()


# ---------------------------------------------------------------- measuring (inside a child process)


class StallMeter:
    """Largest gap between ticks of a 5 ms timer on the GUI thread, minus the interval."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.interval = 0.005
        self.max_gap = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(int(self.interval * 1000))
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.max_gap = max(self.max_gap, now - self._last)
        self._last = now

    def start(self) -> None:
        self.max_gap = 0.0
        self._last = time.perf_counter()
        self._timer.start()

    def max_gap_ms(self) -> float:
        return max(0.0, self.max_gap - self.interval) * 1000

    def stop_ms(self) -> float:
        self._timer.stop()
        return max(0.0, self.max_gap - self.interval) * 1000


async def bench_list(root: str, out: dict[str, Any]) -> None:
    from app.gui.window.main_window import MainWindow

    w = MainWindow(restore_geometry=False)
    w.show()
    meter = StallMeter()
    meter.start()
    t0 = time.perf_counter()
    w.open_root(root)
    t_first = await until(lambda: w.session_model.rowCount() > 0)
    t_full = await until(w.controller.listed.is_set)
    out["list_sessions"] = w.session_model.rowCount()
    out["list_first_rows_s"] = t_first - t0
    out["list_full_s"] = t_full - t0
    out["list_gui_stall_max_ms_until_listed"] = meter.max_gap_ms()
    t_details = await until(lambda: not w.session_model.status_counts().get("pending"), step=0.05)
    out["list_all_diagnosed_s"] = t_details - t0
    out["list_gui_stall_max_ms"] = meter.stop_ms()
    await w.shutdown()
    w.close()


async def bench_session(kind: str, root: str, out: dict[str, Any], follow: bool) -> None:
    from app.gui.window.main_window import MainWindow

    w = MainWindow(restore_geometry=False)
    w.show()
    indexed: list[float] = []
    ready: list[float] = []
    loaded: list[float] = []
    w.loader.indexed.connect(lambda _k: indexed.append(time.perf_counter()))
    w.loader.timeline_ready.connect(lambda _k: ready.append(time.perf_counter()))
    w.loader.loaded.connect(lambda _k: loaded.append(time.perf_counter()))
    w.open_root(root)
    await until(w.controller.listed.is_set)
    await until(lambda: not w.session_model.status_counts().get("pending"), step=0.05)
    await until(lambda: bool(w.opened_keys))  # the window opens the first row by itself; wait it out
    await until(lambda: bool(indexed))
    w.loader.close()
    await asyncio.sleep(0.2)
    ready.clear()
    indexed.clear()
    loaded.clear()
    w.opened_keys.clear()
    engine = w.controller.store.engine if w.controller.store is not None else None
    cache = getattr(engine, "_cache", None)
    if cache is not None:
        cache.clear()  # measure a cold open: the engine must parse the log again
    row = w.session_model.find_id(BIG_ID)
    if row is None:
        raise RuntimeError(f"the window did not list {BIG_ID}")
    meter = StallMeter()
    meter.start()
    t0 = time.perf_counter()
    w.open_session_key(row.key)
    await until(lambda: bool(ready) and w.timeline_model.rowCount() > 0)
    t_first = ready[0]
    await until(lambda: bool(loaded))
    await until(lambda: bool(indexed))
    out["backend"] = kind
    out["session_events"] = len(w.timeline_model.records)
    out["session_blocks"] = len(w.timeline_model.spans)
    out["timeline_first_content_s"] = t_first - t0
    out["first_view_with_raw_s"] = loaded[0] - t0
    out["timeline_full_index_s"] = indexed[0] - t0
    out["raw_lines"] = w.raw_model.rowCount()
    out["session_gui_stall_max_ms"] = meter.stop_ms()
    out["session_peak_rss_mb"] = peak_rss_mb()
    if follow:
        try:
            out["follow_append_ms"] = await follow_latency(w, kind, root)
        except TimeoutError:
            out["follow_append_ms"] = math.nan  # the window never showed the appended turn
    await w.shutdown()
    w.close()


def _next_turn(records: Any, n: int) -> list[dict[str, Any]]:
    """A small closed turn continuing a log of ``n`` stored events."""
    turns = [r["data"]["turn"] for r in records[max(0, n - 5000) : n] if r.get("type") == "turn/start"]
    return closed_turn(n, (max(turns) if turns else 0) + 1, int(records[n - 1].get("time", 0)) + 1)


WRITER = """
import asyncio, sys, time, orjson
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
from common import open_store_at

async def main():
    store = open_store_at(sys.argv[3], sys.argv[4])
    try:
        await store.append(sys.argv[5], orjson.loads(sys.argv[6]))  # returns once durable
        print(repr(time.time()), flush=True)
    finally:
        await store.close()

asyncio.run(main())
"""


async def follow_latency(w: Any, kind: str, root: str) -> float:
    """Milliseconds from another process's flushed append to the open timeline showing it.

    The appended turn is removed afterwards (JSONL: truncated away; SQLite: its rows deleted) so the
    generated root stays as it was for the next run.
    """
    import orjson

    before = w.timeline_model.stored_count
    batch = _next_turn(w.timeline_model.records, before)
    await until(lambda: w.controller.watcher.active)
    path = w.session_model.find_id(BIG_ID).path if kind != "sqlite" else root
    size = os.path.getsize(path)
    seen: list[float] = []

    def check() -> bool:
        if not seen and w.timeline_model.stored_count > before:
            seen.append(time.time())  # wall clock: comparable with the writer process's stamp
        return bool(seen)

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        WRITER,
        os.path.join(HERE, ".."),
        HERE,
        kind,
        root,
        BIG_ID,
        orjson.dumps(batch).decode(),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        flushed = float((await proc.stdout.readline()).decode() or "nan") if proc.stdout else float("nan")
        await until(check, timeout=60)
        if await proc.wait() != 0:
            raise RuntimeError("the writer process failed")
    finally:
        take_back(kind, root, path, size, before)
    return (seen[0] - flushed) * 1000


def run_child(mode: str, root: str, follow: bool) -> None:
    """One window measurement in this (fresh) process; prints ``RESULT {json}``."""
    import qasync
    from PySide6.QtWidgets import QApplication  # before the warm-up thread starts: no two threads import Qt

    from app.gui.runtime.responsiveness import apply_responsiveness_knobs
    from app.gui.runtime.worker_processes import shutdown_pool, warm_pool

    warm_pool()  # as the app does at start-up: worker processes start while Qt sets up the window
    apply_responsiveness_knobs()

    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    out: dict[str, Any] = {}

    async def run() -> None:
        if mode == "list":
            await bench_list(root, out)
        else:
            await bench_session(mode, root, out, follow)

    with loop:
        loop.run_until_complete(run())
    shutdown_pool()
    out["peak_rss_mb"] = peak_rss_mb()
    print(RESULT_PREFIX + json.dumps(out), flush=True)


# ---------------------------------------------------------------- the parent: build, run children, print


def child(mode: str, root: str, follow: bool) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--child-root", root]
    if not follow:
        cmd.append("--skip-follow")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    results = [line for line in proc.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if proc.returncode != 0 or not results:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise RuntimeError(f"the {mode} measurement failed (exit {proc.returncode})")
    got: dict[str, Any] = json.loads(results[-1][len(RESULT_PREFIX) :])
    return got


def _verdict(ok: bool) -> str:
    return "yes" if ok else "NO"


def print_sessions(results: list[dict[str, Any]]) -> None:
    print(
        f"{'backend':10s} {'events':>8s} {'full index ms':>14s} {'<500':>5s} {'first view+raw ms':>18s} {'<300':>5s} "
        f"{'peak RSS MiB':>13s} {'<300':>5s} {'first content ms':>17s} {'stall ms':>9s} {'follow ms':>10s} {'raw lines':>10s}"
    )
    held = 0
    for r in results:
        index, first, rss = r["timeline_full_index_s"], r["first_view_with_raw_s"], r["session_peak_rss_mb"]
        oks = (index < TARGET_INDEX_S, first < TARGET_FIRST_VIEW_S, rss < TARGET_PEAK_RSS_MB)
        held += sum(oks)
        print(
            f"{r['backend']:10s} {r['session_events']:8d} {index * 1000:14.0f} {_verdict(oks[0]):>5s} "
            f"{first * 1000:18.0f} {_verdict(oks[1]):>5s} {rss:13.0f} {_verdict(oks[2]):>5s} "
            f"{r['timeline_first_content_s'] * 1000:17.0f} {r['session_gui_stall_max_ms']:9.1f} "
            f"{r.get('follow_append_ms', math.nan):10.0f} {r['raw_lines']:10d}"
        )
    print(f"targets held: {held}/{3 * len(results)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    ap.add_argument("--events", type=int, default=DEFAULT_EVENTS)
    ap.add_argument("--backend", action="append", choices=BACKENDS, help="only this backend's session (repeatable)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "sessionscope-bench"))
    ap.add_argument("--skip-list", action="store_true")
    ap.add_argument("--skip-session", action="store_true")
    ap.add_argument("--skip-follow", action="store_true", help="skip the follow-an-append latency")
    ap.add_argument("--quick", action="store_true", help=f"small sizes ({QUICK_SESSIONS} sessions, {QUICK_EVENTS} events)")
    ap.add_argument("--json", help="also write the results to this JSON file (read by bench_scale.py)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-root", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_child(args.child, args.child_root, not args.skip_follow)
        return
    if args.quick:
        args.sessions, args.events = QUICK_SESSIONS, QUICK_EVENTS
    os.makedirs(args.workdir, exist_ok=True)
    kinds = [k for k in BACKENDS if not args.backend or k in args.backend]
    t = time.perf_counter()
    many = os.path.join(args.workdir, f"many-{args.sessions}")
    if not args.skip_list:
        build_many(many, args.sessions)
    roots = {} if args.skip_session else {kind: big_session(args.workdir, kind, args.events) for kind in kinds}
    print(f"generate_roots_s {time.perf_counter() - t:.3f}")

    report: dict[str, Any] = {"sessions": args.sessions, "events": args.events}
    if not args.skip_list:
        report["list"] = child("list", many, False)
        for k, v in report["list"].items():
            print(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}")
    if roots:
        results = []
        for kind, root in roots.items():
            r = child(kind, root, not args.skip_follow)
            for k, v in r.items():
                print(f"{kind}.{k} {v:.3f}" if isinstance(v, float) else f"{kind}.{k} {v}", flush=True)
            results.append(r)
        print_sessions(results)
        report["backends"] = results
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f)


if __name__ == "__main__":
    main()
