"""Property tests (hypothesis) for the JSONL backend.

1. Random valid logs (turns with steps, chunk runs, messages, tool calls, arbitrary JSON payloads),
   appended in random batches, round-trip through load / inspect / read_from / read_raw on both
   encodings and both packing modes; a crashed final turn comes back closed by the synthetic closers.
2. Truncating an artifact at ANY byte gives either the committed prefix (plus closers) or a typed
   ``SessionPersistenceError`` - never another exception - and ``load`` then leaves a clean artifact.
"""

from __future__ import annotations

import math
import os
import tempfile
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sessionkit import artifact, meta, run, zstd_frames

from persistence import JsonlSessionPersistence, SessionPersistenceError
from persistence.jsonl.frames import scan_frames
from persistence.jsonl.writer import event_lines
from persistence.model.jsontext import MAX_SAFE_INTEGER, js_dumps
from persistence.model.repair import interrupted_turn_closers

TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", "\ud800", "a\udc00b", "é😀", "\u2028\u2029", "\x00\x1f\x7f", '"\\/', "\n\r\t", "你好"]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not (f == 0 and math.copysign(1, f) < 0)),
    TEXT,
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.one_of(TEXT, st.sampled_from(["0", "1", "10", "01", "4294967295"])), children, max_size=3)
    ),
    max_leaves=8,
)

pytestmark = pytest.mark.usefixtures("fast_fsync")


class LogBuilder:
    def __init__(self, time0: int) -> None:
        self.events: list[dict[str, Any]] = []
        self.time = time0

    def add(self, type_: str, data: Any, dt: int = 1, **envelope: Any) -> dict[str, Any]:
        self.time = max(-MAX_SAFE_INTEGER, min(MAX_SAFE_INTEGER, self.time + dt))
        event: dict[str, Any] = {"type": type_, "seq": len(self.events), "time": self.time, "data": data}
        event.update(envelope)
        self.events.append(event)
        return event


def _message(msg_id: str, role: str, content: list[Any], source: dict[str, Any]) -> dict[str, Any]:
    return {"id": msg_id, "role": role, "content": content, "source": source}


@st.composite
def session_logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    b = LogBuilder(draw(st.integers(-(10**6), 10**13)))
    n_turns = draw(st.integers(0, 3))
    crash = draw(st.booleans())
    for turn in range(1, n_turns + 2):
        last = turn == n_turns + 1
        if last and not crash:
            break
        b.add("turn/start", {"turn": turn})
        if draw(st.booleans()):
            b.add(
                "user/message",
                _message(f"u{turn}", "user", [{"type": "text", "text": draw(TEXT)}], {"kind": "user"}),
                surfaceOp="append",
            )
        for step in range(1, draw(st.integers(0, 2)) + 1):
            b.add("step/start", {"turn": turn, "step": step})
            for _run in range(draw(st.integers(0, 3))):
                kind = draw(st.sampled_from(["text-delta", "reasoning-delta", "tool-call-delta"]))
                index = draw(st.integers(0, 2))
                naming = draw(st.sampled_from(["all", "first", "none"]))
                call_id = draw(st.sampled_from(["c1", "c2"]))
                for k in range(draw(st.integers(1, 7))):
                    if kind == "tool-call-delta":
                        chunk: dict[str, Any] = {"type": kind, "index": index, "id": call_id}
                        if naming == "all" or (naming == "first" and k == 0):
                            chunk["name"] = "bash"
                        chunk["argumentsDelta"] = draw(TEXT)
                    else:
                        chunk = {"type": kind, "index": index, "text": draw(TEXT)}
                    b.add("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk}, dt=draw(st.integers(-5, 40)))
                if draw(st.booleans()):
                    b.add(
                        "assistant/chunk",
                        {
                            "turn": turn,
                            "step": step,
                            "chunk": {"type": "usage", "usage": {"inputTokens": draw(st.integers(0, 999)), "outputTokens": 1}},
                        },
                    )
            calls = draw(st.lists(st.sampled_from(["call-a", "call-b", "call-c"]), unique=True, max_size=2))
            content: list[Any] = [{"type": "text", "text": draw(TEXT)}]
            content += [{"type": "tool-call", "id": c, "name": "bash", "arguments": "{}"} for c in calls]
            b.add(
                "assistant/message",
                {
                    "turn": turn,
                    "step": step,
                    "message": _message(
                        f"a{turn}-{step}", "assistant", content, {"kind": "model", "provider": "p", "model": "m"}
                    ),
                },
                surfaceOp="append",
            )
            interrupted_here = last and step > 0 and draw(st.booleans())
            for c in calls:
                call_event = None
                if draw(st.booleans()):
                    call_event = b.add("tool/call", {"turn": turn, "step": step, "callId": c, "name": "bash", "arguments": "{}"})
                if interrupted_here or not draw(st.booleans()):
                    continue
                envelope: dict[str, Any] = {"surfaceOp": "append"}
                if call_event is not None:
                    envelope = {"sourceEventSeqs": [call_event["seq"]], "surfaceOp": "append"}
                b.add(
                    "tool/result",
                    {
                        "turn": turn,
                        "step": step,
                        "message": _message(
                            f"r-{c}-{turn}-{step}",
                            "user",
                            [
                                {
                                    "type": "tool-result",
                                    "toolCallId": c,
                                    "isError": draw(st.booleans()),
                                    "content": [{"type": "text", "text": draw(TEXT)}],
                                }
                            ],
                            {"kind": "tool", "callId": c},
                        ),
                    },
                    **envelope,
                )
            if interrupted_here:
                break
            b.add("step/end", {"turn": turn, "step": step})
        else:
            if draw(st.booleans()):
                b.add("todo/write", {"payload": draw(JSON_VALUES)})
            if not last:
                b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return b.events


@st.composite
def batched_logs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    events = draw(session_logs())
    if not events:
        events = [{"type": "session/title", "seq": 0, "time": 1, "data": {"title": draw(TEXT)}}]
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(events) - 1)), max_size=4)))
    bounds = [0, *[c for c in cuts if 0 < c < len(events)], len(events)]
    return events, [events[a:b] for a, b in pairwise(bounds)]


def write_log(root: Path, compression: str, pack: bool, batches: list[list[dict[str, Any]]]) -> None:
    async def body() -> None:
        store = JsonlSessionPersistence(root, compression=compression, pack_chunks=pack)
        await store.create(meta("prop", "/proj"))
        for batch in batches:
            await store.append("prop", batch)

    run(body())


@pytest.mark.parametrize("compression", ["zstd", "none"])
@settings(max_examples=20)
@given(data=batched_logs(), pack=st.booleans(), k=st.integers(0, 400))
def test_random_logs_round_trip(
    compression: str, data: tuple[list[dict[str, Any]], list[list[dict[str, Any]]]], pack: bool, k: int
) -> None:
    events, batches = data
    closers = interrupted_turn_closers(events)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_log(root, compression, pack, batches)
        path = artifact(root, "/proj", "prop", compression)
        raw_bytes = path.read_bytes()
        header = b'{"type":"session","version":0,"id":"prop","createdAt":1000,"cwd":"/proj","delegationDepth":0}\n'
        body_parts = [event_lines(batch, pack) + b"\n" for batch in batches]
        if compression == "zstd":
            assert zstd_frames(raw_bytes) == [header, *body_parts]
        else:
            assert raw_bytes == header + b"".join(body_parts)

        async def check() -> None:
            store = JsonlSessionPersistence(root, compression=compression)
            k_eff = min(k, len(events) + 1)
            assert js_dumps((await store.read_from("prop", k_eff)).events.to_json()) == js_dumps(events[k_eff:])
            raw = await store.read_raw("prop")
            assert raw is not None and raw.content.encode("utf-8", "surrogatepass") == header + b"".join(body_parts)
            inspected = (await store.inspect("prop")).events.to_json()
            assert js_dumps(inspected) == js_dumps(events + closers)
            assert path.read_bytes() == raw_bytes  # inspect never writes
            loaded = (await JsonlSessionPersistence(root, compression=compression).load("prop")).events.to_json()
            assert js_dumps(loaded) == js_dumps(events + closers)
            again = (await JsonlSessionPersistence(root, compression=compression).read_from("prop", 0)).events
            assert js_dumps(again.to_json()) == js_dumps(events + closers)
            assert path.read_bytes().startswith(raw_bytes)
            assert (path.read_bytes() == raw_bytes) == (not closers)

        run(check())


# ---------------------------------------------------------------- truncation at any byte


def record_ends(batches: list[list[dict[str, Any]]], pack: bool) -> list[list[tuple[int, int]]]:
    """Per batch: (plaintext offset after the record's newline within the batch, events through it)."""
    out = []
    done = 0
    for batch in batches:
        ends = []
        offset = 0
        from persistence.model.chunk_rows import decode_storage_record, pack_runs

        records = pack_runs(batch) if pack else batch
        for record in records:
            offset += len(js_dumps(record)) + 1
            done += len(decode_storage_record(record))
            ends.append((offset, done))
        out.append(ends)
    return out


def expected_bounds(
    full: bytes, cut: int, compression: str, header_len: int, ends: list[list[tuple[int, int]]]
) -> tuple[int, int] | None:
    """(min, max) events the committed prefix may hold after a cut at ``cut``, or None when the header is gone."""
    if compression == "none":
        if cut < header_len:
            return None
        pos = header_len
        count = 0
        for batch in ends:
            for end, n in batch:
                if pos + end <= cut:
                    count = n
            pos += batch[-1][0] if batch else 0
        return count, count
    frames, _torn = scan_frames(full)
    if cut < frames[0][1]:
        return None
    complete = sum(1 for _s, e in frames[1:] if e <= cut)
    low = ends[complete - 1][-1][1] if complete else 0
    high = ends[complete][-1][1] if complete < len(ends) else low
    return low, high


async def check_truncated(
    root: Path,
    compression: str,
    full: bytes,
    cut: int,
    events: list[dict[str, Any]],
    bounds: tuple[int, int] | None,
    commit: bool,
) -> None:
    path = artifact(root, "/proj", "prop", compression)
    path.write_bytes(full[:cut])
    store = JsonlSessionPersistence(root, compression=compression)
    try:
        inspected = (await store.inspect("prop")).events.to_json()
    except SessionPersistenceError as err:
        assert bounds is None, f"cut {cut}: typed error {err!r} although the header survived"
        assert "header" in str(err)
        return
    except Exception as err:  # pragma: no cover - the property under test
        raise AssertionError(f"cut {cut}: untyped {type(err).__name__}: {err}") from err
    assert bounds is not None, f"cut {cut}: header cut but inspect succeeded"
    prefix_len = next((i for i, e in enumerate(inspected) if i >= len(events) or e != events[i]), len(inspected))
    stored = events[:prefix_len]
    assert bounds[0] <= prefix_len <= bounds[1], f"cut {cut}: {prefix_len} events, expected {bounds}"
    assert js_dumps(inspected) == js_dumps(stored + interrupted_turn_closers(stored))
    if commit:
        loaded = (await store.load("prop")).events.to_json()
        assert js_dumps(loaded) == js_dumps(inspected)
        data = path.read_bytes()
        if compression == "zstd":
            assert scan_frames(data)[1] is None
        else:
            assert data.endswith(b"\n")
        fresh = JsonlSessionPersistence(root, compression=compression)
        assert js_dumps((await fresh.read_from("prop", 0)).events.to_json()) == js_dumps(inspected)


@pytest.mark.parametrize("compression", ["zstd", "none"])
@settings(max_examples=12)
@given(data=batched_logs(), pack=st.booleans(), where=st.floats(0, 1))
def test_truncation_at_random_byte(
    compression: str, data: tuple[list[dict[str, Any]], list[list[dict[str, Any]]]], pack: bool, where: float
) -> None:
    events, batches = data
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_log(root, compression, pack, batches)
        full = artifact(root, "/proj", "prop", compression).read_bytes()
        cut = int(where * len(full))
        header_len = len(zstd_frames(full)[0]) if compression == "zstd" else full.index(b"\n") + 1
        bounds = expected_bounds(full, cut, compression, header_len, record_ends(batches, pack))
        run(check_truncated(root, compression, full, cut, events, bounds, commit=True))


def _fixed_log() -> list[list[dict[str, Any]]]:
    """Three compact batches: a closed turn; an open turn 2 with a 4-delta run; an assistant tool call + tool/call."""
    from sessionkit import assistant_message, step_start, text_delta, tool_call, turn_end, turn_start

    turn2 = [turn_start(2, 2), step_start(3, 2, 1), *[text_delta(4 + i, 2, 1, "abcd"[i]) for i in range(4)]]
    tail = [assistant_message(8, 2, 1, text=None, calls=["x", "y"], msg_id="m"), tool_call(9, 2, 1, "x")]
    return [[turn_start(0, 1), turn_end(1, 1)], turn2, tail]


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_truncation_at_every_byte(compression: str, tmp_path: Path) -> None:
    """Exhaustive over every cut of a three-batch artifact (open turn with a chunk run and tool calls)."""
    batches = _fixed_log()
    events = [e for b in batches for e in b]
    write_log(tmp_path, compression, True, batches)
    full = artifact(tmp_path, "/proj", "prop", compression).read_bytes()
    header_len = len(zstd_frames(full)[0]) if compression == "zstd" else full.index(b"\n") + 1
    ends = record_ends(batches, True)

    async def sweep() -> None:
        for cut in range(len(full) + 1):
            bounds = expected_bounds(full, cut, compression, header_len, ends)
            await check_truncated(tmp_path, compression, full, cut, events, bounds, commit=cut % 23 == 0)

    run(sweep())
    assert os.path.getsize(artifact(tmp_path, "/proj", "prop", compression)) > 0
