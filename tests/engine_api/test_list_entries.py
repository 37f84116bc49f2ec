"""``list_entries``: every session and every bad entry of a store as one ``ListedEntry``.

``list()`` follows upstream (skip what cannot be listed, fail the root on a foreign layout); the
lenient listing is what ``verify`` and the window show instead, for both backends.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from livekit import SQLITE_CLASS, SQLITE_SKIP_REASON, open_backend
from sessionkit import WORK, artifact, encode_log, header_line, meta, one_turn_log, plant, run

from persistence import JsonlSessionPersistence, ListedEntry, SessionLayoutError
from persistence.jsonl.entries import (
    jsonl_project_dirs,
    list_jsonl_project,
    list_jsonl_root,
    list_jsonl_root_links,
    list_jsonl_session_dir,
)
from persistence.jsonl.files import revision_of
from persistence.jsonl.paths import encode_segment

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(60)]
ENCODINGS = ["zstd", "none"]


def _write(root: Path, compression: str, ids: list[str]) -> None:
    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            for sid in ids:
                await store.create(meta(sid, WORK))
                await store.append(sid, one_turn_log())
        finally:
            await store.close()

    run(go())


def _bad_root(tmp_path: Path, compression: str) -> Path:
    """Good sessions "a" and "c", plus one of each kind of bad entry."""
    root = tmp_path / "root"
    _write(root, compression, ["a", "c"])
    project = artifact(root, WORK, "a", compression).parent.parent
    other = "none" if compression == "zstd" else "zstd"
    # a header with a number outside JSON's range
    huge = b'{"type":"session","version":1e400,"id":"huge","createdAt":1000,"cwd":"/w","delegationDepth":0}\n'
    plant(root, os.path.relpath(project / "huge", root), encode_log(huge, [one_turn_log()], compression), compression)
    # a transcript without any header
    plant(root, os.path.relpath(project / "empty", root), b"", compression)
    # a transcript of the other encoding (a mixed root)
    plant(root, os.path.relpath(project / "mixed", root), encode_log(header_line("mixed", WORK), [one_turn_log()], other), other)
    # a session folder that is a link to a copy outside the root
    outside = tmp_path / "outside" / "linked"
    outside.mkdir(parents=True)
    (outside / artifact(root, WORK, "a", compression).name).write_bytes(artifact(root, WORK, "a", compression).read_bytes())
    os.symlink(outside, project / "linked")
    # a flat file (the legacy layout upstream refuses)
    plant(
        root,
        os.path.relpath(project, root),
        encode_log(header_line("flat", WORK), [one_turn_log()], compression),
        compression,
        name="flat" + (".jsonl.zstd" if compression == "zstd" else ".jsonl"),
    )
    # a project folder that is a link out of the root
    os.symlink(tmp_path / "outside", root / "--elsewhere--")
    return root


def _summary(entries: list[ListedEntry]) -> list[tuple[str, str, str | None]]:
    return [(e.kind, e.session_id, e.status) for e in entries]


@pytest.mark.parametrize("compression", ENCODINGS)
def test_jsonl_entries_name_every_session_and_every_bad_entry(compression: str, tmp_path: Path) -> None:
    root = _bad_root(tmp_path, compression)

    async def go() -> list[ListedEntry]:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            return await store.list_entries()
        finally:
            await store.close()

    entries = run(go())
    assert _summary(entries) == [
        ("symlink", "--elsewhere--", "unsupported"),
        ("flat-file", "flat", "unsupported"),
        ("session", "a", None),
        ("session", "c", None),
        ("bad-header", "empty", "corrupt"),
        ("bad-header", "huge", "corrupt"),
        ("symlink", "linked", "unsupported"),
        ("session", "mixed", None),
    ]
    by_id = {e.session_id: e for e in entries}
    a = by_id["a"]
    path = artifact(root, WORK, "a", compression)
    st = os.stat(path)
    assert a.ok and a.meta is not None and a.meta["id"] == "a" and a.path == str(path)
    assert a.revision == revision_of(st) and a.size == st.st_size and a.mtime_ns == st.st_mtime_ns
    assert a.compression == compression and a.folder_name == "a" and a.project == str(path.parent.parent)
    assert by_id["mixed"].compression != compression  # callers that judge one encoding filter on it
    assert by_id["huge"].problem == "header unreadable: the header field 'version' is a number outside JSON's range"
    assert by_id["huge"].detail == "the header field 'version' is a number outside JSON's range"
    assert by_id["empty"].problem == "header unreadable: empty session log (no header)"
    linked = by_id["linked"]
    assert linked.level == "session" and linked.target == str(tmp_path / "outside" / "linked")
    assert linked.problem is not None and linked.problem.startswith("symlink: the session folder is a symbolic link")
    flat = by_id["flat"]
    assert flat.meta is not None and flat.meta["id"] == "flat" and flat.problem is not None
    assert flat.problem.startswith("flat-file layout")
    assert by_id["--elsewhere--"].level == "project"


@pytest.mark.parametrize("compression", ENCODINGS)
def test_the_module_level_listing_walks_the_same_entries(compression: str, tmp_path: Path) -> None:
    """What a worker process lists project by project (plus the root's links) is the store's listing."""
    root = _bad_root(tmp_path, compression)
    whole = list(list_jsonl_root(str(root)))
    by_parts: list[ListedEntry] = []
    for project in jsonl_project_dirs(str(root)):
        by_parts.extend(list_jsonl_project(project))
    by_parts.extend(list_jsonl_root_links(str(root)))
    assert sorted(map(repr, whole)) == sorted(map(repr, by_parts))
    folder = artifact(root, WORK, "a", compression).parent
    assert list_jsonl_session_dir(str(folder)) == [e for e in whole if e.session_id == "a"]
    linked = folder.parent / "linked"
    [link] = list_jsonl_session_dir(str(linked))
    assert link.kind == "symlink"


def test_a_header_cache_reads_each_header_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from persistence.jsonl import entries as entries_module

    root = tmp_path / "root"
    _write(root, "zstd", ["a", "b", "c"])
    reads: list[str] = []
    real = entries_module.read_header_outcome

    def counted(path: str, compression: str) -> Any:
        reads.append(path)
        return real(path, compression)

    monkeypatch.setattr(entries_module, "read_header_outcome", counted)
    cache: dict[Any, Any] = {}
    first = list(list_jsonl_root(str(root), header_cache=cache))
    second = list(list_jsonl_root(str(root), header_cache=cache))
    assert first == second and len(reads) == 3


def test_listed_sessions_are_those_list_returns(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root, "none", ["a", "b"])

    async def go() -> tuple[list[Any], list[ListedEntry]]:
        store = JsonlSessionPersistence(root, compression="none")
        try:
            return await store.list_snapshots(), await store.list_entries()
        finally:
            await store.close()

    snaps, entries = run(go())
    assert [(s.header.to_json(), s.revision) for s in snaps] == [(e.meta, e.revision) for e in entries]


@pytest.mark.skipif(SQLITE_CLASS is None, reason=SQLITE_SKIP_REASON or "sqlite backend")
def test_sqlite_entries_name_a_bad_row(tmp_path: Path) -> None:
    db = tmp_path / "sessions.sqlite"

    async def write() -> None:
        store = open_backend("sqlite", db)
        try:
            for sid in ("a", "b", "c"):
                await store.create(meta(sid, WORK))
                await store.append(sid, one_turn_log())
        finally:
            await store.close()

    run(write())
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE sessions SET cwd = 'relative/dir' WHERE id = 'b'")

    async def go() -> list[ListedEntry]:
        store = open_backend("sqlite", db, read_only=True)
        try:
            return await store.list_entries()
        finally:
            await store.close()

    entries = run(go())
    assert _summary(entries) == [("session", "a", None), ("bad-row", "b", "corrupt"), ("session", "c", None)]
    assert entries[1].problem is not None and "cwd must be absolute" in entries[1].problem
    assert entries[0].meta is not None and entries[0].revision and entries[0].path is None


def test_encode_segment_names_the_folders(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root, "zstd", ["odd/id ~"])
    [entry] = list(list_jsonl_root(str(root)))
    assert entry.folder_name == encode_segment("odd/id ~") and entry.session_id == "odd/id ~"


@pytest.mark.parametrize("compression", ENCODINGS)
def test_every_listed_transcript_can_be_read_raw(compression: str, tmp_path: Path) -> None:
    """A root ``list()`` refuses (flat file, mixed encodings) still shows each transcript's bytes."""
    root = _bad_root(tmp_path, compression)
    linked = artifact(root, WORK, "a", compression).parent.parent / "linked" / artifact(root, WORK, "a", compression).name

    async def go() -> tuple[list[ListedEntry], Any, list[Any]]:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            entries = await store.list_entries()
            readable = [e for e in entries if e.path is not None and e.kind in ("session", "flat-file", "bad-header")]
            raws = [(e, await store.read_artifact_bytes(e.path or "")) for e in readable]
            with pytest.raises(SessionLayoutError, match="symbolic link"):
                await store.read_artifact_bytes(str(linked))
            with pytest.raises(SessionLayoutError, match="outside the root"):
                await store.read_artifact_bytes(str(tmp_path / "outside" / "linked" / linked.name))
            return entries, await store.read_raw_bytes("a"), raws
        finally:
            await store.close()

    _entries, by_id, raws = run(go())
    assert by_id is not None and by_id.data == artifact(root, WORK, "a", compression).read_bytes()
    assert {e.session_id for e, _raw in raws} == {"a", "c", "flat", "mixed", "huge", "empty"}
    for e, raw in raws:
        assert raw.data == Path(e.path).read_bytes() and raw.revision == e.revision and raw.offset == 0
        assert raw.compression == e.compression
