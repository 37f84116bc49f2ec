"""Shared builders of the search tests: sessions on every backend, a log rich in searchable text.

Importable as ``searchkit`` (pytest puts this folder on ``sys.path`` when it loads a test here).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path
from typing import Any

import sessionkit as sk

from app.search import Indexer
from persistence import CoordinatedPersistence, open_store

BACKENDS = ("jsonl-zstd", "jsonl-none", "sqlite")
SQLITE_NAME = "sessions.sqlite"


def store_path(tmp: Path, backend: str) -> str:
    """Where a test's store lives: a JSONL root directory, or a SQLite file in a folder of its own."""
    if backend == "sqlite":
        folder = tmp / "store"
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder / SQLITE_NAME)
    return str(tmp / "root")


def writer(path: str, backend: str) -> CoordinatedPersistence:
    return open_store(path, backend)


def reader(path: str, backend: str) -> CoordinatedPersistence:
    return open_store(path, backend, read_only=True, create=False)


async def write_session(
    path: str, backend: str, session_id: str, events: list[dict[str, Any]], cwd: str = "/w/proj", **extra: Any
) -> None:
    store = writer(path, backend)
    try:
        await store.create(sk.meta(session_id, cwd, **extra))
        if events:
            await store.append(session_id, events)
    finally:
        await store.close()


async def live_writer(
    path: str, backend: str, session_id: str, events: list[dict[str, Any]], cwd: str = "/w/proj"
) -> CoordinatedPersistence:
    """A writer that created the session and keeps it (an open turn stays open: a fresh writer would
    close it with crash closers before appending).  The caller closes it."""
    store = writer(path, backend)
    await store.create(sk.meta(session_id, cwd))
    await store.append(session_id, events)
    return store


async def append(path: str, backend: str, session_id: str, events: list[dict[str, Any]]) -> None:
    store = writer(path, backend)
    try:
        await store.append(session_id, events)
    finally:
        await store.close()


def tool_call(seq: int, turn: int, step: int, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return sk.ev("tool/call", seq, {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": arguments})


def assistant(seq: int, turn: int, step: int, blocks: list[dict[str, Any]], cited: list[int]) -> dict[str, Any]:
    data = {
        "turn": turn,
        "step": step,
        "message": {
            "id": f"assistant-{seq}",
            "role": "assistant",
            "content": blocks,
            "source": {"kind": "model", "provider": "mock", "model": "mock"},
        },
    }
    return sk.ev("assistant/message", seq, data, sourceEventSeqs=cited, surfaceOp="append")


def rich_log(prompt: str = "Where does the agent mention order.ts? 请检查订单服务的日志") -> list[dict[str, Any]]:
    """One completed turn: a prompt, a title, streamed reasoning and text cited by the message, two tool
    calls (``bash`` running ``npm run build``, ``read_file`` failing on ``src/billing/order.ts``)."""
    args1 = '{"command":"npm run build"}'
    args2 = '{"path":"src/billing/order.ts"}'
    return [
        sk.turn_start(0, 1),
        sk.user_message(1, prompt),
        sk.ev("session/title", 2, {"title": "Fix the Order Service", "messageSeqs": [1], "source": {"kind": "fallback"}}),
        sk.step_start(3, 1, 1),
        sk.text_delta(4, 1, 1, "Thinking about ", kind="reasoning-delta"),
        sk.text_delta(5, 1, 1, "the S3 bucket ", kind="reasoning-delta"),
        sk.text_delta(6, 1, 1, "policy first.", kind="reasoning-delta"),
        sk.text_delta(7, 1, 1, "I will run ", index=1),
        sk.text_delta(8, 1, 1, "the build ", index=1),
        sk.text_delta(9, 1, 1, "now.", index=1),
        assistant(
            10,
            1,
            1,
            [
                {"type": "reasoning", "text": "Thinking about the S3 bucket policy first."},
                {"type": "text", "text": "I will run the build now."},
                {"type": "tool-call", "id": "c1", "name": "bash", "arguments": args1},
                {"type": "tool-call", "id": "c2", "name": "read_file", "arguments": args2},
            ],
            [4, 5, 6, 7, 8, 9],
        ),
        tool_call(11, 1, 1, "c1", "bash", args1),
        sk.tool_result(12, 1, 1, "c1", "Build OK: wrote dist/order.js", sourceEventSeqs=[11]),
        tool_call(13, 1, 1, "c2", "read_file", args2),
        sk.tool_result(14, 1, 1, "c2", "ENOENT: no such file src/billing/order.ts", is_error=True, sourceEventSeqs=[13]),
        sk.step_end(15, 1, 1),
        sk.turn_end(16, 1),
    ]


def files_of(path: str, backend: str) -> dict[str, str]:
    """Every file of the store's folder (name -> sha256): what "never write into the root" compares.

    A SQLite store's own ``-wal``/``-shm`` are left out: the engine's read-only connection (any SQLite
    reader of a WAL database) may create them empty; they are the store's, not the index's."""
    base = os.path.dirname(path) if backend == "sqlite" else path
    companions = {os.path.basename(path) + "-wal", os.path.basename(path) + "-shm"} if backend == "sqlite" else set()
    out = {}
    for dirpath, _dirs, names in os.walk(base):
        for name in names:
            if name in companions:
                continue
            p = os.path.join(dirpath, name)
            with open(p, "rb") as f:
                out[os.path.relpath(p, base)] = hashlib.sha256(f.read()).hexdigest()
    return out


async def indexed(path: str, backend: str, **kw: Any) -> Indexer:
    """An indexer over a fresh read-only store of ``path``, brought up to date once."""
    indexer = Indexer(reader(path, backend), **kw)
    await indexer.update()
    return indexer


def run(coro: Any) -> Any:
    return asyncio.run(coro)
