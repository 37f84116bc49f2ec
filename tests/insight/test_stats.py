"""The stats fold: totals equal a direct count over eager records, on generated sessions (every backend,
so packed runs are walked) and on the upstream fixtures; per-turn series add up; the usage rule
(latest sample per step) and the tool, retry and compaction rules each have a case of their own."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import insightkit as ik
import pytest
import sessionkit as sk

from app.insight.stats import NO_TOKENS, UNKNOWN_TOOL, SessionStats, Tokens, fold_stats
from persistence import EventLog, EventTable, PackedRun, open_store

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "upstream"
needs_upstream = pytest.mark.skipif(
    not UPSTREAM.is_dir(), reason=f"upstream fixtures not found at {UPSTREAM} (../shared is absent)"
)


def _view(path: str, backend: str | None, sid: str) -> Any:
    async def go() -> Any:
        store = open_store(path, backend, read_only=True, create=False)
        try:
            return await store.view(sid)
        finally:
            await store.close()

    return ik.run(go())


@pytest.mark.parametrize("backend", ik.BACKENDS)
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_totals_equal_a_direct_count(tmp_path: Path, backend: str, seed: int) -> None:
    events = ik.rich_session(seed, turns=10)
    path = ik.store_path(tmp_path, backend)
    ik.run(ik.write_sessions(path, backend, {"s": (events, {})}))
    view = _view(path, backend, "s")
    table = view.stored.record_table()
    assert any(type(it) is PackedRun for it in table.segments())  # the fold walks packed runs
    stats = fold_stats(view.stored)
    assert ik.stats_numbers(stats) == ik.direct_count(view.stored.records())
    assert ik.stats_numbers(stats) == ik.direct_count(events)  # and what was written
    # The same log as a plain list, a table and an EventLog folds to the same value.
    assert fold_stats(events) == stats == fold_stats(table)


@pytest.mark.parametrize("seed", [11, 12])
def test_per_turn_series_add_up_to_the_totals(seed: int) -> None:
    stats = fold_stats(ik.rich_session(seed, turns=12))
    assert sum((t.tokens for t in stats.per_turn), NO_TOKENS) == stats.tokens
    assert sum(t.steps for t in stats.per_turn) == stats.steps
    assert sum(t.model_calls for t in stats.per_turn) == stats.model_calls
    assert sum(t.retries for t in stats.per_turn) == stats.retries
    assert sum(t.tool_calls for t in stats.per_turn) == stats.tool_calls
    assert sum(t.tool_errors for t in stats.per_turn) == stats.tool_errors
    assert stats.active_ms == sum(d for _s, d in stats.duration_per_turn())
    assert [s for s, _t in stats.tokens_per_turn()] == [t.start_seq for t in stats.per_turn]
    assert sum(c for _n, c, _e in stats.calls_per_tool()) == stats.tool_calls
    assert sum(m.tokens.total for m in stats.models) == stats.tokens.total
    assert sum(m.calls for m in stats.models) == stats.model_calls
    assert stats.title == "A rich session"


def test_the_fold_never_mutates_a_record() -> None:
    events = ik.rich_session(5, turns=5)
    before = copy.deepcopy(events)
    fold_stats(events)
    fold_stats(EventLog(copy.deepcopy(events)))
    assert events == before


def _usage_chunk(seq: int, step: int, i: int, o: int, **extra: int) -> dict[str, Any]:
    return sk.ev(
        "assistant/chunk",
        seq,
        {"turn": 1, "step": step, "chunk": {"type": "usage", "usage": {"inputTokens": i, "outputTokens": o, **extra}}},
    )


def test_the_latest_usage_sample_of_a_step_wins_and_steps_add_up() -> None:
    msg = sk.assistant_message(4, 1, 1, "hi")
    msg["data"]["usage"] = {"inputTokens": 50, "outputTokens": 5, "cacheReadTokens": 7}
    events = [
        sk.turn_start(0, 1),
        sk.step_start(1, 1, 1),
        _usage_chunk(2, 1, 1000, 100),  # a failed attempt's sample ...
        sk.ev("llm/retry", 3, {"turn": 1, "step": 1, "retry": 1}),
        msg,  # ... is replaced by the message's usage (not summed)
        sk.step_end(5, 1, 1),
        sk.step_start(6, 1, 2),
        _usage_chunk(7, 2, 10, 1, cacheWriteTokens=3),
        sk.step_end(8, 1, 2),
        sk.turn_end(9, 1),
    ]
    stats = fold_stats(events)
    assert stats.tokens == Tokens(60, 6, 7, 3)
    assert stats.retries == 1 and stats.model_calls == 1 and stats.steps == 2
    assert stats.per_turn[0].tokens == stats.tokens


def test_tool_calls_errors_crash_results_and_prunes() -> None:
    events = [
        sk.turn_start(0, 1),
        sk.step_start(1, 1, 1),
        sk.assistant_message(2, 1, 1, None, calls=["a", "b", "c"]),
        sk.tool_call(3, 1, 1, "a", "bash"),
        sk.tool_result(4, 1, 1, "a", is_error=True),
        sk.tool_call(5, 1, 1, "b", "read"),
        sk.tool_result(6, 1, 1, "b"),
        # "c" never started: crash repair wrote a result with no call (named by the assistant block).
        sk.ev(
            "tool/result",
            7,
            {**sk.tool_result(7, 1, 1, "c")["data"], "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}},
            surfaceOp="append",
        ),
        # A pruning replacement of "b"'s result is no result.
        sk.ev("tool/result", 8, sk.tool_result(8, 1, 1, "b", is_error=True)["data"], surfaceOp={"op": "replace"}),
        # A result whose call nobody names.
        sk.tool_result(9, 1, 1, "zzz"),
        sk.step_end(10, 1, 1),
        sk.turn_end(11, 1),
    ]
    stats = fold_stats(events)
    by_name = {t.name: (t.calls, t.errors) for t in stats.tools}
    # sk.assistant_message names every call "bash"; the tool/call events name a and b.
    assert by_name == {"bash": (2, 2), "read": (1, 0), UNKNOWN_TOOL: (1, 0)}
    assert stats.tool_calls == 4 and stats.tool_errors == 2
    assert stats.tools[0].error_rate == 1.0


def test_compactions_models_and_an_open_turn() -> None:
    events = [
        sk.turn_start(0, 1, time=1000),
        sk.step_start(1, 1, 1, time=1100),
        sk.ev("request/context", 2, {"provider": "p", "model": "routed"}),
        _usage_chunk(3, 1, 10, 1),  # no message follows: attributed to the route in force
        sk.step_end(4, 1, 1, time=1200),
        sk.ev("compaction/start", 5, {"compactionId": "k", "turn": 1}),
        sk.ev("compaction/summary", 6, {"compactionId": "k", "usage": {"inputTokens": 5, "outputTokens": 2}}),
        sk.ev("compaction/end", 7, {"compactionId": "k", "turn": 1}),
        sk.ev("compaction/end", 8, {"compactionId": "k2", "turn": 1, "error": "failed"}),
        sk.ev("compaction/prune", 9, {"shadowedTokenCount": 1}),
        sk.turn_end(10, 1, time=2000),
        sk.turn_start(11, 2, time=3000),
        sk.step_start(12, 2, 1, time=3500),  # the crash left turn 2 open
    ]
    stats = fold_stats(events)
    assert (stats.compactions, stats.compactions_failed, stats.prunes) == (1, 1, 1)
    assert stats.compaction_tokens == Tokens(5, 2)
    assert stats.tokens == Tokens(10, 1)  # the summarize call is kept apart
    assert [(m.key, m.calls, m.tokens.total) for m in stats.models] == [("p/routed", 0, 11)]
    assert stats.turns == 2 and stats.open_turns == 1
    assert [t.duration_ms for t in stats.per_turn] == [1000, 500]
    assert stats.per_turn[1].open and stats.per_turn[0].reason == "completed"
    assert stats.active_ms == 1500 and stats.span_ms == 3500 - 1000
    assert stats.end_reasons == (("completed", 1),)


def test_fork_turn_is_the_last_turn_completed_inside_the_seed() -> None:
    events = [
        *sk.one_turn_log(),
        *sk.completed_turn2(),
        sk.ev("session/end-seed", 8, {}),
        sk.turn_start(9, 3),
        sk.turn_end(10, 3),
    ]
    assert fold_stats(events, seed_length=8).fork_turn == 2
    assert fold_stats(events, seed_length=6).fork_turn == 1
    assert fold_stats(events, seed_length=3).fork_turn is None
    assert fold_stats(events).fork_turn is None


def test_damaged_payloads_are_counted_not_raised() -> None:
    events: list[Any] = [
        {"type": "turn/start", "seq": 0, "time": "x", "data": None},
        {"type": ["not", "hashable"], "seq": 1, "data": {}},
        {"type": "step/start", "seq": 2, "data": {"step": [1]}},
        {"type": "assistant/chunk", "seq": 3, "data": {"chunk": {"type": "usage", "usage": {"inputTokens": True}}}},
        {"type": "tool/call", "seq": 4, "data": {"callId": ["x"], "name": 3}},
        {"type": "tool/result", "seq": 5, "data": {"message": {"source": {"callId": {"a": 1}}, "content": "no"}}},
        "not a record",
    ]
    stats = fold_stats(events)
    assert stats.events == 7 and stats.turns == 1 and stats.steps == 1 and stats.tool_calls == 2
    assert stats.tokens == NO_TOKENS


def test_summary_is_json() -> None:
    stats = fold_stats(ik.rich_session(8))
    text = json.dumps(stats.to_summary())
    back = json.loads(text)
    assert back["tokens"] == stats.tokens.to_json() and Tokens.from_json(back["tokens"]) == stats.tokens
    assert back["turns"] == stats.turns and set(back["tools"]) == {t.name for t in stats.tools}


def _upstream_sessions() -> list[Any]:
    if not UPSTREAM.is_dir():
        return []
    out = []
    for expected in sorted(UPSTREAM.glob("*/**/expected.json")):
        d = expected.parent
        for root in (d / "root", d / "before" / "root"):
            if root.is_dir():
                target = next(root.glob("*.sqlite"), None) if d.parts[len(UPSTREAM.parts)] == "sqlite" else root
                if target is not None:
                    out.append(pytest.param(str(target), id=str(root.relative_to(UPSTREAM))))
    return out


@needs_upstream
@pytest.mark.parametrize("target", _upstream_sessions())
def test_upstream_fixtures_fold_to_a_direct_count(target: str, tmp_path: Path) -> None:
    """Every readable session of every upstream scenario: the fold equals the direct count (a private copy
    is read, read-only; the fixtures are never touched)."""
    src = Path(target)
    if src.is_file():
        path = str(ik.copy_private(src.parent, tmp_path / "store") / src.name)
    else:
        path = str(ik.copy_private(src, tmp_path / "root"))

    async def go() -> list[tuple[Any, SessionStats]]:
        store = open_store(path, None, read_only=True, create=False)
        try:
            out = []
            for entry in await store.list_entries():
                if entry.kind != "session":
                    continue
                view = await store.view(entry.session_id)
                if view.readable:
                    seed = view.header.seed_length if view.header is not None else None
                    out.append((view, fold_stats(view.stored, seed_length=seed)))
            return out
        except Exception as err:  # a scenario whose root the engine refuses as a whole
            pytest.skip(f"root not listable: {err}")
        finally:
            await store.close()

    folded = ik.run(go())
    if not folded:
        pytest.skip("no readable session in this scenario")
    for view, stats in folded:
        seed = view.header.seed_length if view.header is not None else None
        assert ik.stats_numbers(stats) == ik.direct_count(view.stored.records(), seed), view.session_id
        assert isinstance(view.stored.record_table(), EventTable)
