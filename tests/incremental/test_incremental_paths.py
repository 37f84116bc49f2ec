"""Which read a ``view`` takes: extended when the log only grew, whole otherwise, and always equal to a
fresh store's view (``persistence.incremental``; the path is read from its ``STATS`` test hook)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from incrementalkit import (
    KINDS,
    SID,
    artifact_path,
    assert_same_view,
    fresh_view,
    header,
    open_store,
    read_bytes,
    replace_file,
    sql,
    sqlite_complete_torn,
    sqlite_recreate,
    sqlite_torn_append,
    turns,
    write_in_place,
)
from sessionkit import run, step_start, turn_start

from persistence import CoordinatedPersistence, SessionView
from persistence.incremental import STATS
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.usefixtures("fast_fsync")


async def _view(store: CoordinatedPersistence, kind: str, root: str, *, raw: bool = False) -> tuple[SessionView, str]:
    """The store's view, checked against a fresh store's, and the path it took."""
    STATS.reset()
    got = await store.view(SID, raw=raw)
    taken = "extended" if STATS.extended else "whole" if STATS.whole else "unchanged"
    assert_same_view(got, await fresh_view(kind, root, raw=raw))
    return got, taken


async def _started(kind: str, root: str, shapes: Any = ((5, True), (0, False))) -> tuple[CoordinatedPersistence, list[Any]]:
    writer = open_store(kind, root)
    await writer.create(header())
    log = turns(0, 1, list(shapes))
    await writer.append(SID, log)
    return writer, log


@pytest.mark.parametrize("kind", KINDS)
def test_an_appended_turn_is_read_by_extension(kind: str, tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, log = await _started(kind, root)
        reader = open_store(kind, root)
        first, taken = await _view(reader, kind, root)
        assert taken == "whole" and first.status == "ok"
        await writer.append(SID, turns(len(log), 3, [(7, True)]))
        grown, taken = await _view(reader, kind, root)
        assert taken == "extended"
        assert grown.status == "ok" and len(grown.events) > len(first.events)
        assert len(first.events) == len(log)  # an earlier view never grows
        _same, taken = await _view(reader, kind, root)
        assert taken == "unchanged"
        await reader.close()
        await writer.close()

    run(body())


@pytest.mark.parametrize("kind", ["jsonl-zstd", "jsonl-none"])
def test_raw_views_are_extended_and_hold_the_whole_file(kind: str, tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, log = await _started(kind, root)
        reader = open_store(kind, root)
        await _view(reader, kind, root, raw=True)
        await writer.append(SID, turns(len(log), 3, [(4, False)]))
        grown, taken = await _view(reader, kind, root, raw=True)
        assert taken == "extended"
        assert grown.raw is not None and grown.raw.offset == 0
        assert grown.raw.data == read_bytes(artifact_path(reader, kind, root))
        await reader.close()
        await writer.close()

    run(body())


@pytest.mark.parametrize("kind", KINDS)
def test_closers_of_an_open_turn_are_recomputed_when_it_closes(kind: str, tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, log = await _started(kind, root)
        rest = turns(len(log), 3, [(4, True)])
        reader = open_store(kind, root)
        await _view(reader, kind, root)
        await writer.append(SID, rest[:4])  # turn/start, user, step/start, one delta: the turn is open
        opened, taken = await _view(reader, kind, root)
        assert (taken, opened.status) == ("extended", "open-turn") and opened.closers
        await writer.append(SID, rest[4:])
        closed, taken = await _view(reader, kind, root)
        assert (taken, closed.status, closed.closers) == ("extended", "ok", ())
        await reader.close()
        await writer.close()

    run(body())


@pytest.mark.parametrize("kind", KINDS)
def test_a_repair_between_reads_is_read_as_what_it_left(kind: str, tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, log = await _started(kind, root)
        await writer.append(SID, [turn_start(len(log), 3), step_start(len(log) + 1, 3, 1)])
        await writer.close()
        reader = open_store(kind, root)
        opened, _taken = await _view(reader, kind, root)
        assert opened.status == "open-turn"
        repairer = open_store(kind, root)
        await repairer.load(SID)  # commits the closers
        await repairer.close()
        repaired, _taken = await _view(reader, kind, root)
        assert repaired.status == "ok" and repaired.closer_start == opened.closer_start + len(opened.closers)
        await reader.close()

    run(body())


@pytest.mark.parametrize("kind", ["jsonl-zstd", "jsonl-none"])
def test_a_torn_append_completed_later_is_read_from_the_last_good_boundary(kind: str, tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, log = await _started(kind, root)
        reader = open_store(kind, root)
        await _view(reader, kind, root)
        path = artifact_path(reader, kind, root)
        size = os.path.getsize(path)
        await writer.append(SID, turns(len(log), 3, [(6, True)]))
        added = read_bytes(path)[size:]
        os.truncate(path, size + len(added) // 2)  # the flush cut in half
        torn, taken = await _view(reader, kind, root)
        assert (taken, torn.status) == ("extended", "torn-tail")
        with open(path, "ab") as f:
            f.write(added[len(added) // 2 :])  # and completed
        whole, taken = await _view(reader, kind, root)
        assert (taken, whole.status) == ("extended", "ok")
        await reader.close()
        await writer.close()

    run(body())


@pytest.mark.parametrize("kind", ["jsonl-zstd", "jsonl-none"])
@pytest.mark.parametrize("change", ["new-inode", "truncated", "same-size-in-place", "touched", "seam-rewritten"])
def test_a_log_that_did_not_only_grow_is_read_whole(kind: str, change: str, tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, _log = await _started(kind, root, [(5, True), (3, False), (0, True)])
        await writer.close()
        reader = open_store(kind, root)
        await _view(reader, kind, root)
        path = artifact_path(reader, kind, root)
        data = read_bytes(path)
        if change == "new-inode":
            replace_file(path, data)
        elif change == "truncated":
            os.truncate(path, len(data) - 3)
        elif change == "same-size-in-place":
            at = data.rindex(b"question 1") if kind == "jsonl-none" else len(data) // 2
            write_in_place(path, data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
        elif change == "touched":
            st = os.stat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        else:  # the bytes before the old end rewritten, then more appended: the seam check refuses it
            write_in_place(path, data[:-10] + bytes(b ^ 1 for b in data[-10:]) + b"\n")
        _view_after, taken = await _view(reader, kind, root)
        assert taken == "whole"
        await reader.close()

    run(body())


def test_a_record_a_legacy_upgrade_rewrites_is_read_whole(tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, log = await _started("jsonl-none", root)
        await writer.close()
        reader = open_store("jsonl-none", root)
        await _view(reader, "jsonl-none", root)
        n = len(log)
        legacy = [
            turn_start(n, 3),
            {
                "type": "user/message",
                "seq": n + 1,
                "time": 1,
                "surfaceOp": "append",
                "data": {"content": [], "source": {"kind": "user"}},
            },
            {"type": "turn/end", "seq": n + 2, "time": 1, "data": {"turn": 3, "reason": {"kind": "completed"}}},
        ]
        with open(artifact_path(reader, "jsonl-none", root), "ab") as f:
            f.write(b"".join(js_dumps(e) + b"\n" for e in legacy))
        upgraded, taken = await _view(reader, "jsonl-none", root)
        assert taken == "whole" and upgraded.status == "ok"
        await reader.close()

    run(body())


@pytest.mark.parametrize("kind", ["jsonl-none", "sqlite"])
def test_new_damage_followed_by_a_turn_end_is_the_whole_reads_verdict(kind: str, tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, log = await _started(kind, root)
        await writer.close()
        reader = open_store(kind, root)
        await _view(reader, kind, root)
        n = len(log)
        path = artifact_path(reader, kind, root)
        if kind == "sqlite":
            sqlite_torn_append(path)
            end = '{"turn":3,"reason":{"kind":"completed"}}'
            sql(path, "INSERT INTO events VALUES (?, ?, 'turn/end', 1, ?, NULL, NULL, NULL)", SID, n + 1, end)
        else:
            with open(path, "ab") as f:
                f.write(b"{not json\n" + js_dumps({"type": "turn/end", "seq": n + 1, "time": 1, "data": {"turn": 3}}) + b"\n")
        broken, taken = await _view(reader, kind, root)
        assert broken.status == "corrupt" and taken == "whole"
        await reader.close()

    run(body())


@pytest.mark.parametrize("change", ["recreated", "last-row-changed", "row-inside-the-last-run"])
def test_sqlite_a_changed_seam_is_read_whole(change: str, tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, log = await _started("sqlite", root, [(0, False), (6, False)])
        await writer.close()
        n = len(log)
        path = artifact_path(writer, "sqlite", root)
        if change == "row-inside-the-last-run":
            # End the log on a packed run of deltas (seqs n+3..n+8), then read it.
            extra = turns(n, 3, [(6, False)])[:9]
            w2 = open_store("sqlite", root)
            await w2.load(SID)
            await w2.append(SID, extra)
            await w2.close()
        reader = open_store("sqlite", root)
        before, _taken = await _view(reader, "sqlite", root)
        if change == "recreated":
            sqlite_recreate(path)
        elif change == "last-row-changed":
            sql(path, "UPDATE events SET time = time + 1 WHERE session_id = ? AND seq = ?", SID, before.closer_start - 1)
        else:
            # The six deltas are one packed row keyed by its first seq: a row keyed inside its span.
            sql(path, "INSERT INTO events VALUES (?, ?, 'x/y', 1, '{}', NULL, NULL, 1)", SID, before.closer_start - 4)
        after, taken = await _view(reader, "sqlite", root)
        assert taken == "whole"
        if change == "row-inside-the-last-run":
            assert after.status == "torn-tail"  # the fresh read saw the row the seam check caught
        await reader.close()

    run(body())


def test_sqlite_a_torn_row_completed_later_is_rescanned(tmp_path: Path) -> None:
    async def body() -> None:
        root = str(tmp_path)
        writer, _log = await _started("sqlite", root)
        await writer.close()
        reader = open_store("sqlite", root)
        await _view(reader, "sqlite", root)
        path = artifact_path(reader, "sqlite", root)
        sqlite_torn_append(path)
        torn, taken = await _view(reader, "sqlite", root)
        assert (taken, torn.status) == ("extended", "torn-tail")
        sqlite_complete_torn(path)
        whole, taken = await _view(reader, "sqlite", root)
        assert (taken, whole.status) == ("extended", "ok")
        await reader.close()

    run(body())
