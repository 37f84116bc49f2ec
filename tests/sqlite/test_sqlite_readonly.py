"""The read-only viewer path: ``mode=ro`` (never ``immutable``), typed write refusals, permission warnings."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from sessionkit import meta, one_turn_log, open_turn2, run, seqs_of
from sqlite_helpers import T, append, db_path, event_rows, service, storage

from persistence.errors import SessionLayoutError, SessionPersistenceError
from persistence.sqlite.errors import SessionReadOnlyError
from persistence.sqlite.storage import SqliteStoreWarning

M = meta("s", "/p")


def _filled(path: Path, events: list | None = None) -> None:
    st = storage(path)
    append(st, M, events or one_turn_log(), materialized=False)
    st.close()


def test_read_only_refuses_every_write_with_a_typed_error(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    _filled(path, one_turn_log() + open_turn2())
    before = event_rows(path)

    async def body() -> None:
        viewer = service(path, read_only=True)
        assert viewer.read_only and [h.id for h in await viewer.list()] == ["s"]
        assert len((await viewer.inspect("s")).events) == 10  # closers in memory only
        with pytest.raises(SessionReadOnlyError, match="read-only"):
            await viewer.create(meta("new", "/p"))
        with pytest.raises(SessionReadOnlyError, match="read-only"):
            await viewer.append("s", [])
        with pytest.raises(SessionReadOnlyError, match="read-only; commitRepair needs a writable store"):
            await viewer.load("s")  # would commit the repair
        await viewer.close()

    run(body())
    assert event_rows(path) == before
    assert isinstance(SessionReadOnlyError("x"), SessionPersistenceError)


def test_read_only_never_creates_or_initializes(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "sessions.sqlite"
    st = storage(missing, read_only=True)
    with pytest.raises(OSError):
        st.list_headers(T)
    assert not missing.parent.exists()
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    absent = storage(folder / "sessions.sqlite", read_only=True)
    with pytest.raises(SessionLayoutError, match="does not exist"):
        absent.list_headers(T)
    assert not (folder / "sessions.sqlite").exists()


def test_read_only_on_a_pristine_file_follows_a_later_writer(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    path.touch(mode=0o600)
    viewer = storage(path, read_only=True)
    assert viewer.list_headers(T) == [] and viewer.load_stored("s", T) is None
    assert path.stat().st_size == 0  # not initialized by the viewer
    _filled(path)
    assert [h["id"] for h in viewer.list_headers(T)] == ["s"]
    assert seqs_of(viewer.load_stored("s", T).events) == list(range(6))  # type: ignore[union-attr]
    viewer.close()


def test_read_only_rejects_foreign_files_like_the_writer(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    _filled(path)
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("PRAGMA application_id = 7")
    con.close()
    with pytest.raises(SessionLayoutError, match="has application id 7"):
        storage(path, read_only=True).list_headers(T)


def test_non_private_file_writer_refuses_viewer_warns(tmp_path: Path) -> None:
    path = db_path(tmp_path)
    _filled(path)
    os.chmod(path, 0o644)
    os.chmod(path.parent, 0o775)
    with pytest.raises(SessionLayoutError, match="not group/world-writable"):
        storage(path).list_headers(T)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        viewer = service(path, read_only=True)

        async def body() -> None:
            assert [h.id for h in await viewer.list()] == ["s"]
            await viewer.close()

        run(body())
    messages = [str(w.message) for w in caught if issubclass(w.category, SqliteStoreWarning)]
    assert any("accessible only by that user" in m for m in messages)
    assert any("not group/world-writable" in m for m in messages)
    assert any("accessible only by that user" in m for m in viewer.warnings)
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o644)  # the viewer changes nothing
