"""One bad session is one bad row in the window; a bad root shows its error where the sessions would be.

(issue 10 items 9 and 10: a header with ``1e400``, an unreadable folder, a symlinked folder, a SQLite
row that fails validation, a SQLite store that cannot be read.)  "Permission denied" is simulated by
patching the calls a ``chmod 000`` would make fail, with the listing kept in this process.
"""

from __future__ import annotations

import builtins
import errno
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from guikit import WAIT_MS, wait_listed

from app.gui.controllers import session_list
from persistence import JsonlSessionPersistence
from persistence.jsonl.paths import log_path

pytestmark = pytest.mark.timeout(90)

SHOTS = os.environ.get("SESSIONSCOPE_SHOTS")  # a folder: save screenshots of the bad rows / bad root there


def _shot(w: Any, qtbot: Any, name: str, width: int, height: int) -> None:
    if SHOTS:
        w.resize(width, height)
        qtbot.wait(300)
        w.grab().save(str(Path(SHOTS) / name))


def _events(turn_start_only: bool = False) -> list[dict[str, Any]]:
    evs = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "turn/end", "seq": 1, "time": 2, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    return evs[:1] if turn_start_only else evs


def _write(arun: Any, root: Path, ids: list[str], cwd: str = "/w") -> None:
    async def go() -> None:
        store = JsonlSessionPersistence(root, compression="none")
        try:
            for sid in ids:
                await store.create({"version": 0, "id": sid, "createdAt": 1_767_600_000_000, "cwd": cwd})
                await store.append(sid, _events())
        finally:
            await store.close()

    arun(go())


def _deny(monkeypatch: pytest.MonkeyPatch, *paths: Path) -> None:
    """Behave as if each of ``paths`` were ``chmod 000`` for a non-root user (it can be stat'ed, not read)."""
    denied = [os.path.abspath(p) for p in paths]
    real = {name: getattr(os, name) for name in ("scandir", "listdir", "open", "stat", "lstat")}
    real_open = builtins.open

    def hit(p: Any, inclusive: bool) -> bool:
        if isinstance(p, int):
            return False
        n = os.path.abspath(os.fsdecode(os.fspath(p)))
        return any((inclusive and n == d) or n.startswith(d + os.sep) for d in denied)

    def guard(fn: Any, inclusive: bool) -> Any:
        def wrapped(p: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if hit(p, inclusive):
                raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(os.fspath(p)))
            return fn(p, *args, **kwargs)

        return wrapped

    for name in ("scandir", "listdir", "open"):
        monkeypatch.setattr(os, name, guard(real[name], True))
    for name in ("stat", "lstat"):
        monkeypatch.setattr(os, name, guard(real[name], False))
    monkeypatch.setattr(builtins, "open", guard(real_open, True))


def _rows(w: Any) -> dict[str, Any]:
    return {r.session_id: r for r in w.session_model.rows()}


def test_bad_sessions_are_bad_rows_and_the_rest_are_judged(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    _write(arun, root, ["alpha", "beta", "locked"])
    for name, header in (("inf-version", b'"version":1e400'), ("inf-seed", b'"version":0,"seedLength":1e400')):
        p = Path(log_path(str(root), "/w", name, "none"))
        p.parent.mkdir(mode=0o700)
        p.write_bytes(
            b'{"type":"session",'
            + header
            + b',"id":"'
            + name.encode()
            + b'","createdAt":1767600000000,"cwd":"/w","delegationDepth":0}\n'
        )
    outside = tmp_path / "outside"
    _write(arun, outside, ["linked"])
    os.symlink(outside / "--w--" / "linked", root / "--w--" / "linked")
    locked = root / "--w--" / "locked"
    monkeypatch.setattr(session_list, "shared_pool", lambda: None)  # list in this process, where _deny applies
    _deny(monkeypatch, locked)

    w = make_window(root)
    wait_listed(qtbot, w)
    rows = _rows(w)
    assert set(rows) == {"alpha", "beta", "locked", "inf-version", "inf-seed", "linked"}
    assert rows["alpha"].status == rows["beta"].status == "ok"
    assert rows["locked"].status == "unreadable" and rows["locked"].reason.startswith("unreadable: permission denied")
    assert rows["locked"].path == str(locked)
    for name in ("inf-version", "inf-seed"):
        assert rows[name].status == "corrupt" and "outside JSON's range" in rows[name].reason, rows[name].reason
    assert rows["linked"].status == "unsupported" and "symbolic link" in rows["linked"].reason
    assert str(outside / "--w--" / "linked") in rows["linked"].reason
    assert w.list_pane.stack.currentWidget() is w.list_pane.table
    assert getattr(w, "root_error", None) is None
    assert w.session_model.row_for_key(str(locked)) >= 0
    assert w.list_pane.select_key(rows["alpha"].key)
    _shot(w, qtbot, "badrow.png", 1400, 520)


def test_a_sqlite_row_that_fails_validation_is_one_bad_row(qtbot: Any, make_window: Any, arun: Any, tmp_path: Path) -> None:
    from persistence.sqlite.backend import SqliteSessionPersistence

    db = tmp_path / "s.sqlite"

    async def go() -> None:
        store = SqliteSessionPersistence(str(db))
        try:
            for sid in ("a", "b", "c"):
                await store.create({"version": 0, "id": sid, "createdAt": 1_767_600_000_000, "cwd": "/w"})
                await store.append(sid, _events())
        finally:
            await store.close()

    arun(go())
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE sessions SET cwd = 'relative/dir' WHERE id = 'b'")
    w = make_window(db)
    wait_listed(qtbot, w)
    rows = _rows(w)
    assert {k: r.status for k, r in rows.items()} == {"a": "ok", "b": "corrupt", "c": "ok"}
    assert "cwd must be absolute" in rows["b"].reason


@pytest.mark.parametrize("damage", ["sqlite-schema", "jsonl-root-unreadable"])
def test_a_bad_root_shows_its_error_in_the_list_area(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    if damage == "sqlite-schema":
        from persistence.sqlite.backend import SqliteSessionPersistence

        target = tmp_path / "s.sqlite"

        async def go() -> None:
            store = SqliteSessionPersistence(str(target))
            try:
                await store.create({"version": 0, "id": "a", "createdAt": 1, "cwd": "/w"})
                await store.append("a", _events())
            finally:
                await store.close()

        arun(go())
        with sqlite3.connect(target) as conn:
            conn.execute("DROP TABLE sessions")
    else:
        target = tmp_path / "root"
        _write(arun, target, ["a"])
        monkeypatch.setattr(session_list, "shared_pool", lambda: None)
        _deny(monkeypatch, target)
    failures: list[tuple[str, str]] = []
    w = make_window()
    w.jobs.failed.connect(lambda name, msg: failures.append((name, msg)))
    w.open_root(str(target))
    qtbot.waitUntil(w.controller.listed.is_set, timeout=WAIT_MS)
    qtbot.wait(100)
    assert failures == []  # handled: no job died with a traceback
    assert w.root_error is not None and str(target) in w.root_error
    pane = w.list_pane
    assert pane.stack.currentWidget() is pane.empty
    text = pane.empty_label.text()
    assert ("Cannot list" in text or "Cannot open" in text) and "No sessions" not in text
    if damage == "sqlite-schema":
        _shot(w, qtbot, "badroot.png", 1100, 420)
