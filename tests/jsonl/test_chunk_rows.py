"""Packed chunk rows: eligibility, run building, decoding (jsonl-backend §7, §15.4 cases 35-49)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from sessionkit import (
    artifact,
    assistant_message,
    encode_log,
    ev,
    header_line,
    meta,
    plant,
    run,
    seqs_of,
    step_end,
    step_start,
    text_delta,
    tool_delta,
    turn_end,
    turn_start,
    wire,
)

from persistence import JsonlSessionPersistence
from persistence.jsonl.lines import LineScanner
from persistence.jsonl.writer import event_lines
from persistence.model.chunk_rows import MalformedRowError, classify, decode_storage_record, pack_runs
from persistence.model.jsontext import MAX_SAFE_INTEGER, js_dumps, js_loads

pytestmark = pytest.mark.usefixtures("fast_fsync")


def streamed_turn(n_deltas: int = 5) -> list[dict[str, Any]]:
    """turn/start, step/start, ``n`` text deltas (index 0, seqs 2.., times 3..), assistant/message, step/end, turn/end."""
    deltas = [text_delta(2 + k, 1, 1, f"t{k}") for k in range(n_deltas)]
    seq = 2 + n_deltas
    return [
        turn_start(0, 1),
        step_start(1, 1, 1),
        *deltas,
        assistant_message(seq, 1, 1, "t0t1"),
        step_end(seq + 1, 1, 1),
        turn_end(seq + 2, 1),
    ]


def stored_tags(path: Path) -> list[str]:
    return [js_loads(line)["type"] for line in path.read_bytes().split(b"\n")[1:] if line]


def test_case_35_text_run_is_packed_and_round_trips(tmp_path: Path) -> None:
    """§15 case 35."""
    log = streamed_turn()

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        await store.create(meta("packed", "/proj"))
        await store.append("packed", log)
        assert wire((await JsonlSessionPersistence(tmp_path, compression="none").load("packed")).events) == log

    run(body())
    path = artifact(tmp_path, "/proj", "packed", "none")
    assert stored_tags(path) == ["turn/start", "step/start", "text-chunks", "assistant/message", "step/end", "turn/end"]
    row = path.read_bytes().split(b"\n")[3]
    assert row == (
        b'{"type":"text-chunks","seq0":2,"time0":3,"data":{"turn":1,"step":1,"index":0,"dt":[1,1,1,1],'
        b'"texts":["t0","t1","t2","t3","t4"]}}'
    )


def test_case_36_pack_chunks_false_writes_one_event_per_line(tmp_path: Path) -> None:
    """§15 case 36."""
    log = streamed_turn()

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none", pack_chunks=False)
        await store.create(meta("plain", "/proj"))
        await store.append("plain", log)
        assert wire((await JsonlSessionPersistence(tmp_path, compression="none").load("plain")).events) == log

    run(body())
    tags = stored_tags(artifact(tmp_path, "/proj", "plain", "none"))
    assert tags.count("assistant/chunk") == 5 and "text-chunks" not in tags
    assert artifact(tmp_path, "/proj", "plain", "none").read_bytes().split(b"\n", 1)[1] == event_lines(log, False) + b"\n"


def test_case_37_mixed_layouts_in_one_file(tmp_path: Path) -> None:
    """§15 case 37: a hand-written unpacked turn, then a packed turn appended after loading."""
    turn1 = streamed_turn()
    plant(tmp_path, "--proj--/mixed", encode_log(header_line("mixed", "/proj"), [turn1], "none"), "none")
    n = len(turn1)
    turn2 = [{**e, "seq": e["seq"] + n, "time": e["time"] + n, "data": {**e["data"], "turn": 2}} for e in streamed_turn()]

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        assert wire((await store.load("mixed")).events) == turn1
        await store.append("mixed", turn2)
        assert wire((await JsonlSessionPersistence(tmp_path, compression="none").load("mixed")).events) == turn1 + turn2

    run(body())
    tags = stored_tags(artifact(tmp_path, "/proj", "mixed", "none"))
    assert tags.count("text-chunks") == 1 and tags.count("assistant/chunk") == 5


def _scan(*records: dict[str, Any] | bytes) -> LineScanner:
    scanner = LineScanner(0)
    scanner.write(b"".join((r if isinstance(r, bytes) else js_dumps(r)) + b"\n" for r in records))
    scanner.finish()
    return scanner


ROW_ABC = {
    "type": "text-chunks",
    "seq0": 1,
    "time0": 2,
    "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]},
}


def test_case_38_hand_written_row_expands() -> None:
    """§15 case 38."""
    scanner = _scan(turn_start(0, 1), ROW_ABC, turn_end(4, 1))
    assert seqs_of(scanner.events) == [0, 1, 2, 3, 4]
    assert scanner.events[2] == {
        "type": "assistant/chunk",
        "seq": 2,
        "time": 3,
        "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "b"}},
    }
    assert js_dumps(scanner.events[2]) == (
        b'{"type":"assistant/chunk","seq":2,"time":3,"data":{"turn":1,"step":1,'
        b'"chunk":{"type":"text-delta","index":0,"text":"b"}}}'
    )


def test_case_39_malformed_row_before_turn_end_is_corruption() -> None:
    """§15 case 39."""
    bad = copy.deepcopy(ROW_ABC)
    bad["data"]["dt"] = []
    bad["data"]["texts"] = ["a", "b"]
    with pytest.raises(Exception, match="unparsable committed event at line 2"):
        _scan(turn_start(0, 1), bad, turn_end(3, 1))


def test_case_40_misplaced_row_is_dropped_whole() -> None:
    """§15 case 40."""
    row = copy.deepcopy(ROW_ABC)
    row["seq0"] = 2
    scanner = _scan(turn_start(0, 1), row)
    assert seqs_of(scanner.events) == [0]
    assert scanner.committed_bytes == len(js_dumps(turn_start(0, 1))) + 1


def test_case_41_event_lines_unpacked() -> None:
    """§15 case 41."""
    log = streamed_turn()
    assert event_lines(log, False) == b"\n".join(js_dumps(e) for e in log)


def test_case_42_short_runs_stay_verbatim_tool_runs_pack() -> None:
    """§15 case 42."""
    two = [text_delta(0, 1, 1, "a"), text_delta(1, 1, 1, "b")]
    assert pack_runs(two) == two
    calls = [tool_delta(k, 1, 1, "c1", f'{{"a{k}', name="write", index=1) for k in range(3)]
    assert pack_runs(calls) == [
        {
            "type": "tool-call-chunks",
            "seq0": 0,
            "time0": 1,
            "data": {
                "turn": 1,
                "step": 1,
                "index": 1,
                "dt": [1, 1],
                "id": "c1",
                "name": "write",
                "args": ['{"a0', '{"a1', '{"a2'],
            },
        }
    ]
    assert decode_storage_record(pack_runs(calls)[0]) == calls


def test_case_43_nameless_tool_run() -> None:
    """§15 case 43 (+ §7.3: a run where only the first delta has ``name`` leaves that delta verbatim)."""
    calls = [tool_delta(k, 1, 1, "c1", "x") for k in range(3)]
    rows = pack_runs(calls)
    assert len(rows) == 1 and "name" not in rows[0]["data"]
    assert decode_storage_record(rows[0]) == calls
    assert all("name" not in e["data"]["chunk"] for e in decode_storage_record(rows[0]))
    first_named = [tool_delta(0, 1, 1, "c1", "x", name="bash")] + [tool_delta(k, 1, 1, "c1", "y") for k in (1, 2, 3)]
    packed = pack_runs(first_named)
    assert packed[0] == first_named[0]
    assert packed[1]["type"] == "tool-call-chunks" and "name" not in packed[1]["data"]


@pytest.mark.parametrize("breaker", ["seq-gap", "kind", "index", "step", "call-id", "name-presence", "turn"])
def test_case_44_run_breakers(breaker: str) -> None:
    """§15 case 44: pieces shorter than 3 stay verbatim."""
    if breaker in ("call-id", "name-presence"):
        a = [tool_delta(0, 1, 1, "c1", "x"), tool_delta(1, 1, 1, "c1", "y")]
        b = [
            tool_delta(2, 1, 1, "c2" if breaker == "call-id" else "c1", "z", name=None if breaker == "call-id" else "n"),
            tool_delta(3, 1, 1, "c2" if breaker == "call-id" else "c1", "w", name=None if breaker == "call-id" else "n"),
        ]
        events = a + b
    else:
        events = [text_delta(0, 1, 1, "a"), text_delta(1, 1, 1, "b")]
        if breaker == "seq-gap":
            events += [text_delta(3, 1, 1, "c"), text_delta(4, 1, 1, "d")]
        elif breaker == "kind":
            events += [text_delta(2, 1, 1, "c", kind="reasoning-delta"), text_delta(3, 1, 1, "d", kind="reasoning-delta")]
        elif breaker == "index":
            events += [text_delta(2, 1, 1, "c", index=1), text_delta(3, 1, 1, "d", index=1)]
        elif breaker == "step":
            events += [text_delta(2, 1, 2, "c"), text_delta(3, 1, 2, "d")]
        else:
            events += [text_delta(2, 2, 1, "c"), text_delta(3, 2, 1, "d")]
    assert pack_runs(events) == events


def _variants() -> dict[str, dict[str, Any]]:
    base = text_delta(1, 1, 1, "x")
    extra_key = {**base, "ignorable": True}
    non_string = copy.deepcopy(base)
    non_string["data"]["chunk"]["text"] = 5
    fractional_time = {**base, "time": 1.5}
    string_turn = copy.deepcopy(base)
    string_turn["data"]["turn"] = "1"
    usage = ev("assistant/chunk", 1, {"turn": 1, "step": 1, "chunk": {"type": "usage", "index": 0}})
    extra_data = copy.deepcopy(base)
    extra_data["data"]["more"] = 1
    negative_seq = {**base, "seq": -1}
    bool_index = copy.deepcopy(base)
    bool_index["data"]["chunk"]["index"] = True
    numeric_id = tool_delta(1, 1, 1, "c", "x")
    numeric_id["data"]["chunk"]["id"] = 7
    return {
        "extra-envelope-key": extra_key,
        "non-string-text": non_string,
        "fractional-time": fractional_time,
        "string-turn": string_turn,
        "usage-chunk": usage,
        "extra-data-key": extra_data,
        "negative-seq": negative_seq,
        "bool-index": bool_index,
        "numeric-tool-id": numeric_id,
    }


@pytest.mark.parametrize("case", list(_variants()))
def test_case_45_ineligible_deltas_stay_verbatim(case: str) -> None:
    """§15 case 45 (+ §7.2 whitelist)."""
    event = _variants()[case]
    assert classify(event) is None
    run3 = [{**copy.deepcopy(event), "seq": k} if case != "negative-seq" else copy.deepcopy(event) for k in range(3)]
    assert pack_runs(run3) == run3


def test_classify_accepts_fractional_turn_and_float_seq() -> None:
    """§7.2: turn/step may be any number; integral float seq is a safe integer."""
    e = text_delta(0, 1, 1, "x")
    e["data"]["turn"] = 1.5
    assert classify(e) == "text-delta"
    assert classify({**text_delta(0, 1, 1, "x"), "seq": 2.0}) == "text-delta"


def test_case_46_time_gap_beyond_safe_range() -> None:
    """§15 case 46."""
    times = [-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER - 1, MAX_SAFE_INTEGER]
    events = [text_delta(k, 1, 1, str(k), time=t) for k, t in enumerate(times)]
    assert pack_runs(events) == events
    scanner = _scan(*events)
    assert scanner.events == events


def test_case_47_negative_gaps() -> None:
    """§15 case 47."""
    events = [text_delta(k, 1, 1, str(k), time=t) for k, t in enumerate([1000, 990, 995])]
    rows = pack_runs(events)
    assert len(rows) == 1 and rows[0]["data"]["dt"] == [-10, 5] and rows[0]["time0"] == 1000
    assert decode_storage_record(rows[0]) == events


def _row(tag: str = "text-chunks", **changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"type": tag, "seq0": 0, "time0": 0, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1]}}
    if tag == "tool-call-chunks":
        row["data"].update({"id": "c", "name": "n", "args": ["a", "b", "c"]})
    else:
        row["data"]["texts"] = ["a", "b", "c"]
    for key, value in changes.items():
        target = row if key in ("type", "seq0", "time0", "data", "extra") else row["data"]
        if value is _DEL:
            del target[key]
        else:
            target[key] = value
    return row


_DEL = object()

MALFORMED_ROWS: dict[str, tuple[dict[str, Any], str]] = {
    "non-object-data": (_row(data="x"), "data must be an object"),
    "extra-envelope-key": (_row(extra=1), r"envelope must be exactly \{type, seq0, time0, data\}"),
    "negative-seq0": (_row(seq0=-1), "seq0 must be a non-negative safe integer"),
    "fractional-time0": (_row(time0=0.5), "time0 must be a safe integer"),
    "args-in-text-row": (_row(args=["a"]), r"data must be exactly \{turn, step, index, dt, texts\}"),
    "non-string-member": (_row(texts=["a", 1, "c"]), "texts must be a non-empty string array"),
    "empty-members": (_row(texts=[], dt=[]), "texts must be a non-empty string array"),
    "dt-arity": (_row(dt=[1]), "dt length 1 does not match 3 members"),
    "fractional-dt": (_row(dt=[1, 0.5]), "dt must be an array of safe integers"),
    "seq-overflow": (_row(seq0=MAX_SAFE_INTEGER), "member seqs must stay safe integers"),
    "time-overflow": (_row(time0=MAX_SAFE_INTEGER, texts=["a", "b"], dt=[1]), "member times must stay safe integers"),
    "non-numeric-turn": (_row(turn="1"), "turn/step/index must be numbers"),
    "tool-without-id": (_row("tool-call-chunks", id=_DEL), r"data must be exactly \{turn, step, index, id, name\?, dt, args\}"),
    "tool-numeric-id": (_row("tool-call-chunks", id=5), r"id \(and name when present\) must be strings"),
    "tool-numeric-name": (_row("tool-call-chunks", name=5), r"id \(and name when present\) must be strings"),
}


@pytest.mark.parametrize("case", list(MALFORMED_ROWS))
def test_case_48_malformed_rows(case: str) -> None:
    """§15 case 48."""
    row, why = MALFORMED_ROWS[case]
    with pytest.raises(MalformedRowError, match=rf"^malformed {row['type']} storage row: {why}$"):
        decode_storage_record(row)


def test_case_48_one_member_row_is_valid_on_read() -> None:
    """§7.4: writers never produce a one-member row, but it decodes."""
    assert decode_storage_record(_row(texts=["only"], dt=[])) == [text_delta(0, 1, 1, "only", time=0)]


@pytest.mark.parametrize("value", [turn_start(0, 1), "junk", None, 42, [1, 2], {"type": "text"}])
def test_case_49_non_rows_pass_through(value: Any) -> None:
    """§15 case 49."""
    assert decode_storage_record(value) == [value]
