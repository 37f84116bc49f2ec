"""``view()``: one read that equals ``diagnose()`` + ``inspect()``, on every backend and every status.

The window used to call ``diagnose``, ``inspect`` and ``read_raw`` and then guess which of
``inspect``'s events were synthetic closers.  ``view`` says it from one read of the log: these tests
pin that it agrees with the two calls it replaces and that it reads the log exactly once.
"""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from livekit import BACKEND_NAMES, open_backend, storage_path
from sessionkit import (
    WORK,
    artifact,
    encode_log,
    header_line,
    meta,
    one_turn_log,
    run,
    step_start,
    text_delta,
    turn_start,
)
from viewkit import STATUSES, build_store, compression_of

from persistence import CoordinatedPersistence, SessionPersistenceError, SessionView, js_dumps
from persistence.backend import CancelToken, TornMarker
from persistence.jsonl import files as jsonl_storage
from persistence.jsonl.frames import compress_frame
from persistence.sqlite.connection import Database

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]

READABLE = ("ok", "open-turn", "torn-tail")


def _with_store(name: str, storage: Path, body: Callable[[CoordinatedPersistence], Any], **kwargs: Any) -> Any:
    """Run ``body(store)`` on a fresh instance (``kwargs`` go to the backend constructor), then close it."""

    async def go() -> Any:
        store = open_backend(name, storage, **kwargs)
        try:
            return await body(store)
        finally:
            await store.close()

    return run(go())


@pytest.mark.parametrize("status", STATUSES)
def test_view_equals_diagnose_plus_inspect(built: tuple[str, Path], status: str) -> None:
    name, storage = built

    async def body(store: CoordinatedPersistence) -> tuple[Any, Any, Any]:
        view = await store.view(status)
        fresh = open_backend(name, storage)  # a cold instance: no cache shared with the view
        try:
            diagnosis = await fresh.diagnose(status)
            try:
                inspection: Any = await fresh.inspect(status)
            except SessionPersistenceError as err:
                inspection = err
        finally:
            await fresh.close()
        return view, diagnosis, inspection

    view, diagnosis, inspection = _with_store(name, storage, body)
    assert isinstance(view, SessionView)
    assert view.diagnosis == diagnosis
    assert view.status == status and view.session_id == status
    assert view.revision == diagnosis.revision and view.reason == diagnosis.reason
    if status not in READABLE:
        assert isinstance(inspection, SessionPersistenceError)
        assert not view.readable and view.header is None
        assert len(view.events) == len(view.stored) == 0 and view.closers == () and view.torn is None
        return
    assert view.readable
    assert view.header == inspection.meta
    assert view.events == inspection.events
    n_closers = len(diagnosis.closers)
    assert view.closers == diagnosis.closers
    assert view.closer_start == len(view.events) - n_closers == len(view.stored)
    assert view.stored.records() == inspection.events.records()[: view.closer_start]
    assert [e.wire for e in view.events[view.closer_start :]] == list(diagnosis.closers)
    assert all(view.is_synthetic(i) for i in range(view.closer_start, len(view.events)))
    assert not any(view.is_synthetic(i) for i in range(view.closer_start))
    assert (n_closers > 0) == (status == "open-turn")
    if status == "torn-tail":
        assert view.torn is not None and diagnosis.cut is not None
        assert view.torn.offset == diagnosis.torn_offset
        assert view.torn.recovered == diagnosis.recovered_count
        assert view.torn.cut == diagnosis.cut
    else:
        assert view.torn is None


class _ReadCounter:
    """Counts how often the log itself is read: backend hooks, transcript opens, SQL over ``events``."""

    HOOKS = ("load_stored", "load_suffix", "load_tail", "read_raw", "read_raw_bytes")

    def __init__(self, monkeypatch: pytest.MonkeyPatch, store: CoordinatedPersistence) -> None:
        self.hooks: Counter[str] = Counter()
        self.transcript_opens = 0
        self.event_queries = 0
        backend = store.backend
        for hook in self.HOOKS:
            inner = getattr(backend, hook)
            monkeypatch.setattr(backend, hook, self._counted(hook, inner))

        def counting_open(path: Any, *args: Any, **kwargs: Any) -> Any:
            if os.fspath(path).endswith((".jsonl", ".jsonl.zstd")):
                self.transcript_opens += 1
            return open(path, *args, **kwargs)

        monkeypatch.setattr(jsonl_storage, "open", counting_open, raising=False)
        real_fetchall = Database.fetchall

        def counting_fetchall(db: Database, conn: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
            if "FROM events" in sql:
                self.event_queries += 1
            return real_fetchall(db, conn, sql, params)

        monkeypatch.setattr(Database, "fetchall", counting_fetchall)

    def _counted(self, hook: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.hooks[hook] += 1
            return inner(*args, **kwargs)

        return call

    @property
    def log_reads(self) -> int:
        return sum(self.hooks.values())


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("raw", [False, True], ids=["view", "view-raw"])
def test_view_reads_the_log_exactly_once(
    built: tuple[str, Path], status: str, raw: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, storage = built

    async def body(store: CoordinatedPersistence) -> tuple[SessionView, _ReadCounter]:
        counter = _ReadCounter(monkeypatch, store)
        return await store.view(status, raw=raw), counter

    view, counter = _with_store(name, storage, body)
    assert view.status == status
    assert counter.log_reads == 1, counter.hooks  # one hook call, the whole log
    assert counter.hooks["load_stored"] == 1
    if name == "sqlite":
        written = status != "missing" and status != "corrupt"  # a bad header row stops before the events
        assert counter.event_queries == (1 if written else 0)
        assert view.raw is None  # rows, not bytes
    else:
        assert counter.transcript_opens == (0 if status == "missing" else 1)
        if raw and view.readable:
            assert view.raw is not None
            path = artifact(storage, WORK, status, compression_of(name))
            assert view.raw.data == path.read_bytes() and view.raw.offset == 0
            assert view.raw.compression == compression_of(name) and view.raw.path == str(path)
            assert view.raw.revision == view.revision
        else:
            assert view.raw is None


def test_a_cached_view_reads_no_log(built: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """After ``inspect`` the verdict comes from the cache (a revision check), as ``diagnose``'s does."""
    name, storage = built

    async def body(store: CoordinatedPersistence) -> tuple[SessionView, _ReadCounter]:
        await store.inspect("torn-tail")
        counter = _ReadCounter(monkeypatch, store)
        return await store.view("torn-tail"), counter

    view, counter = _with_store(name, storage, body)
    assert view.status == "torn-tail" and view.torn is not None
    assert counter.log_reads == 0 and counter.transcript_opens == 0 and counter.event_queries == 0


def test_diagnose_and_view_share_one_read(built: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """``diagnose`` of a torn log reads it once too (its cut facts come from the same read)."""
    name, storage = built

    async def body(store: CoordinatedPersistence) -> _ReadCounter:
        counter = _ReadCounter(monkeypatch, store)
        diagnosis = await store.diagnose("torn-tail")
        assert diagnosis.status == "torn-tail" and diagnosis.cut is not None
        return counter

    counter = _with_store(name, storage, body)
    assert counter.log_reads == 1
    if name != "sqlite":
        assert counter.transcript_opens == 1
    else:
        assert counter.event_queries == 1


def test_view_never_writes(built: tuple[str, Path]) -> None:
    name, storage = built
    folder = storage.parent

    def digest() -> dict[str, tuple[int, int, bytes]]:
        out = {}
        for p in sorted(folder.rglob("*")):
            if p.is_file() and not p.name.endswith(("-wal", "-shm")):
                st = p.stat()
                out[str(p)] = (st.st_size, st.st_mtime_ns, p.read_bytes())
        return out

    before = digest()

    async def body(store: CoordinatedPersistence) -> None:
        async with store.read_only_twin() as twin:
            for status in STATUSES:
                await twin.view(status, raw=True)

    _with_store(name, storage, body)
    assert digest() == before


def _damage_then_data(name: str, storage: Path) -> None:
    """Session "s": an open turn, then a damaged record followed by records that still parse."""
    first = one_turn_log()
    n = len(first)
    events = [*first, turn_start(n, 2), step_start(n + 1, 2, 1)]
    tail = [text_delta(n + 2 + i, 2, 1, f"t{i}") for i in range(20)]
    if name == "sqlite":

        async def write() -> None:
            store = open_backend(name, storage)
            try:
                await store.create(meta("s", WORK))
                await store.append("s", events)
            finally:
                await store.close()

        run(write())
        con = sqlite3.connect(storage, timeout=5)
        try:
            with con:
                con.execute(
                    "INSERT INTO events (session_id, seq, type, time, data) VALUES ('s', ?, 'assistant/chunk', ?, ?)",
                    (n + 2, n + 3, '{"type":"text-delta","ind'),
                )
                for e in tail[1:]:
                    con.execute(
                        "INSERT INTO events (session_id, seq, type, time, data) VALUES ('s', ?, ?, ?, ?)",
                        (e["seq"], e["type"], e["time"], js_dumps(e["data"]).decode()),
                    )
        finally:
            con.close()
        return
    compression = compression_of(name)
    lines = b"".join(js_dumps(e) + b"\n" for e in tail[:3]) + b"{garbage\n" + b"".join(js_dumps(e) + b"\n" for e in tail[4:])
    head = encode_log(header_line("s", WORK), [events], compression)
    content = head + (lines if compression == "none" else compress_frame(lines)[:-2])
    path = artifact(storage, WORK, "s", compression)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_cut_facts_of_the_one_read_equal_a_second_read(name: str, tmp_path: Path) -> None:
    """Damage followed by data: the cut facts ``view`` takes from its own read are what re-reading finds."""
    storage = storage_path(name, tmp_path)
    _damage_then_data(name, storage)

    async def body(store: CoordinatedPersistence) -> tuple[SessionView, Any]:
        view = await store.view("s")
        assert view.torn is not None
        reread = store.backend.describe_cut("s", TornMarker(view.torn.offset, []), view.closer_start, CancelToken())
        return view, reread

    view, reread = _with_store(name, storage, body)
    assert view.status == "torn-tail" and view.torn is not None
    assert view.torn.cut.intact_records > 0
    assert view.torn.cut == reread == view.diagnosis.cut


@pytest.mark.parametrize("name", [p for p in BACKEND_NAMES if p.values[0] == "sqlite"])
def test_a_locked_store_is_busy_not_damaged(name: str, tmp_path: Path) -> None:
    """A writer holding the database: the failure is a value (``busy``), the same as ``diagnose`` says."""
    storage = storage_path(name, tmp_path)
    build_store(name, storage)
    con = sqlite3.connect(storage, isolation_level=None)
    try:
        con.execute("PRAGMA journal_mode = delete").fetchall()  # a rollback journal: a writer locks readers out
        con.execute("BEGIN EXCLUSIVE")

        async def body(store: CoordinatedPersistence) -> tuple[SessionView, Any]:
            return await store.view("ok"), await store.diagnose("ok")

        view, diagnosis = _with_store(name, storage, body, busy_timeout_ms=0, read_only=True)
    finally:
        con.close()
    assert view.status == "busy" and view.diagnosis == diagnosis
    assert view.reason.startswith("the store is busy, not damaged") and view.header is None and len(view.events) == 0
