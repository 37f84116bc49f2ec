"""Index and query a small generated root on every backend (issue 13: the index, the query language)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import searchkit as k
import sessionkit as sk

from app.search import Indexer, SearchFilters, SearchQueryError, index_path
from app.search.extract import KINDS

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]


@pytest.fixture(params=k.BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path, backend: str) -> str:
    path = k.store_path(tmp_path, backend)
    k.run(k.write_session(path, backend, "s1", k.rich_log()))
    other = [sk.turn_start(0, 1), sk.user_message(1, "deploy the staging bucket with terraform apply"), sk.turn_end(2, 1)]
    k.run(k.write_session(path, backend, "s2", other, cwd="/w/infra"))
    return path


def search(
    root: str, backend: str, query: str, filters: SearchFilters | None = None, **kw: object
) -> list[tuple[str, int | None, str]]:
    async def go() -> list[tuple[str, int | None, str]]:
        indexer = await k.indexed(root, backend)
        try:
            result = indexer.searcher().search(query, filters, **kw)  # type: ignore[arg-type]
            return [(h.session_id, h.seq, h.kind) for h in result.hits]
        finally:
            await indexer.aclose()

    return k.run(go())


def test_every_searchable_field_is_found_with_its_seq_kind_and_tool(root: str, backend: str) -> None:
    async def go() -> None:
        indexer = await k.indexed(root, backend)
        s = indexer.searcher()
        by_query = {
            "order.ts": {("s1", 1, "user"), ("s1", 13, "tool-call"), ("s1", 14, "error")},
            "npm run build": {("s1", 11, "tool-call")},  # the tool/call, not again the assistant's tool-call block
            "S3 bucket": {("s1", 10, "reasoning")},  # the message, not again its cited chunks
            "the build now": {("s1", 10, "assistant")},
            "dist/order.js": {("s1", 12, "tool-result")},
            "order service": {("s1", 2, "title")},
            "/w/infra": {("s2", None, "meta")},  # the header row: cwd and id
            "read_file": {("s1", 13, "tool-call")},  # a tool name is text of its call (and a filter on results)
        }
        for query, want in by_query.items():
            got = {(h.session_id, h.seq, h.kind) for h in s.search(query).hits}
            assert got == want, query
        tools = {h.seq: h.tool for h in s.search("order.ts").hits}
        assert tools == {1: None, 13: "read_file", 14: "read_file"}  # a result is named by the call it answers
        hit = s.search("ENOENT").hits[0]
        assert (hit.event_type, hit.turn, hit.time, hit.status) == ("tool/result", 1, 15, "ok")
        await indexer.aclose()

    k.run(go())


@pytest.mark.parametrize(
    ("query", "seqs"),
    [
        ("ORDER.TS", {1, 13, 14}),  # case-insensitive
        ("Order.Ts", {1, 13, 14}),
        ("订单服务", {1}),  # CJK substring (no word boundaries)
        ("单服", {1}),  # two characters: the LIKE fallback
        ('"npm run build"', {11}),  # a phrase: one substring, spaces included
        ("npm build", {11}),  # terms: all must occur
        ("bui*", {10, 11, 12}),  # a word start: "build", "Build"
        ("uild*", set()),  # ...which "build" is not
        ("run OR ENOENT", {10, 11, 14}),
        ("order.ts NOT ENOENT", {1, 13}),
        ("(bash OR read_file) AND src", {13}),
        ("s3", {10}),  # short terms are searched too
        ("zzzz-not-there", set()),
    ],
)
def test_query_language(root: str, backend: str, query: str, seqs: set[int]) -> None:
    assert {seq for sid, seq, _kind in search(root, backend, query) if sid == "s1"} == seqs


@pytest.mark.parametrize("query", ['"unclosed', "a OR", "NOT a", "(a b", "a )", "*", "", "   ", "x**y", '""'])
def test_bad_query_is_a_typed_error_with_a_message(root: str, backend: str, query: str) -> None:
    async def go() -> None:
        indexer = await k.indexed(root, backend)
        try:
            with pytest.raises(SearchQueryError) as err:
                indexer.searcher().search(query)
            assert str(err.value)
        finally:
            await indexer.aclose()

    k.run(go())


def test_filters_narrow_by_kind_tool_project_status_date_and_session(root: str, backend: str) -> None:
    seqs = lambda f, q="order.ts": {seq for _s, seq, _k in search(root, backend, q, f)}  # noqa: E731
    assert seqs(SearchFilters(kinds=frozenset({"tool-call"}))) == {13}
    assert seqs(SearchFilters(kinds=frozenset({"error", "user"}))) == {1, 14}
    assert seqs(SearchFilters(tool="read_file")) == {13, 14}
    assert seqs(SearchFilters(project="/w/proj")) == {1, 13, 14}
    assert seqs(SearchFilters(project="infra")) == set()
    assert seqs(SearchFilters(statuses=frozenset({"corrupt"}))) == set()
    assert seqs(SearchFilters(statuses=frozenset({"ok"}))) == {1, 13, 14}
    assert seqs(SearchFilters(since=14, until=15)) == {13}  # event time, ms: [since, until)
    assert seqs(SearchFilters(session_id="s2"), "bucket") == {1}
    assert seqs(SearchFilters(session_id="s1"), "bucket") == {10}
    with pytest.raises(SearchQueryError, match="unknown kind"):
        search(root, backend, "x", SearchFilters(kinds=frozenset({"toolcall"})))
    assert set(KINDS) == {"user", "assistant", "reasoning", "tool-call", "tool-result", "error", "title", "meta"}


def test_results_are_grouped_by_session_with_counts_and_highlight_offsets(root: str, backend: str) -> None:
    async def go() -> None:
        indexer = await k.indexed(root, backend)
        result = indexer.searcher().search("bucket")
        assert result.summary() == "2 hits in 2 sessions"
        assert [g.session_id for g in result.sessions] == ["s1", "s2"] or [g.session_id for g in result.sessions] == ["s2", "s1"]
        for group in result.sessions:
            assert group.hit_count == len(group.hits) == 1
            hit = group.hits[0]
            assert [hit.snippet[a:b].lower() for a, b in hit.spans] == ["bucket"]
        one = indexer.searcher().search("order.ts")
        assert one.summary() == "3 hits in 1 session" and one.exact
        assert [h.seq for h in one.sessions[0].hits] == [1, 13, 14]  # seq order inside a session
        assert one.sessions[0].title == "Fix the Order Service" and one.sessions[0].cwd == "/w/proj"
        limited = indexer.searcher().search("order.ts", limit=2)
        assert limited.hit_count == 3 and len(limited.hits) == 2 and limited.sessions[0].hit_count == 3
        await indexer.aclose()

    k.run(go())


def test_indexing_never_writes_into_the_session_root(root: str, backend: str, private_cache: Path) -> None:
    before = k.files_of(root, backend)

    async def go() -> str | None:
        indexer = await k.indexed(root, backend)
        indexer.searcher().search("order.ts")
        path = indexer.index_file
        await indexer.aclose()
        return path

    path = k.run(go())
    assert k.files_of(root, backend) == before
    assert path is not None and path == index_path(root, "sqlite" if backend == "sqlite" else "jsonl")
    assert Path(path).is_relative_to(private_cache)
    assert os.path.exists(path)


def test_a_cache_folder_inside_the_root_keeps_the_index_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = k.store_path(tmp_path, "jsonl-zstd")
    k.run(k.write_session(root, "jsonl-zstd", "s1", k.rich_log()))
    monkeypatch.setenv("SESSIONSCOPE_CACHE_DIR", os.path.join(root, "cache"))
    before = k.files_of(root, "jsonl-zstd")

    async def go() -> None:
        indexer = Indexer(k.reader(root, "jsonl-zstd"))
        assert indexer.index_file is None
        assert any("inside the session root" in m for m in indexer.messages)
        await indexer.update()
        assert indexer.searcher().search("order.ts").hit_count == 3
        await indexer.aclose()

    k.run(go())
    assert k.files_of(root, "jsonl-zstd") == before


def test_one_index_per_root_identity(tmp_path: Path) -> None:
    a = str(tmp_path / "a")
    os.makedirs(a)
    os.symlink(a, tmp_path / "link")
    assert index_path(a, "jsonl") == index_path(str(tmp_path / "link"), "jsonl") == index_path(a + "/", "jsonl")
    assert index_path(a, "jsonl") != index_path(a, "sqlite")
    assert index_path(a, "jsonl") != index_path(str(tmp_path / "b"), "jsonl")
