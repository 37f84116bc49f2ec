"""Qt-free helpers: the root walk, segment decoding and the raw line index agree with the engine.

(The window decodes folder names with the engine's ``decode_segment`` now: one decoder, one meaning.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from guikit import UPSTREAM, copy_private, need_upstream
from hypothesis import given
from hypothesis import strategies as st

from app.listing.root_scan import scan_root, session_dir_of
from app.rawview.raw_text import decode_jsonl, decode_records
from persistence import decode_segment, open_store
from persistence.jsonl.paths import encode_segment

pytestmark = pytest.mark.timeout(60)


@given(st.text(min_size=1, max_size=40))
def test_decode_segment_inverts_the_engines_encoding(raw: str) -> None:
    if "\ud800" <= raw[:1] <= "\udfff":
        return
    assert decode_segment(encode_segment(raw)) == raw


def test_scan_matches_the_engine_listing(arun: Any, tmp_path: Path) -> None:
    need_upstream()
    root = copy_private(UPSTREAM / "jsonl-zstd" / "many-sessions" / "root", tmp_path / "many")

    async def engine() -> list[tuple[str, str]]:
        store = open_store(root)
        try:
            return [(s.header.id, s.revision) for s in await store.list_snapshots()]
        finally:
            await store.close()

    found = scan_root(str(root))
    assert [(a.session_id, a.revision) for a in found] == arun(engine())
    batches: list[int] = []
    scan_root(str(root), batch_size=7, on_batch=lambda b: batches.append(len(b)))
    assert sum(batches) == len(found) and max(batches) == 7
    some = found[0]
    assert session_dir_of(str(root), some.path) == str(Path(some.path).parent)


@pytest.mark.parametrize("encoding", ["jsonl-zstd", "jsonl-none"])
def test_raw_text_equals_read_raw_and_maps_seqs(arun: Any, tmp_path: Path, encoding: str) -> None:
    need_upstream()
    root = copy_private(UPSTREAM / encoding / "balanced" / "root", tmp_path / "r")
    sid = "a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"

    async def engine() -> tuple[str, int]:
        store = open_store(root)
        try:
            raw = await store.read_raw(sid)
            ins = await store.inspect(sid)
            assert raw is not None
            return raw.content, len(ins.events)
        finally:
            await store.close()

    content, n_events = arun(engine())
    path = next(root.rglob("session.jsonl*"))
    text = decode_jsonl(path.read_bytes(), "zstd" if encoding == "jsonl-zstd" else "none")
    lines = [text.line_text(i, None) for i in range(len(text))]
    assert "\n".join(lines) + "\n" == content
    for seq in (0, 9, 30, n_events - 1):  # seq 9..58 sit inside one packed reasoning-chunks row
        line = text.line_for_seq(seq)
        lo, hi = text.seqs_of_line(line)
        assert lo <= seq <= hi
    assert text.seqs_of_line(0) is None  # the header line holds no event
    assert text.line_for_seq(n_events) == -1


def test_torn_and_corrupt_artifacts_decode_what_they_can(tmp_path: Path) -> None:
    need_upstream()
    torn = next((UPSTREAM / "jsonl-none" / "torn-tail" / "half-line" / "before" / "root").rglob("session.jsonl"))
    text = decode_jsonl(torn.read_bytes(), "none")
    assert text.tail_from >= 0 and any("torn tail" in m for m in text.markers.values())
    zst = next((UPSTREAM / "jsonl-zstd" / "balanced" / "root").rglob("session.jsonl.zstd")).read_bytes()
    bad = bytearray(zst)
    bad[len(bad) // 2] ^= 0xFF
    text = decode_jsonl(bytes(bad), "zstd")
    assert len(text) > 1 and any("failed to decode" in m or "undecodable" in m for m in text.markers.values())
    rows = decode_records([{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}])
    assert rows.line_for_seq(0) == 0 and rows.source == "rows"


@pytest.mark.parametrize(
    ("line", "members"),
    [
        (
            b'{"type":"text-chunks","seq0":4,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[1,2,3],"texts":["a","b","c","d"]}}',
            4,
        ),
        (b'{"type":"text-chunks","seq0":4,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}', 1),
        # an escaped "dt":[ inside the call id comes first and must not be counted
        (
            b'{"type":"tool-call-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"id":"x\\"dt\\":[9,9,9]",'
            b'"dt":[5,-1],"args":["a","b","c"]}}',
            3,
        ),
        # texts that mention "dt":[ after the real one do not matter
        (
            b'{"type":"text-chunks","seq0":0,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[7],'
            b'"texts":["\\"dt\\":[1,2,3,4]","b"]}}',
            2,
        ),
    ],
)
def test_packed_row_member_count_without_a_full_parse(line: bytes, members: int) -> None:
    from app.rawview.raw_text import _row_members

    assert _row_members(line) == members
