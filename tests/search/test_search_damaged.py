"""Damaged logs stay searchable by whatever their readable part holds, and their hits say so."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
import searchkit as k
import sessionkit as sk

from persistence import js_dumps
from persistence.jsonl.frames import compress_frame

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]

CWD = "/w/proj"


def hits(path: str, backend: str, query: str) -> list[tuple[str, int | None, str]]:
    async def go() -> list[tuple[str, int | None, str]]:
        indexer = await k.indexed(path, backend)
        try:
            return [(h.session_id, h.seq, h.status) for h in indexer.searcher().search(query).hits]
        finally:
            await indexer.aclose()

    return k.run(go())


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_torn_tail_is_searchable_and_its_hits_say_torn_tail(tmp_path: Path, compression: str) -> None:
    backend = f"jsonl-{compression}"
    path = k.store_path(tmp_path, backend)
    k.run(k.write_session(path, backend, "s1", k.rich_log()))
    torn = b'{"type":"turn/start","seq":17,"time":99,"da'
    with open(sk.artifact(path, CWD, "s1", compression), "ab") as f:
        f.write(compress_frame(torn + b'ta":{"turn":2}}\n')[:-6] if compression == "zstd" else torn)
    assert hits(path, backend, "npm run build") == [("s1", 11, "torn-tail")]


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_corrupt_log_is_searchable_on_both_sides_of_the_damage(tmp_path: Path, compression: str) -> None:
    backend = f"jsonl-{compression}"
    path = k.store_path(tmp_path, backend)
    log = k.rich_log()
    before, after = log[:8], log[8:]
    if compression == "zstd":
        good = sk.encode_log(sk.header_line("s1", CWD), [before], "zstd")
        bad = bytearray(compress_frame(b'{"type":"garbage line"}\n'))
        bad[-1] ^= 0xFF  # a frame whose checksum fails: decoding goes on after it
        content = good + bytes(bad) + sk.encode_log(b"", [after], "zstd")[len(compress_frame(b"")) :]
    else:
        content = sk.encode_log(sk.header_line("s1", CWD), [before, b"{this is not json\n", after], "none")
    sk.plant(path, os.path.relpath(sk.artifact(path, CWD, "s1", compression).parent, path), content, compression)
    found = hits(path, backend, "order.ts")
    assert {(sid, seq) for sid, seq, _st in found} == {("s1", 1), ("s1", 13), ("s1", 14)}
    assert {st for _sid, _seq, st in found} == {"corrupt"}


def test_an_unsupported_log_is_searchable_and_says_unsupported(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "jsonl-none")
    content = sk.encode_log(sk.header_line("s1", CWD, version=1), [k.rich_log()], "none")
    sk.plant(path, os.path.relpath(sk.artifact(path, CWD, "s1", "none").parent, path), content, "none")
    assert hits(path, "jsonl-none", "dist/order.js") == [("s1", 12, "unsupported")]


def test_a_bad_listing_row_is_searchable_by_its_decodable_lines(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "jsonl-none")
    k.run(k.write_session(path, "jsonl-none", "good", [sk.turn_start(0, 1), sk.turn_end(1, 1)]))
    project = sk.artifact(path, CWD, "good", "none").parent.parent
    flat = project / "flat.jsonl"  # the legacy flat layout upstream refuses: a bad row of its own
    flat.write_bytes(sk.encode_log(sk.header_line("flat", CWD), [k.rich_log()], "none"))

    async def go() -> None:
        indexer = await k.indexed(path, "jsonl-none")
        entry = next(e for e in await indexer.store.list_entries() if not e.ok)
        result = indexer.searcher().search("ENOENT")
        assert [(h.session_id, h.seq, h.status) for h in result.hits] == [("flat", 14, entry.status)]
        assert entry.status != "ok" and result.sessions[0].key == str(flat)
        await indexer.aclose()

    k.run(go())


def test_a_corrupt_sqlite_session_is_found_by_its_id_with_its_status(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "sqlite")
    k.run(k.write_session(path, "sqlite", "broken-session", k.rich_log()))
    k.run(k.write_session(path, "sqlite", "fine", k.rich_log("a healthy order.ts question")))
    con = sqlite3.connect(path)
    with con:
        cols = [r[1] for r in con.execute("PRAGMA table_info(events)")]
        assert "data" in cols
        con.execute("UPDATE events SET data = ? WHERE session_id = 'broken-session' AND seq = 1", (b"\x00not json",))
    con.close()

    async def go() -> None:
        indexer = await k.indexed(path, "sqlite")
        s = indexer.searcher()
        broken = s.search("broken-session").hits
        assert [(h.seq, h.kind, h.status) for h in broken] == [(None, "meta", "corrupt")]
        assert {h.session_id for h in s.search("order.ts").hits} == {"fine"}  # its events are not readable
        await indexer.aclose()

    k.run(go())


def test_damage_does_not_stop_the_other_sessions(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "jsonl-none")
    k.run(k.write_session(path, "jsonl-none", "s1", k.rich_log()))
    bad_dir = sk.artifact(path, "/w/other", "s2", "none").parent
    sk.plant(path, os.path.relpath(bad_dir, path), b"\xff\xfe not a log at all", "none")
    sk.plant(path, os.path.relpath(sk.artifact(path, "/w/x", "s3", "none").parent, path), js_dumps({"id": 1}) + b"\n", "none")
    found = hits(path, "jsonl-none", "npm run build")
    assert found == [("s1", 11, "ok")]
