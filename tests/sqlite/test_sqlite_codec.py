"""Row codec: packing, data/zstd, varints, packed-row validation and scanRows (spec §6-§7; E21-E38, E63-E65)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from sessionkit import meta, step_start, text_delta, tool_delta, turn_end, turn_start
from sqlite_helpers import T, append, db_path, event_rows, packed_count, raw, storage

from persistence.errors import SessionArgumentError, SessionStorageCorruptError
from persistence.model.jsontext import MAX_SAFE_INTEGER
from persistence.sqlite import datacodec
from persistence.sqlite.errors import JsRangeError, RowDecodeError
from persistence.sqlite.packing import PackedRecord, encode_batch, pack_batch
from persistence.sqlite.rows import decode_row, expand_packed, scan_rows, validate_event_rows
from persistence.sqlite.sessions import session_from_row
from persistence.sqlite.varint import decode_seqs, encode_seqs

M = meta("s", "/p")


def deltas(n: int, *, text: str = "x", start: int = 0, **kw: Any) -> list[dict[str, Any]]:
    return [text_delta(start + i, 1, 1, text, **kw) for i in range(n)]


def shapes(records: list[Any]) -> list[Any]:
    return [r.members if isinstance(r, PackedRecord) else "scalar" for r in records]


def roundtrip(tmp_path: Path, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    st = storage(db_path(tmp_path))
    append(st, M, events, materialized=False)
    stored = st.load_stored("s", T)
    st.close()
    assert stored is not None
    return stored.events


# ---------------------------------------------------------------- packing (E21-E29)


def test_e21_hundred_deltas_make_one_packed_row(tmp_path: Path) -> None:
    events = deltas(100)
    assert roundtrip(tmp_path, events) == events
    rows = event_rows(db_path(tmp_path))
    assert len(rows) == 1
    _rowid, seq, tag, _time, kind, _data, ses, sop, ign = rows[0]
    assert (seq, tag, kind, ses, sop, ign) == (0, "text-chunks", "text", None, None, 0)


def test_e22_member_cap() -> None:
    assert shapes(pack_batch(deltas(1027))) == [1024, 3]


def test_e23_e24_byte_cap() -> None:
    assert shapes(pack_batch(deltas(4, text="a" * 300_000))) == [3, "scalar"]
    assert shapes(pack_batch(deltas(3, text="a" * 400_000))) == ["scalar"] * 3
    assert shapes(pack_batch(deltas(10, text="a" * 150_000))) == [6, 4]
    for record in pack_batch(deltas(10, text="a" * 150_000)):
        assert isinstance(record, PackedRecord) and len(record.serialized) <= 1_048_576


def test_e25_kinds_and_tool_names(tmp_path: Path) -> None:
    events = (
        deltas(3, kind="reasoning-delta")
        + [tool_delta(3 + i, 1, 1, "c1", "{", name="bash") for i in range(3)]
        + [tool_delta(6 + i, 1, 1, "c2", "}") for i in range(3)]
    )
    assert [getattr(r, "tag", None) for r in pack_batch(events)] == ["reasoning-chunks", "tool-call-chunks", "tool-call-chunks"]
    assert roundtrip(tmp_path, events) == events


@pytest.mark.parametrize(
    "mutate",
    [
        lambda e: e.update(extra=1),
        lambda e: e.update(seq=-1),
        lambda e: e.update(time=1.5),
        lambda e: e.update(data="text"),
        lambda e: e["data"].update(extra=1),
        lambda e: e["data"].update(turn="1"),
        lambda e: e["data"].update(chunk="chunk"),
        lambda e: e["data"]["chunk"].update(index="0"),
        lambda e: e["data"]["chunk"].update(text=5),
        lambda e: e["data"]["chunk"].update(type="usage"),
    ],
    ids=[
        "envelope-key",
        "seq",
        "time",
        "data-string",
        "data-key",
        "turn-string",
        "chunk-string",
        "index-string",
        "text-number",
        "usage",
    ],
)
def test_e26_ineligible_events_stay_scalar(mutate: Any) -> None:
    events = deltas(3)
    mutate(events[1])
    assert "scalar" in shapes(pack_batch(events))
    assert shapes(pack_batch(events)) == ["scalar"] * 3


def test_e26_tool_fields_must_be_strings() -> None:
    for key, value in (("id", 1), ("name", 1)):
        events = [tool_delta(i, 1, 1, "c", "{", name="n") for i in range(3)]
        events[1]["data"]["chunk"][key] = value
        assert shapes(pack_batch(events)) == ["scalar"] * 3


def test_e27_runs_break() -> None:
    gap = deltas(2) + deltas(1, start=3)
    step = [*deltas(2), text_delta(2, 1, 2, "x")]
    index = [*deltas(2), text_delta(2, 1, 1, "x", index=1)]
    times = [text_delta(i, 1, 1, "x", time=t) for i, t in enumerate([-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER, MAX_SAFE_INTEGER])]
    names = [tool_delta(0, 1, 1, "c", "a", name="n"), tool_delta(1, 1, 1, "c", "b", name="n"), tool_delta(2, 1, 1, "c", "c")]
    for events in (gap, step, index, times, names):
        assert shapes(pack_batch(events)) == ["scalar"] * 3


def test_e28_e29_ignorable_is_never_packed(tmp_path: Path) -> None:
    events = deltas(3)
    events[1]["ignorable"] = True
    fake = {"type": "text-chunks", "seq": 3, "time": 9, "data": {"whatever": 1}, "ignorable": True}
    events.append(fake)
    assert roundtrip(tmp_path, events) == events
    rows = event_rows(db_path(tmp_path))
    assert [r[8] for r in rows] == [None, 1, None, 1] and packed_count(rows) == 0


# ---------------------------------------------------------------- packed row validation (E30-E32, §6.7)

_GOOD = {"turn": 2, "step": 3, "index": 1, "dt": [2, -1], "texts": ["a", "b", "c"]}


def _packed(data: Any, *, tag: str = "text-chunks", seq: int = 7, time: int = 90, ses: Any = None, sop: Any = None) -> tuple:
    text = data if isinstance(data, (str, bytes)) else orjson.dumps(data).decode()
    return (seq, tag, time, text, ses, sop, 0)


def test_e32_expansion_example() -> None:
    members = decode_row(_packed(_GOOD))
    assert [(m["seq"], m["time"]) for m in members] == [(7, 90), (8, 92), (9, 91)]
    assert members[0]["data"] == {"turn": 2, "step": 3, "chunk": {"type": "text-delta", "index": 1, "text": "a"}}


def test_e30_discriminator_and_surface_fields() -> None:
    with pytest.raises(RowDecodeError, match="malformed turn/start storage row: packed discriminator requires a chunk tag"):
        decode_row((0, "turn/start", 1, '{"turn":1}', None, None, 0))
    for ses, sop in ((b"", None), (None, '"append"')):
        with pytest.raises(RowDecodeError, match="packed surface fields must be null"):
            decode_row(_packed(_GOOD, ses=ses, sop=sop))


def _with(**changes: Any) -> dict[str, Any]:
    out = dict(_GOOD)
    out.update(changes)
    return {k: v for k, v in out.items() if v is not ...}


MALFORMED = [
    ("not json", "{not json"),
    ("not object", "[1,2,3]"),
    ("scalar json", "5"),
    ("missing dt", _with(dt=...)),
    ("extra key", _with(extra=1)),
    ("tool keys on text", _with(id="c")),
    ("turn string", _with(turn="2")),
    ("step bool", _with(step=True)),
    ("index null", _with(index=None)),
    ("two texts", _with(texts=["a", "b"], dt=[1])),
    ("1025 texts", _with(texts=["a"] * 1025, dt=[0] * 1024)),
    ("text number", _with(texts=["a", 1, "c"])),
    ("dt float", _with(dt=[0, 0.5])),
    ("dt string", _with(dt=[0, "1"])),
    ("dt length", _with(dt=[0])),
    ("dt not list", _with(dt=5)),
    ("seq overflow", None),
    ("time overflow", None),
    ("tool without id", None),
]


@pytest.mark.parametrize(("label", "data"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_e31_malformed_payloads(label: str, data: Any) -> None:
    row = _packed(data) if data is not None else None
    if label == "seq overflow":
        row = _packed(_GOOD, seq=MAX_SAFE_INTEGER)
    elif label == "time overflow":
        row = _packed(_with(dt=[1, 0]), time=MAX_SAFE_INTEGER)
    elif label == "tool without id":
        row = _packed({"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "args": ["a", "b", "c"]}, tag="tool-call-chunks")
    with pytest.raises(RowDecodeError, match=r"malformed (text|tool-call)-chunks storage row: "):
        decode_row(row)  # type: ignore[arg-type]


def test_tool_row_name_must_be_string() -> None:
    data = {"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "id": "c", "name": 5, "args": ["a", "b", "c"]}
    with pytest.raises(RowDecodeError, match="id and optional name must be strings"):
        decode_row(_packed(data, tag="tool-call-chunks"))


# ---------------------------------------------------------------- data column (E33, E37, E65)


def test_e33_text_or_blob(monkeypatch: pytest.MonkeyPatch) -> None:
    assert datacodec.encode_data(b'{"turn":1}') == '{"turn":1}'
    big = orjson.dumps({"text": "x" * 8192})
    blob = datacodec.encode_data(big)
    assert isinstance(blob, bytes) and blob[:4] == bytes.fromhex("28b52ffd")
    assert zstandard.get_frame_parameters(blob).has_checksum is False

    class NoGain:
        def compress(self, data: bytes) -> bytes:
            return b"\x28\xb5\x2f\xfd" + bytes(len(data))

    monkeypatch.setattr(datacodec, "_compressor", NoGain)
    assert datacodec.encode_data(big) == big.decode()  # compression not strictly smaller: stays TEXT


def test_e37_bad_data() -> None:
    with pytest.raises(RowDecodeError):
        decode_row((0, "turn/start", 1, b"not zstd", None, None, None))
    with pytest.raises(RowDecodeError, match="data exceeds 1048576 UTF-8 bytes"):
        decode_row(_packed(" " * 1_048_577))
    bomb = zstandard.ZstdCompressor(level=3).compress(b" " * 1_200_000)
    with pytest.raises(RowDecodeError):
        decode_row(_packed(bomb))
    unsized = zstandard.ZstdCompressor(level=3, write_content_size=False).compress(b" " * 1_200_000)
    with pytest.raises(RowDecodeError):
        decode_row(_packed(unsized))
    # Scalar data has no bound (verified upstream behaviour).
    big = zstandard.ZstdCompressor(level=3).compress(orjson.dumps({"t": "y" * 2_000_000}))
    assert len(decode_row((0, "x/y", 1, big, None, None, None))[0]["data"]["t"]) == 2_000_000


def test_e65_multi_frame_blobs() -> None:
    frame = zstandard.ZstdCompressor(level=3).compress(b'{"turn":1}')
    assert decode_row((0, "turn/start", 1, frame + b"garbage", None, None, None))[0]["data"] == {"turn": 1}
    with pytest.raises(RowDecodeError):
        decode_row((0, "turn/start", 1, frame + frame, None, None, None))  # '{"turn":1}{"turn":1}' is not JSON
    with pytest.raises(RowDecodeError):
        decode_row((0, "turn/start", 1, frame + bytes.fromhex("28b52ffd"), None, None, None))
    unsized = zstandard.ZstdCompressor(level=3, write_content_size=False, write_checksum=True).compress(b'{"a":2}')
    assert decode_row((0, "x/y", 1, unsized, None, None, None))[0]["data"] == {"a": 2}


def test_blob_bom_and_utf8() -> None:
    bom = zstandard.ZstdCompressor().compress(b'\xef\xbb\xbf{"a":1}')
    assert decode_row((0, "x/y", 1, bom, None, None, None))[0]["data"] == {"a": 1}
    with pytest.raises(RowDecodeError):
        decode_row((0, "x/y", 1, '\ufeff{"a":1}', None, None, None))
    with pytest.raises(RowDecodeError):
        decode_row((0, "x/y", 1, zstandard.ZstdCompressor().compress(b'{"a":"\xff"}'), None, None, None))


# ---------------------------------------------------------------- source_event_seqs (E34-E36)


def test_e34_varint_roundtrips(tmp_path: Path) -> None:
    assert encode_seqs([10, 11, 12, 11, 20]).hex() == "0a02020112" and encode_seqs([300]).hex() == "ac02"
    run = list(range(2000))
    assert len(encode_seqs(run)) == 2000 and decode_seqs(encode_seqs(run)) == run
    for values in ([], [2**53 - 2, 0, 2**53 - 3], [5, 3, 3, 100]):
        assert decode_seqs(encode_seqs(values)) == values
    events = [{"type": "x/y", "seq": 0, "time": 1, "data": {}, "sourceEventSeqs": []}]
    assert roundtrip(tmp_path, events) == events
    assert event_rows(db_path(tmp_path))[0][6] == b""  # zero-length BLOB, not NULL


def test_e35_bad_source_event_seqs_fail_before_writing(tmp_path: Path) -> None:
    st = storage(db_path(tmp_path))
    for bad in ([-1], [0.5], [True], "1"):
        with pytest.raises(SessionArgumentError, match="sourceEventSeqs must contain non-negative safe integers"):
            append(st, M, [{"type": "x/y", "seq": 0, "time": 1, "data": {}, "sourceEventSeqs": bad}], materialized=False)
        assert isinstance(SessionArgumentError("x"), TypeError)
    assert st.list_headers(T) == []
    st.close()


@pytest.mark.parametrize(
    ("hexbytes", "reason"),
    [
        ("80", "truncated varint"),
        ("8000", "non-canonical varint"),
        ("0001", "decoded seq is out of range"),
        ("ff" * 7 + "0f02", "decoded seq is out of range"),
        ("80" * 7 + "10", "varint is out of range"),
        ("80" * 9, "varint is out of range"),
    ],
)
def test_e36_varint_vectors(hexbytes: str, reason: str) -> None:
    with pytest.raises(RowDecodeError, match=f"malformed source_event_seqs storage value: {reason}"):
        decode_seqs(bytes.fromhex(hexbytes))


# ---------------------------------------------------------------- scanRows (E38) and column checks (E49, E64)


def _scalar(seq: int, etype: str, data: str = '{"turn":1}') -> tuple:
    return (seq, etype, 1, data, None, None, None)


def test_e38_scan_rows() -> None:
    start, step = _scalar(0, "turn/start"), _scalar(2, "step/start")
    result = scan_rows([start, step], 0)
    assert [e["seq"] for e in result.preserved] == [0] and result.torn_from == 2
    with pytest.raises(SessionStorageCorruptError, match="invalid committed physical row at seq 2"):
        scan_rows([start, step, _scalar(3, "turn/end", '{"turn":1,"reason":{"kind":"completed"}}')], 0)
    bad_packed = (0, "text-chunks", 1, "{broken", None, None, 0)
    with pytest.raises(SessionStorageCorruptError, match="at seq 0"):
        scan_rows([bad_packed, _scalar(1, "turn/end", '{"turn":1,"reason":{"kind":"completed"}}')], 0)
    alone = scan_rows([bad_packed], 0)
    assert alone.preserved == [] and alone.torn_from == 0


def test_scan_rows_overlap_and_duplicates_are_torn() -> None:
    packed = (0, "text-chunks", 1, orjson.dumps(_with(dt=[0, 0])).decode(), None, None, 0)
    result = scan_rows([packed, _scalar(1, "x/y")], 0)
    assert len(result.preserved) == 3 and result.torn_from == 1


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (("0", "t", 1, "{}", None, None, None), "stored seq must be a safe integer"),
        ((-1, "t", 1, "{}", None, None, None), "stored seq must be non-negative"),
        ((0, "", 1, "{}", None, None, None), "stored type must not be empty"),
        ((0, "t", "1", "{}", None, None, None), "stored time must be a safe integer"),
        ((0, "t", 1, 1, None, None, None), "stored data must be a string or blob"),
        ((0, "t", 1, "{}", 1, None, None), "stored source_event_seqs must be a blob or null"),
        ((0, "t", 1, "{}", None, 1, None), "stored surface_op must be a string or null"),
        ((0, "t", 1, "{}", None, None, 2), "stored event ignorable must be 0, 1, or null"),
    ],
)
def test_e49_event_column_types(row: tuple, message: str) -> None:
    with pytest.raises(SessionStorageCorruptError, match=message):
        validate_event_rows([row])


_SESSION = ("id", 0, 5, "/abs", None, None, None, None, None, "3f1d1c6e-8a4b-4c2d-9e0f-1a2b3c4d5e6f", 0)


@pytest.mark.parametrize(
    ("index", "value", "message"),
    [
        (2, -1, "created_at"),
        (6, "external", "origin must be subagent or null"),
        (7, -1, "delegation_depth"),
        (0, 1, "id"),
        (0, "", "id"),
        (1, "0", "version"),
        (3, "relative", "cwd must be absolute"),
        (3, 1, "cwd"),
        (9, "invalid", "incarnation must be a UUID"),
        (5, "1", "seed_length"),
        (8, 1, "agent_preset"),
        (5, -1, "seed_length"),
    ],
)
def test_e49_session_row_validation(index: int, value: Any, message: str) -> None:
    row = list(_SESSION)
    row[index] = value
    with pytest.raises(SessionStorageCorruptError, match=message):
        session_from_row(tuple(row))


def test_e57_header_mapping_omits_nulls() -> None:
    row = ("c", 0, 5, "/project", "p", None, None, 0, None, _SESSION[9], 3)
    assert list(session_from_row(row).meta.items()) == [
        ("version", 0),
        ("id", "c"),
        ("createdAt", 5),
        ("cwd", "/project"),
        ("parentSession", "p"),
        ("delegationDepth", 0),
    ]


def test_e64_integers_beyond_safe_range(tmp_path: Path) -> None:
    st = storage(db_path(tmp_path))
    append(st, M, [turn_start(0, 1), step_start(1, 1, 1)], materialized=False)
    with raw(db_path(tmp_path)) as con:
        con.execute("UPDATE sessions SET created_at = ?", (2**53,))
    with pytest.raises(JsRangeError, match="Value is too large to be represented as a JavaScript number: 9007199254740992"):
        st.list_headers(T)
    with raw(db_path(tmp_path)) as con:
        con.execute("UPDATE sessions SET created_at = ?", (2**53 - 1,))
        con.execute("UPDATE events SET time = ? WHERE seq = 1", (-(2**53),))
    assert st.list_headers(T)[0]["createdAt"] == 2**53 - 1  # a bad events cell does not hide the session
    with pytest.raises(JsRangeError):
        st.load_stored("s", T)
    st.close()


def test_e60_differential_packing_matrix(tmp_path: Path) -> None:
    events = [turn_start(0, 1), step_start(1, 1, 1)]
    events += [text_delta(len(events) + i, 1, 1, f"t{i}") for i in range(5)]
    events += [text_delta(len(events) + i, 1, 1, f"r{i}", kind="reasoning-delta", time=100 - i) for i in range(4)]
    events += [tool_delta(len(events) + i, 1, 1, "c1", "{", name="bash") for i in range(4)]
    events += [tool_delta(len(events) + i, 1, 1, "c2", "}") for i in range(3)]
    events.append(
        {
            "type": "assistant/chunk",
            "seq": len(events),
            "time": 50,
            "data": {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 5}},
        }
    )
    events += [text_delta(len(events) + i, 1, 1, "s", index=6) for i in range(2)]
    ignorable = text_delta(len(events), 1, 1, "i", index=7)
    ignorable["ignorable"] = True
    events.append(ignorable)
    events.append(
        {
            "type": "assistant/chunk",
            "seq": len(events),
            "time": 60,
            "data": {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": "stop"}},
        }
    )
    events.append(turn_end(len(events), 1))

    def tags(sizes: list[int] | None) -> dict[str, int]:
        records: list[Any] = []
        if sizes is None:
            records = pack_batch(events)
        else:
            i = k = 0
            while i < len(events):
                records += pack_batch(events[i : i + sizes[k % len(sizes)]])
                i += sizes[k % len(sizes)]
                k += 1
        counts: dict[str, int] = {}
        for r in records:
            if isinstance(r, PackedRecord):
                key = r.tag.split("-")[0]
                counts[key] = counts.get(key, 0) + 1
        return counts

    assert tags(None) == {"reasoning": 1, "text": 1, "tool": 2}
    assert tags([1]) == {}
    assert tags([2, 1, 5, 3]) == {"reasoning": 1, "text": 1, "tool": 1}
    assert sum(1 for row in encode_batch(events, pack=True) if row[6] == 1) == 1
    assert roundtrip(tmp_path, events) == events


def test_expand_packed_is_exact_inverse_of_pack(tmp_path: Path) -> None:
    events = [tool_delta(i, 3, 2, "call", f"a{i}", name="edit", index=4, time=10 + (i % 3)) for i in range(50)]
    (row,) = encode_batch(events, pack=True)
    assert expand_packed(row[1], row[0], row[2], row[3], row[4], row[5]) == events
