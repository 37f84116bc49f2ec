"""verify's one walk finds a clean root's repair backups exactly as the engine's own search does.

``jsonl_backups_beside`` (one ``listdir`` per listed session folder) stands for the engine's
``backup_candidates`` (a second walk of the root) when every entry of the root is a listed session;
any other root still goes through the engine, so its backups are found as before.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import sessionkit as sk
from actionkit import run

from app.actions import verify
from app.actions.backups import find_lost_records
from persistence import JsonlSessionPersistence, jsonl_backups_beside, open_store

STAMP = "20260101T000000Z"


def _root(tmp: Path, compression: str, ids: list[str]) -> Path:
    root = tmp / "root"

    async def go() -> None:
        store = JsonlSessionPersistence(root, compression=compression)
        try:
            for sid in ids:
                await store.create(sk.meta(sid, sk.WORK))
                await store.append(sid, sk.one_turn_log())
        finally:
            await store.close()

    run(go())
    return root


def _plant_backups(root: Path, compression: str) -> None:
    """Backups under both transcript names, a second one, and files that are not backups."""
    a = sk.artifact(root, sk.WORK, "a", compression)
    c = sk.artifact(root, sk.WORK, "c", compression)
    for path, name in (
        (a, f"session.jsonl.zstd.bak-{STAMP}-2"),
        (a, f"session.jsonl.zstd.bak-{STAMP}"),
        (a, f"session.jsonl.bak-{STAMP}"),
        (a, f"session.jsonl.zstd.partial-{STAMP}"),
        (a, "notes.txt"),
        (c, f"session.jsonl.bak-{STAMP}x"),
    ):
        (path.parent / name).write_bytes(path.read_bytes())
    (c.parent / f"session.jsonl.zstd.bak-{STAMP}-7").write_bytes(c.read_bytes()[: len(c.read_bytes()) // 2])


async def _engine_candidates(root: Path) -> list[tuple[str, str]]:
    store = open_store(root)
    try:
        return await store.backup_candidates()
    finally:
        await store.close()


async def _verify(root: Path) -> tuple[list[list[tuple[str, str]]], list[verify.VerifyRow]]:
    store = open_store(root)
    found: list[list[tuple[str, str]]] = []
    try:
        rows, error = await verify.verify_root(store, use_cache=False, backups_found=found.append)
    finally:
        await store.close()
    assert error is None
    return found, rows


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_the_walk_finds_what_the_engine_finds(tmp_path: Path, compression: str) -> None:
    root = _root(tmp_path, compression, ["a", "b", "c"])
    _plant_backups(root, compression)
    engine = run(_engine_candidates(root))
    assert len(engine) == 4
    found, _rows = run(_verify(root))
    assert found == [engine]
    listed = [(sid, str(sk.artifact(root, sk.WORK, sid, compression))) for sid in ("a", "b", "c")]
    assert jsonl_backups_beside(listed) == engine


def _lose_records(root: Path, sid: str, compression: str) -> str:
    """A full backup of ``sid`` and a log that since lost records (an earlier, non-atomic repair)."""
    path = sk.artifact(root, sk.WORK, sid, compression)
    backup = path.parent / f"{path.name}.bak-{STAMP}"
    backup.write_bytes(path.read_bytes())
    path.write_bytes(sk.encode_log(sk.header_line(sid, sk.WORK), [sk.one_turn_log()[:4]], compression))
    return str(backup)


@pytest.mark.parametrize("clean", [True, False])
def test_verify_names_lost_records_on_a_clean_root_and_on_any_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], clean: bool
) -> None:
    from actionkit import main_json

    root = _root(tmp_path, "zstd", ["a", "b", "c"])
    backup = _lose_records(root, "c", "zstd")
    if not clean:  # a symlinked session folder: a row of its own, so list() no longer stands for the walk
        outside = tmp_path / "outside"
        outside.mkdir()
        os.symlink(outside, sk.artifact(root, sk.WORK, "a", "zstd").parent.parent / "linked")
    found, rows = run(_verify(root))
    assert found == ([[("c", backup)]] if clean else [])
    assert any(r.verdict == "unsupported" for r in rows) is not clean
    code, out, err = main_json(capsys, "verify", str(root))
    assert code == 1, err
    assert [(x["id"], x["backup"]) for x in out["lostRecords"]] == [("c", backup)]
    assert [b.path for _sid, b in run(_lost(root))] == [backup]


async def _lost(root: Path) -> list[tuple[str, Any]]:
    store = open_store(root)
    try:
        return await find_lost_records(store)
    finally:
        await store.close()
