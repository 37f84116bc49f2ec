"""SQLite backend benchmark: prints medians and peak RSS. Numbers are printed, never asserted.

    python benchmarks/bench_sqlite.py [--events 200000] [--sessions 10000] [--repeat 5] [--no-jsonl]

Targets (sqlite-backend work item): load within 1.2x of JSONL zstd; read_from(tail) < 20 ms.
A JSONL-zstd load of the same session is measured as the reference for the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_engine import peak_rss_mb, timed
from synthetic import batches, session_events

from persistence import JsonlSessionPersistence
from persistence.backend import NEVER_CANCELLED
from persistence.sqlite.backend import SqliteSessionPersistence
from persistence.sqlite.packing import encode_batch
from persistence.sqlite.sessions import BUMP_REVISION, UPSERT_SESSION, upsert_params
from persistence.sqlite.storage import INSERT_EVENT, SqliteStorage

SESSION_ID = "big-session"
META = {"version": 0, "id": SESSION_ID, "createdAt": 1, "cwd": "/bench/project"}


def describe(path: str) -> str:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        rows, packed, blobs = con.execute(
            "SELECT count(*), sum(ignorable = 0), sum(typeof(data) = 'blob') FROM events"
        ).fetchone()
    finally:
        con.close()
    return f"{rows} physical rows ({packed} packed, {blobs} zstd blobs), {os.path.getsize(path) / 1e6:.1f} MB"


def bulk_fill(path: str, n_sessions: int) -> None:
    """The 10k-session store, written in one transaction with the backend's own row codec (a build shortcut:
    10k separate durable commits would only measure fsync)."""
    small = session_events(12)
    rows = encode_batch(small, pack=True)
    storage = SqliteStorage(path)
    storage.list_headers(NEVER_CANCELLED)  # open and initialize
    with storage.db.write("bench fill") as con:
        for i in range(n_sessions):
            sid = f"s-{i:05d}"
            meta = {"version": 0, "id": sid, "createdAt": i, "cwd": f"/bench/p{i % 20}"}
            con.execute(UPSERT_SESSION, upsert_params(meta, str(uuid.uuid4())))
            con.executemany(INSERT_EVENT, [(sid, *r) for r in rows])
            con.execute(BUMP_REVISION, (sid,))
    storage.close()


async def bench(n_events: int, n_sessions: int, repeat: int, with_jsonl: bool) -> None:
    events = session_events(n_events)
    parts = batches(events)
    print(f"synthetic session: {len(events)} events in {len(parts)} append batches")
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        big = os.path.join(tmp, "big.sqlite")
        store = SqliteSessionPersistence(big)
        t0 = time.perf_counter()
        await store.create(META)
        for part in parts:
            await store.append(SESSION_ID, part)
        write_ms = (time.perf_counter() - t0) * 1000
        await store.close()
        print(f"sqlite file: {describe(big)}; write {write_ms:.0f} ms")

        async def load() -> None:
            s = SqliteSessionPersistence(big)
            await s.load(SESSION_ID)
            await s.close()

        async def inspect() -> None:
            s = SqliteSessionPersistence(big)
            await s.inspect(SESSION_ID)
            await s.close()

        async def tail_cold() -> None:
            s = SqliteSessionPersistence(big)
            await s.read_from(SESSION_ID, len(events) - 50)
            await s.close()

        warm = SqliteSessionPersistence(big)
        await warm.read_from(SESSION_ID, 0)

        async def tail_warm() -> None:
            await warm.read_from(SESSION_ID, len(events) - 50)

        r_load = await timed(load, repeat)
        r_inspect = await timed(inspect, repeat)
        r_tail_cold = await timed(tail_cold, repeat)
        r_tail_warm = await timed(tail_warm, repeat * 4)
        await warm.close()

        many = os.path.join(tmp, "many.sqlite")
        t0 = time.perf_counter()
        bulk_fill(many, n_sessions)
        fill_ms = (time.perf_counter() - t0) * 1000

        async def listing() -> None:
            s = SqliteSessionPersistence(many)
            await s.list()
            await s.close()

        async def snapshots() -> None:
            s = SqliteSessionPersistence(many)
            await s.list_snapshots()
            await s.close()

        r_list = await timed(listing, repeat)
        r_snaps = await timed(snapshots, repeat)
        print(f"{n_sessions}-session store: {describe(many)}; built in {fill_ms:.0f} ms")
        print(
            f"sqlite      load {r_load:7.0f} ms | inspect {r_inspect:7.0f} ms | read_from(tail) cold {r_tail_cold:6.1f} ms"
            f" warm {r_tail_warm:6.1f} ms | list({n_sessions}) {r_list:6.0f} ms | list_snapshots {r_snaps:6.0f} ms"
            f" | peak RSS {peak_rss_mb():6.0f} MB"
        )

        if with_jsonl:
            root = os.path.join(tmp, "jsonl")
            js = JsonlSessionPersistence(root, compression="zstd")
            await js.create(META)
            for part in parts:
                await js.append(SESSION_ID, part)
            await js.close()

            async def jsonl_load() -> None:
                await JsonlSessionPersistence(root, compression="zstd").load(SESSION_ID)

            # Alternate the two loads so machine-load drift hits both sides of the ratio alike.
            ratios, j_samples = [], []
            for _ in range(repeat):
                s_ms = await timed(load, 1)
                j_ms = await timed(jsonl_load, 1)
                j_samples.append(j_ms)
                ratios.append(s_ms / j_ms)
            print(
                f"jsonl-zstd  load {statistics.median(j_samples):7.0f} ms (reference) -> sqlite/jsonl load ratio "
                f"{statistics.median(ratios):.2f} (median of {repeat} alternating pairs) | peak RSS {peak_rss_mb():6.0f} MB"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-jsonl", action="store_true", help="skip the JSONL-zstd reference load")
    args = ap.parse_args()
    asyncio.run(bench(args.events, args.sessions, args.repeat, not args.no_jsonl))


if __name__ == "__main__":
    main()
