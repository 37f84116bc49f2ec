"""Child-process side of the multi-process tests: ``python sqlite_child.py <command> <db> ...``.

Commands (one JSON line of output per step, so the parent can synchronise):
  append <db> <id> <json-events>   append through a fresh service instance (adopts the session)
  hold <db> <ms>                   hold BEGIN IMMEDIATE for <ms> milliseconds
  writer <db> <id>                 create <id>; then for every stdin line (a JSON event batch) append it and
                                   print {"committed": n, "revision": ...}; exit on EOF
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from persistence.sqlite.backend import SqliteSessionPersistence


def say(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def append(db: str, session_id: str, events: list[dict[str, object]]) -> None:
    store = SqliteSessionPersistence(db)
    await store.append(session_id, events)
    await store.close()
    say({"ok": True})


async def writer(db: str, session_id: str) -> None:
    store = SqliteSessionPersistence(db)
    await store.create({"version": 0, "id": session_id, "createdAt": 1, "cwd": "/p"})
    count = 0
    say({"ready": True})
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        batch = json.loads(line)
        await store.append(session_id, batch)
        count += len(batch)
        snapshots = await store.list_snapshots()
        say({"committed": count, "revision": snapshots[0].revision})
    await store.close()


def hold(db: str, ms: int) -> None:
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    say({"locked": True})
    time.sleep(ms / 1000)
    con.execute("COMMIT")
    con.close()


def main() -> None:
    command, db = sys.argv[1], sys.argv[2]
    if command == "append":
        asyncio.run(append(db, sys.argv[3], json.loads(sys.argv[4])))
    elif command == "writer":
        asyncio.run(writer(db, sys.argv[3]))
    elif command == "hold":
        hold(db, int(sys.argv[3]))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
