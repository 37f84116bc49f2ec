"""The store facts a viewer and the repair actions read without reaching into a backend:
``artifact``, ``session_sizes``, ``read_raw_bytes``, ``integrity_check``, ``read_only_twin`` and the
``kind``/``root_path``/``compression``/``read_only`` properties."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from livekit import SQLITE_CLASS, SQLITE_SKIP_REASON, open_backend
from sessionkit import WORK, artifact, run
from viewkit import compression_of

from persistence import (
    ArtifactInfo,
    CoordinatedPersistence,
    SessionReadOnlyError,
    copy_artifact_to,
    open_store,
)

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]
needs_sqlite = pytest.mark.skipif(SQLITE_CLASS is None, reason=SQLITE_SKIP_REASON or "sqlite backend")


def _in_store(name: str, storage: Path, body: Any, **kwargs: Any) -> Any:
    async def go() -> Any:
        store = open_backend(name, storage, **kwargs)
        try:
            return await body(store)
        finally:
            await store.close()

    return run(go())


def _event_data_bytes(db: Path, session_id: str) -> tuple[int, int | None]:
    con = sqlite3.connect(db)
    try:
        size, last = con.execute(
            "SELECT sum(length(CAST(data AS BLOB))), max(time) FROM events WHERE session_id = ?", (session_id,)
        ).fetchone()
    finally:
        con.close()
    return int(size or 0), last


def test_store_properties(built: tuple[str, Path]) -> None:
    name, storage = built

    async def body(store: CoordinatedPersistence) -> tuple[str, str, str | None, bool]:
        return store.kind, store.root_path, store.compression, store.read_only

    kind, root_path, compression, read_only = _in_store(name, storage, body)
    assert root_path == os.path.abspath(storage) and not read_only
    if name == "sqlite":
        assert kind == "sqlite" and compression is None
        assert _in_store(name, storage, body, read_only=True)[3] is True
    else:
        assert kind == "jsonl" and compression == compression_of(name)


def test_artifact_of_a_session(built: tuple[str, Path]) -> None:
    name, storage = built

    async def body(store: CoordinatedPersistence) -> tuple[ArtifactInfo | None, ArtifactInfo | None]:
        return store.artifact("ok"), store.artifact("missing")

    info, missing = _in_store(name, storage, body)
    assert info is not None
    if name == "sqlite":
        path = storage
        assert info.kind == "sqlite"
        assert info.event_data_bytes == _event_data_bytes(storage, "ok")[0] > 0
        assert missing is not None and missing.event_data_bytes == 0  # the database exists; the session has no rows
    else:
        path = artifact(storage, WORK, "ok", compression_of(name))
        assert info.kind == "jsonl" and info.event_data_bytes is None
        assert missing is None
    st = os.stat(path)
    assert info.path == str(path) and info.size == st.st_size and info.mtime == st.st_mtime
    assert info.last_change() >= st.st_mtime


@needs_sqlite
def test_an_in_memory_store_has_no_artifact() -> None:
    async def body() -> tuple[ArtifactInfo | None, str | None, dict[str, Any]]:
        store = open_backend("sqlite", Path(":memory:"))
        try:
            async with store.read_only_twin() as twin:
                assert twin is store
            return store.artifact("x"), await store.integrity_check(), await store.session_sizes()
        finally:
            await store.close()

    assert run(body()) == (None, None, {})


def test_session_sizes(built: tuple[str, Path]) -> None:
    name, storage = built

    async def body(store: CoordinatedPersistence) -> tuple[dict[str, Any], dict[str, Any]]:
        return await store.session_sizes(), await store.session_sizes(["ok", "missing"])

    every, some = _in_store(name, storage, body)
    if name == "sqlite":
        expected = {sid: _event_data_bytes(storage, sid) for sid in ("ok", "open-turn", "torn-tail", "corrupt", "unsupported")}
        assert every == expected  # every session with rows, even one whose header row is bad
        assert some == {"ok": every["ok"], "missing": (0, None)}  # no rows: nothing to measure
    else:
        st = os.stat(artifact(storage, WORK, "ok", compression_of(name)))
        assert every["ok"] == (st.st_size, st.st_mtime_ns // 1_000_000)
        assert "missing" not in every
        assert some == {"ok": every["ok"]}


def test_read_raw_bytes(built: tuple[str, Path]) -> None:
    name, storage = built

    async def body(store: CoordinatedPersistence) -> tuple[Any, Any, Any, str | None]:
        whole = await store.read_raw_bytes("torn-tail")
        part = await store.read_raw_bytes("torn-tail", offset=10)
        return whole, part, await store.read_raw_bytes("missing"), await store.read_stored_revision("torn-tail")

    whole, part, missing, revision = _in_store(name, storage, body)
    assert missing is None
    if name == "sqlite":
        assert whole is None and part is None  # rows, not bytes
        return
    path = artifact(storage, WORK, "torn-tail", compression_of(name))
    data = path.read_bytes()
    assert whole.data == data and whole.offset == 0 and whole.end == len(data)
    assert whole.compression == compression_of(name) and whole.path == str(path) and whole.revision == revision
    assert part.data == data[10:] and part.offset == 10 and part.end == len(data)


def test_integrity_check(built: tuple[str, Path]) -> None:
    name, storage = built

    async def body(store: CoordinatedPersistence) -> str | None:
        return await store.integrity_check()

    assert _in_store(name, storage, body) is None
    if name != "sqlite":
        return
    # Break an index page: quick_check names it (a torn data row is not SQLite damage, this is).
    con = sqlite3.connect(storage)
    try:
        con.execute("PRAGMA writable_schema = ON")
        root_page = con.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'sqlite_autoindex_events_1'").fetchone()[0]
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    with open(storage, "r+b") as f:
        f.seek((root_page - 1) * page_size)
        f.write(b"\x0d" + b"\xff" * 64)
    found = _in_store(name, storage, body, read_only=True)
    assert found is not None and found != "ok"


def test_read_only_twin_writes_nothing(built: tuple[str, Path]) -> None:
    name, storage = built
    folder = storage.parent

    def digest() -> dict[str, tuple[int, int, bytes]]:
        # SQLite's working files of a WAL database: a connection (a read-only one too) may create an
        # empty -wal and a -shm index; neither holds data.  Everything else must stay byte-identical.
        return {
            str(p): (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith("-shm") and not (p.name.endswith("-wal") and p.stat().st_size == 0)
        }

    async def body(store: CoordinatedPersistence) -> None:
        before = digest()
        async with store.read_only_twin() as twin:
            assert twin.read_only == (name == "sqlite")
            assert (twin is store) == (name != "sqlite")
            for sid in ("ok", "open-turn", "torn-tail", "corrupt", "unsupported", "missing"):
                await twin.view(sid)
                await twin.diagnose(sid)
            await twin.list_entries()
            await twin.session_sizes()
            if name == "sqlite":
                with pytest.raises(SessionReadOnlyError):
                    await twin.append("ok", [])
        assert digest() == before  # the writable store is still open: nothing was checkpointed or converted

    _in_store(name, storage, body)


def test_copy_artifact_to(built: tuple[str, Path], tmp_path: Path) -> None:
    name, storage = built

    async def body(store: CoordinatedPersistence) -> ArtifactInfo | None:
        return store.artifact("ok")

    info = _in_store(name, storage, body)
    assert info is not None
    target = tmp_path / "copy"
    copy_artifact_to(info, str(target))
    assert (os.stat(target).st_mode & 0o777) == 0o600
    with pytest.raises(FileExistsError):
        copy_artifact_to(info, str(target))  # never replaces

    async def read_copy() -> Any:
        store = open_store(target, read_only=True, create=False) if name == "sqlite" else None
        if store is None:
            return None
        try:
            return (await store.view("ok")).status
        finally:
            await store.close()

    if name == "sqlite":
        assert run(read_copy()) == "ok"
    else:
        assert target.read_bytes() == Path(info.path).read_bytes()
        assert os.stat(target).st_mtime_ns == os.stat(info.path).st_mtime_ns
