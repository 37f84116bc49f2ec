"""The statistics cache (per-session summaries by revision, in the user's cache folder) and the root
dashboard's aggregations over it, with and without a price table."""

from __future__ import annotations

import os
import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

import insightkit as ik
import orjson
import pytest
import sessionkit as sk

from app.insight import (
    InsightCache,
    ModelPrice,
    PriceTable,
    PriceTableError,
    RootFilter,
    Tokens,
    aggregate,
    cache_path,
    fold_stats,
    load_prices,
    prices_path,
    save_prices,
)
from app.insight import cache as cache_mod
from app.insight.prices import cost_of
from app.search.location import index_key


def _root(tmp: Path, backend: str) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """Four sessions on three days in two projects (and one without cwd)."""
    sessions: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
        "a": (ik.rich_session(1, 4, start_time=ik.T0), {"cwd": "/w/alpha", "createdAt": ik.T0}),
        "b": (ik.rich_session(2, 3, start_time=ik.T0 + ik.DAY_MS), {"cwd": "/w/alpha", "createdAt": ik.T0 + ik.DAY_MS}),
        "c": (ik.rich_session(3, 5, start_time=ik.T0 + 2 * ik.DAY_MS), {"cwd": "/w/beta", "createdAt": ik.T0 + 2 * ik.DAY_MS}),
        "d": (
            ik.rich_session(4, 2, start_time=ik.T0 + 2 * ik.DAY_MS + 3600_000),
            {"cwd": None, "createdAt": ik.T0 + 2 * ik.DAY_MS},
        ),
    }
    path = ik.store_path(tmp, backend)
    ik.run(ik.write_sessions(path, backend, sessions))
    return path, {k: v[0] for k, v in sessions.items()}


def _update(cache: InsightCache) -> Any:
    return ik.run(cache.update())


@pytest.mark.parametrize("backend", ik.BACKENDS)
def test_cache_is_keyed_by_revision_and_incremental(tmp_path: Path, backend: str, private_folders: Path) -> None:
    path, logs = _root(tmp_path, backend)
    store = ik.reader(path, backend)
    cache = InsightCache(store)
    try:
        assert (
            cache.path
            == cache_path(path, store.kind)
            == os.path.join(str(private_folders), "insight", f"{index_key(path, store.kind)}.sqlite")
        )
        report = _update(cache)
        assert (report.computed, report.unchanged, report.removed) == (4, 0, 0)
        for sid, events in logs.items():
            s = cache.summary(sid)
            assert s is not None and s.status == "ok" and s.revision is not None
            stats = fold_stats(events)
            assert (s.turns, s.steps, s.tool_calls, s.tokens) == (stats.turns, stats.steps, stats.tool_calls, stats.tokens)
            record = cache.summary_json(sid)
            assert record is not None and record["revision"] == s.revision and record["stats"]["turns"] == stats.turns
        # Nothing changed: nothing is read again.
        report = _update(cache)
        assert (report.computed, report.unchanged) == (0, 4)
        # One session grows: only it is recomputed.
        n = len(logs["a"])
        grown = [sk.turn_start(n, 99), sk.turn_end(n + 1, 99)]
        ik.run(_append(path, backend, "a", grown))
        report = _update(cache)
        assert (report.computed, report.unchanged) == (1, 3)
        assert cache.summary("a").turns == fold_stats(logs["a"] + grown).turns  # type: ignore[union-attr]
    finally:
        ik.run(cache.aclose())


async def _append(path: str, backend: str, sid: str, events: list[dict[str, Any]]) -> None:
    from persistence import open_store

    store = open_store(path, backend)
    try:
        await store.append(sid, events)
    finally:
        await store.close()


def test_sessions_gone_from_the_root_are_removed(tmp_path: Path) -> None:
    path, _logs = _root(tmp_path, "jsonl-none")
    cache = InsightCache(ik.reader(path, "jsonl-none"))
    try:
        _update(cache)
        victim = next(Path(path).glob("--w-beta--/c"))
        for f in victim.iterdir():
            f.unlink()
        victim.rmdir()
        report = _update(cache)
        assert report.removed == 1 and cache.summary("c") is None and len(cache.summaries()) == 3
    finally:
        ik.run(cache.aclose())


def test_an_unreadable_session_keeps_its_verdict(tmp_path: Path) -> None:
    path, _logs = _root(tmp_path, "jsonl-none")
    log = next(Path(path).glob("--w-alpha--/a/session.jsonl"))
    lines = log.read_bytes().split(b"\n")
    lines[5] = b'{"type":"turn/start","seq":99999,"time":1,"data":{"turn":1}}'  # out of sequence, records follow
    log.write_bytes(b"\n".join(lines))
    cache = InsightCache(ik.reader(path, "jsonl-none"))
    try:
        _update(cache)
        s = cache.summary("a")
        assert s is not None and s.status == "corrupt" and s.project == "/w/alpha" and s.reason
        # Issue 24 item 5: the numbers are those of the readable part before the damage (they were all zeros).
        readable = [orjson.loads(line) for line in lines[1:5]]
        assert (s.events, s.turns) == (len(readable), fold_stats(readable).turns)
    finally:
        ik.run(cache.aclose())


def test_a_damaged_or_foreign_cache_file_is_rebuilt(tmp_path: Path) -> None:
    path, _logs = _root(tmp_path, "jsonl-none")
    store = ik.reader(path, "jsonl-none")
    file = cache_path(path, store.kind)
    os.makedirs(os.path.dirname(file))
    Path(file).write_bytes(b"not a database at all")
    cache = InsightCache(store)
    try:
        assert any("rebuilding" in m for m in cache.messages)
        assert _update(cache).computed == 4
    finally:
        cache.close()
    # A newer fold version recomputes every summary.
    conn = sqlite3.connect(file)
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'fold'")
    conn.commit()
    conn.close()
    cache = InsightCache(store)
    try:
        assert any("fold version" in m for m in cache.messages)
        assert _update(cache).computed == 4
    finally:
        ik.run(cache.aclose())


def test_a_cache_folder_inside_the_root_keeps_the_cache_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _logs = _root(tmp_path, "jsonl-none")
    before = ik.tree_digest(path)
    monkeypatch.setenv("SESSIONSCOPE_CACHE_DIR", os.path.join(path, "cache"))
    cache = InsightCache(ik.reader(path, "jsonl-none"))
    try:
        assert cache.path is None and "inside the session root" in cache.messages[0]
        assert _update(cache).computed == 4
    finally:
        ik.run(cache.aclose())
    assert ik.tree_digest(path) == before  # nothing written beside the logs, and no log touched


def test_dashboard_per_day_project_tools_and_rankings(tmp_path: Path) -> None:
    path, logs = _root(tmp_path, "jsonl-zstd")
    cache = InsightCache(ik.reader(path, "jsonl-zstd"))
    try:
        _update(cache)
        stats = {k: fold_stats(v) for k, v in logs.items()}
        totals = aggregate(cache.conn, RootFilter(utc_offset_s=0))
        assert totals.sessions == 4
        assert totals.tokens == sum((s.tokens for s in stats.values()), Tokens())
        assert totals.cost is None and totals.ranked_by == "tokens"
        assert [(d.day, d.sessions) for d in totals.per_day] == [("2026-01-01", 1), ("2026-01-02", 1), ("2026-01-03", 2)]
        by_day_tokens = sum((d.tokens.total for d in totals.per_day), 0)
        assert by_day_tokens == totals.tokens.total
        assert {p.project: p.sessions for p in totals.per_project} == {"/w/alpha": 2, "/w/beta": 1, None: 1}
        assert set(totals.projects) == {"/w/alpha", "/w/beta", None}
        # Top tools: calls and errors summed over sessions.
        calls: dict[str, list[int]] = {}
        for s in stats.values():
            for t in s.tools:
                c = calls.setdefault(t.name, [0, 0])
                c[0] += t.calls
                c[1] += t.errors
        assert {t.name: [t.calls, t.errors] for t in totals.top_tools} == calls
        assert all(abs(t.error_rate - t.errors / t.calls) < 1e-9 for t in totals.top_tools)
        assert [r.session_id for r in totals.longest] == sorted(stats, key=lambda k: (-stats[k].active_ms, k))
        assert [r.session_id for r in totals.most_expensive] == sorted(stats, key=lambda k: (-stats[k].tokens.total, k))

        # Filters: a date range (inclusive local days) and projects.
        two_days = aggregate(cache.conn, RootFilter(date(2026, 1, 2), date(2026, 1, 3), utc_offset_s=0))
        assert two_days.sessions == 3 and {d.day for d in two_days.per_day} == {"2026-01-02", "2026-01-03"}
        alpha = aggregate(cache.conn, RootFilter(projects=frozenset({"/w/alpha"}), utc_offset_s=0))
        assert alpha.sessions == 2 and alpha.tokens == stats["a"].tokens + stats["b"].tokens
        none = aggregate(cache.conn, RootFilter(projects=frozenset({""}), utc_offset_s=0))
        assert [r.session_id for r in none.longest] == ["d"]
        # Another offset moves a late-evening session to the next day.
        shifted = aggregate(cache.conn, RootFilter(utc_offset_s=-3600))
        assert shifted.per_day[0].day == "2025-12-31"
    finally:
        ik.run(cache.aclose())


def test_costs_only_where_a_price_exists(tmp_path: Path) -> None:
    path, logs = _root(tmp_path, "jsonl-none")
    cache = InsightCache(ik.reader(path, "jsonl-none"))
    try:
        _update(cache)
        stats = {k: fold_stats(v) for k, v in logs.items()}
        full = ModelPrice(1.0, 2.0, 0.5, 1.5)
        prices = PriceTable("EUR", {"deepseek/deepseek-chat": full, "deepseek-reasoner": full, "openai/gpt-4o": full})
        totals = aggregate(cache.conn, RootFilter(utc_offset_s=0), prices)
        expected = {
            k: sum(
                m.tokens.input * 1 + m.tokens.output * 2 + m.tokens.cache_read * 0.5 + m.tokens.cache_write * 1.5
                for m in s.models
            )
            / 1e6
            for k, s in stats.items()
        }
        assert totals.ranked_by == "cost" and totals.cost is not None and totals.cost.complete
        assert totals.cost.currency == "EUR" and abs(totals.cost.amount - sum(expected.values())) < 1e-9
        assert [r.session_id for r in totals.most_expensive] == sorted(expected, key=lambda k: (-expected[k], k))
        assert all(abs(r.cost.amount - expected[r.session_id]) < 1e-9 for r in totals.most_expensive if r.cost)
        # One model unpriced: the amount covers the rest and names what has no price; never a made-up number.
        partial = PriceTable("EUR", {"deepseek/deepseek-chat": full})
        t2 = aggregate(cache.conn, RootFilter(utc_offset_s=0), partial)
        used = {m.key for s in stats.values() for m in s.models if m.tokens.total}
        assert t2.cost is not None and set(t2.cost.unpriced) == used - {"deepseek/deepseek-chat"}
        # A price without a bucket a model used: that model is unpriced, not priced at zero.
        no_cache = PriceTable("EUR", {k: ModelPrice(1.0, 2.0) for k in prices.models})
        t3 = aggregate(cache.conn, RootFilter(utc_offset_s=0), no_cache)
        cached_models = {m.key for s in stats.values() for m in s.models if m.tokens.cache_read or m.tokens.cache_write}
        assert t3.cost is None or set(t3.cost.unpriced) >= cached_models
    finally:
        ik.run(cache.aclose())


def test_price_table_file(tmp_path: Path) -> None:
    assert load_prices().empty  # no file: no prices
    assert prices_path().startswith(os.environ["SESSIONSCOPE_DATA_DIR"])
    table = PriceTable("USD", {"deepseek/deepseek-chat": ModelPrice(0.27, 1.1, 0.07, None), "gpt-4o": ModelPrice(2.5, 10)})
    save_prices(table)
    assert load_prices() == table
    assert load_prices().price_of("openai", "gpt-4o") == ModelPrice(2.5, 10)  # a bare model name matches any provider
    assert load_prices().price_of("other", "deepseek-chat") is None
    assert ModelPrice(1.0, 1.0).cost(1_000_000, 0, 5, 0) is None  # cache reads have no price here
    assert ModelPrice(1.0, 1.0).cost(1_000_000, 500_000, 0, 0) == 1.5
    assert cost_of(None, [("p", "m", 1, 1, 0, 0)]) is None
    assert cost_of(table, [("x", "unknown", 1, 1, 0, 0)]) is None
    for bad in ('{"models": {"m": {"input": -1}}}', '{"models": {"m": {"input": "1"}}}', "[]", "{not json"):
        Path(prices_path()).write_text(bad)
        with pytest.raises(PriceTableError):
            load_prices()
    assert not [n for n in os.listdir(os.path.dirname(prices_path())) if n.endswith(".tmp")]


def test_busy_sessions_are_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _logs = _root(tmp_path, "jsonl-none")
    store = ik.reader(path, "jsonl-none")
    cache = InsightCache(store)
    real_view = store.view

    async def busy_view(sid: str, *a: Any, **k: Any) -> Any:
        view = await real_view(sid, *a, **k)
        if sid == "b":
            from dataclasses import replace

            return replace(view, diagnosis=replace(view.diagnosis, status="busy"))
        return view

    monkeypatch.setattr(store, "view", busy_view)
    try:
        report = _update(cache)
        assert report.skipped == 1 and cache.summary("b") is None
        monkeypatch.setattr(store, "view", real_view)
        assert _update(cache).computed == 1
    finally:
        ik.run(cache.aclose())


def test_cancel_stops_before_the_next_session(tmp_path: Path) -> None:
    path, _logs = _root(tmp_path, "jsonl-none")
    cache = InsightCache(ik.reader(path, "jsonl-none"))
    try:
        seen = []

        def progress(p: cache_mod.CacheProgress) -> None:
            seen.append(p)
            cache.cancel()

        report = ik.run(cache.update(progress=progress))
        assert report.cancelled and report.computed == 1 and len(cache.summaries()) == 1
        assert seen[0].label == "Computing statistics 1 / 4 sessions"
        assert _update(cache).computed == 3  # the rest next time
    finally:
        ik.run(cache.aclose())
