"""Discovery, encodings, identity, revisions and raw reads of the JSONL backend
(jsonl-backend §4, §12.7, §13, §15.6 cases 66-79, §15.7 cases 80, 93-97)."""

from __future__ import annotations

import errno
import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sessionkit import (
    artifact,
    encode_log,
    header_line,
    meta,
    one_turn_log,
    plant,
    run,
    wire,
)

from persistence import JsonlSessionPersistence, SessionLayoutError, SessionPersistenceError, SessionStorageCorruptError
from persistence.backend import CancelToken
from persistence.jsonl import files as storage_mod
from persistence.jsonl.files import exists
from persistence.jsonl.storage import JsonlStorage
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.usefixtures("fast_fsync")

ENCODINGS = ["zstd", "none"]
SUFFIX = {"zstd": "session.jsonl.zstd", "none": "session.jsonl"}
OPPOSITE = {"zstd": "none", "none": "zstd"}


def store_sessions(root: Path, compression: str, *sessions: tuple[str, str | None]) -> None:
    async def body() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        for sid, cwd in sessions:
            await store.create(meta(sid, cwd))
            await store.append(sid, one_turn_log())

    run(body())


def expect_error(coro: Any, pattern: str, cls: type[BaseException] = SessionPersistenceError) -> BaseException:
    async def body() -> BaseException:
        with pytest.raises(cls, match=pattern) as info:
            await coro
        return info.value

    return run(body())


@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_66_root_of_the_other_encoding(tmp_path: Path, compression: str) -> None:
    """§15 case 66 (full message text of §4.7)."""
    store_sessions(tmp_path, OPPOSITE[compression], ("s1", "/proj"))
    other = tmp_path / "--proj--" / "s1" / SUFFIX[OPPOSITE[compression]]
    suffix = ".jsonl.zstd" if compression == "none" else ".jsonl"
    err = expect_error(
        JsonlSessionPersistence(tmp_path, compression=compression).list(),
        f'configured for compression "{compression}"',
        SessionLayoutError,
    )
    assert str(err) == (
        f'session artifact "{other}" uses {suffix}, but this backend is configured for compression '
        f'"{compression}"; use a separate root or select the matching compression mode'
    )


def test_case_67_opposite_artifact_planted_after_preflight(tmp_path: Path) -> None:
    """§15 case 67 (+ §16 point 4: a failed preflight stays failed for the instance)."""
    store = JsonlSessionPersistence(tmp_path)

    async def body() -> None:
        assert await store.list() == []
        plant(tmp_path, "--proj--/late", encode_log(header_line("late", "/proj"), [one_turn_log()], "none"), "none")
        for call in (store.load("late"), store.list()):
            with pytest.raises(SessionLayoutError, match=r"uses \.jsonl,"):
                await call
        with pytest.raises(SessionLayoutError, match=r"uses \.jsonl,"):
            store.backend.load_stored("late", CancelToken())

    run(body())
    fresh = JsonlSessionPersistence(tmp_path)
    expect_error(fresh.list(), r"uses \.jsonl,")
    shutil.rmtree(tmp_path / "--proj--")
    expect_error(fresh.list(), r"uses \.jsonl,")  # cached failure
    assert run(JsonlSessionPersistence(tmp_path).list()) == []


def test_case_68_append_refuses_when_opposite_artifact_appears(tmp_path: Path) -> None:
    """§15 case 68."""

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path)
        await store.create(meta("s1", "/proj"))
        plant(tmp_path, "--proj--/s1", b"", "none")
        with pytest.raises(SessionLayoutError, match=r"uses \.jsonl,"):
            await store.append("s1", one_turn_log())

    run(body())
    assert not (tmp_path / "--proj--" / "s1" / "session.jsonl.zstd").exists()


@pytest.mark.parametrize("compression", ENCODINGS)
@pytest.mark.parametrize("flat_suffix", [".jsonl", ".jsonl.zstd"])
def test_case_69_flat_file_layout(tmp_path: Path, compression: str, flat_suffix: str) -> None:
    """§15 case 69."""
    store_sessions(tmp_path, compression, ("other", "/proj"))
    flat = tmp_path / "--proj--" / f"s1{flat_suffix}"
    flat.write_bytes(b"")
    message = (
        f'session artifact "{flat}" uses the unsupported flat-file layout; use a separate root or move it into a '
        "project/session directory before loading"
    )
    err = expect_error(JsonlSessionPersistence(tmp_path, compression=compression).load("s1"), "unsupported flat-file layout")
    assert str(err) == message
    expect_error(JsonlSessionPersistence(tmp_path, compression=compression).list(), "unsupported flat-file layout")


@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_70_extra_files_are_ignored(tmp_path: Path, compression: str) -> None:
    """§15 case 70 (+ stray ``*.tmp`` temps and files in the root are ignored forever)."""
    store_sessions(tmp_path, compression, ("s1", "/proj"))
    (tmp_path / "--proj--" / "s1" / "metadata.json").write_text("{}")
    (tmp_path / "--proj--" / "s1" / f"{SUFFIX[compression]}.0123456789ab.tmp").write_bytes(b"junk")
    (tmp_path / "--proj--" / "README").write_text("hello")
    (tmp_path / "--proj--" / "reserved-session").mkdir()
    (tmp_path / "notes.txt").write_text("x")

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        assert [h.id for h in await store.list()] == ["s1"]
        assert wire((await store.load("s1")).events) == one_turn_log()

    run(body())


@pytest.mark.parametrize("content", [b"", b'{"type":"turn/start"}\n', b"not json at all\n", b'{"type":"session"'])
def test_case_71_unlistable_raw_artifacts_are_skipped(tmp_path: Path, content: bytes) -> None:
    """§15 case 71."""
    plant(tmp_path, "--proj--/odd", content, "none")
    store_sessions(tmp_path, "none", ("good", "/proj"))
    assert [h.id for h in run(JsonlSessionPersistence(tmp_path, compression="none").list())] == ["good"]


@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_72_cwd_rewritten(tmp_path: Path, compression: str) -> None:
    """§15 case 72."""
    store_sessions(tmp_path, compression, ("s1", "/proj"))
    path = artifact(tmp_path, "/proj", "s1", compression)
    path.write_bytes(encode_log(header_line("s1", "/elsewhere"), [one_turn_log()], compression))
    expected = artifact(tmp_path, "/elsewhere", "s1", compression)
    err = expect_error(
        JsonlSessionPersistence(tmp_path, compression=compression).list(), "and cwd identify", SessionStorageCorruptError
    )
    assert str(err) == f'corrupt session log "{path}": header id "s1" and cwd identify "{expected}"'
    expect_error(JsonlSessionPersistence(tmp_path, compression=compression).load("s1"), "and cwd identify")


def test_case_73_symlinked_project_alias(tmp_path: Path) -> None:
    """§15 case 73."""
    store_sessions(tmp_path, "none", ("s1", "/stored"))
    path = artifact(tmp_path, "/stored", "s1", "none")
    path.write_bytes(encode_log(header_line("s1", "/alias"), [one_turn_log()], "none"))
    os.symlink(tmp_path / "--stored--", tmp_path / "--alias--")

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        loaded = await store.load("s1")
        assert loaded.meta.cwd == "/alias"
        assert [h.id for h in await store.list()] == ["s1"]

    run(body())


@pytest.mark.parametrize(("field", "value"), [("id", ""), ("cwd", ""), ("cwd", None), ("cwd", 5)])
def test_case_74_header_that_cannot_name_a_path(tmp_path: Path, field: str, value: Any) -> None:
    """§15 case 74 (+ §4.6 / §16 point 2: a non-string cwd is the same identity error)."""
    head = header_line("s1", "/proj")
    head[field] = value
    path = plant(tmp_path, "--proj--/s1", encode_log(head, [one_turn_log()], "none"), "none")
    err = expect_error(
        JsonlSessionPersistence(tmp_path, compression="none").list(),
        "header id cannot name a storage path",
        SessionStorageCorruptError,
    )
    assert str(err) == f'corrupt session log "{path}": header id cannot name a storage path'


@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_75_duplicate_id_across_projects(tmp_path: Path, compression: str) -> None:
    """§15 case 75."""
    store_sessions(tmp_path, compression, ("dup", "/a"))
    b_path = artifact(tmp_path, "/b", "dup", compression)
    plant(tmp_path, "--b--/dup", encode_log(header_line("dup", "/b"), [one_turn_log()], compression), compression)
    assert b_path.exists()
    message = 'duplicate JSONL session id "dup" appears in multiple project directories'
    for call in (
        JsonlSessionPersistence(tmp_path, compression=compression).load("dup"),
        JsonlSessionPersistence(tmp_path, compression=compression).list(),
    ):
        assert str(expect_error(call, message, SessionLayoutError)) == message


def test_case_76_root_states(tmp_path: Path) -> None:
    """§15 case 76."""
    assert run(JsonlSessionPersistence(tmp_path / "absent").list()) == []
    assert not (tmp_path / "absent").exists()
    regular = tmp_path / "file-root"
    regular.write_text("x")
    with pytest.raises(NotADirectoryError):
        JsonlSessionPersistence(regular)
    later = tmp_path / "later"
    later.mkdir()
    store = JsonlSessionPersistence(later)
    later.rmdir()
    later.write_text("x")

    async def body() -> None:
        with pytest.raises(OSError) as info:
            await store.list()
        assert info.value.errno == errno.ENOTDIR

    run(body())


def test_case_77_exists_probe_propagates_enotdir(tmp_path: Path) -> None:
    """§15 case 77: absence is never assumed from a non-ENOENT failure."""
    regular = tmp_path / "regular"
    regular.write_text("x")
    with pytest.raises(NotADirectoryError):
        exists(str(regular / "child.jsonl"))
    assert exists(str(tmp_path / "missing")) is False
    assert exists(str(regular)) is True


def test_case_78_project_dir_occupied_by_a_file(tmp_path: Path) -> None:
    """§15 case 78."""
    (tmp_path / "--proj--").write_text("not a dir")

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        await store.create(meta("s1", "/proj"))
        with pytest.raises(OSError) as info:
            await store.append("s1", one_turn_log())
        assert info.value.errno in (errno.EEXIST, errno.ENOTDIR)

    run(body())


def test_case_79_and_80_layout_and_lazy_materialization(tmp_path: Path) -> None:
    """§15 cases 79 (``_no-cwd``) and 80 (no file before the first append); materialized modes are private."""

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path / "root")
        for sid, cwd in (("p1", "/projA"), ("p2", "/projB"), ("p3", None)):
            await store.create(meta(sid, cwd))
        assert not (tmp_path / "root").exists()
        for sid in ("p1", "p2", "p3"):
            await store.append(sid, one_turn_log())
        assert [h.id for h in await store.list()] == ["p1", "p2", "p3"]

    run(body())
    root = tmp_path / "root"
    assert sorted(os.listdir(root)) == ["--projA--", "--projB--", "_no-cwd"]
    assert (root / "_no-cwd" / "p3" / "session.jsonl.zstd").is_file()
    assert (root.stat().st_mode & 0o777) == 0o700
    assert ((root / "--projA--" / "p1").stat().st_mode & 0o777) == 0o700
    assert ((root / "--projA--" / "p1" / "session.jsonl.zstd").stat().st_mode & 0o777) == 0o600
    assert not list(root.rglob("*.tmp"))


def test_list_order_is_bytewise(tmp_path: Path) -> None:
    """§4.2: project directories, then session directories, each in byte order (``_no-cwd`` last)."""
    sessions = [
        ("s-z", "/zeta"),
        ("~", "/zeta"),
        ("_u", "/zeta"),
        ("s-a", "/zeta"),
        ("s-m", "/zeta"),
        ("x", "/alpha"),
        ("y", "/Mid"),
        ("n", None),
    ]
    store_sessions(tmp_path, "none", *sessions)
    ids = [h.id for h in run(JsonlSessionPersistence(tmp_path, compression="none").list())]
    assert ids == ["y", "x", "_u", "s-a", "s-m", "s-z", "~", "n"]
    snaps = run(JsonlSessionPersistence(tmp_path, compression="none").list_snapshots())
    assert [s.header.id for s in snaps] == ids


def test_case_93_revisions_across_roots(tmp_path: Path) -> None:
    """§15 case 93 (other-root half) / §13.1: the token is ``dev:ino:size:mtimeNs:ctimeNs`` of the file."""
    for name in ("a", "b"):
        store_sessions(tmp_path / name, "none", ("s1", "/proj"))
    rev_a = run(JsonlSessionPersistence(tmp_path / "a", compression="none").read_stored_revision("s1"))
    rev_b = run(JsonlSessionPersistence(tmp_path / "b", compression="none").read_stored_revision("s1"))
    assert rev_a != rev_b
    st = os.stat(artifact(tmp_path / "a", "/proj", "s1", "none"))
    assert rev_a == f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def test_case_94_revision_of_a_log_deleted_after_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """§15 case 94: ``read_stored_revision`` is None when the file vanishes between lookup and stat."""
    store_sessions(tmp_path, "none", ("s1", "/proj"))
    store = JsonlSessionPersistence(tmp_path, compression="none")
    stored = store.backend.load_stored("s1", CancelToken())
    assert stored is not None
    assert run(store.read_stored_revision("s1")) == stored.revision
    real_find = JsonlStorage.find_log

    def find_then_delete(self: JsonlStorage, session_id: str) -> str | None:
        path = real_find(self, session_id)
        if path is not None:
            os.unlink(path)
        return path

    monkeypatch.setattr(JsonlStorage, "find_log", find_then_delete)
    assert run(store.read_stored_revision("s1")) is None


def test_case_95_artifact_deleted_between_discovery_and_stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """§15 case 95."""
    store_sessions(tmp_path, "none", ("s1", "/proj"))
    real = JsonlStorage._list_artifacts

    def list_then_delete(self: JsonlStorage, token: CancelToken) -> list[tuple[dict[str, Any], str]]:
        out = real(self, token)
        for _meta, path in out:
            os.unlink(path)
        return out

    monkeypatch.setattr(JsonlStorage, "_list_artifacts", list_then_delete)
    assert run(JsonlSessionPersistence(tmp_path, compression="none").list_snapshots()) == []


def test_case_96_stable_read_retries_on_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """§15 case 96 / §13.2: a changed stat between the two stats of a read makes it retry (4 stats)."""
    store_sessions(tmp_path, "none", ("s1", "/proj"))
    path = str(artifact(tmp_path, "/proj", "s1", "none"))
    backend = JsonlSessionPersistence(tmp_path, compression="none").backend
    real_stat = os.stat
    calls: list[int] = []

    def flaky_stat(p: Any, *args: Any, **kwargs: Any) -> Any:
        st = real_stat(p, *args, **kwargs)
        # Count only the stats of the stable read itself (existence probes may stat too); read_stable
        # delegates to read_stable_from, which makes the two stats.
        if os.fspath(p) != path or sys._getframe(1).f_code.co_name not in ("read_stable", "read_stable_from"):
            return st
        calls.append(1)
        if len(calls) == 2:
            return SimpleNamespace(
                st_dev=st.st_dev, st_ino=st.st_ino, st_size=st.st_size, st_mtime_ns=st.st_mtime_ns + 1, st_ctime_ns=st.st_ctime_ns
            )
        return st

    monkeypatch.setattr(storage_mod.os, "stat", flaky_stat)
    stored = backend.load_stored("s1", CancelToken())
    monkeypatch.undo()
    assert len(calls) == 4
    assert stored is not None and stored.events == one_turn_log()


@pytest.mark.parametrize("compression", ENCODINGS)
def test_case_97_read_raw(tmp_path: Path, compression: str) -> None:
    """§15 case 97 (+ §12.7: id mismatch in the header is "invalid header line")."""
    store_sessions(tmp_path, compression, ("s1", "/proj"), ("other", "/proj"))
    path = artifact(tmp_path, "/proj", "s1", compression)

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        assert await store.read_raw("missing") is None
        raw = await store.read_raw("s1")
        assert raw is not None
        assert raw.content.split("\n")[0].encode() == js_dumps(header_line("s1", "/proj"))
        assert raw.to_json()["filename"] == "session.jsonl"
        if compression == "none":
            assert raw.content == path.read_text()
        assert store.supports_raw_artifacts is True

    run(body())
    path.write_bytes(encode_log(b"not a header line\n", [one_turn_log()], compression))
    err = expect_error(JsonlSessionPersistence(tmp_path, compression=compression).read_raw("s1"), "corrupt session log")
    assert str(err) == f'corrupt session log: invalid header line in "{path}"'
    other_path = artifact(tmp_path, "/proj", "other", compression)
    other_path.write_bytes(encode_log(header_line("renamed", "/proj"), [one_turn_log()], compression))
    expect_error(JsonlSessionPersistence(tmp_path, compression=compression).read_raw("other"), "invalid header line")


def test_read_raw_raw_mode_includes_torn_tail(tmp_path: Path) -> None:
    """§12.7 / §16 point 6: raw readRaw returns the whole file, torn fragment included."""
    store_sessions(tmp_path, "none", ("s1", "/proj"))
    path = artifact(tmp_path, "/proj", "s1", "none")
    path.write_bytes(path.read_bytes() + b'{"type":"turn/st')
    raw = run(JsonlSessionPersistence(tmp_path, compression="none").read_raw("s1"))
    assert raw is not None and raw.content == path.read_text()
    invalid = path.read_bytes() + b"\xff\n"
    path.write_bytes(invalid)
    raw = run(JsonlSessionPersistence(tmp_path, compression="none").read_raw("s1"))
    assert raw is not None and raw.content.endswith("\ufffd\n")  # lossy UTF-8
