"""The committed-region line scanner and raw torn-tail recovery (jsonl-backend §8, §10, §15.3 cases 22-34)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sessionkit import (
    ONE_TURN_LINES,
    artifact,
    completed_turn2,
    encode_log,
    header_line,
    meta,
    one_turn_log,
    open_turn2,
    plant,
    run,
    seqs_of,
    step_start,
    turn_end,
    turn_start,
    types_of,
    wire,
)

from persistence import JsonlSessionPersistence, SessionPersistenceError, SessionStorageCorruptError
from persistence.jsonl.lines import LineScanner
from persistence.model.jsontext import js_dumps

pytestmark = pytest.mark.usefixtures("fast_fsync")

HEADER = js_dumps(header_line("s", "/proj")) + b"\n"


def line(record: dict[str, Any] | bytes) -> bytes:
    return (record if isinstance(record, bytes) else js_dumps(record)) + b"\n"


def scan(*records: dict[str, Any] | bytes) -> LineScanner:
    scanner = LineScanner(len(HEADER))
    scanner.write(b"".join(line(r) for r in records))
    scanner.finish()
    return scanner


def test_case_22_unterminated_record_is_ignored_and_finish_is_final() -> None:
    """§15 case 22."""
    ev0 = js_dumps(turn_start(0, 1))
    scanner = LineScanner(len(HEADER))
    scanner.write(ev0)
    assert scanner.events == []
    scanner.write(b"\nignored torn tail")
    scanner.finish()
    assert scanner.events == [turn_start(0, 1)]
    assert scanner.committed_bytes == len(HEADER) + len(ev0) + 1
    assert scanner.input_bytes == len(HEADER) + len(ev0) + len(b"\nignored torn tail")
    with pytest.raises(SessionPersistenceError, match="finished"):
        scanner.write(b"more")


def test_case_23_unparsable_line_without_later_turn_end_is_tolerated() -> None:
    """§15 case 23."""
    scanner = scan(turn_start(0, 1), b"{not json", step_start(1, 1, 1))
    assert scanner.events == [turn_start(0, 1)]
    assert scanner.committed_bytes == len(HEADER) + len(line(turn_start(0, 1)))
    assert scanner.issue is not None and "unparsable committed event at line 2" in str(scanner.issue)


def test_case_24_turn_end_gap_raises_immediately() -> None:
    """§15 case 24."""
    scanner = LineScanner(len(HEADER))
    with pytest.raises(
        SessionStorageCorruptError, match=r"^corrupt session log: seq gap in committed region at line 1 \(expected 0, got 1\)$"
    ):
        scanner.write(line(turn_end(1, 1)))


def test_case_25_utf8_split_across_writes() -> None:
    """§15 case 25: a record split inside the UTF-8 bytes of 你 scans like the whole buffer."""
    ev0 = turn_start(0, 1)
    ev1 = {"type": "session/title", "seq": 1, "time": 2, "data": {"title": "你好"}}
    body = line(ev0) + line(ev1)
    split = body.index("你".encode()) + 1
    whole = scan(ev0, ev1)
    scanner = LineScanner(len(HEADER))
    scanner.write(body[:split])
    assert scanner.input_bytes == len(HEADER) + split
    assert len(scanner.events) == 1
    scanner.write(body[split:])
    scanner.finish()
    assert scanner.events == whole.events == [ev0, ev1]
    assert scanner.committed_bytes == whole.committed_bytes == len(HEADER) + len(body)


def test_case_26_gap_without_turn_end_drops_the_tail() -> None:
    """§15 case 26."""
    assert seqs_of(scan(turn_start(0, 1), step_start(2, 1, 1)).events) == [0]


def test_case_27_gap_before_a_turn_end_is_corruption() -> None:
    """§15 case 27 / session-model §8 rule 45."""
    with pytest.raises(SessionStorageCorruptError, match=r"seq gap in committed region at line 2 \(expected 1, got 2\)"):
        scan(turn_start(0, 1), step_start(2, 1, 1), turn_end(3, 1))


def test_case_28_unparsable_line_before_a_turn_end_is_corruption() -> None:
    """§15 case 28 / session-model §8 rule 45."""
    with pytest.raises(SessionStorageCorruptError, match=r"^corrupt session log: unparsable committed event at line 1$"):
        scan(b"{not json", turn_end(1, 1))


def test_case_29_header_only() -> None:
    """§15 case 29."""
    scanner = LineScanner(len(HEADER))
    scanner.finish()
    assert scanner.events == [] and scanner.committed_bytes == len(HEADER)


def test_case_29_header_only_file_loads_empty(tmp_path: Path) -> None:
    """§15 case 29 through the backend: nothing to repair, the file is untouched."""
    path = plant(tmp_path, "--proj--/s", HEADER, "none")

    async def body() -> None:
        loaded = await JsonlSessionPersistence(tmp_path, compression="none").load("s")
        assert wire(loaded.events) == []

    run(body())
    assert path.read_bytes() == HEADER


def test_case_30_tolerated_tails() -> None:
    """§15 case 30 / session-model §8 rule 44."""
    assert seqs_of(scan(turn_start(0, 1), b"{not json").events) == [0]
    assert seqs_of(scan(turn_start(0, 1), turn_end(1, 1), step_start(9, 2, 1)).events) == [0, 1]


@pytest.mark.parametrize("tail", [b"42", b"[1,2]", b"", b"\0" * 10, b"{garbage"])
def test_non_object_and_garbage_lines_are_tolerated_tails(tail: bytes) -> None:
    """§10 (verified upstream): scalars, arrays, empty lines and NUL bytes after an open turn are torn tails."""
    scanner = scan(turn_start(0, 1), tail)
    assert seqs_of(scanner.events) == [0]
    assert scanner.committed_bytes == len(HEADER) + len(line(turn_start(0, 1)))
    assert scanner.issue is not None


def test_null_line_is_corruption() -> None:
    """§16 point 1 (port decision): a ``null`` line is reported as corruption, wherever it is."""
    for records in ((turn_start(0, 1), b"null"), (turn_start(0, 1), b"null", turn_end(2, 1))):
        with pytest.raises(SessionStorageCorruptError, match="unparsable committed event at line 2"):
            scan(*records)


def test_later_unparsable_lines_do_not_raise_only_turn_end_does() -> None:
    """§10: after the first defect, only a parseable ``turn/end`` (any seq) raises the *first* defect."""
    scanner = scan(turn_start(0, 1), b"{bad", b"{also bad", step_start(7, 1, 1))
    assert seqs_of(scanner.events) == [0]
    with pytest.raises(SessionStorageCorruptError, match=r"at line 2$"):
        scan(turn_start(0, 1), b"{bad", b"{also bad", turn_end(99, 1))


def test_scanner_number_and_key_semantics() -> None:
    """§10 (verified upstream): ``seq: 5.0`` is 5, duplicate keys keep the last value, CRLF is fine,
    ``true`` never matches a seq, a 20-digit integer comes back rounded."""
    e0 = b'{"type":"turn/start","seq":99,"time":1,"data":{"turn":1},"seq":0.0}\r'
    e1 = b'{"type":"session/title","seq":1,"time":2,"data":{"n":12345678901234567890}}'
    scanner = scan(e0, e1)
    assert scanner.events[0] == {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}
    assert list(scanner.events[0]) == ["type", "seq", "time", "data"]
    assert js_dumps(scanner.events[1]["data"]) == b'{"n":12345678901234567000}'
    gap = scan(turn_start(0, 1), {**turn_end(1, 1), "seq": True, "type": "step/start"})
    assert seqs_of(gap.events) == [0]
    assert "got true" in str(gap.issue)


def _raw_one_turn(tmp_path: Path, extra: bytes = b"", session_id: str = "s1") -> Path:
    head = js_dumps(header_line(session_id, "/proj")) + b"\n"
    return plant(tmp_path, f"--proj--/{session_id}", head + ONE_TURN_LINES.encode() + extra, "none")


def test_case_31_raw_torn_fragment_after_open_turn(tmp_path: Path) -> None:
    """§15 case 31 / session-model §8 rule 43: truncate the fragment, append closers, continue at 10."""
    open2 = b"".join(line(e) for e in open_turn2())
    path = _raw_one_turn(tmp_path, open2 + b'{"type":"assistant/chunk","seq":8,"ti')
    committed = path.read_bytes()[: -len(b'{"type":"assistant/chunk","seq":8,"ti')]

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        loaded = wire((await store.load("s1")).events)
        assert seqs_of(loaded) == list(range(10))
        assert loaded[8] == {"type": "step/end", "seq": 8, "time": 8, "data": {"turn": 2, "step": 1}}
        assert loaded[9] == {"type": "turn/end", "seq": 9, "time": 8, "data": {"turn": 2, "reason": {"kind": "interrupted"}}}
        assert "assistant/chunk" not in types_of(loaded)
        assert path.read_bytes() == committed + line(loaded[8]) + line(loaded[9])
        await store.append("s1", [turn_start(10, 3), turn_end(11, 3)])
        assert seqs_of((await JsonlSessionPersistence(tmp_path, compression="none").load("s1")).events) == list(range(12))

    run(body())


def test_case_32_balanced_log_with_torn_tail(tmp_path: Path) -> None:
    """§15 case 32: ``\\n{"partial`` is an empty line (tolerated) plus a fragment; committed bytes never change."""
    path = _raw_one_turn(tmp_path, b'\n{"partial')
    original = path.read_bytes()[: -len(b'\n{"partial')]

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression="none")
        assert wire((await store.load("s1")).events) == one_turn_log()
        assert path.read_bytes() == original
        await store.append("s1", completed_turn2())

    run(body())
    data = path.read_bytes()
    assert data.startswith(original)
    assert data[len(original) :] == b"".join(line(e) for e in completed_turn2())


def test_case_33_single_open_turn(tmp_path: Path) -> None:
    """§15 case 33 / session-model §8 rule 36."""
    head = js_dumps(header_line("solo", "/proj")) + b"\n"
    plant(tmp_path, "--proj--/solo", head + line(turn_start(0, 1)), "none")

    async def body() -> None:
        loaded = wire((await JsonlSessionPersistence(tmp_path, compression="none").load("solo")).events)
        assert types_of(loaded) == ["turn/start", "turn/end"]
        assert loaded[1] == {"type": "turn/end", "seq": 1, "time": 1, "data": {"turn": 1, "reason": {"kind": "interrupted"}}}

    run(body())


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_case_34_header_id_rewritten(tmp_path: Path, compression: str) -> None:
    """§15 case 34: the requested id must match the header id; nothing is written."""

    async def setup() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        for sid in ("identity-a", "identity-b"):
            await store.create(meta(sid, "/proj"))
            await store.append(sid, one_turn_log() + open_turn2())

    run(setup())
    path_a = artifact(tmp_path, "/proj", "identity-a", compression)
    path_a.write_bytes(encode_log(header_line("identity-b", "/proj"), [one_turn_log() + open_turn2()], compression))
    before = {p: p.read_bytes() for p in tmp_path.rglob("session.jsonl*")}

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        for call in (store.load("identity-a"), store.inspect("identity-a"), store.append("identity-a", [turn_end(8, 2)])):
            with pytest.raises(SessionStorageCorruptError) as info:
                await call
            assert str(info.value) == (
                f'corrupt session log "{path_a}": requested id "identity-a" does not match header id "identity-b"'
            )
        # list() has no requested id, so it sees a duplicate id.
        with pytest.raises(SessionPersistenceError, match=r'duplicate JSONL session id "identity-b"|and cwd identify'):
            await store.list()

    run(body())
    assert {p: p.read_bytes() for p in tmp_path.rglob("session.jsonl*")} == before


@pytest.mark.parametrize(
    ("event", "phrase"),
    [
        (
            {"type": "request/header-delta", "seq": 1, "time": 2, "data": {}},
            'session "s1" contains unsupported legacy request/header-delta event at seq 1',
        ),
        (
            {"type": "mode/set", "seq": 1, "time": 2, "data": {"mode": "plan"}},
            'session "s1" contains unsupported legacy mode/set event at seq 1',
        ),
        (
            {"type": "request/header", "seq": 1, "time": 2, "data": {"reason": "fallback"}},
            'session "s1" contains unsupported legacy request/header reason "fallback" at seq 1',
        ),
    ],
    ids=["header-delta", "mode-set", "fallback"],
)
@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_case_92_stored_legacy_vocabulary_is_refused(
    tmp_path: Path, compression: str, event: dict[str, Any], phrase: str
) -> None:
    """§15 case 92 / contract S-54, S-55: written by hand (append refuses it); load wraps, read_from does not."""
    from persistence import SessionPersistenceCorruptionError

    plant(tmp_path, "--proj--/s1", encode_log(header_line("s1", "/proj"), [[turn_start(0, 1), event]], compression), compression)

    async def body() -> None:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        with pytest.raises(SessionPersistenceCorruptionError) as wrapped:
            await store.load("s1")
        assert str(wrapped.value) == f'stored session "s1" failed validation: Error: {phrase}'
        with pytest.raises(SessionPersistenceError) as plain:
            await store.read_from("s1", 0)
        assert str(plain.value) == phrase
        assert not isinstance(plain.value, SessionPersistenceCorruptionError)

    run(body())
