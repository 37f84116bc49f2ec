"""The index is a cache: missing, corrupt, older-schema or foreign files are rebuilt with a message."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
import searchkit as k

from app.search import SCHEMA_VERSION, Indexer, Searcher, run_search
from app.search import db as db_mod

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]

BACKEND = "jsonl-zstd"


@pytest.fixture
def root(tmp_path: Path) -> str:
    path = k.store_path(tmp_path, BACKEND)
    k.run(k.write_session(path, BACKEND, "s1", k.rich_log()))
    return path


def index_once(root: str) -> str:
    async def go() -> str:
        indexer = await k.indexed(root, BACKEND)
        path = indexer.index_file
        await indexer.aclose()
        assert path is not None
        return path

    return k.run(go())


def reopen(root: str) -> tuple[list[str], int, int]:
    """(messages, sessions indexed by the run, hits of order.ts) of a fresh indexer."""

    async def go() -> tuple[list[str], int, int]:
        indexer = Indexer(k.reader(root, BACKEND))
        messages = list(indexer.messages)
        report = await indexer.update()
        hits = indexer.searcher().search("order.ts").hit_count
        await indexer.aclose()
        return messages, report.done, hits

    return k.run(go())


def test_first_use_creates_the_index_and_says_so(root: str) -> None:
    messages, done, hits = reopen(root)
    assert len(messages) == 1 and messages[0].startswith("created the search index")
    assert (done, hits) == (1, 3)
    messages, done, hits = reopen(root)
    assert (messages, done, hits) == ([], 0, 3)  # reused: nothing to say, nothing to do


def test_a_corrupt_index_file_is_rebuilt(root: str) -> None:
    path = index_once(root)
    with open(path, "r+b") as f:
        f.write(b"this is not a database at all" * 200)
    messages, done, hits = reopen(root)
    assert any("rebuilding it" in m for m in messages), messages
    assert (done, hits) == (1, 3)


def test_an_index_of_an_older_schema_is_rebuilt(root: str) -> None:
    path = index_once(root)
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    con.commit()
    con.close()
    messages, done, hits = reopen(root)
    assert any(f"schema version {SCHEMA_VERSION - 1}" in m and "rebuilding" in m for m in messages), messages
    assert (done, hits) == (1, 3)


def test_a_deleted_index_is_rebuilt(root: str) -> None:
    path = index_once(root)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    messages, done, hits = reopen(root)
    assert any(m.startswith("created") for m in messages)
    assert (done, hits) == (1, 3)


def test_an_index_of_another_root_is_rebuilt(root: str) -> None:
    path = index_once(root)
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = 'jsonl:/elsewhere' WHERE key = 'root'")
    con.commit()
    con.close()
    messages, done, _hits = reopen(root)
    assert any("another root" in m for m in messages)
    assert done == 1


def test_an_index_found_damaged_while_searching_is_rebuilt_by_the_search_verb(root: str) -> None:
    path = index_once(root)
    con = sqlite3.connect(path)
    con.execute("DROP TABLE docs")  # damage the checks at open time do not see once the file is open
    con.commit()
    con.close()

    searcher = Searcher(path)  # a reader has no open-time checks: it finds the damage when it queries
    result = searcher.search("order.ts")
    searcher.close()
    assert searcher.damaged is not None and any("damaged" in m for m in result.messages)
    assert result.hit_count == 0
    out = run_search(root, "order.ts")
    assert out.code == 0 and out.result is not None and out.result.hit_count == 3
    assert "rebuilding" in out.notes


def test_rebuild_on_request_indexes_everything_again(root: str) -> None:
    index_once(root)

    async def go() -> None:
        indexer = Indexer(k.reader(root, BACKEND))
        indexer.rebuild("--reindex")
        assert any("--reindex" in m for m in indexer.messages)
        assert (await indexer.update()).done == 1
        await indexer.aclose()

    k.run(go())


def test_without_a_trigram_tokenizer_every_query_scans(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    index_once(root)  # built with FTS5: opened without it, it is rebuilt without
    reason = "SQLite 3.31.0 has no FTS5 trigram tokenizer (3.34 or newer needed): searching by scanning, without an index"
    monkeypatch.setattr(db_mod, "fts_problem", lambda: reason)

    async def go() -> None:
        indexer = Indexer(k.reader(root, BACKEND))
        assert reason in indexer.messages
        assert any("another SQLite" in m for m in indexer.messages)
        await indexer.update()
        result = indexer.searcher().search("order.ts")
        assert (result.mode, result.hit_count) == ("scan", 3)
        assert indexer.searcher().search('"npm run build"').hit_count == 1
        has_fts = indexer.db.conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'fts'").fetchone()[0]
        assert has_fts == 0
        await indexer.aclose()

    k.run(go())


def test_sqlite_in_use_reports_trigram_support() -> None:
    assert db_mod.fts_problem() is None  # this machine: 3.34 or newer, with FTS5
