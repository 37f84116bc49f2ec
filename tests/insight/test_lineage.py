"""Lineage: the tree by parent (forks of forks, subagents, orphans, loops), built from the statistics cache of
a real root and from the upstream fork fixture; and compare-with-parent on real forks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import insightkit as ik
import pytest
import sessionkit as sk

from app.actions import fork
from app.insight import (
    FORK,
    ROOT,
    SUBAGENT,
    InsightCache,
    SessionInfo,
    build_lineage,
    compare_with_parent,
    lineage_from_cache,
    lineage_from_entries,
)
from app.insight.lineage import common_prefix
from persistence import EventTable, PackedRun, open_store

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "upstream"


def _shape(node: Any) -> Any:
    return (node.session_id, node.kind, node.depth, [_shape(c) for c in node.children])


def test_forks_of_forks_subagents_and_orphans() -> None:
    infos = [
        SessionInfo("root", start_ms=1),
        SessionInfo("f1", parent="root", seed_length=10, fork_turn=2, start_ms=3),
        SessionInfo("f0", parent="root", seed_length=4, fork_turn=1, start_ms=2),
        SessionInfo("f1a", parent="f1", seed_length=20, fork_turn=4, start_ms=4),
        SessionInfo("sub", parent="f1a", origin="subagent", delegation_depth=1, start_ms=5),
        SessionInfo("subsub", parent="sub", origin="subagent", delegation_depth=2, start_ms=6),
        SessionInfo("lost", parent="gone", seed_length=3, start_ms=7),
        SessionInfo("lost-child", parent="lost", start_ms=8),
        SessionInfo("solo", start_ms=9),
        SessionInfo("root", parent="dup-is-ignored"),
    ]
    tree = build_lineage(infos)
    assert [_shape(r) for r in tree.roots] == [
        (
            "root",
            ROOT,
            0,
            [
                ("f0", FORK, 1, []),
                ("f1", FORK, 1, [("f1a", FORK, 2, [("sub", SUBAGENT, 3, [("subsub", SUBAGENT, 4, [])])])]),
            ],
        ),
        ("solo", ROOT, 0, []),
    ]
    assert [(o.session_id, o.missing_parent, o.cycle) for o in tree.orphans] == [("lost", "gone", False)]
    assert [c.session_id for c in tree.orphans[0].children] == ["lost-child"]
    assert len(tree) == 9
    f1a = tree.find("f1a")
    assert f1a is not None and f1a.fork_point == (20, 4)
    sub = tree.find("subsub")
    assert sub is not None and sub.info.delegation_depth == 2


def test_a_loop_of_parents_is_cut_and_flagged() -> None:
    tree = build_lineage(
        [
            SessionInfo("a", parent="b"),
            SessionInfo("b", parent="a"),
            SessionInfo("c", parent="a"),
            SessionInfo("self", parent="self"),
        ]
    )
    assert tree.roots == ()
    assert [(o.session_id, o.cycle) for o in tree.orphans] == [("a", True), ("self", True)]
    assert _shape(tree.orphans[0]) == ("a", FORK, 0, [("b", FORK, 1, []), ("c", FORK, 1, [])])
    assert len(tree) == 4


def test_a_deep_chain_needs_no_recursion() -> None:
    n = 5000
    tree = build_lineage([SessionInfo("s0")] + [SessionInfo(f"s{i}", parent=f"s{i - 1}") for i in range(1, n)])
    assert len(tree) == n and tree.find(f"s{n - 1}").depth == n - 1  # type: ignore[union-attr]


def _real_root(tmp: Path, backend: str) -> tuple[str, dict[str, Any]]:
    path = ik.store_path(tmp, backend)
    parent = ik.rich_session(21, turns=5, title="Parent work")
    ik.run(ik.write_sessions(path, backend, {"p": (parent, {"createdAt": ik.T0})}))

    async def forks() -> dict[str, Any]:
        store = open_store(path, backend)
        try:
            plan = await fork.plan_fork(store, "p", 2)
            first = await fork.execute_fork(store, plan, "f", title=plan.default_title)
            plan2 = await fork.plan_fork(store, "f", 1)
            second = await fork.execute_fork(store, plan2, "ff")
            await store.create(
                sk.meta("sub", "/w/proj", parentSession="f", origin="subagent", delegationDepth=1, createdAt=ik.T0 + 5)
            )
            await store.append("sub", [sk.turn_start(0, 1), sk.turn_end(1, 1)])
            await store.create(sk.meta("orphan", "/w/proj", parentSession="nobody", createdAt=ik.T0 + 6))
            await store.append("orphan", [sk.turn_start(0, 1), sk.turn_end(1, 1)])
            return {"plan": plan, "first": first, "second": second}
        finally:
            await store.close()

    return path, ik.run(forks())


@pytest.mark.parametrize("backend", ik.BACKENDS)
def test_lineage_of_a_real_root(tmp_path: Path, backend: str) -> None:
    path, made = _real_root(tmp_path, backend)
    cache = InsightCache(ik.reader(path, backend))
    try:
        ik.run(cache.update())
        tree = lineage_from_cache(cache)
    finally:
        ik.run(cache.aclose())
    assert [r.session_id for r in tree.roots] == ["p"]
    assert [(o.session_id, o.missing_parent) for o in tree.orphans] == [("orphan", "nobody")]
    f = tree.find("f")
    assert f is not None and f.kind == FORK and f.depth == 1 and f.status == "ok"
    assert f.title == "Parent work (fork after turn 2)"
    assert f.fork_point == (made["plan"].boundary + 1, 2)
    assert sorted(c.session_id for c in f.children) == ["ff", "sub"]
    ff, sub = tree.find("ff"), tree.find("sub")
    assert ff is not None and ff.depth == 2 and ff.fork_point[1] == 1 and ff.title == "Parent work"
    assert sub is not None and sub.kind == SUBAGENT and sub.info.delegation_depth == 1

    # The listing alone gives the same tree (without titles and fork turns).
    async def listed() -> Any:
        store = ik.reader(path, backend)
        try:
            return lineage_from_entries(await store.list_entries())
        finally:
            await store.close()

    plain = ik.run(listed())
    assert [_shape(r) for r in plain.roots] == [_shape(r) for r in tree.roots]


@pytest.mark.skipif(not (UPSTREAM / "jsonl-none" / "fork").is_dir(), reason=f"upstream fixtures not found at {UPSTREAM}")
def test_upstream_subagent_fixture(tmp_path: Path) -> None:
    root = ik.copy_private(UPSTREAM / "jsonl-none" / "fork" / "root", tmp_path / "root")
    cache = InsightCache(ik.reader(str(root), None))  # type: ignore[arg-type]
    try:
        ik.run(cache.update())
        tree = lineage_from_cache(cache)
    finally:
        ik.run(cache.aclose())
    (top,) = tree.roots
    (child,) = top.children
    assert child.kind == SUBAGENT and child.info.delegation_depth == 1 and child.info.seed_length == 232
    assert child.session_id == top.session_id + ".sub-1" and tree.orphans == ()


def _logs(path: str, backend: str, *ids: str) -> list[Any]:
    async def go() -> list[Any]:
        store = ik.reader(path, backend)
        try:
            return [(await store.view(i)).stored for i in ids]
        finally:
            await store.close()

    return ik.run(go())


@pytest.mark.parametrize("backend", ["jsonl-zstd", "sqlite"])
def test_compare_with_parent(tmp_path: Path, backend: str) -> None:
    path, made = _real_root(tmp_path, backend)
    seed = made["first"].header["seedLength"]
    # The fork goes on with a turn of its own.
    n = made["first"].events
    extra = [
        sk.turn_start(n, 3),
        sk.user_message(n + 1, "a different question"),
        sk.step_start(n + 2, 3, 1),
        sk.assistant_message(n + 3, 3, 1, "a different answer", calls=["x"]),
        sk.tool_call(n + 4, 3, 1, "x", "bash"),
        sk.tool_result(n + 5, 3, 1, "x", is_error=True),
        sk.step_end(n + 6, 3, 1),
        sk.turn_end(n + 7, 3),
    ]
    ik.run(_append_to(path, backend, "f", extra))
    parent, child = _logs(path, backend, "p", "f")
    cmp = compare_with_parent(parent, child, seed)
    assert cmp.identical_prefix and cmp.shared_count == seed and cmp.shared_turns == 2 and cmp.fork_turn == 2
    assert [d.turn for d in cmp.parent_after] == [3, 4, 5]
    assert cmp.parent_after[0].prompt == "do task 3" and cmp.parent_after[0].replies
    (mine,) = cmp.fork_after
    assert (mine.turn, mine.prompt, mine.replies, mine.reason) == (
        3,
        "a different question",
        ("a different answer",),
        "completed",
    )
    assert [(t.name, t.error) for t in mine.tools] == [("bash", True)] and mine.steps == 1
    assert cmp.parent_events_after == len(parent) - seed and cmp.fork_events_after == len(child) - seed
    # A parent rewritten inside the prefix (e.g. repaired since) shares less.
    rewritten = parent.records()[:]
    rewritten[7] = {**rewritten[7], "time": -1}
    assert compare_with_parent(rewritten, child, seed).shared_count == 7


async def _append_to(path: str, backend: str, sid: str, events: list[dict[str, Any]]) -> None:
    store = open_store(path, backend)
    try:
        await store.append(sid, events)
    finally:
        await store.close()


def test_common_prefix_across_different_run_cuts(tmp_path: Path) -> None:
    path = ik.store_path(tmp_path, "jsonl-none")
    ik.run(ik.write_sessions(path, "jsonl-none", {"s": (ik.rich_session(9, 3), {})}))
    (log,) = _logs(path, "jsonl-none", "s")
    items = list(log.segments())
    k, run = next((k, it) for k, it in enumerate(items) if type(it) is PackedRun and len(it) >= 4)
    recut = EventTable([*items[:k], run.sub(0, 1), run.sub(1, 3), run.sub(3, len(run)), *items[k + 1 :]])
    expanded = log.records()
    total = len(expanded)
    assert common_prefix(log.record_table(), recut, total) == total
    assert common_prefix(recut, expanded, total) == total
    assert common_prefix(log.record_table(), recut, 5) == 5
    # A changed member inside a run is found at its exact index.
    start = sum(len(it) if type(it) is PackedRun else 1 for it in items[:k])
    changed = (*run.payload[:2], "CHANGED", *run.payload[3:])
    altered = EventTable(
        [
            *items[:k],
            PackedRun(run.kind, run.seq0, run.time0, run.dt, run.turn, run.step, run.index, changed, run.call_id, run.name),
            *items[k + 1 :],
        ]
    )
    assert common_prefix(log.record_table(), altered, total) == start + 2
    assert common_prefix(expanded, altered, total) == start + 2
