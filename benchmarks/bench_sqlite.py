"""SQLite small operations beside the bare-sqlite3 floor and upstream (issue 25 item 4). Never asserted.

    python benchmarks/bench_sqlite.py [--sessions 10000] [--repeat 7] [--workdir DIR]
    python benchmarks/bench_sqlite.py --events 200000      # also the big-session section (load vs JSONL zstd)

One run prints one table: on a ``--sessions`` store (each session 12 events, the store built in one
transaction with the backend's own row codec), on the same with every third session a subagent's (the
"rich" store: its fresh listings only) and on a small session (those 12 events, in that store and alone
in a one-session store):

- ``list``, ``list_snapshots`` and ``list_entries`` (the window's and ``verify``'s lenient listing; no
  upstream counterpart) on the same instance (warm) and on a fresh instance per call (the constructor
  is timed, ``close`` is not: upstream's recorded method);
- ``inspect``, ``load`` and ``read_from(0)`` of the small session, a fresh instance per call;

each beside its floor: a bare ``sqlite3`` SELECT of the same rows (``floors.py``: the ``sessions`` rows,
or the session's event rows decoded and parsed), on an open connection for a warm number and with
``connect``/``close`` for a fresh one.  Each cell is the median of ``--repeat`` (>= 5) samples; ours
and its floor are timed back to back within each sample and ``ours/floor`` is the median of the per-
sample ratios, so load drift on a shared machine hits both sides alike.  A full collection runs
before each sample, outside it.

Upstream (``UPSTREAM_MS``): the issue's paired run (Node 24, same artifacts, same machine).  The
issue gives ``list`` 16 ms, ``list_snapshots`` 19 ms and ``inspect`` of a small session 1.4 ms on the
10,000-session store, and ``list`` on a fresh instance only as a ratio (1.83x); that cell is derived:
see ``UPSTREAM_MS``.  Target (issue 25 item 4): every SQLite operation at most 1.0x upstream.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Final

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import floors  # noqa: E402
from synthetic import batches, session_events  # noqa: E402

from persistence import JsonlSessionPersistence  # noqa: E402
from persistence.backend import NEVER_CANCELLED  # noqa: E402
from persistence.sqlite.backend import SqliteSessionPersistence  # noqa: E402
from persistence.sqlite.packing import encode_batch  # noqa: E402
from persistence.sqlite.sessions import BUMP_REVISION, SELECT_ALL_SESSIONS, UPSERT_SESSION, upsert_params  # noqa: E402
from persistence.sqlite.storage import INSERT_EVENT, SqliteStorage  # noqa: E402

SMALL_EVENTS: Final = 12
SUBAGENT_EVERY: Final = 3  # the "rich" store: every third session a subagent's (its listing reads every column)
ONE_ID: Final = "one"  # the small session alone in its store
BIG_ID: Final = "big-session"

# Upstream's milliseconds from the issue's paired run (10,000-session store, a small session).
# "list on a fresh instance 1.83x" gives no upstream number: it is DERIVED as our fresh-instance list
# measured by this script before the issue-25 work (23.0 ms: the median of four runs of 7-9 samples,
# 20.6-27.7 ms, on 2 cores loaded by other agents) / 1.83 = 12.6 ms, so that ours/upstream then
# printed exactly the issue's ratio.  That is below this script's own fresh floor then (connect +
# SELECT of the same rows: 14.8-16.5 ms), so the issue's run saw another load: judge that cell by
# its floor ratio too.
UPSTREAM_MS: Final[dict[str, float]] = {
    "many list (warm)": 16.0,
    "many list (fresh)": 23.0 / 1.83,
    "many list_snapshots (warm)": 19.0,
    # Upstream's recorded method is a fresh backend per call, so its 19 ms is a fresh-instance number too.
    "many list_snapshots (fresh)": 19.0,
    "many inspect small (fresh)": 1.4,
}
TARGET: Final = 1.0  # ours/upstream at most this (issue 25 item 4)


def describe(path: str) -> str:
    con = sqlite3.connect(path)
    try:
        sessions = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
        rows = con.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        con.close()
    return f"{sessions} sessions, {rows} event rows, {os.path.getsize(path) / 1e6:.1f} MB"


def bulk_fill(path: str, n_sessions: int, *, subagent_every: int = 0) -> None:
    """The many-session store, written in one transaction with the backend's own row codec (a build
    shortcut: 10k separate durable commits would only measure fsync).  With ``subagent_every`` = k,
    every k-th session is a subagent's (parent, origin, depth and preset set: a "rich" sessions row)."""
    rows = encode_batch(session_events(SMALL_EVENTS), pack=True)
    storage = SqliteStorage(path)
    storage.list_headers(NEVER_CANCELLED)  # open and initialize
    with storage.db.write("bench fill") as con:
        for i in range(n_sessions):
            sid = f"s-{i:05d}"
            meta: dict[str, Any] = {"version": 0, "id": sid, "createdAt": i, "cwd": f"/bench/p{i % 20}"}
            if subagent_every and i % subagent_every == subagent_every - 1:
                meta.update(parentSession=f"s-{i - 1:05d}", origin="subagent", delegationDepth=1, agentPreset="reviewer")
            con.execute(UPSERT_SESSION, upsert_params(meta, str(uuid.uuid4())))
            con.executemany(INSERT_EVENT, [(sid, *r) for r in rows])
            con.execute(BUMP_REVISION, (sid,))
    storage.close()


async def write_one(path: str, session_id: str, n_events: int) -> None:
    store = SqliteSessionPersistence(path)
    await store.create({"version": 0, "id": session_id, "createdAt": 1, "cwd": "/bench/project"})
    for part in batches(session_events(n_events)):
        await store.append(session_id, part)
    await store.close()


async def build(work: str, n_sessions: int) -> tuple[str, str, str]:
    """The many-session store, the same with every third session a subagent's, and the one-session
    store (each reused when ``work`` already holds it)."""
    many = os.path.join(work, f"many-{n_sessions}.sqlite")
    rich = os.path.join(work, f"rich-{n_sessions}.sqlite")
    one = os.path.join(work, "one.sqlite")
    for path, every in ((many, 0), (rich, SUBAGENT_EVERY)):
        if not os.path.exists(path + ".complete"):
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)
            t0 = time.perf_counter()
            bulk_fill(path, n_sessions, subagent_every=every)
            open(path + ".complete", "w").close()
            print(f"built the {n_sessions}-session store {os.path.basename(path)} in {time.perf_counter() - t0:.1f} s")
    if not os.path.exists(one + ".complete"):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(one + suffix):
                os.remove(one + suffix)
        await write_one(one, ONE_ID, SMALL_EVENTS)
        open(one + ".complete", "w").close()
    return many, rich, one


# ---------------------------------------------------------------------------------------------- floors


def floor_rows_warm(con: sqlite3.Connection) -> Callable[[], object]:
    """The same ``sessions`` rows as a listing reads, on an open connection."""
    return lambda: con.execute(SELECT_ALL_SESSIONS).fetchall()


def floor_rows_fresh(path: str) -> Callable[[], object]:
    """Connect read-only, SELECT the same ``sessions`` rows, close."""

    def run() -> object:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return con.execute(SELECT_ALL_SESSIONS).fetchall()
        finally:
            con.close()

    return run


# ---------------------------------------------------------------------------------------------- timing


async def paired(
    ours: Callable[[], Awaitable[object]], floor: Callable[[], object] | None, repeat: int
) -> tuple[float, float | None, float | None]:
    """Median ms of ``ours``, of ``floor`` and of their per-sample ratio (each sample: ours then floor)."""
    mine: list[float] = []
    bare: list[float] = []
    ratios: list[float] = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = await ours()
        a = time.perf_counter() - t0
        del result
        mine.append(a)
        if isinstance(ours, Fresh):
            await ours.after()
        if floor is not None:
            gc.collect()
            t0 = time.perf_counter()
            result = floor()
            b = time.perf_counter() - t0
            del result
            bare.append(b)
            ratios.append(a / b)
    if floor is None:
        return statistics.median(mine) * 1000, None, None
    return statistics.median(mine) * 1000, statistics.median(bare) * 1000, statistics.median(ratios)


class Fresh:
    """``op`` on a new instance per call: the constructor is timed; ``close`` runs in ``after``, off the clock."""

    def __init__(self, path: str, op: Callable[[SqliteSessionPersistence], Awaitable[object]]) -> None:
        self.path, self.op = path, op
        self.open: list[SqliteSessionPersistence] = []

    async def __call__(self) -> object:
        store = SqliteSessionPersistence(self.path)
        self.open.append(store)
        return await self.op(store)

    async def after(self) -> None:
        while self.open:
            await self.open.pop().close()


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def row(name: str, ours: float, floor: float | None, ratio: float | None) -> str:
    up = UPSTREAM_MS.get(name)
    vs = None if up is None else ours / up
    verdict = "" if vs is None else ("holds" if vs <= TARGET else "MISSES")
    return (
        f"{name:34s} {ours:9.2f} {fmt(floor, '9.2f'):>9s} {fmt(ratio, '8.2f'):>8s}x "
        f"{fmt(up, '9.2f'):>9s} {fmt(vs, '8.2f'):>8s}x  {verdict}"
    )


Case = tuple[str, Callable[[], Awaitable[object]], Callable[[], object] | None]


def cases(label: str, path: str, sid: str, warm: SqliteSessionPersistence, con: sqlite3.Connection) -> list[Case]:
    """What one store is timed on: (row name, ours, its floor)."""

    def parse() -> object:
        return floors.sqlite_parse(path, sid)

    return [
        (f"{label} list (warm)", warm.list, floor_rows_warm(con)),
        (f"{label} list (fresh)", Fresh(path, lambda s: s.list()), floor_rows_fresh(path)),
        (f"{label} list_snapshots (warm)", warm.list_snapshots, floor_rows_warm(con)),
        (f"{label} list_snapshots (fresh)", Fresh(path, lambda s: s.list_snapshots()), floor_rows_fresh(path)),
        (f"{label} list_entries (warm)", warm.list_entries, floor_rows_warm(con)),
        (f"{label} list_entries (fresh)", Fresh(path, lambda s: s.list_entries()), floor_rows_fresh(path)),
        (f"{label} inspect small (fresh)", Fresh(path, lambda s: s.inspect(sid)), parse),
        (f"{label} load small (fresh)", Fresh(path, lambda s: s.load(sid)), parse),
        (f"{label} read_from(0) small (fresh)", Fresh(path, lambda s: s.read_from(sid, 0)), parse),
        (f"{label} inspect small (warm)", lambda: warm.inspect(sid), None),
    ]


async def small_ops(repeat: int, stores: tuple[str, str, str], n_sessions: int) -> list[dict[str, Any]]:
    """Prints the table; returns its rows (for ``--json``).  The rich store (every third session a
    subagent's) is timed on its fresh listings only: what differs there is how the rows are read."""
    many, rich, one = stores
    out: list[dict[str, Any]] = []
    print(f"many store: {describe(many)}; one-session store: {describe(one)}")
    print(f"rich store: the many store with one session in {SUBAGENT_EVERY} a subagent's")
    print(f"median of {repeat} samples; the machine may be loaded by other work: compare the ratios")
    print(f"{'operation':34s} {'ours ms':>9s} {'floor ms':>9s} {'ours/floor':>9s} {'upstream':>9s} {'ours/up':>9s}")
    middle = f"s-{n_sessions // 2:05d}"  # the small session timed inside the many-session store
    for label, path, sid in (("many", many, middle), ("rich", rich, middle), ("one", one, ONE_ID)):
        warm = SqliteSessionPersistence(path)
        await warm.list()
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for name, ours, floor in cases(label, path, sid, warm, con):
                if label == "rich" and not (name.startswith("rich list") and name.endswith("(fresh)")):
                    continue
                med, floor_ms, ratio = await paired(ours, floor, repeat)
                print(row(name, med, floor_ms, ratio), flush=True)
                up = UPSTREAM_MS.get(name) if n_sessions == 10_000 else None
                out.append({"name": name, "ours": med, "floor": floor_ms, "ours_over_floor": ratio, "upstream": up})
                if name == "many list (fresh)" and n_sessions == 10_000:
                    # The recorded method again: upstream's 16 ms list was a fresh backend per call.
                    print(f"{'  (vs upstream list 16 ms)':34s} {'':9s} {'':9s} {'':9s} {16.0:9.2f} {med / 16.0:8.2f}x")
        finally:
            con.close()
            await warm.close()
    if n_sessions != 10_000:
        print("(upstream figures are for 10,000 sessions: at other sizes the upstream columns compare nothing)")
    return out


async def big_session(n_events: int, repeat: int, work: str) -> None:
    """The big session: load/inspect/read_from(tail), and load beside JSONL zstd (the older work item)."""
    events = session_events(n_events)
    parts = batches(events)
    big = os.path.join(work, f"big-{n_events}.sqlite")
    if not os.path.exists(big + ".complete"):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(big + suffix):
                os.remove(big + suffix)
        store = SqliteSessionPersistence(big)
        await store.create({"version": 0, "id": BIG_ID, "createdAt": 1, "cwd": "/bench/project"})
        for part in parts:
            await store.append(BIG_ID, part)
        await store.close()
        open(big + ".complete", "w").close()
    root = os.path.join(work, f"jsonl-{n_events}")
    if not os.path.exists(root + ".complete"):
        js = JsonlSessionPersistence(root, compression="zstd")
        await js.create({"version": 0, "id": BIG_ID, "createdAt": 1, "cwd": "/bench/project"})
        for part in parts:
            await js.append(BIG_ID, part)
        await js.close()
        open(root + ".complete", "w").close()

    async def sqlite_load() -> object:
        s = SqliteSessionPersistence(big)
        try:
            return await s.load(BIG_ID)
        finally:
            await s.close()

    async def tail() -> object:
        s = SqliteSessionPersistence(big)
        try:
            return await s.read_from(BIG_ID, len(events) - 50)
        finally:
            await s.close()

    async def jsonl_load() -> object:
        return await JsonlSessionPersistence(root, compression="zstd").load(BIG_ID)

    load_ms, floor_ms, ratio = await paired(sqlite_load, lambda: floors.sqlite_parse(big, BIG_ID), repeat)
    print(f"big session ({len(events)} events): {describe(big)}")
    print(row("big load (fresh)", load_ms, floor_ms, ratio))
    tail_ms, tail_floor, tail_ratio = await paired(tail, lambda: floors.sqlite_parse(big, BIG_ID, len(events) - 50), repeat)
    print(row("big read_from(tail) (fresh)", tail_ms, tail_floor, tail_ratio))
    ratios = []
    for _ in range(repeat):
        s_ms, _f, _r = await paired(sqlite_load, None, 1)
        j_ms, _f, _r = await paired(jsonl_load, None, 1)
        ratios.append(s_ms / j_ms)
    print(f"sqlite/jsonl-zstd load ratio {statistics.median(ratios):.2f} (median of {repeat} alternating pairs)")


async def bench(args: argparse.Namespace) -> None:
    work = args.workdir or tempfile.mkdtemp(prefix="bench-sqlite-")
    os.makedirs(work, mode=0o700, exist_ok=True)
    os.chmod(work, 0o700)
    rows = await small_ops(args.repeat, await build(work, args.sessions), args.sessions)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sessions": args.sessions, "repeat": args.repeat, "target": TARGET, "rows": rows}, f)
    if args.events:
        await big_session(args.events, args.repeat, work)
    if not args.workdir:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10_000, help="sessions in the many-session store")
    ap.add_argument("--repeat", type=int, default=7, help="samples per cell (the median is printed; at least 5)")
    ap.add_argument("--events", type=int, default=0, help="also a big session of this many events (0: skip)")
    ap.add_argument("--workdir", help="keep and reuse the stores here (default: a temporary folder, removed)")
    ap.add_argument("--json", help="also write the results to this JSON file (read by bench_scale.py)")
    args: Any = ap.parse_args()
    args.repeat = max(5, args.repeat)
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
