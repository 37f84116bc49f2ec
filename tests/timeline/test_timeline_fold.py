"""The pure timeline fold (app/timeline): blocks, tail-first equivalence, closers, chunk runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guikit import UPSTREAM, make_turn, need_upstream
from hypothesis import given
from hypothesis import strategies as st

from app.records import latest_title
from app.timeline import SYNTHETIC, block_spans, derive, node_detail, tail_first_span
from persistence import open_store
from persistence.model.repair import interrupted_turn_closers

pytestmark = pytest.mark.timeout(60)


def _shape(nodes: list[Any]) -> list[Any]:
    return [(n.key, n.label, n.summary, n.info, sorted(n.flags), _shape(n.children)) for n in nodes]


def _check_blocks(records: list[dict[str, Any]], stored: int | None = None) -> None:
    spans = block_spans(records)
    whole = derive(records, stored_count=stored)
    assert len(whole) == len(spans)  # one top-level node per block
    # Deriving any block range alone gives the same nodes as the whole fold.
    first = tail_first_span(spans, min_events=10)
    tail = derive(records, spans[first][0], stored_count=stored) if spans else []
    assert _shape(tail) == _shape(whole[first:])
    if spans:
        mid = len(spans) // 2
        assert _shape(derive(records, spans[mid][0], spans[-1][1], stored_count=stored)) == _shape(whole[mid:])
    # Re-segmenting from a block start agrees with the whole segmentation.
    if len(spans) > 1:
        assert block_spans(records, spans[1][0]) == spans[1:]


@pytest.mark.parametrize("scenario", ["balanced/root", "fork/root", "interrupted/before/root", "unknown-event/root"])
def test_fold_on_upstream_logs(run: Any, scenario: str) -> None:
    need_upstream()
    root = Path(UPSTREAM / "jsonl-none" / scenario)

    async def read() -> list[tuple[list[dict[str, Any]], int]]:
        store = open_store(root)
        out = []
        try:
            for h in await store.list():
                d = await store.diagnose(h.id)
                if d.status in ("ok", "open-turn"):
                    ins = await store.inspect(h.id)
                    out.append((list(ins.events.records()), d.event_count - len(d.closers)))
        finally:
            await store.close()
        return out

    for records, stored in run(read()):
        _check_blocks(records, stored)
        nodes = derive(records, stored_count=stored)
        covered = {s for top in nodes for n in top.walk() for s in [n.seq, *n.seqs]}
        # Every message and every cited chunk is reachable from some row (chunk runs collapse into messages).
        for rec in records:
            if rec["type"] in ("assistant/message", "tool/call", "tool/result", "user/message"):
                assert rec["seq"] in covered
            for s in rec.get("sourceEventSeqs") or []:
                if rec["type"] == "assistant/message":
                    assert s in covered
        synthetic = [n for top in nodes for n in top.walk() if SYNTHETIC in n.flags]
        assert bool(synthetic) == (stored < len(records))
        for top in nodes:
            for n in top.walk():
                assert isinstance(node_detail(n, records), str)
    if scenario == "balanced/root":
        assert latest_title(records) == "Fix failing test_parse_empty"


def test_closers_chunks_errors_and_cancellation() -> None:
    records = make_turn(0, 1, "one") + make_turn(len(make_turn(0, 1, "one")), 2, "two", close=False)
    stored = len(records)
    records = records + interrupted_turn_closers(records)
    nodes = derive(records, stored_count=stored)
    assert [n.kind for n in nodes] == ["turn", "turn"]
    first, second = nodes
    assert "completed" in first.info and first.usage is not None and first.usage.output == 20
    assert {"interrupted", "synthetic"} <= second.flags
    step = second.children[0]
    kinds = [c.kind for c in step.children]
    assert kinds[:2] == ["user", "text"] and "tool" in kinds and "usage" in kinds
    text_node = step.children[1]
    assert len(text_node.seqs) == 1 + 5  # the message plus its five text-delta chunks
    tool = next(c for c in step.children if c.kind == "tool")
    assert tool.children and "error" in tool.flags  # turn 2's result is an error (make_turn: even turns)


_EVENT = st.sampled_from(
    [
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "user/message",
        "todo/write",
        "session/title",
        "assistant/chunk",
        "llm/retry",
    ]
)


@given(st.lists(_EVENT, max_size=60))
def test_blocks_hold_for_arbitrary_event_orders(types: list[str]) -> None:
    records: list[dict[str, Any]] = []
    turn = step = 0
    for i, t in enumerate(types):
        if t == "turn/start":
            turn += 1
            step = 0
        if t == "step/start":
            step += 1
        data: dict[str, Any] = {"turn": turn, "step": step}
        if t == "user/message":
            data = {"id": f"m{i}", "role": "user", "content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}}
        if t == "assistant/chunk":
            data["chunk"] = {"type": "text-delta", "index": 0, "text": "x"}
        if t == "turn/end":
            data = {"turn": turn, "reason": {"kind": "completed"}}
        records.append({"type": t, "seq": i, "time": i, "data": data})
    _check_blocks(records)
