"""Crash recovery end to end (persistence-contract §11, port form), for every backend.

A child process (``crash_child.py``) writes random turns through ``SessionStore`` + write-behind,
flushing like the checkpoint policy and at random points, and reports every seq whose flush
completed.  The parent SIGKILLs it at a random moment (sometimes while it is still resuming, i.e.
possibly in the middle of a repair commit), then reopens the storage with a fresh backend and checks:

* every reported event is stored, byte-for-byte equal in content (``sha1`` of its JSON);
* ``load`` returns the stored prefix plus exactly the synthetic closers of the interrupted turn
  (derived here independently from persistence-contract §5), and a second load changes nothing;
* seqs are contiguous, turn numbers continue after each resume, and nothing but typed
  ``SessionPersistenceError``s is ever raised (in fact only "not found" before the first flush).

Each chain of iterations keeps resuming the same session, so crash -> repair -> resume -> crash is
exercised repeatedly on one growing log.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from livekit import BACKEND_NAMES, open_backend, plain, storage_path

from persistence import SessionNotFoundError, SessionPersistenceError
from persistence.session import END_SEED

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL semantics")

CHILD = Path(__file__).with_name("crash_child.py")
REPO = Path(__file__).resolve().parents[2]
CHAIN = 5  # iterations per session before a new session id starts


def digest(event: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(event, sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def expected_closers(prefix: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(type, callId, code, cited seq) of the closers persistence-contract §5 prescribes for ``prefix``."""
    open_turn = open_step = None
    pending: collections.OrderedDict[str, int | None] = collections.OrderedDict()
    for e in prefix:
        t, d = e["type"], e["data"]
        if t in ("turn/start", "turn/end"):
            open_turn = d["turn"] if t == "turn/start" else None
            open_step = None
            pending.clear()
        elif t == "step/start":
            open_step = d["step"]
        elif t == "step/end":
            open_step = None
            pending.clear()
        elif t == "assistant/message":
            for block in d["message"]["content"]:
                if block["type"] == "tool-call":
                    pending[block["id"]] = None
        elif t == "tool/call" and d["callId"] in pending:
            pending[d["callId"]] = e["seq"]
        elif t == "tool/result":
            pending.pop(d["message"]["source"]["callId"], None)
    if open_turn is None:
        return []
    out: list[tuple[Any, ...]] = [
        ("tool/result", call, "TOOL_OUTCOME_UNKNOWN" if cited is not None else "TOOL_NOT_STARTED", cited)
        for call, cited in pending.items()
    ]
    if open_step is not None:
        out.append(("step/end", open_turn, open_step))
    out.append(("turn/end", open_turn, "interrupted"))
    return out


def closer_shape(event: dict[str, Any]) -> tuple[Any, ...]:
    d = event["data"]
    if event["type"] == "tool/result":
        cited = event.get("sourceEventSeqs")
        return ("tool/result", d["message"]["source"]["callId"], d["error"]["code"], cited[0] if cited else None)
    if event["type"] == "step/end":
        return ("step/end", d["turn"], d["step"])
    return (event["type"], d.get("turn"), d.get("reason", {}).get("kind"))


class Iteration:
    """One child run: spawn, wait (maybe for readiness), SIGKILL, collect its reports."""

    def __init__(self, name: str, storage: Path, session_id: str, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        delay = self.rng.choice([1, 2, 5, 20])
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD), name, str(storage), session_id, str(seed), str(delay)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=REPO,
        )
        self.out = b""

    def _read_until_ready(self, deadline: float) -> bool:
        assert self.proc.stdout is not None
        while b"R " not in self.out and time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                break
            self.out += chunk
        return b"R " in self.out

    def run(self) -> None:
        early = self.rng.random() < 0.15  # kill while the child is still starting/resuming
        if early:
            time.sleep(self.rng.uniform(0.05, 0.35))
        elif not self._read_until_ready(time.monotonic() + 30):
            self.proc.kill()
            _, err = self.proc.communicate()
            pytest.fail(f"child never became ready (seed {self.seed}): {err.decode(errors='replace')}")
        else:
            time.sleep(self.rng.uniform(0.0, 0.08))
        self.proc.send_signal(signal.SIGKILL)
        out, err = self.proc.communicate(timeout=30)
        self.out += out
        self.err = err.decode(errors="replace")
        if self.proc.returncode != -signal.SIGKILL:
            pytest.fail(f"child ended by itself with {self.proc.returncode} (seed {self.seed}): {self.err}")
        # the child must not have logged a warning (e.g. a failed background write) or a traceback
        assert self.err == "", f"child stderr (seed {self.seed}): {self.err}"

    def flushed(self) -> dict[int, str]:
        reports = {}
        for line in self.out.decode().splitlines():
            if line.startswith("F "):
                parts = line.split()  # a report cut short by the kill fails the shape check below
                if len(parts) == 3 and len(parts[2]) == 16:
                    reports[int(parts[1])] = parts[2]
        return reports


async def reload(name: str, storage: Path, session_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(physically stored prefix, loaded log) through fresh instances; load commits the repair."""
    reader = open_backend(name, storage)
    try:
        prefix = plain((await reader.read_from(session_id, 0)).events)
    finally:
        await reader.close()
    loader = open_backend(name, storage)
    try:
        loaded = plain((await loader.load(session_id)).events)
        again = plain((await loader.load(session_id)).events)
        assert again == loaded
    finally:
        await loader.close()
    return prefix, loaded


def check_iteration(name: str, storage: Path, session_id: str, it: Iteration, durable: dict[int, str]) -> None:
    """Assert the recovery rules after one kill; ``durable`` accumulates what earlier runs made durable."""
    durable.update(it.flushed())
    context = f"(backend {name}, session {session_id}, seed {it.seed})"
    try:
        prefix, loaded = asyncio.run(reload(name, storage, session_id))
    except SessionNotFoundError:
        assert not durable, f"flushed events vanished {context}"
        return
    except SessionPersistenceError as err:
        pytest.fail(f"recovery raised {type(err).__name__}: {err} {context}")
    except Exception as err:  # anything untyped is a bug of its own
        pytest.fail(f"recovery raised an untyped {type(err).__name__}: {err} {context}")
    assert [e["seq"] for e in loaded] == list(range(len(loaded))), context
    for seq, expected in durable.items():
        assert seq < len(prefix), f"flushed seq {seq} is missing (stored {len(prefix)}) {context}"
        assert digest(prefix[seq]) == expected, f"flushed seq {seq} changed {context}"
    # durable is now everything stored (including the committed closers): later runs must keep it
    assert loaded[: len(prefix)] == prefix, context
    closers = loaded[len(prefix) :]
    assert [closer_shape(c) for c in closers] == expected_closers(prefix), context
    assert all(c["time"] == prefix[-1]["time"] for c in closers), context
    turns = [e["data"]["turn"] for e in loaded if e["type"] == "turn/start"]
    assert turns == list(range(1, len(turns) + 1)), f"turn numbering broke {context}"
    assert loaded[-1]["type"] in ("turn/end", END_SEED), context
    for e in loaded:
        durable[e["seq"]] = digest(e)


def crash_loop(name: str, tmp_path: Path, iterations: int, base_seed: int) -> None:
    private = tmp_path / "store"
    private.mkdir(mode=0o700)
    storage = storage_path(name, private)
    durable: dict[int, str] = {}
    session_id = ""
    for i in range(iterations):
        if i % CHAIN == 0:
            session_id, durable = f"crash-{i // CHAIN}", {}
        it = Iteration(name, storage, session_id, base_seed + i)
        it.run()
        check_iteration(name, storage, session_id, it, durable)


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_crash_recovery_after_sigkill(name: str, tmp_path: Path) -> None:
    crash_loop(name, tmp_path, iterations=20, base_seed=1000)


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_crash_recovery_after_sigkill_500(name: str, tmp_path: Path) -> None:
    crash_loop(name, tmp_path, iterations=500, base_seed=50_000)
