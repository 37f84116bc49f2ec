"""The window's two-step query: the hits shown first (``count=False``), their whole counts after.

Both steps together must say exactly what one counted query says; the first step alone reads no more
rows than it shows and says so (``counted=False``) whenever there may be more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import searchkit as k
import sessionkit as sk

from app.search import HitCounts, SearchFilters

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(120)]


@pytest.fixture(params=k.BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path, backend: str) -> str:
    """Five sessions mentioning ``bucket`` (1 to 5 times each) and one that does not."""
    path = k.store_path(tmp_path, backend)
    for n in range(1, 6):
        events = [sk.turn_start(0, 1)]
        events += [sk.user_message(i + 1, f"bucket number {i} of session {n}") for i in range(n)]
        events.append(sk.turn_end(n + 1, 1))
        k.run(k.write_session(path, backend, f"s{n}", events, cwd=f"/w/p{n}"))
    k.run(k.write_session(path, backend, "quiet", [sk.turn_start(0, 1), sk.user_message(1, "nothing here"), sk.turn_end(2, 1)]))
    return path


@pytest.mark.parametrize("query", ["bucket", "buc", '"bucket number"', "bucket*", "session AND bucket"])
@pytest.mark.parametrize("limit", [1, 4, 7, 15, 100])
def test_the_two_steps_say_what_one_counted_query_says(root: str, backend: str, query: str, limit: int) -> None:
    async def go() -> None:
        indexer = await k.indexed(root, backend)
        try:
            s = indexer.searcher()
            whole = s.search(query, limit=limit, per_session=3)
            first = s.search(query, limit=limit, per_session=3, count=False)
            assert whole.counted
            assert whole.summary() == "15 hits in 5 sessions"
            if limit > whole.hit_count:
                # Fewer matches than the limit: the first step read them all and its counts are whole.
                assert first.counted and first.summary() == whole.summary()
                assert first.sessions == whole.sessions
                return
            assert not first.counted and first.hit_count == limit  # no row past the limit was read
            assert len(first.hits) <= limit
            counts = s.count(query)
            full = s.search(query, limit=1000)
            assert counts == HitCounts(15, 5, True, tuple(sorted((g.key, g.hit_count) for g in full.sessions)))
            done = first.with_counts(counts)
            assert done.counted and done.summary() == whole.summary() and done.exact == whole.exact
            # The hits shown stay those of the first step; each group's count is its session's whole count.
            assert [h.seq for h in done.hits] == [h.seq for h in first.hits]
            for g in done.sessions:
                assert g.hit_count == int(g.session_id[1:])
        finally:
            await indexer.aclose()

    k.run(go())


def test_count_honours_the_filters_and_a_bad_query_is_a_typed_error(root: str, backend: str) -> None:
    from app.search import SearchQueryError

    async def go() -> None:
        indexer = await k.indexed(root, backend)
        try:
            s = indexer.searcher()
            counts = s.count("bucket", SearchFilters(project="/w/p4"))
            assert (counts.hit_count, counts.session_count, counts.exact) == (4, 1, True)
            assert s.count("zebra") == HitCounts(0, 0, True, ())
            with pytest.raises(SearchQueryError):
                s.count('"unclosed')
        finally:
            await indexer.aclose()

    k.run(go())


def test_counts_past_the_scan_cap_say_at_least(root: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.search import query as query_module

    monkeypatch.setattr(query_module, "SCAN_CAP", 6)

    async def go() -> None:
        indexer = await k.indexed(root, backend)
        try:
            s = indexer.searcher()
            counts = s.count("bucket")
            assert counts.hit_count == 6 and not counts.exact
            done = s.search("bucket", limit=2, count=False).with_counts(counts)
            assert done.summary().endswith("+ sessions") and done.hit_count == 6
        finally:
            await indexer.aclose()

    k.run(go())
