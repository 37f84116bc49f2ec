"""Desktop window benchmark (offscreen). Prints numbers; asserts nothing.

    python benchmarks/bench_gui.py [--sessions 10000] [--events 200000] [--workdir DIR] [--skip-list] [--skip-session]

1. A root with ``--sessions`` small sessions: time to the first rows, to the full header listing, to
   every row diagnosed, and the longest GUI-thread stall meanwhile.
2. One ``--events`` session: time to the first timeline content at the tail, to the full index, raw
   lines, the longest GUI-thread stall meanwhile, peak RSS, and how long after another writer's
   flushed append the open timeline shows the new turn.

Roots are generated once under ``--workdir`` (default: the temp dir) and reused by later runs.
Stalls are measured by a 5 ms precise timer on the GUI thread: the largest gap between two ticks
minus the interval.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from synthetic import batches, session_events  # noqa: E402

from persistence import JsonlSessionPersistence  # noqa: E402
from persistence.jsonl import frames  # noqa: E402
from persistence.jsonl.paths import log_path  # noqa: E402
from persistence.model.header import SessionHeader  # noqa: E402
from persistence.model.jsontext import js_dumps  # noqa: E402

BIG_ID = "bench-big"


# ---------------------------------------------------------------- roots


def build_many(root: str, n: int) -> None:
    """``n`` sessions of ~60 events: one written by the engine, the rest share its body frames."""
    marker = os.path.join(root, ".complete")
    if os.path.exists(os.path.join(root, "..", f"many-{n}.complete")):
        return
    shutil.rmtree(root, ignore_errors=True)
    template_root = root + ".template"
    shutil.rmtree(template_root, ignore_errors=True)

    async def template() -> bytes:
        store = JsonlSessionPersistence(template_root)
        await store.create({"id": "template", "createdAt": 1, "cwd": "/bench/p0"})
        await store.append("template", session_events(60, seed=3))
        await store.close()
        path = log_path(template_root, "/bench/p0", "template", "zstd")
        data = open(path, "rb").read()
        ranges, _ = frames.scan_frames(data)
        return data[ranges[0][1] :]

    body = asyncio.run(template())
    shutil.rmtree(template_root, ignore_errors=True)
    for i in range(n):
        cwd = f"/bench/project-{i % 20}"
        meta = {"version": 0, "id": f"s-{i:06d}", "createdAt": 1_767_225_600_000 + i, "cwd": cwd}
        path = log_path(root, cwd, meta["id"], "zstd")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        header = frames.compress_frame(js_dumps(SessionHeader.from_json(meta).header_line()) + b"\n")
        with open(path, "wb") as f:
            f.write(header + body)
    open(os.path.join(root, "..", f"many-{n}.complete"), "w").close()
    del marker


def build_big(root: str, n_events: int) -> None:
    done = os.path.join(root, "..", f"big-{n_events}.complete")
    if os.path.exists(done):
        return
    shutil.rmtree(root, ignore_errors=True)

    async def write() -> None:
        store = JsonlSessionPersistence(root)
        await store.create({"id": BIG_ID, "createdAt": 1_767_225_600_000, "cwd": "/bench/big"})
        for batch in batches(session_events(n_events)):
            await store.append(BIG_ID, batch)
        await store.close()

    asyncio.run(write())
    open(done, "w").close()


# ---------------------------------------------------------------- measuring


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


async def until(pred: Any, timeout: float = 600.0, step: float = 0.002) -> float:
    t0 = time.perf_counter()
    while not pred():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("benchmark condition not reached")
        await asyncio.sleep(step)
    return time.perf_counter()


async def bench_list(root: str, n: int, out: dict[str, Any]) -> None:
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


async def bench_session(root: str, out: dict[str, Any]) -> None:
    from app.gui.window.main_window import MainWindow

    w = MainWindow(restore_geometry=False)
    w.show()
    indexed: list[float] = []
    ready: list[float] = []
    w.loader.indexed.connect(lambda _k: indexed.append(time.perf_counter()))
    w.loader.timeline_ready.connect(lambda _k: ready.append(time.perf_counter()))
    w.open_root(root)
    await until(w.controller.listed.is_set)
    await until(lambda: not w.session_model.status_counts().get("pending"), step=0.05)
    await until(lambda: bool(w.opened_keys))  # the window opens the first row by itself; wait it out
    w.loader.close()
    await asyncio.sleep(0.2)
    ready.clear()
    indexed.clear()
    w.opened_keys.clear()
    engine = w.controller.store.engine if w.controller.store is not None else None
    cache = getattr(engine, "_cache", None)
    if cache is not None:
        cache.clear()  # measure a cold open: the engine must parse the log again
    meter = StallMeter()
    meter.start()
    t0 = time.perf_counter()
    row = w.session_model.find_id(BIG_ID)
    w.open_session_key(row.key)
    await until(lambda: bool(ready) and w.timeline_model.rowCount() > 0)
    t_first = ready[0]
    await until(lambda: bool(w.opened_keys))
    t_loaded = time.perf_counter()
    await until(lambda: bool(indexed))
    out["session_events"] = len(w.timeline_model.records)
    out["session_blocks"] = len(w.timeline_model.spans)
    out["timeline_first_content_s"] = t_first - t0
    out["first_view_with_raw_s"] = t_loaded - t0
    out["timeline_full_index_s"] = indexed[0] - t0
    out["raw_lines"] = w.raw_model.rowCount()
    out["session_gui_stall_max_ms"] = meter.stop_ms()
    out["session_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["follow_append_ms"] = await follow_latency(w, root)
    await w.shutdown()
    w.close()


def _next_turn(records: Any, n: int) -> list[dict[str, Any]]:
    """A small closed turn continuing a log of ``n`` stored events."""
    turns = [r["data"]["turn"] for r in records[max(0, n - 5000) : n] if r.get("type") == "turn/start"]
    turn = (max(turns) if turns else 0) + 1
    t = int(records[n - 1].get("time", 0)) + 1
    return [
        {"type": "turn/start", "seq": n, "time": t, "data": {"turn": turn}},
        {
            "type": "user/message",
            "seq": n + 1,
            "time": t + 1,
            "surfaceOp": "append",
            "data": {
                "id": f"follow-{n}",
                "role": "user",
                "content": [{"type": "text", "text": "follow me"}],
                "source": {"kind": "user"},
            },
        },
        {"type": "turn/end", "seq": n + 2, "time": t + 2, "data": {"turn": turn, "reason": {"kind": "completed"}}},
    ]


WRITER = """
import asyncio, sys, time, orjson
sys.path.insert(0, sys.argv[1])
from persistence import JsonlSessionPersistence

async def main():
    store = JsonlSessionPersistence(sys.argv[2])
    try:
        await store.append(sys.argv[3], orjson.loads(sys.argv[4]))  # returns once fsynced
        print(repr(time.time()), flush=True)
    finally:
        await store.close()

asyncio.run(main())
"""


async def follow_latency(w: Any, root: str) -> float:
    """Milliseconds from another process's flushed append to the open timeline showing it."""
    import orjson

    before = w.timeline_model.stored_count
    batch = _next_turn(w.timeline_model.records, before)
    await until(lambda: w.controller.watcher.active)
    path = w.session_model.find_id(BIG_ID).path
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
        os.truncate(path, size)  # leave the generated root as it was for the next run
    return (seen[0] - flushed) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "sessionscope-bench"))
    ap.add_argument("--skip-list", action="store_true")
    ap.add_argument("--skip-session", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    many = os.path.join(args.workdir, f"many-{args.sessions}")
    big = os.path.join(args.workdir, f"big-{args.events}")
    out: dict[str, Any] = {}
    t = time.perf_counter()
    if not args.skip_list:
        build_many(many, args.sessions)
    if not args.skip_session:
        build_big(big, args.events)
    out["generate_roots_s"] = time.perf_counter() - t

    import qasync
    from PySide6.QtWidgets import QApplication  # before the warm-up thread starts: no two threads import Qt

    from app.gui.runtime.responsiveness import apply_responsiveness_knobs
    from app.gui.runtime.worker_processes import warm_pool

    warm_pool()  # as the app does at start-up: worker processes start while Qt sets up the window
    apply_responsiveness_knobs()

    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def run_all() -> None:
        if not args.skip_list:
            await bench_list(many, args.sessions, out)
        if not args.skip_session:
            await bench_session(big, out)

    with loop:
        loop.run_until_complete(run_all())
    from app.gui.runtime.worker_processes import shutdown_pool

    shutdown_pool()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for k, v in out.items():
        print(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}")


if __name__ == "__main__":
    main()
