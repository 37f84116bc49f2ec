"""Property: on every backend, a long-lived store's ``view`` after any sequence of changes equals a fresh
store's ``view`` (``persistence.incremental``).

The changes: appends of random size (cutting turns, and so leaving open turns whose closers must be
recomputed, and cutting chunk runs into several packed rows or frames), an append split mid-frame or
mid-line (viewed torn, then completed), a torn append left torn, a repair by another store, a truncation,
a rewrite in place at the same size, a rewrite onto a new inode; SQLite: a torn row, completed later, a
re-created session row, rows deleted from the end.  Views alternate with and without the raw bytes.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
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
    sqlite_max_seq,
    sqlite_recreate,
    sqlite_torn_append,
    turns,
    write_in_place,
)

from persistence import CoordinatedPersistence

pytestmark = pytest.mark.usefixtures("fast_fsync")

SHAPES = st.lists(st.tuples(st.integers(0, 7), st.booleans()), min_size=1, max_size=3)
STEP = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 9)),
    st.tuples(st.just("split"), st.integers(1, 9), st.floats(0.05, 0.95)),
    st.tuples(st.just("torn"), st.integers(1, 9), st.floats(0.05, 0.95)),
    st.tuples(st.just("repair")),
    st.tuples(st.just("truncate"), st.floats(0.3, 0.99)),
    st.tuples(st.just("rewrite-same-size")),
    st.tuples(st.just("new-inode")),
    st.tuples(st.just("complete-torn")),
)


class Follow:
    """One session, a writer that appends a pregenerated stream, and the store under test (``reader``)."""

    def __init__(self, kind: str, root: str, shapes: list[tuple[int, bool]]) -> None:
        self.kind, self.root, self.shapes = kind, root, shapes
        self.reader = open_store(kind, root)
        self.writer: CoordinatedPersistence | None = None
        self.pending: list[dict[str, Any]] = []
        self.next_turn = 1

    @property
    def path(self) -> str:
        return artifact_path(self.reader, self.kind, self.root)

    async def start(self) -> None:
        self.writer = open_store(self.kind, self.root)
        await self.writer.create(header())
        self.pending = turns(0, 1, self.shapes)
        self.next_turn = 1 + len(self.shapes)
        await self._append(3)

    async def _writer(self) -> CoordinatedPersistence:
        """The writer, re-opened after damage: its ``load`` repairs the log and a new stream continues it."""
        if self.writer is None:
            self.writer = open_store(self.kind, self.root)
            balanced = await self.writer.load(SID)
            self.pending = turns(len(balanced.events), self.next_turn, self.shapes)
            self.next_turn += len(self.shapes)
        return self.writer

    async def _drop_writer(self) -> None:
        if self.writer is not None:
            await self.writer.close()
            self.writer = None

    async def _append(self, k: int) -> None:
        writer = await self._writer()
        if not self.pending:
            self.pending = turns(await self._stored_count(), self.next_turn, self.shapes)
            self.next_turn += len(self.shapes)
        batch, self.pending = self.pending[:k], self.pending[k:]
        await writer.append(SID, batch)

    async def _stored_count(self) -> int:
        return (await fresh_view(self.kind, self.root)).closer_start

    async def check(self, raw: bool) -> None:
        got = await self.reader.view(SID, raw=raw)
        assert_same_view(got, await fresh_view(self.kind, self.root, raw=raw))

    async def step(self, op: tuple[Any, ...], raw: bool) -> None:
        name = op[0]
        jsonl = self.kind != "sqlite"
        try:
            status = (await fresh_view(self.kind, self.root)).status
        except Exception:
            status = "corrupt"
        if name == "append" or (name in ("split", "torn") and not jsonl):
            if status not in ("ok", "open-turn", "torn-tail"):
                return  # a corrupt log cannot be repaired by a load: nothing to append to
            await self._append(op[1])
        elif name in ("split", "torn"):
            if status not in ("ok", "open-turn", "torn-tail"):
                return
            size = os.path.getsize(self.path)
            await self._append(op[1])
            added = read_bytes(self.path)[size:]
            cut = max(1, min(len(added) - 1, int(len(added) * op[2])))
            os.truncate(self.path, size + cut)
            await self._drop_writer()  # it expects the whole batch: a later append re-opens it
            if name == "split":
                await self.check(raw)
                with open(self.path, "ab") as f:
                    f.write(added[cut:])
        elif name == "repair":
            await self._drop_writer()
            repairer = open_store(self.kind, self.root)
            try:
                await repairer.load(SID)
            except Exception:
                pass  # a corrupt log is not repaired; the views must still agree on it
            finally:
                await repairer.close()
        elif name == "truncate":
            await self._drop_writer()
            if jsonl:
                os.truncate(self.path, max(1, int(os.path.getsize(self.path) * op[1])))
            else:
                keep = int((sqlite_max_seq(self.path) + 1) * op[1])
                sql(self.path, "DELETE FROM events WHERE session_id = ? AND seq >= ?", SID, keep)
        elif name == "rewrite-same-size":
            await self._drop_writer()
            if jsonl:
                data = read_bytes(self.path)
                at = len(data) // 2
                write_in_place(self.path, data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :])
            else:
                last = sqlite_max_seq(self.path)  # an earlier row updated in place is not looked for (sqlite.extend)
                sql(self.path, "UPDATE events SET time = time + 1 WHERE session_id = ? AND seq = ?", SID, last)
        elif name == "new-inode":
            await self._drop_writer()
            if jsonl:
                replace_file(self.path, read_bytes(self.path))
            else:
                sqlite_recreate(self.path)
        elif name == "complete-torn" and not jsonl:
            await self._drop_writer()
            sqlite_torn_append(self.path)
            await self.check(raw)
            sqlite_complete_torn(self.path)
        await self.check(raw)

    async def close(self) -> None:
        await self._drop_writer()
        await self.reader.close()


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=SHAPES, steps=st.lists(st.tuples(STEP, st.booleans()), min_size=1, max_size=8))
def test_an_incremental_view_equals_a_fresh_read(kind: str, shapes: list[tuple[int, bool]], steps: list[Any]) -> None:
    async def body(root: str) -> None:
        follow = Follow(kind, root, shapes)
        try:
            await follow.start()
            await follow.check(False)
            for op, raw in steps:
                await follow.step(op, raw)
        finally:
            await follow.close()

    with tempfile.TemporaryDirectory() as root:
        asyncio.run(body(root))
