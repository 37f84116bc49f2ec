"""The raw view renders lazily: SQLite rows become JSON when a line is shown, line facts when asked for.

Issue 12: the SQLite raw tab rendered every record up front (202k events: 2.6 s, ~1 GB).  These
tests pin that nothing is rendered before a line is asked for, and that what is shown, copied and
synced is byte for byte what the eager text held (``render_rows``, the old per-line scan).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, overload

import pytest
from guikit import make_turn, wait_listed, wait_opened
from hypothesis import given, settings
from hypothesis import strategies as st

from app.gui.models.raw_lines import FULL_TEXT_ROLE, RawLinesModel
from app.rawview.raw_text import (
    _KIND_OF,
    _LINE_HEAD,
    _ROW_TAGS,
    DISPLAY_LIMIT,
    K_HEADER,
    K_OTHER,
    ROW_CACHE_LINES,
    RawText,
    _row_members,
    decode_jsonl,
    decode_records,
)
from persistence import JsonlSessionPersistence, iter_raw, open_store, render_rows

pytestmark = pytest.mark.timeout(90)


class CountingRecords(Sequence[dict[str, Any]]):
    """Records that count how often one is fetched (a render fetches its record once)."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records
        self.fetched = 0

    def __len__(self) -> int:
        return len(self.records)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            self.fetched += len(range(*i.indices(len(self.records))))
        else:
            self.fetched += 1
        return self.records[i]


def eager_facts(chunk: bytes) -> list[tuple[bytes, int, int, int]]:
    """(line, kind, seq_lo, seq_hi) of every line: the per-line scan ``add_text`` used to run up front."""
    out = []
    pos, n = 0, len(chunk)
    while pos < n:
        nl = chunk.find(b"\n", pos)
        end = n if nl < 0 else nl
        lo = hi = -1
        kind = K_OTHER
        m = _LINE_HEAD.match(chunk, pos, end + 1 if nl >= 0 else end)
        if m is not None:
            lo = hi = int(m.group(3))
            kind = _KIND_OF.get(m.group(1), K_OTHER)
            if m.group(2) and m.group(1) in _ROW_TAGS:
                hi = lo + _row_members(chunk[pos:end]) - 1
        elif chunk.startswith(b'{"type":"session"', pos):
            kind = K_HEADER
        out.append((chunk[pos:end], kind, lo, hi))
        pos = n if nl < 0 else nl + 1
    return out


def lazy_facts(text: RawText) -> list[tuple[bytes, int, int, int]]:
    out = []
    for i in range(len(text)):
        seqs = text.seqs_of_line(i) or (-1, -1)
        out.append((text.line_bytes(i), text.kind(i), *seqs))
    return out


def some_events(turns: int = 4, chunks: int = 6) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for t in range(1, turns + 1):
        events += make_turn(len(events), t, f"prompt {t} · ünïcødé ✓ " + "x" * (DISPLAY_LIMIT if t == 2 else 0), chunks=chunks)
    return events


# ---------------------------------------------------------------- rows (SQLite)


def test_rows_are_rendered_only_when_a_line_is_asked_for() -> None:
    events = some_events()
    records = CountingRecords(events)
    text = decode_records(records)
    assert records.fetched == 0 and len(text) == len(events) and text.source == "rows"
    eager = render_rows(events).split(b"\n")
    assert text.line_bytes(7) == eager[7] and records.fetched == 1
    assert text.line_text(7) == eager[7].decode() and records.fetched == 1  # the repaint's second ask is cached
    assert text.decoded_size is None  # unknown without rendering every row


def test_rows_show_copy_and_sync_exactly_what_the_eager_text_held() -> None:
    events = some_events()
    lazy = decode_records(events)
    eager = RawText(source="rows")
    eager.add_text(render_rows(events))
    assert len(lazy) == len(eager)
    for i in range(len(lazy)):
        assert lazy.line_bytes(i) == eager.line_bytes(i)
        assert lazy.line_text(i) == eager.line_text(i)  # the table's (cut) display text
        assert lazy.line_text(i, None) == eager.line_text(i, None)  # what the detail pane and a copy get
        assert lazy.line_size(i) == eager.line_size(i)
    assert lazy_facts(lazy) == eager_facts(render_rows(events))
    long_line = next(i for i in range(len(lazy)) if lazy.line_size(i) > DISPLAY_LIMIT)
    assert lazy.line_text(long_line).endswith(f" … (+{lazy.line_size(long_line) - DISPLAY_LIMIT} bytes)")
    for seq in range(len(events)):
        assert lazy.line_for_seq(seq) == seq
    assert lazy.line_for_seq(len(events)) == -1
    assert b"\n".join(lazy.iter_lines()) == render_rows(events)


def test_rows_grow_after_bytes_and_markers_and_keep_their_numbers() -> None:
    events = some_events()
    text = RawText()
    text.add_marker("no raw text: waiting", provisional=False)
    text.add_text(b'{"type":"session","version":0}\nplain line')
    text.extend(decode_records(events[:10]))
    text.extend(decode_records(events[10:]))
    assert len(text) == 3 + len(events)
    for i, ev_line in enumerate(render_rows(events).split(b"\n")):
        assert text.line_bytes(3 + i) == ev_line
    assert text.line_for_seq(10) == 13 and text.seqs_of_line(13) == (10, 10)
    assert text.kind(1) == K_HEADER and text.seqs_of_line(0) is None and text.line_text(0).endswith("waiting")


def test_the_row_cache_is_bounded() -> None:
    events = some_events(turns=30, chunks=40)
    assert len(events) > 2 * ROW_CACHE_LINES
    text = decode_records(events)
    for i in range(len(text)):
        text.line_text(i)
    assert len(text.rows._cache) == ROW_CACHE_LINES


def test_rows_model_passes_the_model_tester(qtmodeltester: Any) -> None:
    events = some_events()
    model = RawLinesModel()
    model.set_text(decode_records(events))
    qtmodeltester.check(model)
    model.apply_growth(decode_records(make_turn(len(events), 5, "more")))
    qtmodeltester.check(model)
    assert model.rowCount() == len(events) + len(make_turn(0, 5, "more"))
    idx = model.index(3, 1)
    assert model.data(idx, FULL_TEXT_ROLE) == render_rows(events).split(b"\n")[3].decode()


# ---------------------------------------------------------------- JSONL bytes


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_jsonl_line_facts_looked_up_lazily_equal_the_eager_scan(arun: Any, tmp_path: Path, compression: str) -> None:
    async def write() -> Path:
        store = JsonlSessionPersistence(tmp_path, compression=compression)
        try:
            await store.create({"id": "s", "createdAt": 1, "cwd": "/w"})
            await store.append("s", some_events(turns=6, chunks=30))
        finally:
            await store.close()
        return next(tmp_path.rglob("session.jsonl*"))

    data = arun(write()).read_bytes()
    text = decode_jsonl(data, compression)
    expected: list[tuple[bytes, int, int, int]] = []
    for piece in iter_raw(data, compression):
        expected += eager_facts(piece.text)  # type: ignore[union-attr]
    assert lazy_facts(text) == expected
    assert any(hi > lo for _line, _kind, lo, hi in expected)  # packed chunk rows were there to count
    n_events = max(hi for *_rest, hi in expected) + 1
    for seq in range(n_events):
        lo, hi = text.seqs_of_line(text.line_for_seq(seq)) or (-1, -1)
        assert lo <= seq <= hi
    assert text.line_for_seq(n_events) == -1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=8), st.booleans(), st.integers(0, 3))
def test_bulk_line_split_equals_the_old_loop(lines: list[bytes], final_newline: bool, prefix_lines: int) -> None:
    chunk = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    text = RawText()
    text.add_text(b"\n".join(b"p%d" % i for i in range(prefix_lines)))  # appended after other lines
    before = len(text)
    text.add_text(chunk)
    assert [text.line_bytes(i) for i in range(before, len(text))] == [line for line, *_ in eager_facts(chunk)]


# ---------------------------------------------------------------- the window on a SQLite store


def test_sqlite_window_renders_only_what_it_shows_and_syncs_both_ways(
    qtbot: Any, make_window: Any, arun: Any, tmp_path: Path
) -> None:
    db = tmp_path / "store" / "sessions.sqlite"
    db.parent.mkdir(mode=0o700)
    events = some_events(turns=8, chunks=150)

    async def write() -> list[dict[str, Any]]:
        store = open_store(str(db), "sqlite")
        try:
            await store.create({"id": "big", "createdAt": 1, "cwd": "/w"})
            await store.append("big", events)
            return (await store.inspect("big")).events.to_json()
        finally:
            await store.close()

    stored = arun(write())
    w = make_window(db)
    wait_listed(qtbot, w, details=False)
    row = next(r for r in w.session_model.rows() if r.session_id == "big")
    assert w.select_session("big")
    wait_opened(qtbot, w, row.key)
    raw, tl = w.raw_model, w.timeline_model
    text = raw.text
    assert text.source == "rows" and raw.rowCount() == len(events) > 2 * ROW_CACHE_LINES
    qtbot.wait(50)
    assert len(text.rows._cache) <= ROW_CACHE_LINES  # a screenful was rendered, not the store
    eager = render_rows(stored).split(b"\n")
    for i in (0, 500, len(events) - 1):
        assert raw.data(raw.index(i, 1), FULL_TEXT_ROLE) == eager[i].decode()
    # Timeline -> raw: a tool row selects the raw line of its tool/call event.
    turn = tl.index(tl.rowCount() - 1, 0)
    w.timeline_pane.tree.expand(turn)
    step = next(tl.index(i, 0, turn) for i in range(tl.rowCount(turn)) if tl.node(tl.index(i, 0, turn)).kind == "step")
    tool = next(tl.index(i, 0, step) for i in range(tl.rowCount(step)) if tl.node(tl.index(i, 0, step)).kind == "tool")
    w.timeline_pane.select_index(tool)
    line = w.raw_pane.current_line()
    assert line == tl.node(tool).first_seq and '"tool/call"' in text.line_text(line)
    # Raw -> timeline: a chunk line selects the block its chunk streamed into.
    chunk_line = next(i for i in range(30, len(events)) if '"assistant/chunk"' in text.line_text(i))
    w.raw_pane.select_line(chunk_line)
    current = tl.node(w.timeline_pane.tree.currentIndex())
    assert current is not None and (current.seq == chunk_line or chunk_line in current.seqs)
    assert '"assistant/chunk"' in w.raw_pane.detail.toPlainText()
