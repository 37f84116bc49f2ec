"""Helpers for the live-session suites (importable as ``livekit``, like ``sessionkit``).

* ``VirtualClockLoop`` / ``run_virtual``: an asyncio loop whose clock only moves when the loop
  would otherwise sleep, so batching windows are exact and tests never wait for real time.
  Worker threads (the coordinator's storage hooks) still wake it through the self-pipe.
* ``Probe``: a transparent proxy around a coordinator's ``StorageBackend`` that counts hook
  calls, records append batches and can gate or fail a hook on its worker thread.
* ``append_log``: drive a live Session with stored-shape events (persistence-contract §9.0).
* ``open_backend`` / ``BACKEND_NAMES``: backends by name, for suites outside ``tests/contract``.
* ``copy_fixture``: a private copy of an upstream fixture root (dirs 0700, files 0600).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import selectors
import shutil
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from persistence import CoordinatedPersistence, JsonlSessionPersistence, Session, SessionStore
from persistence.model.frozen import raw_of

T = TypeVar("T")

SHARED = Path(__file__).resolve().parents[2] / "shared"
UPSTREAM_FIXTURES = SHARED / "fixtures" / "upstream"


# ---------------------------------------------------------------- virtual clock


class _VirtualSelector(selectors.SelectSelector):
    """Returns ready descriptors at once; instead of sleeping it advances the loop's clock."""

    def __init__(self, clock: list[float]) -> None:
        super().__init__()
        self._clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:  # nothing scheduled: really wait (a worker thread will wake us)
            return super().select(None)
        self._clock[0] += timeout
        return []


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """``loop.time()`` starts at 0 and jumps to the next timer whenever the loop is idle.

    Caveat: while a worker thread runs, an idle loop still jumps to its next timer, so a
    storage hook takes "unbounded" virtual time.  Tests that need exact write durations use
    fake async writers instead of storage.
    """

    def __init__(self) -> None:
        self._clock = [0.0]
        super().__init__(_VirtualSelector(self._clock))

    def time(self) -> float:
        return self._clock[0]


def run_virtual(coro: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(coro)


def now_ms() -> int:
    """The running loop's clock in whole milliseconds (virtual under ``run_virtual``)."""
    return round(asyncio.get_running_loop().time() * 1000)


async def settle(rounds: int = 5) -> None:
    """Let already-scheduled callbacks and tasks run (no clock movement)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def eventually(predicate: Callable[[], bool], *, step: float = 0.001, limit: int = 100_000) -> None:
    """Poll ``predicate`` between short sleeps (virtual under ``run_virtual``: no real waiting)."""
    for _ in range(limit):
        if predicate():
            return
        await asyncio.sleep(step)
    raise AssertionError("condition never became true")


# ---------------------------------------------------------------- storage probe


class Gate:
    """Blocks a hook on its worker thread until ``open()``; ``fail(err)`` makes it raise instead."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self._release = threading.Event()
        self._error: BaseException | None = None

    def __call__(self, *_args: Any) -> None:
        self.entered.set()
        if not self._release.wait(30):
            raise TimeoutError("test gate was never opened")
        if self._error is not None:
            raise self._error

    def open(self) -> None:
        self._release.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._release.set()

    async def wait_entered(self) -> None:
        if not await asyncio.get_running_loop().run_in_executor(None, self.entered.wait, 30):
            raise TimeoutError("the gated hook was never reached")


class Probe:
    """Wraps a ``StorageBackend``; every other attribute is delegated untouched."""

    HOOKS = (
        "load_stored",
        "load_suffix",
        "read_stored_revision",
        "append_batch",
        "commit_repair",
        "list_headers",
        "list_snapshots",
        "read_raw",
        "close",
    )

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: collections.Counter[str] = collections.Counter()
        self.attempted: list[list[int]] = []  # seqs of every append_batch call
        self.committed: list[list[int]] = []  # seqs of every append_batch that returned
        self.lifecycle: list[str] = []
        self._before: dict[str, list[Callable[..., None]]] = collections.defaultdict(list)
        self._after: dict[str, list[Callable[..., None]]] = collections.defaultdict(list)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: list[asyncio.Future[None]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def committed_seqs(self) -> list[int]:
        return [seq for batch in self.committed for seq in batch]

    # -- scripting (one-shot actions, consumed in FIFO order)

    def before(self, hook: str, action: Callable[..., None]) -> None:
        self._before[hook].append(action)

    def after(self, hook: str, action: Callable[..., None]) -> None:
        self._after[hook].append(action)

    def gate(self, hook: str) -> Gate:
        g = Gate()
        self.before(hook, g)
        return g

    def fail(self, hook: str, error: BaseException, times: int = 1) -> None:
        def raise_it(*_args: Any) -> None:
            raise error

        for _ in range(times):
            self.before(hook, raise_it)

    # -- waiting from the event loop

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Wait (without a timeout: the suite's pytest-timeout guards) until ``predicate()``."""
        self._loop = asyncio.get_running_loop()
        while not predicate():
            fut = self._loop.create_future()
            self._waiters.append(fut)
            await fut

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    # -- the hooks

    def _call(self, hook: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self.calls[hook] += 1
            before = self._before[hook].pop(0) if self._before[hook] else None
            after = self._after[hook].pop(0) if self._after[hook] else None
            if hook == "append_batch":
                self.attempted.append([e["seq"] for e in args[1]])
            self.lifecycle.append(f"{hook}:start")
        try:
            if before is not None:
                before(*args)
            result = getattr(self.inner, hook)(*args, **kwargs)
            with self._lock:
                if hook == "append_batch":
                    self.committed.append([e["seq"] for e in args[1]])
                self.lifecycle.append(f"{hook}:done")
            if after is not None:
                after(*args)
            return result
        finally:
            loop = self._loop
            if loop is not None and not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(self._wake)
                except RuntimeError:  # loop closed meanwhile
                    pass

    def load_stored(self, *a: Any, **k: Any) -> Any:
        return self._call("load_stored", *a, **k)

    def load_suffix(self, *a: Any, **k: Any) -> Any:
        return self._call("load_suffix", *a, **k)

    def read_stored_revision(self, *a: Any, **k: Any) -> Any:
        return self._call("read_stored_revision", *a, **k)

    def append_batch(self, *a: Any, **k: Any) -> Any:
        return self._call("append_batch", *a, **k)

    def commit_repair(self, *a: Any, **k: Any) -> Any:
        return self._call("commit_repair", *a, **k)

    def list_headers(self, *a: Any, **k: Any) -> Any:
        return self._call("list_headers", *a, **k)

    def list_snapshots(self, *a: Any, **k: Any) -> Any:
        return self._call("list_snapshots", *a, **k)

    def read_raw(self, *a: Any, **k: Any) -> Any:
        return self._call("read_raw", *a, **k)

    def close(self, *a: Any, **k: Any) -> Any:
        return self._call("close", *a, **k)


def instrument(persistence: CoordinatedPersistence) -> Probe:
    """Put a ``Probe`` between the coordinator and its storage (idempotent)."""
    current = persistence._backend
    if isinstance(current, Probe):
        return current
    probe = Probe(current)
    persistence._backend = probe
    return probe


# ---------------------------------------------------------------- driving live sessions


def append_log(session: Session, events: Iterable[dict[str, Any]]) -> None:
    """Re-append each event's type/data, forwarding ``surfaceOp``/``sourceEventSeqs`` verbatim."""
    for ev in events:
        session.append(ev["type"], ev["data"], surface_op=ev.get("surfaceOp"), source_event_seqs=ev.get("sourceEventSeqs"))


def plain(value: Any) -> Any:
    """Engine values (frozen containers, EventLogs, SessionEvents) as plain JSON data."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return raw_of(value)


def without_time(events: Iterable[Any]) -> list[dict[str, Any]]:
    """Events as dicts minus ``time`` (live appends stamp the wall clock)."""
    out = []
    for e in events:
        d = dict(plain(e))
        d.pop("time", None)
        out.append(d)
    return out


# ---------------------------------------------------------------- backends outside tests/contract


def _sqlite_class() -> tuple[Any, str]:
    try:
        from persistence.sqlite.backend import SqliteSessionPersistence
    except Exception as err:  # not written yet, or mid-edit
        return None, f"persistence.sqlite.backend does not import: {type(err).__name__}: {err}"
    return SqliteSessionPersistence, ""


SQLITE_CLASS, SQLITE_SKIP_REASON = _sqlite_class()

BACKEND_NAMES = [
    pytest.param("jsonl-zstd", id="jsonl-zstd"),
    pytest.param("jsonl-none", id="jsonl-none"),
    pytest.param("sqlite", id="sqlite", marks=pytest.mark.skipif(SQLITE_CLASS is None, reason=SQLITE_SKIP_REASON)),
]


def storage_path(name: str, private_dir: Path) -> Path:
    """Where a backend of that name keeps its storage inside ``private_dir``."""
    return private_dir / "sessions.sqlite" if name == "sqlite" else private_dir / "root"


def open_backend(name: str, storage: Path, **kwargs: Any) -> CoordinatedPersistence:
    if name == "sqlite":
        if SQLITE_CLASS is None:
            pytest.skip(SQLITE_SKIP_REASON)
        return SQLITE_CLASS(storage, **kwargs)  # type: ignore[no-any-return]
    return JsonlSessionPersistence(storage, compression="none" if name == "jsonl-none" else "zstd", **kwargs)


# ---------------------------------------------------------------- upstream fixtures


def copy_fixture(src: Path, dst: Path) -> Path:
    """Copy a fixture tree privately (upstream's SQLite refuses group/other permission bits)."""
    if not src.exists():
        pytest.skip(f"upstream fixtures not available: {src} (../shared is absent)")
    shutil.copytree(src, dst)
    os.chmod(dst, 0o700)
    for dirpath, dirs, files in os.walk(dst):
        for d in dirs:
            os.chmod(os.path.join(dirpath, d), 0o700)
        for f in files:
            os.chmod(os.path.join(dirpath, f), 0o600)
    return dst


# ---------------------------------------------------------------- contract-suite glue (a BackendKit from tests/contract)


def persistence_for(kit: Any, **kwargs: Any) -> CoordinatedPersistence:
    """A fresh instance over the kit's storage; ``kwargs`` go to the backend constructor."""
    if not kwargs:
        return kit.make()  # type: ignore[no-any-return]
    store = open_backend(kit.name, kit.storage, **kwargs)
    kit.instances.append(store)
    return store


@contextlib.asynccontextmanager
async def live(
    kit: Any, *, delay_ms: int = 200, on_error: Callable[[str, BaseException], None] | None = None, **kwargs: Any
) -> AsyncIterator[SessionStore]:
    """A SessionStore over a fresh instance; on exit its live sessions are drained in this loop."""
    persistence = persistence_for(kit, **kwargs)
    store = SessionStore(persistence, write_batch_max_delay_ms=delay_ms, on_error=on_error)
    try:
        yield store
    finally:
        try:
            await store.close()
        finally:
            await persistence.close()  # idempotent; drains anything the store no longer tracks


def writer_of(store: SessionStore, session_id: str) -> Any:
    """The write-behind controller of a live session (controller state is part of the contract)."""
    return store.persistence._live[session_id].writer


async def stored_events(kit: Any, session_id: str) -> list[dict[str, Any]]:
    """What is physically stored, through a fresh instance's ``read_from`` (no repair, no closers)."""
    fresh = kit.make()
    return plain((await fresh.read_from(session_id, 0)).events)  # type: ignore[no-any-return]
