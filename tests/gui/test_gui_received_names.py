"""What the window says of a damaged received transcript (issue 23 leftovers).

1. The engine names the file it read, which for a support bundle is its temporary extraction in the user's
   cache folder: the row's reason and the timeline banner must name the file inside the bundle
   (``ver.zip: session/session.jsonl.zstd``) as the command line does, never ``…/bundles/<token>/…``
   (a path that is gone once the window closes).
2. A lone transcript whose header is damaged is one bad row with its reason, as ``sessionscope list``
   shows it (and as a bad row of a root is shown), not an empty list.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import damagedkit as dk
import pytest
import sessionkit as sk
import zstandard
from guikit import WAIT_MS, wait_listed, wait_opened
from sources import bundlekit as bk  # tests/sources' builders (tests/ is on sys.path)

from app.gui.models.sessions import Col, display_text

pytestmark = pytest.mark.timeout(120)

MEMBER = "session/session.jsonl.zstd"


def damaged_bundle(tmp: Path, name: str, old: bytes, new: bytes) -> Path:
    """A bundle from our exporter whose transcript has ``old`` replaced by ``new`` (its manifest left as it was)."""

    def change(member: str, data: bytes) -> bytes:
        if not member.startswith("session/"):
            return data
        plain = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        return zstandard.ZstdCompressor().compress(plain.replace(old, new, 1))

    with ThreadPoolExecutor(1) as pool:  # the window's event loop runs here: the exporter runs its own on a thread
        good = pool.submit(bk.exported_bundle, tmp, "jsonl-zstd").result(timeout=60)
    return bk.rewrite(good, tmp / name, change=change)


def _no_extraction(text: str, extraction: Path) -> None:
    assert str(extraction) not in text and f"{os.sep}bundles{os.sep}" not in text, text


def _open(qtbot: Any, make_window: Any, path: Path) -> Any:
    w = make_window()
    w.sources.open(str(path))
    qtbot.waitUntil(lambda: w.sources.current is not None, timeout=WAIT_MS)
    wait_listed(qtbot, w)
    return w


def test_a_refused_bundle_transcript_is_named_by_its_place_in_the_bundle(qtbot: Any, make_window: Any, tmp_path: Path) -> None:
    newer = damaged_bundle(tmp_path, "ver.zip", b'"version":0', b'"version":99')
    w = _open(qtbot, make_window, newer)
    extraction = w.sources.current.parts[0].store_path
    row = w.session_model.find_id("s1")
    assert row is not None and row.status == "unsupported"
    assert f"(raw log: ver.zip: {MEMBER})" in row.reason
    _no_extraction(row.reason, extraction)
    _no_extraction(display_text(row, Col.TITLE), extraction)  # an untitled row shows its reason

    wait_opened(qtbot, w, row.key)
    qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.loaded, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "unsupported" in w.timeline_pane.banner.text(), timeout=WAIT_MS)
    banner = w.timeline_pane.banner.text()
    assert f"ver.zip: {MEMBER}" in banner
    _no_extraction(banner, extraction)
    row = w.session_model.find_id("s1")  # the open session's row follows its read: still the bundle's words
    assert f"(raw log: ver.zip: {MEMBER})" in row.reason
    _no_extraction(row.reason, extraction)
    header = {f.name: f.value for f in w.header_model.rows()}  # the Header tab: where the log is, why it is refused
    assert header["artifact"] == f"ver.zip: {MEMBER}" and f"(raw log: ver.zip: {MEMBER})" in header["reason"]


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_lone_transcript_with_a_damaged_header_is_a_bad_row(
    qtbot: Any, make_window: Any, tmp_path: Path, compression: str
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    received = inbox / "customer log.txt"
    header = sk.header_line(dk.CORRUPT, dk.CWD, createdAt="yesterday")  # not a count: the header fails validation
    received.write_bytes(sk.encode_log(header, [dk.readable_turn(dk.CORRUPT)], compression))
    w = _open(qtbot, make_window, received)
    rows = w.session_model.rows()
    assert len(rows) == 1, [(r.session_id, r.status) for r in rows]
    (row,) = rows
    assert row.status == "corrupt" and "header" in row.reason, row.reason
    qtbot.waitUntil(lambda: row.title is not None, timeout=WAIT_MS)  # its readable part still names it
    assert display_text(row, Col.TITLE) == dk.TITLE[dk.CORRUPT]
    assert w.list_pane.stack.currentWidget() is w.list_pane.table
