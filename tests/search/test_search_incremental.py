"""Incremental indexing: an append is indexed from ``read_from`` alone; anything else is read whole."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import searchkit as k
import sessionkit as sk

from app.search import Indexer, IndexProgress
from app.search import run as indexer_mod

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]


@pytest.fixture(params=k.BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Spy:
    """Counts the engine reads an indexer makes (wraps the store's bound methods)."""

    def __init__(self, store: Any) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        for name in ("view", "read_from", "read_raw_bytes", "read_artifact_bytes", "inspect"):
            original = getattr(store, name)

            async def wrapped(*args: Any, _name: str = name, _original: Any = original, **kw: Any) -> Any:
                self.calls.append((_name, args))
                return await _original(*args, **kw)

            setattr(store, name, wrapped)

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]


def second_turn(n: int, text: str) -> list[dict[str, Any]]:
    return [sk.turn_start(n, 2), sk.user_message(n + 1, text), sk.turn_end(n + 2, 2)]


def test_an_append_is_indexed_from_read_from_only(tmp_path: Path, backend: str) -> None:
    path = k.store_path(tmp_path, backend)
    k.run(k.write_session(path, backend, "s1", k.rich_log()))

    async def go() -> None:
        indexer = await k.indexed(path, backend)
        spy = Spy(indexer.store)
        await k.append(path, backend, "s1", second_turn(17, "now look at the zebra crossing"))
        report = await indexer.update()
        assert report.actions == {"tail": 1}
        assert report.events == 3  # only the appended events were walked
        # No whole read: one read_from, of the first new seq (JSONL: a tail mark serves only that)
        # or of the last indexed one (SQLite: checked to be the same event still).
        assert spy.names() == ["read_from"]
        assert spy.calls[0][1] == ("s1", 17 if backend != "sqlite" else 16)
        s = indexer.searcher()
        hits = s.search("zebra").hits
        assert [(h.seq, h.kind, h.turn) for h in hits] == [(18, "user", 2)]
        assert [h.seq for h in s.search("order.ts").hits] == [1, 13, 14]  # nothing indexed twice
        # And nothing to do when nothing changed: no engine read at all.
        spy.calls.clear()
        again = await indexer.update()
        assert (again.planned, spy.names()) == (0, [])
        await indexer.aclose()

    k.run(go())


def test_a_tail_read_keeps_status_and_tool_names_across_batches(tmp_path: Path, backend: str) -> None:
    path = k.store_path(tmp_path, backend)
    log = k.rich_log()[:14]  # ends after the read_file call: its result comes in a later batch

    async def go() -> None:
        writer = await k.live_writer(path, backend, "s1", log)
        indexer = await k.indexed(path, backend)
        first = indexer.searcher().search("order.ts").sessions[0]
        assert first.status == "open-turn"
        await writer.append("s1", k.rich_log()[14:])
        await writer.close()
        report = await indexer.update()
        assert report.actions == {"tail": 1}
        result = indexer.searcher().search("ENOENT")
        hit = result.hits[0]
        assert (hit.seq, hit.kind, hit.tool) == (14, "error", "read_file")  # named by its call, indexed earlier
        assert result.sessions[0].status == "ok"  # the turn is closed now
        await indexer.aclose()

    k.run(go())


def test_an_uncited_stream_is_searchable_until_a_message_cites_it(tmp_path: Path, backend: str) -> None:
    path = k.store_path(tmp_path, backend)
    stream = [
        sk.turn_start(0, 1),
        sk.user_message(1, "go"),
        sk.step_start(2, 1, 1),
        sk.text_delta(3, 1, 1, "The quick "),
        sk.text_delta(4, 1, 1, "brown fox "),
        sk.text_delta(5, 1, 1, "jumps."),
        sk.tool_delta(6, 1, 1, "c9", '{"command":', name="bash"),
        sk.tool_delta(7, 1, 1, "c9", '"make deploy"}', name="bash"),
    ]

    async def go() -> None:
        writer = await k.live_writer(path, backend, "s1", stream)
        indexer = await k.indexed(path, backend)
        s = indexer.searcher()
        fox = s.search("brown fox jumps").hits  # joined across deltas (and across packed runs)
        assert [(h.seq, h.kind, h.event_type) for h in fox] == [(3, "assistant", "assistant/chunk")]
        deploy = s.search("make deploy").hits
        assert [(h.seq, h.kind, h.tool) for h in deploy] == [(6, "tool-call", "bash")]
        message = k.assistant(
            8,
            1,
            1,
            [{"type": "text", "text": "The quick brown fox jumps."}],
            [3, 4, 5],
        )
        await writer.append("s1", [message])
        await writer.close()
        assert (await indexer.update()).actions == {"tail": 1}
        fox = s.search("brown fox jumps").hits
        assert [(h.seq, h.event_type) for h in fox] == [(8, "assistant/message")]  # the stream row is gone
        assert [h.seq for h in s.search("make deploy").hits] == [6]  # still uncited: still a hit
        await indexer.aclose()

    k.run(go())


def test_a_changed_last_event_means_a_whole_read(tmp_path: Path, backend: str) -> None:
    path = k.store_path(tmp_path, backend)
    k.run(k.write_session(path, backend, "s1", k.rich_log()))

    async def go() -> None:
        indexer = await k.indexed(path, backend)
        # What the index remembers of the last event no longer matches the log (as after a rewrite).
        indexer.db.conn.execute("UPDATE sessions SET last_time = -5, ident = 'elsewhere'")
        spy = Spy(indexer.store)
        await k.append(path, backend, "s1", second_turn(17, "zebra"))
        report = await indexer.update()
        assert report.actions == {"full": 1}
        assert "view" in spy.names()
        assert [h.seq for h in indexer.searcher().search("order.ts").hits] == [1, 13, 14]
        assert [h.seq for h in indexer.searcher().search("zebra").hits] == [18]
        await indexer.aclose()

    k.run(go())


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_rewritten_or_shrunk_transcript_is_read_whole(tmp_path: Path, compression: str) -> None:
    backend = f"jsonl-{compression}"
    path = k.store_path(tmp_path, backend)
    k.run(k.write_session(path, backend, "s1", k.rich_log()))
    transcript = sk.artifact(path, "/w/proj", "s1", compression)

    async def go() -> None:
        indexer = await k.indexed(path, backend)
        # Another file in its place (a restored backup, an editor): fewer events, other text.
        content = sk.encode_log(
            sk.header_line("s1", "/w/proj"), [[sk.turn_start(0, 1), sk.user_message(1, "giraffe")]], compression
        )
        tmp = transcript.with_name("replacement")
        tmp.write_bytes(content)
        os.replace(tmp, transcript)
        report = await indexer.update()
        assert report.actions == {"full": 1}
        s = indexer.searcher()
        assert s.search("order.ts").hit_count == 0
        assert [h.seq for h in s.search("giraffe").hits] == [1]
        await indexer.aclose()

    k.run(go())


def test_a_removed_session_leaves_the_index(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "jsonl-zstd")
    k.run(k.write_session(path, "jsonl-zstd", "s1", k.rich_log()))
    k.run(k.write_session(path, "jsonl-zstd", "s2", second_turn(0, "order.ts elsewhere")))

    async def go() -> None:
        indexer = await k.indexed(path, "jsonl-zstd")
        assert indexer.searcher().search("order.ts").session_count == 2
        os.remove(sk.artifact(path, "/w/proj", "s2", "zstd"))
        os.rmdir(os.path.dirname(sk.artifact(path, "/w/proj", "s2", "zstd")))
        report = await indexer.update()
        assert report.actions == {"removed": 1}
        assert [g.session_id for g in indexer.searcher().search("order.ts").sessions] == ["s1"]
        await indexer.aclose()

    k.run(go())


def test_a_watcher_run_indexes_only_its_entries_and_removes_nothing(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "jsonl-zstd")
    k.run(k.write_session(path, "jsonl-zstd", "s1", k.rich_log()))

    async def go() -> None:
        indexer = await k.indexed(path, "jsonl-zstd")
        await k.write_session(path, "jsonl-zstd", "s2", second_turn(0, "a new okapi"))
        entries = [e for e in await indexer.store.list_entries() if e.session_id == "s2"]
        report = await indexer.update(entries)
        assert (report.listed, report.actions) == (1, {"full": 1})
        assert indexer.searcher().search("okapi").hits[0].session_id == "s2"
        assert indexer.searcher().search("order.ts").hit_count == 3
        await indexer.aclose()

    k.run(go())


def make_sessions(path: str, backend: str, n: int) -> None:
    for i in range(n):
        k.run(k.write_session(path, backend, f"s{i}", second_turn(0, f"needle number {i}")))


def test_cancel_between_sessions_leaves_a_consistent_index(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "jsonl-none")
    make_sessions(path, "jsonl-none", 6)

    async def go() -> None:
        indexer = Indexer(k.reader(path, "jsonl-none"))
        seen: list[IndexProgress] = []

        def progress(p: IndexProgress) -> None:
            seen.append(p)
            if p.done == 2:
                indexer.cancel()  # as the window's Cancel button does, from any thread

        report = await indexer.update(progress=progress)
        assert report.cancelled and report.done == 2
        assert seen[-1].action == "cancelled"
        assert indexer.searcher().search("needle").session_count == 2  # what was done is committed
        rest = await indexer.update()
        assert (rest.planned, rest.done, rest.cancelled) == (4, 4, False)
        assert indexer.searcher().search("needle").session_count == 6
        await indexer.aclose()

    k.run(go())


def test_cancel_inside_a_session_rolls_that_session_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = k.store_path(tmp_path, "jsonl-none")
    make_sessions(path, "jsonl-none", 3)
    monkeypatch.setattr(indexer_mod, "INSERT_BATCH_ROWS", 1)  # a cancel check between every row

    async def go() -> None:
        indexer = Indexer(k.reader(path, "jsonl-none"))
        run = await indexer.start()
        await run.step()
        real = indexer.db.insert_rows

        def insert_then_cancel(sid: int, rows: Any) -> None:
            real(sid, rows)
            indexer.cancel()

        indexer.db.insert_rows = insert_then_cancel  # type: ignore[method-assign]
        p = await run.step()
        assert p.action == "cancelled" and run.finished
        indexer.db.insert_rows = real  # type: ignore[method-assign]
        assert indexer.searcher().search("needle").session_count == 1  # the half-written session is not there
        rows = indexer.db.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        assert rows == 1
        rest = await indexer.update()
        assert rest.done == 2 and indexer.searcher().search("needle").session_count == 3
        await indexer.aclose()

    k.run(go())


def test_searchable_while_a_run_is_in_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = k.store_path(tmp_path, "jsonl-none")
    make_sessions(path, "jsonl-none", 3)
    monkeypatch.setattr(indexer_mod, "COMMIT_SECONDS", 0.0)  # commit after every session

    async def go() -> None:
        indexer = Indexer(k.reader(path, "jsonl-none"))
        run = await indexer.start()
        await run.step()
        await run.step()
        # Another connection (the window's searcher) sees the committed sessions during the run.
        assert indexer.searcher().search("needle").session_count == 2
        while not run.finished:
            await run.step()
        assert indexer.searcher().search("needle").session_count == 3
        await indexer.aclose()

    k.run(go())


def test_progress_label() -> None:
    assert IndexProgress(3412, 10000).label == "Indexing 3,412 / 10,000 sessions"


def test_an_unreadable_session_is_listed_by_id_and_retried_only_when_it_changes(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "jsonl-none")
    k.run(k.write_session(path, "jsonl-none", "s1", k.rich_log()))

    async def go() -> None:
        indexer = Indexer(k.reader(path, "jsonl-none"))
        spy = Spy(indexer.store)

        async def refuse(*_a: Any, **_k: Any) -> Any:
            raise OSError("disk on fire")

        indexer.store.view = refuse  # type: ignore[method-assign]
        report = await indexer.update()
        assert report.actions == {"header-only": 1}
        assert any("disk on fire" in m for m in report.messages)
        hit = indexer.searcher().search("s1").hits[0]
        assert (hit.seq, hit.status) == (None, "unreadable")
        assert (await indexer.update()).planned == 0
        del spy
        await indexer.aclose()

    k.run(go())


def test_the_index_survives_a_second_indexer_process_on_the_same_file(tmp_path: Path) -> None:
    path = k.store_path(tmp_path, "sqlite")
    k.run(k.write_session(path, "sqlite", "s1", k.rich_log()))

    async def go() -> None:
        a = await k.indexed(path, "sqlite")
        b = await k.indexed(path, "sqlite")  # the window and the command line on one root
        assert a.index_file == b.index_file
        await k.append(path, "sqlite", "s1", second_turn(17, "zebra"))
        assert (await b.update()).actions == {"tail": 1}
        assert (await a.update()).planned == 0  # b's work is a's too: one index file
        assert a.searcher().search("zebra").hit_count == 1
        con = sqlite3.connect(str(a.index_file))
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        con.close()
        await a.aclose()
        await b.aclose()

    k.run(go())
