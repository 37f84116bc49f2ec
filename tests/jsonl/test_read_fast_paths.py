"""The JSONL read's fast paths equal the careful paths they skip (issue 25 item 4).

Why: a full read of the 202k-event log was ~2x the floor (read + decompress + parse).  Three shortcuts
now carry it, and each must give exactly what the slower rule gives, errors and their messages included:

- ``frames.decode_frame`` decodes a frame in one call when its block headers bound its plaintext under
  the cap, instead of feeding the decoder block by block (``decompress_bounded``);
- ``LineScanner`` parses a whole buffer in one local loop and hands records to the table in bulk,
  instead of one method call per line;
- ``EventTable.extend_items`` appends in bulk.

The references below are the former per-frame and per-line rules, kept here as the oracle.
"""

from __future__ import annotations

import marshal
import random
from typing import Any

import zstandard
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from persistence.errors import SessionStorageCorruptError
from persistence.jsonl import frames
from persistence.jsonl.lines import LineScanner
from persistence.model.chunk_rows import ROW_TAGS, build_row, validate_row
from persistence.model.event_table import EventTable
from persistence.model.jsontext import JsonTextError, is_number, js_dumps, js_loads, js_string
from persistence.model.packed_run import PackedRun

# ---------------------------------------------------------------- frames


def bounded_reference(buf: bytes, start: int, end: int, header: bool = False) -> bytes:
    """``decode_frame`` as it was: every frame fed to the decoder through ``decompress_bounded``."""
    cap = frames.MAX_FRAME_PLAINTEXT_BYTES if header else frames.plaintext_cap(end - start)
    what = "header frame" if header else f"frame at byte {start}"
    try:
        got = frames.decompress_bounded(memoryview(buf)[start:end], cap)
        if got is None:
            raise frames.corrupt(f"{what} decodes to more than {cap} bytes")
        out, ended, used = got
        if not ended or used != end - start:
            raise zstandard.ZstdError("frame did not end where the scan said")
        return out
    except zstandard.ZstdError as err:
        raise frames.corrupt(f"{what} failed validation") from err


def outcome(fn: Any, *args: Any, **kw: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(*args, **kw)
    except SessionStorageCorruptError as err:
        return type(err).__name__, str(err)


def frame_of(plain: bytes, *, level: int, checksum: bool, content_size: bool) -> bytes:
    c = zstandard.ZstdCompressor(level=level, write_checksum=checksum, write_content_size=content_size)
    if content_size:
        return c.compress(plain)
    obj = c.compressobj()
    return obj.compress(plain) + obj.flush()


PLAINTEXTS = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda n, b: b * n, st.integers(1, 400_000), st.sampled_from([b"a", b"tok\n", b"\x00\xff"])),  # RLE, multi-block
    st.builds(lambda seed, n: random.Random(seed).randbytes(n), st.integers(0, 99), st.integers(1, 300_000)),  # raw blocks
)


@settings(max_examples=examples(60), deadline=None)
@given(
    plain=PLAINTEXTS,
    level=st.sampled_from([1, 3, 19]),
    checksum=st.booleans(),
    content_size=st.booleans(),
    damage=st.sampled_from(["none", "flip", "cut", "extend"]),
    where=st.floats(0, 1),
    header=st.booleans(),
)
def test_decode_frame_equals_the_bounded_decoder(
    plain: bytes, level: int, checksum: bool, content_size: bool, damage: str, where: float, header: bool
) -> None:
    frame = bytearray(frame_of(plain, level=level, checksum=checksum, content_size=content_size))
    pos = min(len(frame) - 1, int(where * len(frame)))
    if damage == "flip":
        frame[pos] ^= 0x5A
    elif damage == "cut":
        del frame[pos:]
    elif damage == "extend":
        frame += b"\x00\x01\x02"
    data = b"PAD" + bytes(frame)  # the frame is never at offset 0 of the buffer: offsets must be honoured
    want = outcome(bounded_reference, data, 3, len(data), header)
    assert outcome(frames.decode_frame, data, 3, len(data), header=header) == want
    if damage == "none":
        assert want == ("ok", plain)


def test_decode_frames_joins_consecutive_frames() -> None:
    parts = [b"a\n" * k for k in range(1, 6)]
    data = b"".join(frames.compress_frame(p) for p in parts)
    ranges, torn = frames.scan_frames(data)
    assert torn is None
    assert frames.decode_frames(data, ranges) == b"".join(parts)
    assert frames.decode_frames(data, ranges[:1]) == parts[0]
    bad = bytearray(data)
    bad[ranges[2][1] - 1] ^= 1  # the third frame's checksum
    try:
        frames.decode_frames(bytes(bad), ranges)
    except SessionStorageCorruptError as err:
        assert str(err) == f"corrupt Zstandard session log: frame at byte {ranges[2][0]} failed validation"
    else:
        raise AssertionError("a damaged checksum was accepted")


# ---------------------------------------------------------------- the line scanner

_MISSING = object()


class ReferenceScanner:
    """The former scanner: one ``_consume`` call per line, state on the object (jsonl-backend §10)."""

    def __init__(self, header_len: int, first_seq: int = 0) -> None:
        self.first_seq = first_seq
        self.events: list[Any] = []
        self.count = 0
        self.fragment = b""
        self.input_bytes = self.committed_bytes = header_len
        self.line_no = 0
        self.issue: SessionStorageCorruptError | None = None

    def write(self, chunk: bytes) -> None:
        if not chunk:
            return
        end = self.input_bytes - len(self.fragment)
        pieces = (self.fragment + chunk).split(b"\n")
        self.fragment = pieces.pop()
        for piece in pieces:
            end += len(piece) + 1
            if self.issue is None:
                self._consume(piece, end)
            else:
                self._after_issue(piece)
        self.input_bytes += len(chunk)

    def _consume(self, line: bytes, end: int) -> None:
        self.line_no += 1
        try:
            if not line:
                raise JsonTextError("empty record")
            value = js_loads(line)
            run = validate_row(value) if type(value) is dict and value.get("type") in ROW_TAGS else None
        except (JsonTextError, ValueError):
            self.issue = SessionStorageCorruptError(f"corrupt session log: unparsable committed event at line {self.line_no}")
            return
        expected = self.first_seq + self.count
        if run is not None:
            if run.seq0 == expected:
                self.events.append(run)
                self.count += len(run)
                self.committed_bytes = end
                return
            value = run.member(0)
        seq = value.get("seq") if type(value) is dict else _MISSING
        if value is None:
            raise SessionStorageCorruptError(
                f"corrupt session log: unparsable committed event at line {self.line_no} (null record)"
            )
        if not (is_number(seq) and seq == expected):
            got = "undefined" if seq is _MISSING else js_string(seq)
            self.issue = SessionStorageCorruptError(
                f"corrupt session log: seq gap in committed region at line {self.line_no} (expected {expected}, got {got})"
            )
            if type(value) is dict and value.get("type") == "turn/end":
                raise self.issue
            return
        if type(seq) is float:
            value["seq"] = int(seq)
        self.events.append(value)
        self.count += 1
        self.committed_bytes = end

    def _after_issue(self, line: bytes) -> None:
        self.line_no += 1
        try:
            if not line:
                raise JsonTextError("empty record")
            value = js_loads(line)
            if value is None:
                raise SessionStorageCorruptError(
                    f"corrupt session log: unparsable committed event at line {self.line_no} (null record)"
                )
            if type(value) is dict and value.get("type") in ROW_TAGS:
                validate_row(value)
                return
        except (JsonTextError, ValueError):
            return
        if type(value) is dict and value.get("type") == "turn/end":
            assert self.issue is not None
            raise self.issue


def _event(etype: str, seq: Any) -> dict[str, Any]:
    return {"type": etype, "seq": seq, "time": 1000 + (seq if type(seq) is int else 0), "data": {"turn": 1}}


def _chunk_row(seq0: int, n: int, dt: int) -> dict[str, Any]:
    members = [
        {
            "type": "assistant/chunk",
            "seq": seq0 + k,
            "time": 5000 + k * dt,
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"t{k}"}},
        }
        for k in range(n)
    ]
    return build_row("text-delta", members)


LINE_KINDS = ["event", "event", "event", "row", "row", "float-seq", "gap", "gap-turn-end", "null", "garbage", "empty"]
LINE_KINDS += ["list", "big", "bad-row", "bool-dt", "true-text"]


@st.composite
def plaintexts(draw: st.DrawFn) -> tuple[bytes, int]:
    """Lines of mostly valid records (so the committed region grows) with defects of every kind."""
    first = draw(st.sampled_from([0, 7]))
    seq = first
    out: list[bytes] = []
    for kind in draw(st.lists(st.sampled_from(LINE_KINDS), max_size=24)):
        if kind == "event":
            out.append(js_dumps(_event(draw(st.sampled_from(["step/start", "turn/start", "turn/end"])), seq)))
            seq += 1
        elif kind == "row":
            n = draw(st.integers(3, 9))
            out.append(js_dumps(_chunk_row(seq, n, draw(st.sampled_from([0, 3, -2])))))
            seq += n
        elif kind == "float-seq":
            out.append(js_dumps(_event("step/end", seq)).replace(b'"seq":%d' % seq, b'"seq":%d.0' % seq))
            seq += 1
        elif kind == "gap":
            out.append(js_dumps(_event("step/start", seq + 5)))
        elif kind == "gap-turn-end":
            out.append(js_dumps(_event("turn/end", seq + 1)))
        elif kind == "null":
            out.append(b"null")
        elif kind == "garbage":
            out.append(b'{"type":"turn/start","seq":')
        elif kind == "empty":
            out.append(b"")
        elif kind == "list":
            out.append(b"[1,2]")
        elif kind == "big":
            out.append(b'{"type":"step/start","seq":%d,"time":12345678901234567890,"data":{}}' % seq)
            seq += 1
        elif kind == "bad-row":
            row = _chunk_row(seq, 4, 1)
            row["data"]["dt"] = row["data"]["dt"][:-1]
            out.append(js_dumps(row))
        elif kind == "bool-dt":
            row = _chunk_row(seq, 4, 1)
            row["data"]["dt"][1] = True
            out.append(js_dumps(row))
        elif kind == "true-text":
            row = _chunk_row(seq, 3, 1)
            row["data"]["texts"][0] = "true false"
            out.append(js_dumps(row))
            seq += 3
    text = b"".join(line + b"\n" for line in out)
    if draw(st.booleans()):
        text += b'{"type":"step/start","se'  # a torn tail
    return text, first


def _run(scanner: Any, text: bytes, cuts: list[int]) -> tuple[str, Any]:
    try:
        last = 0
        for cut in [*sorted(c % (len(text) + 1) for c in cuts), len(text)]:
            scanner.write(text[last:cut])
            last = max(last, cut)
    except SessionStorageCorruptError as err:
        return "raised", str(err)
    return "ok", None


def _records(events: Any) -> list[Any]:
    out: list[Any] = []
    for item in events.items if isinstance(events, EventTable) else events:
        out.extend(item.members() if type(item) is PackedRun else [item])
    return out


@settings(max_examples=examples(150), deadline=None)
@given(case=plaintexts(), cuts=st.lists(st.integers(0, 10_000), max_size=4), header_len=st.sampled_from([0, 40]))
def test_scanner_equals_the_per_line_reference(case: tuple[bytes, int], cuts: list[int], header_len: int) -> None:
    text, first = case
    ours, ref = LineScanner(header_len, first), ReferenceScanner(header_len, first)
    assert _run(ours, text, cuts) == _run(ref, text, cuts)
    assert marshal.dumps(_records(ours.events), 0) == marshal.dumps(_records(ref.events), 0)
    assert len(ours.events) == ref.count
    assert (ours.committed_bytes, ours.line_no) == (ref.committed_bytes, ref.line_no)
    assert (None if ours.issue is None else str(ours.issue)) == (None if ref.issue is None else str(ref.issue))


# ---------------------------------------------------------------- the table


@settings(max_examples=examples(60), deadline=None)
@given(shape=st.lists(st.lists(st.integers(0, 5), max_size=8), max_size=5))
def test_bulk_extend_equals_one_append_at_a_time(shape: list[list[int]]) -> None:
    """Batches of scalars (0) and runs (n members), appended in bulk or one by one, index alike."""
    bulk, single = EventTable(), EventTable()
    seq = 0
    for batch in shape:
        items: list[Any] = []
        for n in batch:
            if n < 3:
                items.append(_event("step/start", seq))
                seq += 1
            else:
                items.append(validate_row(_chunk_row(seq, n, 2)))
                seq += n
        bulk.extend_items(items)
        for it in items:
            if type(it) is PackedRun:
                single.append_run(it)
            else:
                single.append(it)
    assert len(bulk) == len(single) == seq
    assert bulk.starts == single.starts and bulk.items == single.items
    assert [bulk[i] for i in range(seq)] == [single[i] for i in range(seq)] == list(single)


# ---------------------------------------------------------------- frames decoded as one stream


def _frames_case(parts: list[bytes], sizes: list[bool]) -> tuple[bytes, list[tuple[int, int]], list[int]]:
    data = b"".join(frame_of(p, level=3, checksum=True, content_size=c) for p, c in zip(parts, sizes, strict=True))
    bounds: list[int] = []
    ranges, torn = frames.scan_frames(data, bounds=bounds)
    assert torn is None and len(ranges) == len(parts) == len(bounds)
    return data, ranges, bounds


@settings(max_examples=examples(60), deadline=None)
@given(
    parts=st.lists(st.binary(min_size=1, max_size=200), min_size=1, max_size=6),
    sized=st.lists(st.booleans(), min_size=6, max_size=6),
    damage=st.one_of(st.none(), st.tuples(st.integers(0, 5), st.floats(0, 1))),
)
def test_decode_frames_equals_frame_by_frame(parts: list[bytes], sized: list[bool], damage: Any) -> None:
    """One decoder across frames gives the joined plaintext, or the first damaged frame's own error."""
    data, ranges, bounds = _frames_case(parts, sized[: len(parts)])
    if damage is not None:
        k = damage[0] % len(ranges)
        start, end = ranges[k]
        pos = start + 4 + min(end - start - 5, int(damage[1] * (end - start - 4)))  # past the magic
        buf = bytearray(data)
        buf[pos] ^= 0x21
        data = bytes(buf)
        bounds = []
        try:
            got = frames.scan_frames(data, bounds=bounds)
        except SessionStorageCorruptError:
            return  # a structural fault: scan_frames names it before any decoding
        if got[0] != ranges:
            return  # the flip changed the frame structure itself: a different log, not this property

    def reference() -> bytes:
        return b"".join(bounded_reference(data, s, e) for s, e in ranges)

    assert outcome(frames.decode_frames, data, ranges, bounds) == outcome(reference)
    if damage is None:
        assert outcome(frames.decode_frames, data, ranges, bounds) == ("ok", b"".join(parts))


def _zstd_log(*frames_plain: bytes) -> bytes:
    return b"".join(frames.compress_frame(p) for p in frames_plain)


def test_a_record_error_in_an_earlier_frame_wins_over_a_later_damaged_frame() -> None:
    """Frames are judged in order: a read that decodes them all at once must raise what a frame-at-a-time
    read raised first (a null record in frame 1), not the checksum fault of frame 2."""
    from persistence.jsonl.parse import parse_log

    header = js_dumps({"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0, "cwd": "/p"})
    ok = js_dumps(_event("turn/start", 0))
    data = bytearray(_zstd_log(header + b"\n", ok + b"\nnull\n", js_dumps(_event("step/start", 1)) + b"\n"))
    ranges, _torn = frames.scan_frames(bytes(data))
    data[ranges[2][1] - 1] ^= 1  # the last frame's checksum
    try:
        parse_log(bytes(data), "/p/session.jsonl.zstd", "zstd")
    except SessionStorageCorruptError as err:
        assert str(err) == "corrupt session log: unparsable committed event at line 2 (null record)"
    else:
        raise AssertionError("a null record was accepted")
    swapped = bytearray(_zstd_log(header + b"\n", ok + b"\n", b"null\n"))
    ranges, _torn = frames.scan_frames(bytes(swapped))
    swapped[ranges[1][1] - 1] ^= 1  # now the damaged frame comes first
    try:
        parse_log(bytes(swapped), "/p/session.jsonl.zstd", "zstd")
    except SessionStorageCorruptError as err:
        assert str(err) == f"corrupt Zstandard session log: frame at byte {ranges[1][0]} failed validation"
    else:
        raise AssertionError("a damaged frame was accepted")


# ---------------------------------------------------------------- chunk rows in writers' form

MAX = 2**53 - 1
ODD_VALUES = [True, False, None, 1.0, 0.5, -1, "1", [1], {"a": 1}, 2**63, MAX, MAX + 1, -0.0]


@st.composite
def writer_rows(draw: st.DrawFn) -> dict[str, Any]:
    """Rows as writers produce them (the straight pass's case), each with at most one odd value planted."""
    tag = draw(st.sampled_from(["text-chunks", "reasoning-chunks", "tool-call-chunks"]))
    n = draw(st.integers(1, 6))
    payload = [draw(st.sampled_from(["", "tok", "é", "true"])) for _ in range(n)]
    dt = [draw(st.sampled_from([0, 1, 7, 40, MAX // 4])) for _ in range(n - 1)]
    data: dict[str, Any] = {"turn": 1, "step": 2, "index": 0, "dt": dt}
    if tag == "tool-call-chunks":
        data["id"] = "call-1"
        if draw(st.booleans()):
            data["name"] = "bash"
        data["args"] = payload
    else:
        data["texts"] = payload
    row: dict[str, Any] = {
        "type": tag,
        "seq0": draw(st.sampled_from([0, 5, MAX - 3, MAX])),
        "time0": draw(st.sampled_from([0, 1_767_225_604_683, MAX - 50, -MAX])),
        "data": data,
    }
    where = draw(st.sampled_from(["none", "seq0", "time0", "turn", "step", "index", "id", "name", "dt", "payload", "keys"]))
    odd = draw(st.sampled_from(ODD_VALUES))
    if where in ("seq0", "time0"):
        row[where] = odd
    elif where in ("turn", "step", "index", "id", "name"):
        data[where] = odd
    elif where == "dt" and dt:
        dt[draw(st.integers(0, len(dt) - 1))] = odd
    elif where == "payload":
        payload[draw(st.integers(0, n - 1))] = odd
    elif where == "keys":
        data["extra"] = 1
    return row


def _verdict(fn: Any, row: dict[str, Any]) -> tuple[str, Any]:
    try:
        run = fn(row)
    except ValueError as err:
        return "refused", str(err)
    fields = (run.kind, run.seq0, run.time0, run.dt, run.turn, run.step, run.index, run.payload, run.call_id, run.name)
    return "run", marshal.dumps(fields, 0)


def _tool_row(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"turn": 1, "step": 2, "index": 0, "dt": [3, 4], "id": "c", "name": "bash", "args": ["a", "b", "c"]}
    row: dict[str, Any] = {"type": "tool-call-chunks", "seq0": 0, "time0": 0, "data": data}
    for key, value in changes.items():
        (row if key in row else data)[key] = value
    return row


@settings(max_examples=examples(300), deadline=None)
@given(row=writer_rows())
@example(row=_tool_row(name=None))
@example(row=_tool_row(id=None))
@example(row=_tool_row(dt=[True, 4]))
@example(row=_tool_row(dt=[3, 4.0]))
@example(row=_tool_row(dt=[-3, 4]))
@example(row=_tool_row(dt=[MAX, 1]))
@example(row=_tool_row(time0=MAX - 6))
@example(row=_tool_row(time0=MAX - 7))
@example(row=_tool_row(seq0=MAX - 2))
@example(row=_tool_row(seq0=MAX - 1))
@example(row=_tool_row(seq0=-1))
@example(row=_tool_row(turn=1.0))
@example(row=_tool_row(turn=True))
@example(row=_tool_row(args=["a", 1, "c"]))
@example(row=_tool_row(dt=[3]))
def test_the_straight_pass_accepts_only_what_the_full_checks_accept_alike(row: dict[str, Any]) -> None:
    """``validate_row`` with its straight pass gives what the full checks alone give: the same run, or
    the same refusal; and whatever the straight pass takes, the full checks take too."""
    import copy

    from persistence.model import chunk_rows

    straight = chunk_rows._canonical_run(copy.deepcopy(row))
    original = chunk_rows._canonical_run
    chunk_rows._canonical_run = lambda _row: None  # the full checks alone
    try:
        careful = _verdict(chunk_rows.validate_row, copy.deepcopy(row))
    finally:
        chunk_rows._canonical_run = original
    assert _verdict(chunk_rows.validate_row, copy.deepcopy(row)) == careful
    if straight is not None:
        assert careful[0] == "run"


@settings(max_examples=examples(80), deadline=None)
@given(case=plaintexts(), prefix=st.sampled_from([b"H\n", b'{"type":"session"}\n', b"a\nb\n", b"no newline"]))
def test_scanner_fed_past_a_prefix_equals_a_fed_slice(case: tuple[bytes, int], prefix: bytes) -> None:
    """``write(data, start)`` (no copy of the slice) scans exactly what ``write(data[start:])`` does."""
    text, first = case
    ours, ref = LineScanner(len(prefix), first), ReferenceScanner(len(prefix), first)
    assert _run_offset(ours, prefix + text, len(prefix)) == _run(ref, text, [])
    assert marshal.dumps(_records(ours.events), 0) == marshal.dumps(_records(ref.events), 0)
    assert (ours.committed_bytes, ours.line_no, ours.input_bytes) == (ref.committed_bytes, ref.line_no, ref.input_bytes)


def _run_offset(scanner: LineScanner, data: bytes, start: int) -> tuple[str, Any]:
    try:
        scanner.write(data, start)
    except SessionStorageCorruptError as err:
        return "raised", str(err)
    return "ok", None
