"""Engine benchmark: prints medians and peak RSS per backend. Never asserted anywhere.

python benchmarks/bench_engine.py [--events 200000] [--sessions 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from synthetic import batches, session_events

from persistence import CoordinatedPersistence, JsonlSessionPersistence


def backends(tmp: str) -> dict[str, Callable[[str], CoordinatedPersistence]]:
    out: dict[str, Callable[[str], CoordinatedPersistence]] = {
        "jsonl-zstd": lambda name: JsonlSessionPersistence(os.path.join(tmp, name), compression="zstd"),
        "jsonl-none": lambda name: JsonlSessionPersistence(os.path.join(tmp, name), compression="none"),
    }
    try:
        from persistence.sqlite.backend import SqliteSessionPersistence  # type: ignore[import-not-found]

        os.makedirs(os.path.join(tmp, "sqlite"), mode=0o700, exist_ok=True)
        out["sqlite"] = lambda name: SqliteSessionPersistence(os.path.join(tmp, "sqlite", name + ".sqlite"))
    except ImportError:
        pass
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def timed(fn: Callable[[], Awaitable[Any]], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


async def bench(n_events: int, n_sessions: int, repeat: int, only: list[str] | None) -> None:
    events = session_events(n_events)
    parts = batches(events)
    print(f"synthetic session: {len(events)} events in {len(parts)} batches")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in backends(tmp).items():
            if only and name not in only:
                continue
            store = make(f"big-{name}")
            meta = {"version": 0, "id": "big-session", "createdAt": 1, "cwd": "/bench/project"}
            t0 = time.perf_counter()
            await store.create(meta)
            for part in parts:
                await store.append("big-session", part)
            write_s = time.perf_counter() - t0
            await store.close()

            def fresh(make: Callable[[str], CoordinatedPersistence] = make, name: str = name) -> CoordinatedPersistence:
                return make(f"big-{name}")

            async def load() -> None:
                s = fresh()
                await s.load("big-session")

            async def inspect() -> None:
                s = fresh()
                await s.inspect("big-session")

            async def tail() -> None:
                s = fresh()
                await s.read_from("big-session", len(events) - 50)

            async def newest() -> None:
                s = fresh()
                await s.read_tail("big-session", 2000)

            warm = fresh()
            await warm.read_from("big-session", 0)  # a viewer that has read the session once

            async def tail_again(warm: CoordinatedPersistence = warm) -> None:
                # What a viewer following the session asks after each change: the events past what it holds.
                await warm.read_from("big-session", len(events))

            r_load = await timed(load, repeat)
            r_inspect = await timed(inspect, repeat)
            r_tail = await timed(tail, repeat)
            r_tail_warm = await timed(tail_again, repeat)
            r_newest = await timed(newest, repeat)
            await warm.close()

            many = make(f"many-{name}")
            small = session_events(12)
            for i in range(n_sessions):
                sid = f"s-{i:05d}"
                await many.create({"version": 0, "id": sid, "createdAt": i, "cwd": f"/bench/p{i % 20}"})
                await many.append(sid, small)
            await many.close()

            async def listing(make: Callable[[str], CoordinatedPersistence] = make, name: str = name) -> None:
                await make(f"many-{name}").list()

            async def snaps(make: Callable[[str], CoordinatedPersistence] = make, name: str = name) -> None:
                await make(f"many-{name}").list_snapshots()

            r_list = await timed(listing, repeat)
            r_snaps = await timed(snaps, repeat)
            print(
                f"{name:11s} write {write_s * 1000:8.0f} ms | load {r_load:7.0f} ms | inspect {r_inspect:7.0f} ms | "
                f"read_from(tail) {r_tail:7.1f} ms | read_from(new, warm) {r_tail_warm:5.1f} ms | "
                f"read_tail(2000) {r_newest:6.1f} ms | "
                f"list({n_sessions}) {r_list:7.0f} ms | "
                f"list_snapshots {r_snaps:7.0f} ms | peak RSS {peak_rss_mb():6.0f} MB"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--backend", action="append")
    args = ap.parse_args()
    asyncio.run(bench(args.events, args.sessions, args.repeat, args.backend))


if __name__ == "__main__":
    main()
