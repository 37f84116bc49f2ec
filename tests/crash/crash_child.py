"""Crash-recovery child (persistence-contract §11, port form): write turns until SIGKILLed.

Usage: ``crash_child.py <backend> <storage> <session-id> <rng-seed> <max-delay-ms>``

Resumes the session when it is stored (else creates it), prints ``R <seq>`` once it is live, then
appends random turns through ``SessionStore`` + write-behind forever.  It flushes like the semantic
checkpoint policy (before each step's model request and before each tool body) plus at random
points, and after every completed flush prints ``F <seq> <digest>`` for each newly durable event.
Only the persistence package is imported, so the child starts fast.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import sys
from typing import Any

from persistence import JsonlSessionPersistence, SessionStore
from persistence.errors import SessionNotFoundError

CWD = "/crash/work"


def digest(event: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(event, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def make_backend(name: str, storage: str) -> Any:
    if name == "sqlite":
        from persistence.sqlite.backend import SqliteSessionPersistence

        return SqliteSessionPersistence(storage)
    return JsonlSessionPersistence(storage, compression="none" if name == "jsonl-none" else "zstd")


class Writer:
    def __init__(self, store: SessionStore, session: Any, rng: random.Random) -> None:
        self.store = store
        self.s = session
        self.rng = rng
        self.reported = session.seq - 1  # resume flushed everything it returned

    async def flush(self) -> None:
        await self.store.flush(self.s.id)
        lines = []
        for seq in range(self.reported + 1, self.s.seq):
            lines.append(f"F {seq} {digest(self.s.events[seq].to_json())}\n")
        self.reported = self.s.seq - 1
        if lines:
            sys.stdout.write("".join(lines))
            sys.stdout.flush()

    async def pause(self) -> None:
        """Between events: sometimes yield (background windows close), sometimes flush at random."""
        r = self.rng.random()
        if r < 0.08:
            await self.flush()
        elif r < 0.5:
            await asyncio.sleep(self.rng.random() * 0.003)

    async def append(self, etype: str, data: Any, **kw: Any) -> Any:
        event = self.s.append(etype, data, **kw)
        await self.pause()
        return event

    async def turn(self) -> None:
        rng, turn = self.rng, self.s.next_turn
        await self.append("turn/start", {"turn": turn})
        for step in range(1, rng.randint(1, 3) + 1):
            await self.append("step/start", {"turn": turn, "step": step})
            if step == 1:
                await self.append(
                    "user/message",
                    {
                        "id": f"u-{turn}",
                        "role": "user",
                        "source": {"kind": "user"},
                        "content": [{"type": "text", "text": f"prompt {turn} \u00e9\u2028"}],
                    },
                    surface_op="append",
                )
            await self.flush()  # checkpoint: the request is durable before the model call
            chunk_seqs = []
            for i in range(rng.randint(0, 6)):
                e = await self.append(
                    "assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": "text-delta", "index": 0, "text": f"t{i}"}}
                )
                chunk_seqs.append(e.seq)
            calls = [f"c{turn}-{step}-{k}" for k in range(rng.randint(0, 2))]
            content: list[dict[str, Any]] = [{"type": "text", "text": "ok"}]
            content += [{"type": "tool-call", "id": c, "name": "bash", "arguments": "{}"} for c in calls]
            await self.append(
                "assistant/message",
                {
                    "turn": turn,
                    "step": step,
                    "message": {
                        "id": f"a-{turn}-{step}",
                        "role": "assistant",
                        "content": content,
                        "source": {"kind": "model", "provider": "crash", "model": "crash"},
                    },
                },
                surface_op="append",
                source_event_seqs=chunk_seqs,
            )
            for call in calls:
                if rng.random() < 0.2:
                    continue  # never started (the scheduler died first)
                call_event = await self.append(
                    "tool/call", {"turn": turn, "step": step, "callId": call, "name": "bash", "arguments": "{}"}
                )
                await self.flush()  # checkpoint: the tool intent is durable before its side effect
                await asyncio.sleep(rng.random() * 0.004)  # the "side effect"
                await self.append(
                    "tool/result",
                    {
                        "turn": turn,
                        "step": step,
                        "message": {
                            "id": f"r-{call}",
                            "role": "user",
                            "source": {"kind": "tool", "callId": call},
                            "content": [
                                {
                                    "type": "tool-result",
                                    "toolCallId": call,
                                    "isError": False,
                                    "content": [{"type": "text", "text": "done"}],
                                }
                            ],
                        },
                    },
                    surface_op="append",
                    source_event_seqs=[call_event.seq],
                )
            await self.append("step/end", {"turn": turn, "step": step})
        await self.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


async def main(name: str, storage: str, session_id: str, seed: int, delay: int) -> None:
    rng = random.Random(seed)
    persistence = make_backend(name, storage)
    store = SessionStore(persistence, write_batch_max_delay_ms=delay)
    try:
        session = await store.resume(session_id)
    except SessionNotFoundError:
        session = await store.create(session_id, meta={"cwd": CWD})
    writer = Writer(store, session, rng)
    sys.stdout.write(f"R {session.seq}\n")
    sys.stdout.flush()
    while True:
        await writer.turn()


if __name__ == "__main__":
    backend_name, storage_path, sid, rng_seed, max_delay = sys.argv[1:6]
    asyncio.run(main(backend_name, storage_path, sid, int(rng_seed), int(max_delay)))
