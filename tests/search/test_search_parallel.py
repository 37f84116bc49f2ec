"""A cold build in worker processes (``app.search.parallel``) indexes exactly what the serial run does.

The build is forced on small roots (``BULK_MIN_SESSIONS`` 1, chunks of 2-3 sessions) so several
chunks, several workers and the adoption of each shard's FTS5 segments are exercised; every hit
(snippets, spans, statuses), every count and every session row must equal a serial build's.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import searchkit as k
import sessionkit as sk

import app.search.parallel as parallel
import app.search.run as run_module
from app.search import Indexer, SearchFilters
from app.search.db import SESSION_COLUMNS
from app.search.progress import entry_key, entry_revision
from app.search.segments import encode_structure, get_varint, parse_structure, put_varint
from app.search.shards import ShardJob, build_shard

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(240)]

CWD = "/w/proj"
PROMPTS = (
    "Where does the agent mention order.ts? 请检查订单服务的日志",
    "deploy to staging failed: terraform apply -auto-approve",
    "テストが失敗しました in src/billing/invoice.py",
    "버킷 권한을 확인하세요 for the s3 bucket policy",
    "这个函数需要重构 before the release",
)
QUERIES: tuple[tuple[str, SearchFilters], ...] = (
    ("order.ts", SearchFilters()),
    ("npm run build", SearchFilters()),
    ("terraform", SearchFilters(kinds=frozenset({"user"}))),
    ("订单服务", SearchFilters()),
    ("日志", SearchFilters()),  # two CJK letters: the pair index
    ("重构", SearchFilters()),
    ("테스", SearchFilters()),
    ("S3", SearchFilters()),  # short: a scan
    ("build", SearchFilters(tool="bash")),
    ("ord*", SearchFilters()),
    ("session-07", SearchFilters()),
    ("dist/order.js OR ENOENT", SearchFilters()),
    ("nothing-like-this", SearchFilters()),
)


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cold build of a few sessions goes parallel, in chunks of 2-3 sessions."""
    monkeypatch.setattr(run_module, "BULK_MIN_SESSIONS", 1)
    monkeypatch.setattr(parallel, "CHUNK_MIN", 2)
    monkeypatch.setattr(parallel, "CHUNK_MAX", 3)


def make_root(tmp_path: Path, backend: str, n: int = 11) -> str:
    path = k.store_path(tmp_path, backend)
    for i in range(n):
        log = k.rich_log(f"{PROMPTS[i % len(PROMPTS)]} (session-{i:02d})")
        k.run(k.write_session(path, backend, f"session-{i:02d}", log, cwd=f"/w/proj-{i % 3}"))
    if backend == "jsonl-none":  # damaged logs take the same way in a worker: corrupt, unsupported, a bad row
        content = sk.encode_log(sk.header_line("broken", CWD), [k.rich_log()[:8], b"{not json\n", k.rich_log()[8:]], "none")
        sk.plant(path, os.path.relpath(sk.artifact(path, CWD, "broken", "none").parent, path), content, "none")
        old = sk.encode_log(sk.header_line("future", CWD, version=1), [k.rich_log("a log from the future 未来")], "none")
        sk.plant(path, os.path.relpath(sk.artifact(path, CWD, "future", "none").parent, path), old, "none")
        project = sk.artifact(path, CWD, "session-00", "none").parent.parent
        (project / "flat.jsonl").write_bytes(sk.encode_log(sk.header_line("flat", CWD), [k.rich_log("flat 日志 file")], "none"))
    return path


def build(path: str, backend: str, cache: Path, workers: int) -> tuple[dict[str, Any], list[tuple[Any, ...]], Any]:
    """Hits and counts of every query, the sessions table (without sid and time) and the report."""

    async def go() -> tuple[dict[str, Any], list[tuple[Any, ...]], Any]:
        indexer = Indexer(k.reader(path, backend), cache_dir=str(cache), workers=workers)
        try:
            report = await indexer.update()
            searcher = indexer.searcher()
            found = {}
            for query, filters in QUERIES:
                result = searcher.search(query, filters, limit=500)
                found[query] = (
                    [(h.session_id, h.seq, h.kind, h.tool, h.status, h.snippet, h.spans) for h in result.hits],
                    result.hit_count,
                    result.session_count,
                )
            searcher.close()
            columns = [c for c in SESSION_COLUMNS if c != "sid"]
            sessions = sorted(indexer.db.conn.execute(f"SELECT {', '.join(columns)} FROM sessions").fetchall(), key=str)
            return found, sessions, report
        finally:
            await indexer.aclose()

    return k.run(go())


@pytest.mark.parametrize("backend", k.BACKENDS)
def test_a_parallel_build_finds_what_a_serial_build_finds(tmp_path: Path, backend: str, forced: None) -> None:
    path = make_root(tmp_path, backend)
    serial = build(path, backend, tmp_path / "serial", 0)
    par = build(path, backend, tmp_path / "parallel", 2)
    assert par[0] == serial[0]
    assert par[1] == serial[1]
    assert (par[2].done, par[2].rows, par[2].events, par[2].text_chars, par[2].actions) == (
        serial[2].done,
        serial[2].rows,
        serial[2].events,
        serial[2].text_chars,
        serial[2].actions,
    )
    assert serial[0]["日志"][1] > 0 and serial[0]["order.ts"][1] > 0  # the queries do find something


def test_the_adopted_index_passes_fts5_integrity_checks(tmp_path: Path, forced: None) -> None:
    path = make_root(tmp_path, "jsonl-none")

    async def go() -> None:
        indexer = Indexer(k.reader(path, "jsonl-none"), cache_dir=str(tmp_path / "c"), workers=2)
        await indexer.update()
        conn = indexer.db.conn
        conn.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")
        conn.execute("INSERT INTO cjk(cjk, rank) VALUES ('integrity-check', 1)")
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert {"docs_ai", "docs_ai_cjk", "docs_ad", "docs_ad_cjk"} <= names  # dropped and created again
        # The scratch shards are gone; only the index (and its WAL companions) is in the cache folder.
        folder = os.path.dirname(indexer.index_file or "")
        assert all(name.startswith("index-") for name in os.listdir(folder))
        await indexer.aclose()

    k.run(go())


def test_a_searcher_opened_before_the_build_sees_the_adopted_rows(tmp_path: Path, forced: None) -> None:
    path = make_root(tmp_path, "jsonl-zstd")

    async def go() -> None:
        indexer = Indexer(k.reader(path, "jsonl-zstd"), cache_dir=str(tmp_path / "c"), workers=2)
        searcher = indexer.searcher()
        assert searcher.search("order.ts").hit_count == 0
        await indexer.update()
        assert {h.session_id for h in searcher.search("order.ts", limit=500).hits} == {f"session-{i:02d}" for i in range(11)}
        searcher.close()
        await indexer.aclose()

    k.run(go())


@pytest.mark.parametrize("backend", ["jsonl-zstd", "sqlite"])
def test_sessions_built_in_parallel_then_grow_by_their_tail(tmp_path: Path, backend: str, forced: None) -> None:
    path = make_root(tmp_path, backend)

    async def go() -> None:
        indexer = Indexer(k.reader(path, backend), cache_dir=str(tmp_path / "c"), workers=2)
        await indexer.update()
        await k.append(
            path, backend, "session-03", [sk.turn_start(17, 2), sk.user_message(18, "zebra crossing"), sk.turn_end(19, 2)]
        )
        report = await indexer.update()
        assert report.actions == {"tail": 1}
        assert [(h.session_id, h.seq) for h in indexer.searcher().search("zebra").hits] == [("session-03", 18)]
        await indexer.aclose()

    k.run(go())


def test_a_cancelled_parallel_build_keeps_whole_chunks_and_the_next_run_finishes(tmp_path: Path, forced: None) -> None:
    path = make_root(tmp_path, "jsonl-zstd")
    serial = build(path, "jsonl-zstd", tmp_path / "serial", 0)

    async def go() -> None:
        indexer = Indexer(k.reader(path, "jsonl-zstd"), cache_dir=str(tmp_path / "c"), workers=2)
        run = await indexer.start()
        first = await run.step()
        assert 0 < first.done < run.total
        indexer.cancel()
        stopped = await run.step()
        assert stopped.action == "cancelled" and run.finished
        run.close()
        # Whole sessions only: every indexed session has all of its rows (every session here has as many).
        counts = [
            n
            for (n,) in indexer.db.conn.execute("SELECT count(d.id) FROM sessions s JOIN docs d ON d.sid = s.sid GROUP BY s.sid")
        ]
        assert len(set(counts)) == 1 and counts[0] > 10
        assert indexer.db.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == first.done
        report = await indexer.update()
        assert report.done == run.total - first.done and not report.cancelled
        await indexer.aclose()

    k.run(go())
    assert build(path, "jsonl-zstd", tmp_path / "c", 2)[0] == serial[0]


def test_a_chunk_that_cannot_be_adopted_is_indexed_serially(
    tmp_path: Path, forced: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_root(tmp_path, "jsonl-zstd")
    serial = build(path, "jsonl-zstd", tmp_path / "serial", 0)
    real = run_module.adopt
    calls = []

    def sometimes(conn: sqlite3.Connection, shard: Any) -> Any:
        calls.append(shard)
        if len(calls) % 2:
            raise parallel.AdoptionRefused("a session of the chunk is in the index already")
        return real(conn, shard)

    monkeypatch.setattr(run_module, "adopt", sometimes)
    par = build(path, "jsonl-zstd", tmp_path / "parallel", 2)
    assert len(calls) >= 2
    assert par[0] == serial[0] and par[1] == serial[1]


def test_an_adoption_refuses_a_chunk_whose_sessions_are_indexed_already(tmp_path: Path) -> None:
    """Another process indexed the same sessions meanwhile: the chunk is refused and nothing is written."""
    path = make_root(tmp_path, "jsonl-zstd", n=3)

    async def serial() -> tuple[str, list[ShardJob], int]:
        indexer = Indexer(k.reader(path, "jsonl-zstd"), cache_dir=str(tmp_path / "c"), workers=0)
        await indexer.update()  # a serial index holding every session
        entries = await indexer.store.list_entries()
        first = indexer.db.next_doc_id()
        await indexer.aclose()
        return indexer.index_file or "", [ShardJob(e, entry_key(e), entry_revision(e)) for e in entries], first

    index_file, jobs, first = k.run(serial())
    shard = build_shard(path, "jsonl-zstd", jobs, first, first + 1000, str(tmp_path / "shard.sqlite"))
    assert [s.action for s in shard.sessions] == ["full"] * 3
    conn = parallel.adopting_connection(index_file)
    docs = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
    with pytest.raises(parallel.AdoptionRefused):
        parallel.adopt(conn, shard)
    assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == docs
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"docs_ai", "docs_ai_cjk"} <= names
    conn.close()


@pytest.mark.parametrize("value", [0, 1, 127, 128, 240, 2287, 67823, 2**32, 2**56 - 1, 2**56, 2**63, 2**64 - 1])
def test_varints_round_trip_as_sqlite_writes_them(value: int) -> None:
    data = put_varint(value)
    assert get_varint(data + b"\x00", 0) == (value, len(data))
    assert len(data) <= 9


def test_a_structure_record_round_trips(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "f.sqlite"))
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(b, tokenize='trigram', detail=none)")
    for i in range(40):
        conn.execute("INSERT INTO t(b) VALUES (?)", (f"row {i} " * 50,))
        conn.commit()  # a segment per commit: several levels after the automerges
    block = bytes(conn.execute("SELECT block FROM t_data WHERE id = 10").fetchone()[0])
    structure = parse_structure(block)
    assert sum(len(level) for level in structure.levels) >= 1
    assert encode_structure(structure) == block


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc to see which processes run")
def test_the_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A killed ``search`` (SIGKILL: no cleanup runs) leaves no worker processes behind."""
    script = (
        "import os, sys, time\n"
        "from app.search.parallel import ShardPool\n"
        "pool = ShardPool(2)\n"
        "futures = [pool.executor().submit(os.getpid) for _ in range(8)]\n"
        "print(' '.join(str(p) for p in sorted({f.result() for f in futures})), flush=True)\n"
        "time.sleep(60)\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env, cwd=str(tmp_path))
    try:
        assert parent.stdout is not None
        workers = [int(p) for p in parent.stdout.readline().split()]
        assert workers and parent.pid not in workers
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 20
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in workers if _running(p)]
    assert alive == []


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended (its parent, init, reaps it)
    except FileNotFoundError:
        return False


def test_a_killed_run_s_scratch_shards_are_removed_by_the_next_build(tmp_path: Path, forced: None) -> None:
    path = make_root(tmp_path, "jsonl-zstd", n=4)
    index_file = k.run(_index_file(path, tmp_path / "c"))
    folder = os.path.dirname(index_file)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    stale = Path(folder) / f"shards-{dead.stdout.strip()}-x1"
    stale.mkdir()
    (stale / "chunk-000000.sqlite").write_bytes(b"left by a killed run")
    mine = Path(folder) / f"shards-{os.getpid()}-x2"  # a live process's (this one's): kept
    mine.mkdir()
    build(path, "jsonl-zstd", tmp_path / "c", 2)
    assert not stale.exists() and mine.exists()


async def _index_file(path: str, cache: Path) -> str:
    indexer = Indexer(k.reader(path, "jsonl-zstd"), cache_dir=str(cache), workers=0)
    try:
        return indexer.index_file or ""
    finally:
        await indexer.aclose()


@pytest.mark.parametrize("backend", ["jsonl-zstd", "jsonl-none"])
def test_a_shard_read_ahead_writes_what_one_read_at_a_time_writes(
    tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small sessions are read and extracted several at a time (``shards._read_ahead``); the shard's rows
    and session fields are those of one read per session, damaged logs and bad rows included."""
    from app.search import shards
    from persistence import CoordinatedPersistence

    path = make_root(tmp_path, backend, n=7)

    async def listed() -> list[ShardJob]:
        store = k.reader(path, backend)
        try:
            return [ShardJob(e, entry_key(e), entry_revision(e)) for e in await store.list_entries()]
        finally:
            await store.close()

    jobs = k.run(listed())
    batched: list[int] = []
    real = CoordinatedPersistence.map_views

    async def spy(self: CoordinatedPersistence, ids: Any, digest: Any, signal: Any = None) -> Any:
        batched.append(len(ids))
        return await real(self, ids, digest, signal)

    monkeypatch.setattr(CoordinatedPersistence, "map_views", spy)

    def shard_contents(name: str) -> tuple[Any, ...]:
        shards._stores.clear()
        shard = build_shard(path, backend, jobs, 1, 10_000, str(tmp_path / f"{name}.sqlite"))
        conn = sqlite3.connect(tmp_path / f"{name}.sqlite")
        try:
            docs = conn.execute("SELECT * FROM docs ORDER BY id").fetchall()
        finally:
            conn.close()
        return shard.sessions, docs

    ahead = shard_contents("ahead")
    assert batched and max(batched) >= 2
    monkeypatch.setattr(shards, "READ_AHEAD", 1)  # a batch of one is never read ahead
    batched.clear()
    one_by_one = shard_contents("one-by-one")
    assert batched == []
    assert ahead == one_by_one
    # jsonl-none's root holds a flat file, which refuses every read of it: all damaged, all the careful way
    assert {s.action for s in ahead[0]} == ({"full"} if backend == "jsonl-zstd" else {"damaged"})
