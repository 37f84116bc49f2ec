"""Engine benchmark: ours beside the floor for the same bytes and beside upstream (issue 12). Never asserted.

    python benchmarks/bench_engine.py [--events 202000] [--small-events 21000] [--sessions 10000]
        [--repeat 5] [--backend NAME]... [--quick] [--skip-rss] [--workdir DIR]

Per backend (jsonl-zstd, jsonl-none, sqlite) it prints one table row per operation:

- a big (~202k-event) and a small (~21k-event) session: ``inspect``, ``load``, ``read_raw`` (JSONL)
  and a cold ``read_from`` of the last 50 events; for the big one also write, a warm ``read_from``
  and ``read_tail(2000)`` (no floor, no upstream: context only);
- a ``--sessions`` store and a one-session store: ``list`` and ``list_snapshots``;
- the peak RSS a big-session ``inspect`` ADDS over the baseline after imports, measured in a fresh
  subprocess per backend so one measurement cannot pollute the next (and the same for the floor).

Each time is the median of ``--repeat`` runs, each on a fresh backend object (no cache carried over),
with a full garbage collection before each run and outside it.  Beside each number: the floor for the
same bytes (``floors.py``: read + decompress + parse, or SELECT + decode + parse), ours/floor, the
upstream reference (``UPSTREAM_MS``: derived once, see there), ours/upstream and whether the issue's
target holds.  Upstream is compared only at the default sizes; other sizes (``--quick``) print "-".

Issue 25 item 4 (full reads and ``read_raw`` of the 202k session) in one command, only those rows:

    python benchmarks/bench_engine.py --reads [--repeat 7] [--backend NAME]... [--workdir DIR] [--clock cpu]

prints ``read_raw`` (JSONL), ``inspect`` and ``load`` of the big session per backend, each run
interleaved with its floor so machine load hits both alike (``--clock cpu``: CPU time instead of wall
time, for a machine other jobs load), judged against the issue-25 targets
(``read_raw`` <= 1.2x upstream, ``inspect``/``load`` <= 0.35x upstream).  Their upstream reference is
``UPSTREAM_OVER_FLOOR`` times the floor measured in the same run (see there for why and how derived).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import floors  # noqa: E402
from synthetic import batches, session_events  # noqa: E402

from persistence import CoordinatedPersistence, JsonlSessionPersistence, SessionHeader, js_dumps  # noqa: E402
from persistence.jsonl.frames import compress_frame, scan_frames  # noqa: E402
from persistence.sqlite.backend import SqliteSessionPersistence  # noqa: E402

BACKENDS: Final = ("jsonl-zstd", "jsonl-none", "sqlite")
DEFAULT_EVENTS: Final = 202_000  # session_events(202_000) yields 202,761 events: the "202k" session
DEFAULT_SMALL_EVENTS: Final = 21_000  # 21,068 events: the "21k" session
DEFAULT_SESSIONS: Final = 10_000
QUICK_EVENTS: Final = 3_000
QUICK_SMALL_EVENTS: Final = 600
QUICK_SESSIONS: Final = 100
TAIL_EVENTS: Final = 50  # read_from(tail) asks for the last 50 events, as a follower catching up would
BIG_ID: Final = "big-session"
SMALL_ID: Final = "small-session"
ONE_ID: Final = "s-00000"
MIB: Final = 1024 * 1024

# ---------------------------------------------------------------------------------------------- upstream
# Upstream (its own code under Node 24) cannot be run on this machine.  Its reference numbers are
# derived ONCE, on 2026-12-03, from the issue-12 table and our own numbers then: this very script at
# the default sizes, run three times with --repeat 7 against a snapshot of the engine before the
# rewrite (HEAD 0f281ef), the median of the three run medians (the runs were kept outside the repository).
# Each constant is written as
#     our median then (ms)  /  the ours/upstream ratio for that cell
# so that, then, ours/upstream printed exactly the ratio.  Where the issue gives a range, the
# conservative end is used (the one making upstream faster: a target that holds here holds across the
# range); where it gives no number, the assumption is named on the line.  Keys: (backend, operation,
# store); an absent key prints "-".  Re-derive only if the machine changes, never after a rewrite.
UPSTREAM_MS: Final[dict[tuple[str, str, str], float]] = {
    # "202k-event session: inspect" 2.4x / 2.3x / 2.0x
    ("jsonl-zstd", "inspect", "big"): 414.8 / 2.4,
    ("jsonl-none", "inspect", "big"): 394.8 / 2.3,
    ("sqlite", "inspect", "big"): 373.8 / 2.0,
    # "same: load" 2.6x / 2.3x / 2.9x
    ("jsonl-zstd", "load", "big"): 404.9 / 2.6,
    ("jsonl-none", "load", "big"): 398.7 / 2.3,
    ("sqlite", "load", "big"): 367.7 / 2.9,
    # "same: read_raw" 1.6x / 3.3x (SQLite has no raw artifact)
    ("jsonl-zstd", "read_raw", "big"): 16.9 / 1.6,
    ("jsonl-none", "read_raw", "big"): 1.9 / 3.3,
    # "21k-event session: load" 1.35x / 1.27x / 1.47x
    ("jsonl-zstd", "load", "small"): 32.4 / 1.35,
    ("jsonl-none", "load", "small"): 33.0 / 1.27,
    ("sqlite", "load", "small"): 30.0 / 1.47,
    # 21k inspect: no cell in the table; ASSUMED the 21k load ratio (ours took the same time for
    # inspect and load then, and upstream's inspect does no less than its load).
    ("jsonl-zstd", "inspect", "small"): 32.4 / 1.35,
    ("jsonl-none", "inspect", "small"): 32.6 / 1.27,
    ("sqlite", "inspect", "small"): 29.9 / 1.47,
    # read_from: "wins every read_from (0.3-0.8x)", per cell unknown: the conservative 0.8x everywhere.
    ("jsonl-zstd", "read_from(tail)", "big"): 308.4 / 0.8,
    ("jsonl-none", "read_from(tail)", "big"): 291.9 / 0.8,
    ("sqlite", "read_from(tail)", "big"): 1.43 / 0.8,
    ("jsonl-zstd", "read_from(tail)", "small"): 26.5 / 0.8,
    ("jsonl-none", "read_from(tail)", "small"): 23.9 / 0.8,
    ("sqlite", "read_from(tail)", "small"): 1.32 / 0.8,
    # JSONL 10,000-session listings: "about 0.9 s against upstream's 6-12 s", i.e. 0.075-0.15x: the
    # conservative 0.15x for list and list_snapshots (upstream then ~2.3-2.5 s, below the 6 s).
    ("jsonl-zstd", "list", "many"): 346.5 / 0.15,
    ("jsonl-zstd", "list_snapshots", "many"): 382.0 / 0.15,
    ("jsonl-none", "list", "many"): 321.4 / 0.15,
    ("jsonl-none", "list_snapshots", "many"): 347.0 / 0.15,
    # JSONL one-session listings: only "every JSONL listing 0.07-0.66x": the conservative 0.66x.
    ("jsonl-zstd", "list", "one"): 0.36 / 0.66,
    ("jsonl-zstd", "list_snapshots", "one"): 0.33 / 0.66,
    ("jsonl-none", "list", "one"): 0.40 / 0.66,
    ("jsonl-none", "list_snapshots", "one"): 0.30 / 0.66,
    # "10k-session store: list / list_snapshots" 3.4x / 3.6x (the issue: "about 20 ms here")
    ("sqlite", "list", "many"): 59.0 / 3.4,
    ("sqlite", "list_snapshots", "many"): 67.5 / 3.6,
    # "one-session store: list 1.6-4x": the conservative 4x; list_snapshots has no cell: ASSUMED the same.
    # NOTE: 0.20 ms is below this script's own SQLite listing floor then (connect + SELECT: 0.30-0.42 ms),
    # so these two targets can hold only if upstream's ratio was nearer the range's 1.6x end.
    ("sqlite", "list", "one"): 0.79 / 4.0,
    ("sqlite", "list_snapshots", "one"): 0.79 / 4.0,
}

# Peak RSS an upstream inspect of the 202k session adds over its baseline, MiB.  The issue gives
# "~185 MiB vs ~140 / ~215 vs ~140 / ~200 vs ~150" (ours vs upstream), measured with another
# instrument: ours then measured 146.6 / 159.8 / 153.3 here.  Derived like the times: our number then
# / the ours/upstream ratio.  (The target, < 120 MiB added, is absolute and needs none of this.)
UPSTREAM_RSS_MIB: Final[dict[str, float]] = {
    "jsonl-zstd": 146.6 / (185 / 140),
    "jsonl-none": 159.8 / (215 / 140),
    "sqlite": 153.3 / (200 / 150),
}

# Targets of issue 12: ours/upstream at most this much ...
TARGET_RATIO: Final[dict[tuple[str, str], float]] = {
    ("inspect", "big"): 0.5,
    ("load", "big"): 0.5,
    ("inspect", "small"): 0.5,
    ("load", "small"): 0.5,
    ("list", "many"): 1.0,
    ("list_snapshots", "many"): 1.0,
    ("list", "one"): 1.0,
    ("list_snapshots", "one"): 1.0,
    # "read_from stays at or under today's ratios": upstream here is derived from today's number at
    # the worst ratio (0.8x), so today's ratio is 0.8x by construction; the limit allows the
    # run-to-run spread seen on 2026-12-03 (up to ~15% between medians of 7 on this 2-core box, so
    # +10%: 0.88x) lest noise alone read as a regression.
    ("read_from(tail)", "big"): 0.88,
    ("read_from(tail)", "small"): 0.88,
}
# ... and the peak RSS a 202k inspect adds, below this many MiB.
TARGET_RSS_ADDED_MIB: Final = 120.0

# Issue 25 item 4 targets for the big session (they replace issue 12's for these rows): ours/upstream at most
TARGET_RATIO_25: Final[dict[tuple[str, str], float]] = {
    ("read_raw", "big"): 1.2,
    ("inspect", "big"): 0.35,
    ("load", "big"): 0.35,
}

# Upstream's time for these rows as a multiple of the floor measured in the same run.  Why floor-relative:
# issue 25 timed upstream beside the engine (its paired run) and gives ratios (read_raw 53 vs 25 ms on
# zstd, "2.1-2.5x"; inspect 0.55-0.66x, load 0.41-0.73x across the backends), while the machine these
# constants were derived on was loaded by other jobs (absolute times moved 1.5-2x run to run); a ratio
# to a floor timed in the same run travels, an absolute time does not.
# Derived ONCE, 2026-12-05, from this script's `--reads --repeat 9 --clock cpu` run against the engine
# the issue timed (HEAD 45b428d, the runs kept outside the repository).  Each constant is written as
#     (our ours/floor then) / (the paired ours/upstream for that cell)
# so that, then, ours/upstream printed the paired ratio.  Where the issue gives a range across
# backends, the conservative end is used (the one making upstream faster): read_raw 53/25 (zstd) and 2.5x
# (plain), inspect 0.66x, load 0.73x.  NOTE: so derived, 0.35x upstream is 1.04-1.16x our floor for
# inspect and 0.91-1.04x for load, i.e. about the floor itself; from the issue's own "2.5-3x the floor"
# instead, inspect's target would be ~1.33x the floor.  Re-derive only from the engine.
UPSTREAM_OVER_FLOOR: Final[dict[tuple[str, str], float]] = {
    ("jsonl-zstd", "read_raw"): 1.61 / (53 / 25),
    ("jsonl-none", "read_raw"): 0.70 / 2.5,  # NOTE: under 1x: upstream then read a plain log faster than our floor
    ("jsonl-zstd", "inspect"): 1.97 / 0.66,
    ("jsonl-none", "inspect"): 2.18 / 0.66,
    ("sqlite", "inspect"): 2.19 / 0.66,
    ("jsonl-zstd", "load"): 1.90 / 0.73,
    ("jsonl-none", "load"): 2.17 / 0.73,
    ("sqlite", "load"): 2.19 / 0.73,
}


# ---------------------------------------------------------------------------------------------- stores


def open_backend(kind: str, root: str) -> CoordinatedPersistence:
    """A fresh backend object on ``root`` (a JSONL root, or the directory holding ``sessions.sqlite``)."""
    if kind == "sqlite":
        return SqliteSessionPersistence(os.path.join(root, floors.SQLITE_FILENAME))
    return JsonlSessionPersistence(root, compression="zstd" if kind == "jsonl-zstd" else "none")


def meta_of(session_id: str, created_at: int, cwd: str) -> dict[str, Any]:
    return {"version": 0, "id": session_id, "createdAt": created_at, "cwd": cwd}


async def write_session(kind: str, root: str, meta: dict[str, Any], events: list[dict[str, Any]]) -> float:
    """Write one session through the engine in write-behind-sized batches; seconds taken."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    store = open_backend(kind, root)
    t0 = time.perf_counter()
    await store.create(meta)
    for part in batches(events):
        await store.append(meta["id"], part)
    elapsed = time.perf_counter() - t0
    await store.close()
    return elapsed


def transcript_path(kind: str, root: str, meta: dict[str, Any]) -> str:
    loc = open_backend(kind, root).locate(meta)
    if loc is None:
        raise RuntimeError(f"{kind}: no transcript path for {meta['id']}")
    return loc.path


async def write_many(kind: str, root: str, n: int) -> None:
    """``n`` sessions of ~12 events: the first written by the engine, the rest copies of its rows/bytes.

    Writing 10,000 sessions through the engine costs 10,000 durable commits (minutes of fsync) and
    measures nothing the listing reads; copying the first session's stored form with a new header
    gives the same artifacts.
    """
    first = meta_of(ONE_ID, 0, "/bench/p0")
    await write_session(kind, root, first, session_events(12))
    if kind == "sqlite":
        db = os.path.join(root, floors.SQLITE_FILENAME)
        con = sqlite3.connect(db)
        try:
            with con:
                cols = [r[1] for r in con.execute("PRAGMA table_info(sessions)")]
                fixed = {"id": "?", "created_at": "?", "cwd": "?", "incarnation": "?"}
                pick = ", ".join(fixed.get(c, c) for c in cols)
                copy_session = f"INSERT INTO sessions ({', '.join(cols)}) SELECT {pick} FROM sessions WHERE id = ?"
                copy_events = (
                    "INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op, ignorable) "
                    "SELECT ?, seq, type, time, data, source_event_seqs, surface_op, ignorable FROM events WHERE session_id = ?"
                )
                for i in range(1, n):
                    sid = f"s-{i:05d}"
                    params = {"id": sid, "created_at": i, "cwd": f"/bench/p{i % 20}", "incarnation": str(uuid.uuid4())}
                    con.execute(copy_session, (*[params[c] for c in cols if c in fixed], ONE_ID))
                    con.execute(copy_events, (sid, ONE_ID))
        finally:
            con.close()
        return
    zstd = kind == "jsonl-zstd"
    with open(transcript_path(kind, root, first), "rb") as f:
        data = f.read()
    body = data[scan_frames(data)[0][0][1] :] if zstd else data[data.index(b"\n") + 1 :]
    for i in range(1, n):
        meta = meta_of(f"s-{i:05d}", i, f"/bench/p{i % 20}")
        line = js_dumps(SessionHeader.from_json(meta).header_line()) + b"\n"
        path = transcript_path(kind, root, meta)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "wb") as f:
            f.write((compress_frame(line) if zstd else line) + body)


@dataclass(frozen=True, slots=True)
class Stores:
    """Where one backend's four stores live, and what was written."""

    kind: str
    big: str
    small: str
    many: str
    one: str
    big_events: int
    small_events: int
    write_big_s: float | None  # None: reused from an earlier run's --workdir


async def build_stores(kind: str, work: str, n_big: int, n_small: int, n_sessions: int) -> Stores:
    """Write (or reuse, when ``work`` holds a finished build of the same sizes) one backend's stores."""
    base = os.path.join(work, f"{kind}-{n_big}-{n_small}-{n_sessions}")
    done = base + ".complete"
    big_events, small_events = session_events(n_big), session_events(n_small)
    paths = {name: os.path.join(base, name) for name in ("big", "small", "many", "one")}
    write_s: float | None = None
    if not os.path.exists(done):
        shutil.rmtree(base, ignore_errors=True)
        write_s = await write_session(kind, paths["big"], meta_of(BIG_ID, 1, "/bench/project"), big_events)
        await write_session(kind, paths["small"], meta_of(SMALL_ID, 1, "/bench/project"), small_events)
        await write_session(kind, paths["one"], meta_of(ONE_ID, 0, "/bench/p0"), session_events(12))
        await write_many(kind, paths["many"], n_sessions)
        open(done, "w").close()
    return Stores(kind, paths["big"], paths["small"], paths["many"], paths["one"], len(big_events), len(small_events), write_s)


# ---------------------------------------------------------------------------------------------- timing

# What times a run: wall time (the default, what a user waits), or with --clock cpu this process's CPU
# time (every thread: the worker that reads and the loop that waits), which other jobs' load barely moves.
CLOCK: list[Callable[[], float]] = [time.perf_counter]


async def median_ms(
    op: Callable[[CoordinatedPersistence], Awaitable[object]], make: Callable[[], CoordinatedPersistence], repeat: int
) -> float:
    """Median wall time of ``op`` on a fresh backend per run (close and GC outside the timed span)."""
    samples: list[float] = []
    for _ in range(repeat):
        gc.collect()
        store = make()
        t0 = CLOCK[0]()
        result = await op(store)
        samples.append(CLOCK[0]() - t0)
        del result
        await store.close()
    return statistics.median(samples) * 1000


def median_floor_ms(fn: Callable[[], object], repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        gc.collect()
        t0 = CLOCK[0]()
        result = fn()
        samples.append(CLOCK[0]() - t0)
        del result
    return statistics.median(samples) * 1000


def peak_rss_bytes() -> int:
    """This process's peak resident set so far.

    Linux: ``VmHWM`` of /proc/self/status, the high-water mark of this process's own address space.
    Not ``ru_maxrss``: Linux carries the parent's peak into a forked-and-exec'd child's ``ru_maxrss``,
    so a child of this (~200 MiB) benchmark would report the parent's peak as its own.
    Elsewhere: ``getrusage`` (macOS reports bytes) or psutil's peak working set (Windows).
    """
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    try:
        import resource
    except ImportError:  # Windows
        import psutil

        info = psutil.Process().memory_info()
        return int(getattr(info, "peak_wset", info.rss))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def current_rss_bytes() -> int:
    """This process's resident set now (psutil; without it the peak so far, a slight underestimate)."""
    try:
        import psutil
    except ImportError:
        return peak_rss_bytes()
    return int(psutil.Process().memory_info().rss)


def peak_rss_mb() -> float:
    """Peak RSS so far in MiB (bench_sqlite.py prints it)."""
    return peak_rss_bytes() / MIB


async def timed(fn: Callable[[], Awaitable[Any]], repeat: int) -> float:
    """Median milliseconds of ``fn`` (bench_sqlite.py: the caller opens and closes its backend)."""
    samples: list[float] = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def rss_child(kind: str, root: str, session_id: str, floor: bool) -> None:
    """In a fresh process: the peak RSS one big-session inspect (or its floor) adds over the baseline."""
    path = os.path.join(root, floors.SQLITE_FILENAME)
    zstd = kind == "jsonl-zstd"
    if kind != "sqlite":
        path = transcript_path(kind, root, meta_of(session_id, 1, "/bench/project"))
    gc.collect()
    baseline = current_rss_bytes()  # after every import: what the process holds before the read

    async def inspect() -> int:
        store = open_backend(kind, root)
        try:
            return len((await store.inspect(session_id)).events)
        finally:
            await store.close()

    if floor:
        n = len(floors.sqlite_parse(path, session_id) if kind == "sqlite" else floors.jsonl_parse(path, zstd))
    else:
        n = asyncio.run(inspect())
    print(json.dumps({"baseline": baseline, "peak": peak_rss_bytes(), "events": n}))


def rss_added_mib(stores: Stores, floor: bool) -> float:
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--rss-child",
        stores.kind,
        "--rss-root",
        stores.big,
        "--rss-session",
        BIG_ID,
    ]
    if floor:
        cmd.append("--rss-floor")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    return (int(got["peak"]) - int(got["baseline"])) / MIB


# ---------------------------------------------------------------------------------------------- table


@dataclass(frozen=True, slots=True)
class Row:
    """One printed line: ours beside the floor, upstream and the target."""

    backend: str
    op: str
    store: str  # big | small | many | one
    label: str
    ours: float
    floor: float | None = None
    unit: str = "ms"


HEADER: Final = (
    f"{'backend':10s}  {'operation':34s} {'ours':>9s} {'floor':>9s} {'ours/floor':>10s} "
    f"{'upstream':>9s} {'ours/upstream':>13s}  {'target':14s} holds"
)


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:9.2f}" if v < 10 else (f"{v:9.1f}" if v < 1000 else f"{v:9.0f}")


def _ratio(a: float, b: float | None) -> str:
    return "-" if b is None or b <= 0 else f"{a / b:.2f}x"


def judge(row: Row, compare_upstream: bool) -> tuple[float | None, str, float | None, bool | None]:
    """(upstream reference, target text, target limit, whether it holds: None when not judged) of a row."""
    upstream: float | None = None
    limit: float | None = None
    target = "-"
    holds: bool | None = None
    if row.unit == "MiB":
        upstream = UPSTREAM_RSS_MIB.get(row.backend) if compare_upstream else None
        target = f"< {TARGET_RSS_ADDED_MIB:.0f} MiB"
        holds = row.ours < TARGET_RSS_ADDED_MIB if compare_upstream else None
    else:
        upstream = UPSTREAM_MS.get((row.backend, row.op, row.store)) if compare_upstream else None
        multiple = UPSTREAM_OVER_FLOOR.get((row.backend, row.op)) if row.store == "big" else None
        if compare_upstream and multiple and row.floor is not None:
            upstream = multiple * row.floor
        limit = TARGET_RATIO_25.get((row.op, row.store), TARGET_RATIO.get((row.op, row.store)))
        if limit is not None:
            target = f"<= {limit:.2f}x up"
            holds = None if upstream is None else row.ours / upstream <= limit
    return upstream, target, limit, holds


def row_json(row: Row, compare_upstream: bool) -> dict[str, Any]:
    """A row as ``--json`` writes it (bench_scale.py reads it): the printed cells, unrounded."""
    upstream, target, limit, holds = judge(row, compare_upstream)
    multiple = UPSTREAM_OVER_FLOOR.get((row.backend, row.op)) if row.store == "big" else None
    return {
        "backend": row.backend,
        "op": row.op,
        "store": row.store,
        "label": row.label,
        "unit": row.unit,
        "ours": row.ours,
        "floor": row.floor,
        "upstream": upstream,
        "upstream_source": "UPSTREAM_OVER_FLOOR x floor" if multiple and upstream is not None else "UPSTREAM_MS",
        "target": target,
        "limit": limit,
        "holds": holds,
    }


def format_row(row: Row, compare_upstream: bool) -> tuple[str, bool | None]:
    """The printed line and whether its target holds (None: no target, or not comparable)."""
    upstream, target, _limit, holds = judge(row, compare_upstream)
    line = (
        f"{row.backend:10s}  {row.label + ' (' + row.unit + ')':34s} {_num(row.ours)} {_num(row.floor):>9s} "
        f"{_ratio(row.ours, row.floor):>10s} {_num(upstream):>9s} {_ratio(row.ours, upstream):>13s}  {target:14s} "
        f"{'-' if holds is None else ('yes' if holds else 'NO')}"
    )
    return line, holds


def _k(n: int) -> str:
    return f"{n // 1000}k" if n >= 10_000 else str(n)  # 202,761 events print as the "202k"


Op = Callable[[CoordinatedPersistence], Awaitable[object]]


def session_ops(session_id: str, n_events: int) -> dict[str, Op]:
    """The timed reads of one session, each taking the fresh backend it runs on."""

    async def inspect(s: CoordinatedPersistence) -> object:
        return await s.inspect(session_id)

    async def load(s: CoordinatedPersistence) -> object:
        return await s.load(session_id)

    async def read_raw(s: CoordinatedPersistence) -> object:
        return await s.read_raw(session_id)

    async def read_from_tail(s: CoordinatedPersistence) -> object:
        return await s.read_from(session_id, n_events - TAIL_EVENTS)

    async def read_tail(s: CoordinatedPersistence) -> object:
        return await s.read_tail(session_id, 2000)

    return {"inspect": inspect, "load": load, "read_raw": read_raw, "read_from(tail)": read_from_tail, "read_tail": read_tail}


async def list_op(s: CoordinatedPersistence) -> object:
    return await s.list()


async def list_snapshots_op(s: CoordinatedPersistence) -> object:
    return await s.list_snapshots()


@dataclass(frozen=True, slots=True)
class SessionFloors:
    """The floors of one stored session: full parse, tail parse and (JSONL) the text ``read_raw`` returns."""

    parse: Callable[[], object]
    tail: Callable[[], object]
    text: Callable[[], object] | None


def session_floors(kind: str, root: str, session_id: str, n_events: int) -> SessionFloors:
    if kind == "sqlite":
        db = os.path.join(root, floors.SQLITE_FILENAME)
        return SessionFloors(
            partial(floors.sqlite_parse, db, session_id),
            partial(floors.sqlite_parse, db, session_id, n_events - TAIL_EVENTS),
            None,
        )
    path = transcript_path(kind, root, meta_of(session_id, 1, "/bench/project"))
    zstd = kind == "jsonl-zstd"
    return SessionFloors(
        partial(floors.jsonl_parse, path, zstd),
        partial(floors.jsonl_tail, path, zstd, TAIL_EVENTS),
        partial(floors.jsonl_text, path, zstd),
    )


def list_floor(kind: str, root: str) -> Callable[[], object]:
    if kind == "sqlite":
        return partial(floors.sqlite_list, os.path.join(root, floors.SQLITE_FILENAME))
    return partial(floors.jsonl_list, root)


async def bench_backend(stores: Stores, repeat: int, n_sessions: int, skip_rss: bool) -> list[Row]:
    """Every row of one backend, in print order."""
    kind = stores.kind
    rows: list[Row] = []
    if stores.write_big_s is not None:
        rows.append(Row(kind, "write", "big", f"write {_k(stores.big_events)} (context)", stores.write_big_s * 1000))

    sessions = (("big", stores.big, BIG_ID, stores.big_events), ("small", stores.small, SMALL_ID, stores.small_events))
    for which, root, sid, n in sessions:
        make = partial(open_backend, kind, root)
        ops = session_ops(sid, n)
        fl = session_floors(kind, root, sid, n)
        size = _k(n)
        f_parse = median_floor_ms(fl.parse, repeat)
        rows.append(Row(kind, "inspect", which, f"inspect {size}", await median_ms(ops["inspect"], make, repeat), f_parse))
        rows.append(Row(kind, "load", which, f"load {size}", await median_ms(ops["load"], make, repeat), f_parse))
        if fl.text is not None:
            ours = await median_ms(ops["read_raw"], make, repeat)
            rows.append(Row(kind, "read_raw", which, f"read_raw {size} [floor: text]", ours, median_floor_ms(fl.text, repeat)))
        ours = await median_ms(ops["read_from(tail)"], make, repeat)
        rows.append(Row(kind, "read_from(tail)", which, f"read_from(tail) {size}", ours, median_floor_ms(fl.tail, repeat)))
        if which != "big":
            continue
        rows.append(Row(kind, "read_tail", which, f"read_tail(2000) {size}", await median_ms(ops["read_tail"], make, repeat)))
        warm = make()
        await warm.read_from(sid, 0)  # a viewer that has read the session once asks only for what is new

        async def again(
            _fresh: CoordinatedPersistence, warm: CoordinatedPersistence = warm, sid: str = sid, n: int = n
        ) -> object:
            return await warm.read_from(sid, n)

        rows.append(
            Row(kind, "read_from(new, warm)", which, f"read_from(new, warm) {size}", await median_ms(again, make, repeat))
        )
        await warm.close()

    for which, root, count in (("many", stores.many, n_sessions), ("one", stores.one, 1)):
        make = partial(open_backend, kind, root)
        f_list = median_floor_ms(list_floor(kind, root), repeat)
        label = f"{count} sessions"
        rows.append(Row(kind, "list", which, f"list {label}", await median_ms(list_op, make, repeat), f_list))
        ours = await median_ms(list_snapshots_op, make, repeat)
        rows.append(Row(kind, "list_snapshots", which, f"list_snapshots {label}", ours, f_list))

    if not skip_rss:
        label = f"RSS added, inspect {_k(stores.big_events)}"
        rows.append(Row(kind, "rss", "big", label, rss_added_mib(stores, False), rss_added_mib(stores, True), "MiB"))
    return rows


async def build_big(kind: str, work: str, n_big: int, n_small: int, n_sessions: int) -> tuple[str, int]:
    """(root, events) of the big session: a full build's when ``work`` holds one, else only that session."""
    full = os.path.join(work, f"{kind}-{n_big}-{n_small}-{n_sessions}")
    if os.path.exists(full + ".complete"):
        return os.path.join(full, "big"), len(session_events(n_big))
    base = os.path.join(work, f"{kind}-{n_big}-big")
    events = session_events(n_big)
    if not os.path.exists(base + ".complete"):
        shutil.rmtree(base, ignore_errors=True)
        await write_session(kind, base, meta_of(BIG_ID, 1, "/bench/project"), events)
        open(base + ".complete", "w").close()
    return base, len(events)


async def bench_reads(kind: str, root: str, n_events: int, repeat: int) -> list[Row]:
    """Issue 25 item 4: read_raw (JSONL), inspect and load of the big session beside their floors.

    Each of the ``repeat`` rounds times every operation and floor once, in turn, so a burst of load
    from other jobs lands on ours and the floor alike; each number is the median over the rounds.
    """
    make = partial(open_backend, kind, root)
    ops = session_ops(BIG_ID, n_events)
    fl = session_floors(kind, root, BIG_ID, n_events)
    names = ["read_raw", "inspect", "load"] if fl.text is not None else ["inspect", "load"]
    ours: dict[str, list[float]] = {name: [] for name in names}
    floor: dict[str, list[float]] = {"parse": [], "text": []}
    for _ in range(repeat):
        floor["parse"].append(median_floor_ms(fl.parse, 1))
        for name in names:
            ours[name].append(await median_ms(ops[name], make, 1))
        if fl.text is not None:
            floor["text"].append(median_floor_ms(fl.text, 1))
    size = _k(n_events)
    rows = []
    for name in names:
        f = statistics.median(floor["text" if name == "read_raw" else "parse"])
        label = f"{name} {size}" + (" [floor: text]" if name == "read_raw" else "")
        rows.append(Row(kind, name, "big", label, statistics.median(ours[name]), f))
    return rows


def write_json(path: str | None, report: dict[str, Any]) -> None:
    """``--json``: the rows, for bench_scale.py."""
    if path:
        with open(path, "w") as f:
            json.dump(report, f)


async def reads(args: argparse.Namespace) -> None:
    """``--reads``: only the issue-25 full-read and read_raw rows of the big session."""
    print(
        f"issue 25 item 4: big session ({len(session_events(args.events))} events); median of {args.repeat} "
        f"interleaved rounds; {args.clock} clock"
    )

    async def rows_of(kind: str, work: str) -> list[Row]:
        root, n = await build_big(kind, work, args.events, args.small_events, args.sessions)
        return await bench_reads(kind, root, n, args.repeat)

    await run_table(
        args, args.events == DEFAULT_EVENTS, "(non-default size: no upstream comparison, targets not judged)", rows_of
    )


async def bench(args: argparse.Namespace) -> None:
    n_big, n_small, n_sessions = args.events, args.small_events, args.sessions
    print(
        f"sessions: big {len(session_events(n_big))} events, small {len(session_events(n_small))} events; "
        f"stores of {n_sessions} and 1 sessions; median of {args.repeat} runs, fresh backend per run"
    )

    async def rows_of(kind: str, work: str) -> list[Row]:
        stores = await build_stores(kind, work, n_big, n_small, n_sessions)
        return await bench_backend(stores, args.repeat, n_sessions, args.skip_rss)

    compare_upstream = (n_big, n_small, n_sessions) == (DEFAULT_EVENTS, DEFAULT_SMALL_EVENTS, DEFAULT_SESSIONS)
    await run_table(args, compare_upstream, "(non-default sizes: no upstream comparison, targets not judged)", rows_of)


async def run_table(
    args: argparse.Namespace,
    compare_upstream: bool,
    no_upstream: str,
    rows_of: Callable[[str, str], Awaitable[list[Row]]],
) -> None:
    """Print the table of ``rows_of(kind, workdir)`` for every chosen backend, the targets held, and the
    ``--json`` report; a workdir of its own is removed afterwards (``--workdir`` is kept for reuse)."""
    kinds = [k for k in BACKENDS if not args.backend or k in args.backend]
    work = args.workdir or tempfile.mkdtemp(prefix="bench-engine-")
    os.makedirs(work, mode=0o700, exist_ok=True)
    if not compare_upstream:
        print(no_upstream)
    print(HEADER)
    held: list[bool] = []
    out: list[dict[str, Any]] = []
    try:
        for kind in kinds:
            for row in await rows_of(kind, work):
                line, holds = format_row(row, compare_upstream)
                print(line, flush=True)
                out.append(row_json(row, compare_upstream))
                if holds is not None:
                    held.append(holds)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    if held:
        print(f"targets held: {sum(held)}/{len(held)}")
    write_json(args.json, {"repeat": args.repeat, "clock": args.clock, "rows": out})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=DEFAULT_EVENTS, help="events asked of the big session")
    ap.add_argument("--small-events", type=int, default=DEFAULT_SMALL_EVENTS, help="events asked of the small session")
    ap.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS, help="sessions in the listing store")
    ap.add_argument("--repeat", type=int, default=5, help="runs per number (the median is printed)")
    ap.add_argument("--backend", action="append", choices=BACKENDS, help="only this backend (repeatable)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"small sizes ({QUICK_EVENTS}/{QUICK_SMALL_EVENTS} events, {QUICK_SESSIONS} sessions)",
    )
    ap.add_argument("--skip-rss", action="store_true", help="skip the RSS subprocesses")
    ap.add_argument("--reads", action="store_true", help="only issue 25's read_raw/inspect/load rows of the big session")
    ap.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall", help="wall time (default) or process CPU time (loaded machine)"
    )
    ap.add_argument("--workdir", help="build the stores here once and reuse them (default: a temp dir, removed)")
    ap.add_argument("--json", help="also write the results to this JSON file (read by bench_scale.py)")
    ap.add_argument("--rss-child", choices=BACKENDS, help=argparse.SUPPRESS)
    ap.add_argument("--rss-root", help=argparse.SUPPRESS)
    ap.add_argument("--rss-session", help=argparse.SUPPRESS)
    ap.add_argument("--rss-floor", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_child:
        rss_child(args.rss_child, args.rss_root, args.rss_session, args.rss_floor)
        return
    if args.quick:
        args.events, args.small_events, args.sessions = QUICK_EVENTS, QUICK_SMALL_EVENTS, QUICK_SESSIONS
    if args.clock == "cpu":
        CLOCK[0] = time.process_time
    asyncio.run(reads(args) if args.reads else bench(args))


if __name__ == "__main__":
    main()
