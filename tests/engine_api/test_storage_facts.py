"""Engine calls for the storage facts app/ used to work out itself (issue 22 item 3): damaged logs made by
``persistence.testing``, the store's schema version, an artifact's files, the folder to show, and the
listing in parts a worker process runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sessionkit import artifact, meta, one_turn_log, run

import persistence
from persistence import (
    SQLITE_SCHEMA_VERSION,
    JsonlSessionPersistence,
    containing_folder,
    list_part,
    listing_parts,
    open_store,
    store_files,
    writer_files,
)
from persistence import testing as damage

COMPRESSIONS = ("zstd", "none")


async def _write(root: Path, compression: str, ids: tuple[str, ...]) -> None:
    store = JsonlSessionPersistence(root, compression=compression)
    try:
        for i, sid in enumerate(ids):
            await store.create(meta(sid, cwd=f"/home/dev/p{i % 2}"))
            log = one_turn_log()
            await store.append(sid, log[:3])
            await store.append(sid, log[3:])
    finally:
        await store.close()


async def _status(root: Path, compression: str, sid: str) -> str:
    store = JsonlSessionPersistence(root, compression=compression)
    try:
        return (await store.view(sid)).status
    finally:
        await store.close()


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_testing_damage_is_what_the_engine_reports(tmp_path: Path, compression: str) -> None:
    ids = ("torn", "corrupt", "newer", "fine")
    run(_write(tmp_path, compression, ids))
    path = {sid: str(artifact(tmp_path, f"/home/dev/p{i % 2}", sid, compression)) for i, sid in enumerate(ids)}
    assert damage.tear_tail(path["torn"]) > 0
    damage.corrupt_middle(path["corrupt"])
    assert damage.rewrite_header(path["newer"], version=1)["version"] == 1
    assert damage.header_of(path["newer"])["version"] == 1
    statuses = {sid: run(_status(tmp_path, compression, sid)) for sid in ids}
    assert statuses == {"torn": "torn-tail", "corrupt": "corrupt", "newer": "unsupported", "fine": "ok"}
    last = damage.last_record(path["fine"])
    assert last is not None and last.get("type") == one_turn_log()[-1]["type"]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_broken_header_is_one_bad_row_that_list_skips(tmp_path: Path, compression: str) -> None:
    run(_write(tmp_path, compression, ("bad", "good")))
    damage.break_header(str(artifact(tmp_path, "/home/dev/p0", "bad", compression)))
    store = JsonlSessionPersistence(tmp_path, compression=compression)
    try:
        assert [h.id for h in run(store.list())] == ["good"]
        rows = run(store.list_entries())
    finally:
        run(store.close())
    bad = [r for r in rows if r.path is not None and "bad" in r.path]
    assert len(bad) == 1 and bad[0].problem is not None


def test_the_listing_in_parts_is_the_stores_listing(tmp_path: Path) -> None:
    run(_write(tmp_path, "zstd", ("a", "b", "c")))
    os.symlink(tmp_path / "-work-p0", tmp_path / "link-out")  # a project link: the root's own row
    parts = listing_parts(str(tmp_path))
    assert parts[-1] == str(tmp_path) and len(parts) >= 3
    in_parts = [e for part in parts for e in list_part(str(tmp_path), part)]
    store = JsonlSessionPersistence(tmp_path, compression="zstd")
    try:
        whole = run(store.list_entries())
    finally:
        run(store.close())
    assert sorted((e.path, e.session_id, e.status) for e in in_parts) == sorted((e.path, e.session_id, e.status) for e in whole)
    one = next(e for e in whole if e.session_id == "b" and e.path is not None)
    assert [e.session_id for e in list_part(str(tmp_path), os.path.dirname(one.path))] == ["b"]
    assert list(list_part(str(tmp_path), str(tmp_path.parent))) == []  # outside the root: nothing


def test_schema_version_is_the_stores_own(tmp_path: Path) -> None:
    sqlite = open_store(str(tmp_path / "s.sqlite"), "sqlite")
    jsonl = open_store(str(tmp_path / "root"), "jsonl")
    try:
        run(sqlite.create(meta("s1")))
        run(sqlite.append("s1", one_turn_log()))
        assert run(sqlite.schema_version()) == SQLITE_SCHEMA_VERSION
        assert run(jsonl.schema_version()) is None
    finally:
        run(sqlite.close())
        run(jsonl.close())


def test_artifact_files_and_the_folder_to_show() -> None:
    assert store_files("sqlite", "/d/s.db") == ("/d/s.db", "/d/s.db-wal", "/d/s.db-shm", "/d/s.db-journal")
    assert writer_files("sqlite", "/d/s.db") == ("/d/s.db", "/d/s.db-wal", "/d/s.db-journal")
    assert (
        store_files("jsonl", "/r/p/s/session.jsonl") == writer_files("jsonl", "/r/p/s/session.jsonl") == ("/r/p/s/session.jsonl",)
    )
    assert containing_folder("/r/p/s/session.jsonl.zstd", "/r") == "/r/p/s"
    assert containing_folder(None, "/d") == "/d"


def test_testing_is_public_but_not_loaded_by_the_engine() -> None:
    assert "testing" not in persistence.__all__
    assert damage.__doc__ and "tests and the demo" in damage.__doc__
