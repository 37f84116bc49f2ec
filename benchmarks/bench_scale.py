"""Issue 25 in one command: every target as a ratio measured in one run, in one table. Never asserted.

    python benchmarks/bench_scale.py [--workdir DIR] [--only NAME]... [--runs 5] [--quick]

    python benchmarks/bench_scale.py --workdir /tmp/scale-work      # full size; the first run builds
    python benchmarks/bench_scale.py --quick                         # a smoke run (~1-2 min; ratios mean little)

It runs the per-target benchmarks one after another, each in a subprocess with ``--json`` (their own
printed output passes through unchanged), then prints one summary table: the target, what was measured
(a median of ``--runs`` >= 5 runs unless the row says otherwise), the ratio, the reference it is a
ratio of (and where that figure comes from), and whether the target holds.  Steps (``--only``):

- ``follow``: ``bench_follow.py``: per backend, the same instance's ``view()`` after one appended turn
  to the 202k session against its cold ``view()`` (ratio incremental/cold; target <= 0.15).
- ``gui``: ``bench_gui.py --skip-list``: the window's follow, ms from another writer's flushed append
  until the open 202k timeline shows it (target < 60 ms; absolute, so the ratio is to the 60 ms
  budget).  One window per backend per run, ``--runs`` runs: the median of those.
- ``diagnosis``: ``bench_diagnosis.py``: on a 10,000-session JSONL root, ``sessionscope verify`` cold
  (every core, a fresh cache) and warm against ``sessionscope list`` (targets <= 6x, <= 1.5x), and a
  warm window reopen: seconds from the complete list until every status is known (target <= 0.5 s).
- ``search``: ``bench_search.py --ratio-only --skip-serial``: a first ``sessionscope search`` (the cold
  index) against ``sessionscope list``, and in process ``Indexer.update()`` against ``store.list()``
  (target <= 12x).  Same root as ``diagnosis`` (built once).
- ``engine``: ``bench_engine.py --reads``: ``read_raw`` (JSONL), ``inspect`` and ``load`` of the 202k
  session per backend, interleaved with the floor (read + decompress + parse the same bytes).  Their
  upstream is ``UPSTREAM_OVER_FLOOR`` x the floor of the same run (bench_engine.py says why: the
  issue's paired ratios, carried by a floor that travels); targets ``read_raw`` <= 1.2x, others <= 0.35x.
- ``sqlite``: ``bench_sqlite.py``: on the 10,000-session store ``list`` (warm and on a fresh
  instance), ``list_snapshots`` and ``inspect`` of a small session, beside a bare ``sqlite3`` floor and
  the issue's paired upstream run (16 / 12.6 derived / 19 / 1.4 ms: ``bench_sqlite.UPSTREAM_MS``);
  target <= 1.0x upstream.  At 7 samples: that script's own default.
- ``shared``: ``list``/``list_snapshots`` of the 50-session upstream fixture in ``../shared`` (copied
  into the workdir; skipped when absent) against the timings upstream recorded there (fresh backend
  per call, opened by one ``inspect`` first, median of 9): the only upstream times ``../shared`` holds.
  Judged for SQLite only (every SQLite operation <= 1.0x upstream); JSONL's rows are context.

Machine facts (cores, load average at the start and the end, python, sqlite) head and close the
table: the lead's reference run is on a quiet 2-core machine; on a loaded one read the ratios, each
measured within one run.  Full size on 2 cores (2026-12-05, load average 0.4-5): 176 s with the
workdir built, 283 s building it in the same run (the 10,000-session root took 15 s); the cold
search index of 10,000 sessions, 5 times, and the 10,000-session diagnosis are two thirds of it.
``--workdir`` keeps everything built (and each step's ``result-*.json``) for the next run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

STEPS: Final = ("follow", "gui", "diagnosis", "search", "engine", "sqlite", "shared")
SHARED_FIXTURES: Final = os.path.join(HERE, "..", "..", "shared", "fixtures", "upstream")
SHARED_BACKENDS: Final = ("jsonl-zstd", "jsonl-none", "sqlite")


@dataclass(frozen=True, slots=True)
class Line:
    """One row of the summary table."""

    target: str
    measured: str
    ratio: float | None
    reference: str
    holds: bool | None


@dataclass(frozen=True, slots=True)
class Sizes:
    events: int  # the big session
    sessions: int  # the many-session root and store
    quick: bool


def _fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x" if r >= 0.1 else f"{r:.3f}x"


def _holds(h: bool | None) -> str:
    return "-" if h is None else ("yes" if h else "NO")


def run_step(name: str, script: str, args: list[str], workdir: str) -> Any:
    """Run one benchmark with ``--json``; its stdout passes through; the JSON it wrote."""
    out = os.path.join(workdir, "result-" + "".join(c if c.isalnum() else "-" for c in name) + ".json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [sys.executable, os.path.join(HERE, script), *args, "--json", out]
    print(f"\n=== {name}: {' '.join(cmd[1:])}", flush=True)
    t0 = time.perf_counter()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(cmd, env=env)
    print(f"=== {name}: {time.perf_counter() - t0:.0f} s, exit {proc.returncode}", flush=True)
    if proc.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"{name} failed (exit {proc.returncode})")
    with open(out, "rb") as f:
        return json.loads(f.read())


# ---------------------------------------------------------------- steps: each returns summary lines


def step_follow(work: str, sz: Sizes, runs: int) -> list[Line]:
    args = ["--events", str(sz.events), "--runs", str(runs), "--workdir", os.path.join(work, "big")]
    got = run_step("follow", "bench_follow.py", args, work)
    target = float(got["target"])
    return [
        Line(
            f"follow {r['backend']} {r['mode']} <= {target:g}x cold",
            f"{r['incremental_ms']:.1f} ms ({r['paths']}{'' if r['equal'] else ', NOT EQUAL'})",
            r["ratio"],
            f"cold view {r['cold_ms']:.0f} ms, same instance, same run",
            r["ratio"] <= target and r["equal"],
        )
        for r in got["rows"]
    ]


def step_gui(work: str, sz: Sizes, runs: int) -> list[Line]:
    follow: dict[str, list[float]] = {}
    for run in range(runs):
        args = ["--skip-list", "--events", str(sz.events), "--workdir", os.path.join(work, "big")]
        got = run_step(f"gui run {run + 1}/{runs}", "bench_gui.py", args, work)
        for r in got.get("backends", []):
            follow.setdefault(r["backend"], []).append(float(r.get("follow_append_ms", float("nan"))))
    lines = []
    for kind, values in follow.items():
        med = statistics.median(values)
        ok = med == med and med < 60.0  # NaN: the window never showed the append
        lines.append(
            Line(
                f"window follow {kind} < 60 ms",
                f"{med:.0f} ms (median of {len(values)})",
                med / 60.0,
                "the 60 ms budget (absolute target)",
                ok,
            )
        )
    return lines


def step_diagnosis(work: str, sz: Sizes, runs: int) -> list[Line]:
    args = ["--sessions", str(sz.sessions), "--runs", str(runs), "--serial-runs", "0", "--workdir", os.path.join(work, "roots")]
    got = run_step("diagnosis", "bench_diagnosis.py", args, work)
    cli = got["cli_s"]
    base = cli["list"]
    ref = f"sessionscope list {base:.2f} s, same run"
    cold, warm = cli["verify cold"] / base, cli["verify warm"] / base
    lines = [
        Line("verify cold <= 6x list", f"{cli['verify cold']:.2f} s", cold, ref, cold <= 6.0),
        Line("verify warm <= 1.5x list", f"{cli['verify warm']:.2f} s", warm, ref, warm <= 1.5),
    ]
    if "window_warm" in got:
        warm, cold = got["window_warm"], got["window_cold"]
        after = float(warm["after_list_s"])
        lines.append(
            Line(
                "warm reopen: every status <= 0.5 s",
                f"{after:.3f} s after the list",
                after / 0.5,
                "the 0.5 s budget (absolute target)",
                after <= 0.5,
            )
        )
        lines.append(
            Line(
                "  (warm vs cold open, every status)",
                f"{float(warm['known_s']):.2f} s",
                float(warm["known_s"]) / float(cold["known_s"]),
                f"cold open {float(cold['known_s']):.2f} s (one run)",
                None,
            )
        )
    return lines


def step_search(work: str, sz: Sizes, runs: int) -> list[Line]:
    args = ["--ratio-only", "--skip-serial", "--sessions", str(sz.sessions), "--runs", str(runs)]
    got = run_step("search", "bench_search.py", [*args, "--workdir", os.path.join(work, "roots")], work)
    m = got["median_s"]
    return [
        Line(
            "cold search (CLI) <= 12x list",
            f"{m['cli search']:.2f} s",
            m["cli search"] / m["cli list"],
            f"sessionscope list {m['cli list']:.2f} s, same run",
            m["cli search"] / m["cli list"] <= 12.0,
        ),
        Line(
            f"cold index ({got['workers']} workers) <= 12x list()",
            f"{m['index']:.2f} s",
            m["index"] / m["list"],
            f"store.list() {m['list']:.2f} s, same run",
            m["index"] / m["list"] <= 12.0,
        ),
    ]


def step_engine(work: str, sz: Sizes, runs: int) -> list[Line]:
    args = ["--reads", "--events", str(sz.events), "--repeat", str(runs), "--workdir", os.path.join(work, "engine")]
    got = run_step("engine", "bench_engine.py", args, work)
    lines = []
    for r in got["rows"]:
        floor, up = r["floor"], r["upstream"]
        vs_floor = f"; ours/floor {r['ours'] / floor:.2f}x" if floor else ""
        if up:
            ref = f"upstream {up:.1f} ms = {up / floor:.2f}x floor {floor:.1f} ms ({r['upstream_source']}){vs_floor}"
        else:
            ref = f"floor {floor:.1f} ms (no upstream at this size)" if floor else "-"
        lines.append(
            Line(
                f"{r['label'].split(' [')[0]} {r['backend']} {r['target']}",
                f"{r['ours']:.1f} {r['unit']}",
                r["ours"] / up if up else (r["ours"] / floor if floor else None),
                ref,
                r["holds"],
            )
        )
    return lines


SQLITE_JUDGED: Final = ("many list (warm)", "many list (fresh)", "many list_snapshots (warm)", "many list_snapshots (fresh)")


def step_sqlite(work: str, sz: Sizes, runs: int) -> list[Line]:
    samples = max(runs, 7)
    args = ["--sessions", str(sz.sessions), "--repeat", str(samples), "--workdir", os.path.join(work, "sqlite")]
    got = run_step("sqlite", "bench_sqlite.py", args, work)
    target = float(got["target"])
    lines = []
    for r in got["rows"]:
        if r["name"] not in (*SQLITE_JUDGED, "many inspect small (fresh)", "one inspect small (fresh)"):
            continue
        floor, up, ours = r["floor"], r["upstream"], r["ours"]
        vs_floor = f"; ours/floor {r['ours_over_floor']:.2f}x (floor {floor:.2f} ms)" if floor else ""
        if up:
            source = "derived: issue's 1.83x" if r["name"] == "many list (fresh)" else "issue 25 paired run"
            ref = f"upstream {up:.1f} ms ({source}){vs_floor}"
            measured = f"{ours:.2f} ms (median of {samples})"
            lines.append(Line(f"sqlite {r['name']} <= {target:g}x up", measured, ours / up, ref, ours / up <= target))
        else:
            ref = f"bare sqlite3 floor {floor:.2f} ms (no upstream here)"
            lines.append(Line(f"sqlite {r['name']}", f"{ours:.2f} ms (median of {samples})", r["ours_over_floor"], ref, None))
    return lines


async def _shared_one(kind: str, root: str) -> dict[str, float]:
    """Upstream's recorded method on our engine: a fresh backend per call, opened by one inspect, median of 9."""
    from persistence import JsonlSessionPersistence
    from persistence.sqlite.backend import SqliteSessionPersistence

    def make() -> Any:
        if kind == "sqlite":
            return SqliteSessionPersistence(os.path.join(root, "sessions.sqlite"))
        return JsonlSessionPersistence(root, compression="zstd" if kind == "jsonl-zstd" else "none")

    probe = make()
    first = (await probe.list())[0].id
    await probe.close()
    out: dict[str, list[float]] = {"list": [], "listSnapshots": []}
    for run in range(10):  # one warm-up, then 9
        for name in out:
            store = make()
            await store.inspect(first)
            fn: Callable[[], Any] = store.list if name == "list" else store.list_snapshots
            t0 = time.perf_counter()
            await fn()
            elapsed = (time.perf_counter() - t0) * 1000
            await store.close()
            if run:
                out[name].append(elapsed)
    return {k: statistics.median(v) for k, v in out.items()}


def step_shared(work: str, sz: Sizes, runs: int) -> list[Line]:
    lines = []
    for kind in SHARED_BACKENDS:
        src = os.path.join(SHARED_FIXTURES, kind, "many-sessions")
        expected = os.path.join(src, "expected.json")
        if not os.path.exists(expected):
            print(f"shared: {src} absent, skipped")
            continue
        with open(expected, "rb") as f:
            timings = json.loads(f.read()).get("timings")
        if not timings:
            continue
        copy = os.path.join(work, "shared", kind)
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(src, copy)
        for folder, _dirs, files in os.walk(copy):  # the SQLite backend opens only a private store
            os.chmod(folder, 0o700)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o600)
        root = next((os.path.join(copy, d) for d in ("root", "store") if os.path.isdir(os.path.join(copy, d))), copy)
        try:
            ours = asyncio.run(_shared_one(kind, root))
        except Exception as exc:  # a fixture layout this step does not know: say so, keep the table
            print(f"shared {kind}: not measured ({exc!r})")
            continue
        for name, ms in ours.items():
            up = float(timings["msMedian"][name])
            lines.append(
                Line(
                    f"{kind} {name}, {timings['sessions']} sessions",
                    f"{ms:.2f} ms (median of 9)",
                    ms / up,
                    f"upstream {up:.2f} ms recorded in ../shared (Node {timings['machine'].get('node', '?')})",
                    ms / up <= 1.0 if kind == "sqlite" else None,  # issue 25: every SQLite operation <= 1.0x
                )
            )
    return lines


STEP_FUNCS: Final[dict[str, Callable[[str, Sizes, int], list[Line]]]] = {
    "follow": step_follow,
    "gui": step_gui,
    "diagnosis": step_diagnosis,
    "search": step_search,
    "engine": step_engine,
    "sqlite": step_sqlite,
    "shared": step_shared,
}


# ---------------------------------------------------------------- the table


def machine(label: str) -> str:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{label}: load average {load}"


def print_table(sections: list[tuple[str, list[Line]]], judge: bool) -> None:
    """The summary; ``judge`` False (``--quick``): no verdicts, the sizes are not the targets' sizes."""
    tw = max([len(line.target) for _, lines in sections for line in lines] + [6])
    mw = max([len(line.measured) for _, lines in sections for line in lines] + [8])
    print(f"\n{'target':{tw}s}  {'measured':{mw}s}  {'ratio':>7s}  holds  reference (the ratio is of this)")
    held = judged = 0
    for name, lines in sections:
        print(f"-- {name}")
        for line in lines:
            ratio, holds = _fmt_ratio(line.ratio), _holds(line.holds if judge else None)
            print(f"{line.target:{tw}s}  {line.measured:{mw}s}  {ratio:>7s}  {holds:5s}  {line.reference}")
            if judge and line.holds is not None:
                judged += 1
                held += line.holds
    print(f"targets held: {held}/{judged}" if judge else "targets not judged at --quick sizes")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "sessionscope-bench-scale"))
    ap.add_argument("--only", action="append", choices=STEPS, help="only this step (repeatable)")
    ap.add_argument("--runs", type=int, default=5, help="runs per median (at least 5 at full size)")
    ap.add_argument("--quick", action="store_true", help="small sizes, 2-3 runs: a smoke run (the ratios mean little)")
    args = ap.parse_args()
    sz = Sizes(3_000, 200, True) if args.quick else Sizes(202_000, 10_000, False)
    runs = max(2, min(args.runs, 3)) if args.quick else max(5, args.runs)
    work = os.path.abspath(os.path.join(args.workdir, "quick") if args.quick else args.workdir)
    os.makedirs(work, exist_ok=True)
    start = machine("start")
    t0 = time.perf_counter()
    sections: list[tuple[str, list[Line]]] = []
    failed: list[str] = []
    for name in [s for s in STEPS if not args.only or s in args.only]:
        try:
            sections.append((name, STEP_FUNCS[name](work, sz, runs)))
        except Exception as exc:  # one broken benchmark must not hide the others' numbers
            failed.append(f"{name}: {exc}")
    print(
        f"\nissue 25 scale summary ({'QUICK: small sizes, ratios mean little' if args.quick else 'full size'}): "
        f"{sz.events:,}-event session, {sz.sessions:,}-session root/store, medians of {runs} runs unless said"
    )
    print(
        f"machine: {os.cpu_count()} cores, python {platform.python_version()}, sqlite {sqlite3.sqlite_version}; "
        f"{start}; {machine('end')}; {time.perf_counter() - t0:.0f} s in all"
    )
    print_table(sections, judge=not sz.quick)
    for f in failed:
        print(f"FAILED {f}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
