"""One bad session is one bad row (issue 10 items 9, 10, 6).

A header the engine cannot represent, an unreadable folder or transcript, a symlink below the root:
``list`` skips it, ``verify`` names it as its own row, every other session is judged normally, and
nothing is ever written through a link.  We run as root, so "permission denied" is simulated by
patching the calls a ``chmod 000`` would make fail (``deny``).
"""

from __future__ import annotations

import builtins
import errno
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sessionkit import (
    WORK,
    artifact,
    encode_log,
    files_under,
    header_line,
    meta,
    one_turn_log,
    open_turn2,
    plant,
    run,
)

from app.actions.verify import verify_root
from app.cli import main
from persistence import (
    JsonlSessionPersistence,
    SessionLayoutError,
    SessionPersistenceError,
    open_store,
)
from persistence.backend import CancelToken
from persistence.jsonl import discovery
from persistence.jsonl.storage import JsonlStorage
from persistence.model.header import SessionHeader, unrepresentable_field

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(60)]

ENCODINGS = ["zstd", "none"]


# ---------------------------------------------------------------- helpers


def make_root(root: Path, compression: str, sessions: dict[str, list[dict[str, Any]]], cwd: str = WORK) -> None:
    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            for sid, events in sessions.items():
                await store.create(meta(sid, cwd))
                await store.append(sid, events)
        finally:
            await store.close()

    run(go())


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = main([*args, "--json"])
    out, _err = capsys.readouterr()
    return code, json.loads(out)


def listed(root: Path, compression: str) -> tuple[list[str], list[str]]:
    async def go() -> tuple[list[str], list[str]]:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            return [h.id for h in await store.list()], [s.header.id for s in await store.list_snapshots()]
        finally:
            await store.close()

    return run(go())


def snapshot(path: Path) -> dict[str, tuple[bytes, int]]:
    """Bytes and mtime of every file under ``path`` (to prove nothing was written there)."""
    out = {}
    for rel, data in files_under(path).items():
        out[rel] = (data, (path / rel).stat().st_mtime_ns)
    return out


@pytest.fixture
def deny(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """``deny(p)``: behave as if ``p`` were ``chmod 000`` for a non-root user.

    ``p`` itself can still be stat'ed (its parent is readable), but it cannot be listed or opened,
    and nothing under it can be stat'ed or opened.
    """
    denied: list[str] = []
    real_scandir, real_listdir, real_open = os.scandir, os.listdir, os.open
    real_stat, real_lstat, real_bopen = os.stat, os.lstat, builtins.open

    def name(p: Any) -> str | None:
        if isinstance(p, int):
            return None
        return os.path.abspath(os.fsdecode(os.fspath(p)))

    def under(p: Any) -> bool:
        n = name(p)
        return n is not None and any(n.startswith(d + os.sep) for d in denied)

    def at_or_under(p: Any) -> bool:
        n = name(p)
        return n is not None and (n in denied or under(p))

    def refuse(p: Any) -> PermissionError:
        return PermissionError(errno.EACCES, "Permission denied", os.fsdecode(os.fspath(p)))

    def guarded(real: Callable[..., Any], refused: Callable[[Any], bool]) -> Callable[..., Any]:
        # scandir() and listdir() default to the current folder, as the real calls do.
        def call(p: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if refused(p):
                raise refuse(p)
            return real(p, *args, **kwargs)

        return call

    # Listing and opening fail at the denied path itself; stat/lstat only below it.
    monkeypatch.setattr(os, "scandir", guarded(real_scandir, at_or_under))
    monkeypatch.setattr(os, "listdir", guarded(real_listdir, at_or_under))
    monkeypatch.setattr(os, "open", guarded(real_open, at_or_under))
    monkeypatch.setattr(os, "stat", guarded(real_stat, under))
    monkeypatch.setattr(os, "lstat", guarded(real_lstat, under))
    monkeypatch.setattr(builtins, "open", guarded(real_bopen, at_or_under))

    def add(p: Path) -> None:
        denied.append(os.path.abspath(p))

    return add


# ---------------------------------------------------------------- item 9: headers the engine cannot represent


BAD_HEADERS = {
    "version": b'{"type":"session","version":1e400,"id":"bad","createdAt":1000,"cwd":"/w","delegationDepth":0}\n',
    "seedLength": (
        b'{"type":"session","version":0,"id":"bad","createdAt":1000,"cwd":"/w","seedLength":1e400,"delegationDepth":0}\n'
    ),
}


@pytest.fixture(params=[(field, c) for field in BAD_HEADERS for c in ENCODINGS], ids=lambda p: f"{p[0]}-{p[1]}")
def infinite_root(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str, Path]:
    field, compression = request.param
    root = tmp_path / "root"
    make_root(root, compression, {"good": one_turn_log(), "zz": one_turn_log()})
    bad = plant(root, "--w--/bad", encode_log(BAD_HEADERS[field], [one_turn_log()], compression), compression)
    return root, compression, bad


def test_list_skips_a_header_with_an_infinite_number(infinite_root: tuple[Path, str, Path]) -> None:
    root, compression, _bad = infinite_root
    assert listed(root, compression) == (["good", "zz"], ["good", "zz"])


def test_cli_list_and_verify_name_the_infinite_header(
    infinite_root: tuple[Path, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _compression, bad = infinite_root
    # list shows it as one bad row too, and exits 1 as verify does (issue 21 item 7).
    code, out = cli_json(capsys, "list", str(root))
    assert code == 1 and [h["id"] for h in out if "status" not in h] == ["good", "zz"]
    assert [(h["id"], h["status"], h["path"]) for h in out if "status" in h] == [("bad", "corrupt", str(bad))]
    code, out = cli_json(capsys, "verify", str(root))
    assert code == 1 and out.get("rootError", "?") is None, out
    rows = {r["id"]: r for r in out["sessions"]}
    assert set(rows) == {"good", "zz", "bad"}
    assert rows["good"]["verdict"] == rows["zz"]["verdict"] == "ok"
    assert rows["bad"]["verdict"] in ("corrupt", "unsupported") and rows["bad"]["path"] == str(bad)
    code, out = cli_json(capsys, "raw", str(root), "bad")
    message = out["error"]["message"]
    assert code == 1 and message.startswith(f'corrupt session log: invalid header line in "{bad}" (the header ')
    assert "outside JSON's range" in message


def test_unrepresentable_header_values() -> None:
    assert unrepresentable_field({"version": float("inf"), "id": "x", "createdAt": 1}) == "version"
    assert unrepresentable_field({"version": 0, "id": "x", "createdAt": 1, "seedLength": float("-inf")}) == "seedLength"
    assert unrepresentable_field({"version": 0, "id": "x", "createdAt": 1, "seedLength": float("nan")}) == "seedLength"
    assert unrepresentable_field({"version": 0.5, "id": "x", "createdAt": 1, "cwd": "/w"}) is None
    assert SessionHeader.from_listing({"version": float("inf"), "id": "x", "createdAt": 1}) is None
    assert SessionHeader.from_listing({"version": 0, "id": "x", "createdAt": 1}) == SessionHeader(0, "x", 1)


def test_coordinator_list_skips_metas_it_cannot_represent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a backend returns, ``list()`` never hands out a header JSON cannot carry (``Infinity``)."""
    metas = [meta("a", WORK), {**meta("b", WORK), "version": float("inf")}, meta("c", WORK)]
    monkeypatch.setattr(JsonlStorage, "list_headers", lambda self, token: [dict(m) for m in metas])
    monkeypatch.setattr(JsonlStorage, "list_snapshots", lambda self, token: [(dict(m), "r") for m in metas])

    async def go() -> tuple[list[str], list[str]]:
        store = JsonlSessionPersistence(tmp_path)
        return [h.id for h in await store.list()], [s.header.id for s in await store.list_snapshots()]

    assert run(go()) == (["a", "c"], ["a", "c"])


# ---------------------------------------------------------------- item 9: SQLite store-level and row-level errors


def _sqlite_store(tmp_path: Path) -> Path:
    from persistence.sqlite.backend import SqliteSessionPersistence

    db = tmp_path / "s.sqlite"

    async def go() -> None:
        store = SqliteSessionPersistence(str(db))
        try:
            for sid in ("a", "b", "c"):
                await store.create(meta(sid, WORK))
                await store.append(sid, one_turn_log())
        finally:
            await store.close()

    run(go())
    return db


def test_sqlite_lenient_listing_reports_one_bad_row(tmp_path: Path) -> None:
    db = _sqlite_store(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE sessions SET cwd = 'relative/dir' WHERE id = 'b'")

    async def go() -> tuple[Any, Any]:
        store = open_store(db, read_only=True)
        try:
            with pytest.raises(SessionPersistenceError, match="cwd must be absolute"):
                await store.list()  # upstream: one bad row rejects the whole list (sqlite-backend §13 Q7)
            return store.backend.list_entries(CancelToken()), await verify_root(store)  # type: ignore[attr-defined]
        finally:
            await store.close()

    entries, (rows, root_error) = run(go())
    assert [(e.session_id, e.problem is None) for e in entries] == [("a", True), ("b", False), ("c", True)]
    assert "cwd must be absolute" in entries[1].problem
    assert root_error is None
    by_id = {r.session_id: r for r in rows}
    assert by_id["a"].verdict == by_id["c"].verdict == "ok"
    assert by_id["b"].verdict == "corrupt" and "cwd must be absolute" in by_id["b"].reason


def test_sqlite_store_level_error_is_a_root_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _sqlite_store(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE events")
    code, out = cli_json(capsys, "verify", str(db))
    assert code == 1 and out["sessions"] == [] and out["rootError"]


# ---------------------------------------------------------------- item 10: unreadable folders and transcripts


def _mixed(tmp_path: Path, compression: str) -> Path:
    root = tmp_path / "root"
    make_root(root, compression, {"a": one_turn_log(), "b": one_turn_log() + open_turn2(), "c": one_turn_log()})
    make_root(root, compression, {"p": one_turn_log()}, cwd="/other")
    return root


@pytest.mark.parametrize("compression", ENCODINGS)
def test_unreadable_session_folder_is_one_row(
    tmp_path: Path, compression: str, deny: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    root = _mixed(tmp_path, compression)
    folder = root / "--w--" / "c"
    deny(folder)
    assert listed(root, compression) == (["p", "a", "b"], ["p", "a", "b"])

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            assert len((await store.inspect("a")).events) == 6
            assert (await store.diagnose("b")).status == "open-turn"
            with pytest.raises(SessionPersistenceError, match="unreadable: permission denied") as info:
                await store.inspect("c")
            assert str(folder) in str(info.value)
            loaded = await store.load("b")  # what repair commits: the closers are written
            assert len(loaded.events) == 10
        finally:
            await store.close()

    run(go())
    code, out = cli_json(capsys, "fork", str(root), "a", "--after-turn", "1", "--id", "forked")
    assert code == 0, out
    code, out = cli_json(capsys, "verify", str(root))
    assert code == 1 and out.get("rootError", "?") is None, out
    rows = {r["id"]: r for r in out["sessions"]}
    assert {k: r["verdict"] for k, r in rows.items()} == {"a": "ok", "b": "ok", "p": "ok", "forked": "ok", "c": "unreadable"}
    assert rows["c"]["reason"].startswith("unreadable: permission denied")
    assert rows["c"]["path"] == str(folder)


@pytest.mark.parametrize("compression", ENCODINGS)
def test_unreadable_project_folder_and_transcript(
    tmp_path: Path, compression: str, deny: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    root = _mixed(tmp_path, compression)
    project = root / "--other--"
    transcript = artifact(root, WORK, "c", compression)
    deny(project)
    deny(transcript)
    assert listed(root, compression) == (["a", "b"], ["a", "b"])

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            assert len((await store.inspect("a")).events) == 6
        finally:
            await store.close()

    run(go())
    code, out = cli_json(capsys, "verify", str(root))
    assert code == 1 and out.get("rootError", "?") is None, out
    rows = {r["path"]: r for r in out["sessions"]}
    assert rows[str(project)]["verdict"] == "unreadable"
    assert rows[str(project)]["reason"].startswith("unreadable: permission denied")
    assert rows[str(transcript)]["verdict"] == "unreadable"
    assert {r["id"]: r["verdict"] for r in out["sessions"] if r["path"] not in (str(project), str(transcript))} == {
        "a": "ok",
        "b": "repairable",
    }


def test_walker_reports_each_problem_in_list_order(tmp_path: Path, deny: Callable[[Path], None]) -> None:
    root = _mixed(tmp_path, "none")
    (root / "--w--" / "flat.jsonl").write_bytes(b"")
    outside = tmp_path / "outside"
    make_root(outside, "none", {"x": one_turn_log()})
    os.symlink(outside / "--w--" / "x", root / "--w--" / "x")
    deny(root / "--w--" / "c")
    entries = list(discovery.walk_root(str(root)))
    kinds = [(os.path.basename(e.path), e.kind if isinstance(e, discovery.Problem) else "folder") for e in entries]
    assert kinds == [
        ("p", "folder"),
        ("flat.jsonl", "flat-file"),
        ("a", "folder"),
        ("b", "folder"),
        ("c", "unreadable"),
        ("x", "symlink"),
    ]
    link = entries[-1]
    assert isinstance(link, discovery.Problem) and link.target == str(outside / "--w--" / "x")


# ---------------------------------------------------------------- item 6: symlinks below the root


def _linked(tmp_path: Path, compression: str, what: str) -> tuple[Path, Path, Path]:
    """(root, link, target dir): session "s" of the root is reached through a symlink to ``outside``."""
    root = tmp_path / "root"
    make_root(root, compression, {"a": one_turn_log()})
    outside = tmp_path / "outside"
    make_root(outside, compression, {"s": one_turn_log() + open_turn2()})
    real_folder = outside / "--w--" / "s"
    if what == "folder":
        link = root / "--w--" / "s"
        os.symlink(real_folder, link)
    else:
        folder = root / "--w--" / "s"
        folder.mkdir()
        link = folder / ("session.jsonl.zstd" if compression == "zstd" else "session.jsonl")
        os.symlink(real_folder / link.name, link)
    return root, link, outside


@pytest.mark.parametrize("what", ["folder", "transcript"])
@pytest.mark.parametrize("compression", ENCODINGS)
def test_symlinked_session_is_neither_listed_nor_read_and_verify_names_it(
    tmp_path: Path, compression: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root, link, outside = _linked(tmp_path, compression, what)
    before = snapshot(outside)
    assert listed(root, compression) == (["a"], ["a"])

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            for call in (store.inspect("s"), store.load("s"), store.read_from("s", 0), store.read_raw("s")):
                with pytest.raises(SessionLayoutError, match="symbolic link") as info:
                    await call
                assert str(link) in str(info.value)
            assert len((await store.inspect("a")).events) == 6
        finally:
            await store.close()

    run(go())
    code, out = cli_json(capsys, "verify", str(root))
    assert code == 1 and out.get("rootError", "?") is None, out
    rows = {r["id"]: r for r in out["sessions"]}
    assert rows["a"]["verdict"] == "ok"
    assert rows["s"]["verdict"] == "unsupported" and rows["s"]["status"] == "symlink"
    assert rows["s"]["path"] == str(link) and os.path.realpath(link) in rows["s"]["reason"]
    code, out = cli_json(capsys, "repair", str(root), "s", "--force")
    assert code == 1 and "symbolic link" in out["error"]["message"], out
    assert snapshot(outside) == before  # no backup, no closers, nothing in the link target


@pytest.mark.parametrize("what", ["project", "folder", "transcript"])
@pytest.mark.parametrize("compression", ENCODINGS)
def test_engine_refuses_to_write_through_a_symlink(tmp_path: Path, compression: str, what: str) -> None:
    root = tmp_path / "root"
    make_root(root, compression, {"a": one_turn_log()})
    outside = tmp_path / "outside"
    outside.mkdir()
    cwd = "/elsewhere"
    if what == "project":
        link = root / "--elsewhere--"
        os.symlink(outside, link)
    elif what == "folder":
        (root / "--elsewhere--").mkdir()
        link = root / "--elsewhere--" / "new"
        os.symlink(outside, link)
    else:
        (root / "--elsewhere--" / "new").mkdir(parents=True)
        link = root / "--elsewhere--" / "new" / ("session.jsonl.zstd" if compression == "zstd" else "session.jsonl")
        os.symlink(outside / link.name, link)

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            with pytest.raises(SessionLayoutError, match="symbolic link") as info:
                # The folder and transcript links are refused by create's collision probe (a read), the
                # project link by the first append (the write guard).
                await store.create(meta("new", cwd))
                await store.append("new", one_turn_log())
            assert str(link) in str(info.value)
        finally:
            await store.close()

    run(go())
    assert list(outside.iterdir()) == []  # nothing created in the link target
    backend = JsonlStorage(root, compression=compression)
    target = artifact(root, cwd, "new", compression)
    with pytest.raises(SessionLayoutError, match="symbolic link"):
        backend.assert_writable_path(str(target))
    backend.assert_writable_path(str(artifact(root, WORK, "a", compression)))  # a real path is fine
    backend.assert_writable_path(str(artifact(root, "/fresh", "z", compression)))  # so is one not created yet


def test_write_guard_refuses_paths_outside_the_root(tmp_path: Path) -> None:
    backend = JsonlStorage(tmp_path / "root", compression="none")
    with pytest.raises(SessionLayoutError, match="outside the root"):
        backend.assert_writable_path(str(tmp_path / "elsewhere" / "session.jsonl"))


def test_symlinked_project_alias_inside_the_root_still_lists_and_loads(tmp_path: Path) -> None:
    """jsonl-backend §4.6 / case 73 keeps working, and the walker does not report an in-root alias."""
    make_root(tmp_path, "none", {"s1": one_turn_log()}, cwd="/stored")
    path = artifact(tmp_path, "/stored", "s1", "none")
    path.write_bytes(encode_log(header_line("s1", "/alias"), [one_turn_log()], "none"))
    os.symlink(tmp_path / "--stored--", tmp_path / "--alias--")
    assert listed(tmp_path, "none") == (["s1"], ["s1"])
    assert [type(e).__name__ for e in discovery.walk_root(str(tmp_path))] == ["SessionFolder"]


def test_symlinked_project_folder_outside_the_root_is_a_problem_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    make_root(root, "none", {"a": one_turn_log()})
    outside = tmp_path / "outside"
    make_root(outside, "none", {"x": one_turn_log()}, cwd="/x")
    os.symlink(outside / "--x--", root / "--x--")
    assert listed(root, "none") == (["a"], ["a"])
    code, out = cli_json(capsys, "verify", str(root))
    assert code == 1
    rows = {r["path"]: r for r in out["sessions"]}
    assert rows[str(root / "--x--")]["status"] == "symlink"
