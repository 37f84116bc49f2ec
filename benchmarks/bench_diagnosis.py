"""Diagnosis cache benchmark (issue 25 item 2). Prints numbers and ratios; asserts nothing.

    python benchmarks/bench_diagnosis.py                       # 10,000 sessions, 5 runs (a few minutes)
    python benchmarks/bench_diagnosis.py --sessions 2000 --runs 3 --skip-window   # a quick look

On a JSONL-zstd root of ``--sessions`` generated sessions (``bench_search.build_root``: the root the
search benchmark uses, ~55 events each, built once under ``--workdir`` and reused), each command as a
user runs it (wall time of ``python -m app.cli ...``, output discarded), ``--runs`` alternating runs:

- ``list ROOT`` (headers only, piped): the yardstick;
- ``verify ROOT`` cold (a fresh cache folder each run: every log is read, in worker processes, every
  core) and warm (the cache the cold run left; every log unchanged): targets cold <= 6x ``list``,
  warm <= 1.5x ``list``;
- ``verify --no-cache`` on one core (``--serial-runs`` runs; the reading the old ``verify`` did on every
  run, without the cache or workers): the "before".

Then (unless ``--skip-window``) the window, offscreen, each open in a fresh process: a cold open (an
empty cache folder: the old behaviour on every start) and ``--runs`` warm reopens (the cache the cold
open left): seconds from ``open_root`` until the list is complete, until every status is known, and
between the two (target for a warm reopen: every status within 0.5 s).

Medians of the runs.  On a machine shared with other work absolute times are noisy: read the ratios,
measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from common import until  # noqa: E402

RESULT_PREFIX = "RESULT "
TARGET_WARM = 1.5  # verify warm / list
TARGET_COLD = 6.0  # verify cold / list
TARGET_REOPEN_S = 0.5  # a warm reopen: every status known


def _env(cache: str, workdir: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, ".."), SESSIONSCOPE_CACHE_DIR=cache)
    env["XDG_CONFIG_HOME"] = os.path.join(workdir, "diagnosis-bench-config")  # the window's settings stay private
    env.pop("SESSIONSCOPE_INPROCESS", None)
    return env


def _fresh(path: str) -> str:
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def _run(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1):  # 1: verify found a session that is not ok (the output still counts)
        raise RuntimeError(f"{' '.join(cmd[2:])} failed: {proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def _cli(args: list[str], env: dict[str, str]) -> float:
    return _run([sys.executable, "-m", "app.cli", *args], env)


SERIAL = (
    "import sys, app.diagnosis.parallel as p; p.POOL_MIN = 10**9; "
    "from app.cli import main; sys.exit(main(['verify', '--no-cache', sys.argv[1]]))"
)


def bench_cli(args: argparse.Namespace, root: str) -> dict[str, float]:
    caches = os.path.join(args.workdir, "diagnosis-bench-cache")
    warm_env = _env(_fresh(os.path.join(caches, "warm")), args.workdir)
    _cli(["list", root], warm_env)  # the OS cache holds the root from here on
    times: dict[str, list[float]] = {k: [] for k in ("list", "verify cold", "verify warm", "serial")}
    for run in range(args.runs):
        times["list"].append(_cli(["list", root], warm_env))
        cold_env = _env(_fresh(os.path.join(caches, "cold")), args.workdir)
        times["verify cold"].append(_cli(["verify", root], cold_env))
        times["verify warm"].append(_cli(["verify", root], cold_env))
        if run < args.serial_runs:
            times["serial"].append(_run([sys.executable, "-c", SERIAL, root], cold_env))
        print(f"  run {run + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if len(v) > run), flush=True)
    return {k: statistics.median(v) for k, v in times.items() if v}


# ---------------------------------------------------------------- the window (a child process per open)


def run_child(root: str) -> None:
    """One window open in this process; prints ``RESULT {json}``."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    import qasync
    from PySide6.QtWidgets import QApplication

    from app.gui.runtime.responsiveness import apply_responsiveness_knobs
    from app.gui.runtime.worker_processes import shutdown_pool, warm_pool

    warm_pool()
    apply_responsiveness_knobs()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    out: dict[str, Any] = {}

    async def run() -> None:
        from app.gui.window.main_window import MainWindow

        w = MainWindow(restore_geometry=False)
        w.show()
        t0 = time.perf_counter()
        w.open_root(root)
        t_listed = await until(w.controller.listed.is_set, timeout=900.0, step=0.005)
        t_known = await until(lambda: not w.session_model.status_counts().get("pending"), timeout=900.0, step=0.005)
        out.update(
            rows=w.session_model.rowCount(),
            listed_s=t_listed - t0,
            known_s=t_known - t0,
            after_list_s=t_known - t_listed,
            from_cache=w.diagnosis_pass.from_cache,
        )
        await w.shutdown()
        w.close()

    with loop:
        loop.run_until_complete(run())
    shutdown_pool()
    print(RESULT_PREFIX + json.dumps(out), flush=True)


def _window(root: str, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child-root", root], env=env, capture_output=True, text=True
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the window measurement failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    got: dict[str, Any] = json.loads(lines[-1][len(RESULT_PREFIX) :])
    return got


def bench_window(args: argparse.Namespace, root: str) -> tuple[dict[str, Any], dict[str, float]]:
    env = _env(_fresh(os.path.join(args.workdir, "diagnosis-bench-cache", "window")), args.workdir)
    cold = _window(root, env)
    print(f"  window cold: {cold}", flush=True)
    warm: list[dict[str, Any]] = []
    for run in range(args.runs):
        warm.append(_window(root, env))
        print(f"  window warm {run + 1}: {warm[-1]}", flush=True)
    med = {k: statistics.median(float(r[k]) for r in warm) for k in ("listed_s", "known_s", "after_list_s", "from_cache")}
    return cold, med


# ---------------------------------------------------------------- main


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--serial-runs", type=int, default=1, help="runs of the one-core --no-cache verify (slow)")
    ap.add_argument("--workdir", default=tempfile.gettempdir())
    ap.add_argument("--skip-window", action="store_true")
    ap.add_argument("--json", help="also write the results to this JSON file (read by bench_scale.py)")
    ap.add_argument("--child-root", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_root:
        run_child(args.child_root)
        return
    from bench_search import build_root

    root = os.path.join(args.workdir, f"search-root-{args.sessions}")
    built = build_root(root, args.sessions)
    print(
        f"diagnosis cache: {args.sessions:,} JSONL-zstd sessions, {args.runs} runs, {os.cpu_count()} cores"
        + (f" (root generated in {built:.1f} s)" if built else "")
    )
    med = bench_cli(args, root)
    report: dict[str, Any] = {"sessions": args.sessions, "runs": args.runs, "cli_s": med}
    base = med["list"]
    cold, warm = med["verify cold"], med["verify warm"]
    print(f"\nsessionscope list            {base:7.2f} s")
    ok_cold = _verdict(cold / base <= TARGET_COLD)
    print(f"sessionscope verify (cold)   {cold:7.2f} s  {cold / base:5.2f}x list  (target <= {TARGET_COLD:g}x: {ok_cold})")
    ok_warm = _verdict(warm / base <= TARGET_WARM)
    print(f"sessionscope verify (warm)   {warm:7.2f} s  {warm / base:5.2f}x list  (target <= {TARGET_WARM:g}x: {ok_warm})")
    if "serial" in med:
        serial = med["serial"]
        print(f"verify --no-cache, one core  {serial:7.2f} s  {serial / base:5.2f}x list  (before: read on every run)")
        print(f"warm vs before: {warm / serial:.3f}x; cold (every core) vs before: {cold / serial:.2f}x")
    if not args.skip_window:
        w_cold, w_warm = bench_window(args, root)
        report["window_cold"], report["window_warm"] = w_cold, w_warm
        print(f"\nwindow cold open: listed {w_cold['listed_s']:.2f} s, every status {w_cold['known_s']:.2f} s")
        after = w_warm["after_list_s"]
        print(
            f"window warm reopen (median): listed {w_warm['listed_s']:.2f} s, every status {w_warm['known_s']:.2f} s, "
            f"{after:.3f} s after the list (target <= {TARGET_REOPEN_S} s: {_verdict(after <= TARGET_REOPEN_S)})"
        )
        print(
            f"  {w_warm['from_cache']:.0f} statuses from the cache; "
            f"warm/cold until every status: {w_warm['known_s'] / w_cold['known_s']:.2f}x"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f)


if __name__ == "__main__":
    main()
