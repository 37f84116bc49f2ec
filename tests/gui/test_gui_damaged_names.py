"""A damaged session keeps what its readable part holds, on every backend (issue 24 item 5): the list row
shows its title (not the diagnosis), the banner the title with the status, lineage the title, the
timeline the prefix and its "Stopped here" row, and the Stats tab counts the prefix.  Corrupt and
unsupported (a newer format version) alike: both are logs the engine refuses."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import damagedkit as dk
import pytest
import sessionkit as sk
from guikit import WAIT_MS, wait_listed, wait_opened

from app.gui import style
from app.gui.models.sessions import Col, display_text
from app.gui.window.insight_wiring import row_info
from app.insight.lineage import build_lineage

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=dk.BACKENDS)
def damaged_store(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    storage = dk.storage_of(request.param, tmp_path)
    storage.parent.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(1) as pool:  # the window's event loop runs here: the builder runs its own on a thread
        pool.submit(dk.build_damaged, request.param, storage).result(timeout=60)
    return storage


@pytest.mark.parametrize("sid", [dk.CORRUPT, dk.UNSUPPORTED])
def test_a_damaged_session_keeps_its_title_prefix_and_numbers_everywhere_in_the_window(
    qtbot: Any, make_window: Any, damaged_store: Path, sid: str
) -> None:
    w = make_window(damaged_store, session=sid)
    wait_listed(qtbot, w)
    row = w.session_model.find_id(sid)
    expected_status = "corrupt" if sid == dk.CORRUPT else "unsupported"
    assert row.status == expected_status
    # The list: the title, not the diagnosis.
    assert display_text(row, Col.TITLE) == dk.TITLE[sid]
    assert row.cwd == dk.CWD
    # Lineage: the title (the window's rows are what the tree is built from).
    lineage = build_lineage([row_info(r) for r in w.session_model.rows()])
    titles = {n.info.session_id: n.title for n in lineage.nodes()}
    assert titles[sid] == dk.TITLE[sid]

    wait_opened(qtbot, w, row.key)
    qtbot.waitUntil(lambda: w.loader.current is not None and w.loader.current.loaded, timeout=WAIT_MS)
    # The banner: the title and the status.
    banner = w.banner.label.text()
    assert dk.TITLE[sid] in banner and style.STATUS_LABELS[expected_status] in banner
    assert f"({expected_status} log)" not in banner
    assert "The timeline shows" in w.timeline_pane.banner.text()  # the diagnosis banner points at the readable part
    # The timeline: the readable prefix, then the "Stopped here" row.
    tl = w.timeline_model
    qtbot.waitUntil(lambda: tl.stop_node is not None, timeout=WAIT_MS)
    readable = dk.READABLE_EVENTS if sid == dk.CORRUPT else dk.READABLE_EVENTS + len(dk.later_turn())
    assert len(tl.records) == readable
    assert tl.data(tl.index(0, 0)) == "Turn 1"
    assert tl.is_stop(tl.index(tl.rowCount() - 1, 0))
    # The Stats tab: the prefix counted, said to be partial.
    w.show_tab("stats")
    pane = w.insight.pane
    qtbot.waitUntil(lambda: pane.stats is not None, timeout=WAIT_MS)
    assert pane.stats.events == readable
    assert pane.stats.tool_calls == 1
    assert pane.stats.title == dk.TITLE[sid]


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_a_transcript_whose_header_fails_validation_is_listed_by_its_title(
    qtbot: Any, make_window: Any, tmp_path: Path, compression: str
) -> None:
    """A bad header is a listing problem (never diagnosed before): the row now also reads the readable part."""
    root = tmp_path / "root"
    header = sk.header_line(dk.CORRUPT, dk.CWD, createdAt="yesterday")  # not a count: the header fails validation
    path = sk.artifact(root, dk.CWD, dk.CORRUPT, compression)
    path.parent.mkdir(parents=True)
    path.write_bytes(sk.encode_log(header, [dk.readable_turn(dk.CORRUPT)], compression))
    w = make_window(root)
    wait_listed(qtbot, w)
    row = w.session_model.find_id(dk.CORRUPT)
    assert row.status == "corrupt" and "header" in row.reason
    qtbot.waitUntil(lambda: row.title is not None, timeout=WAIT_MS)
    assert display_text(row, Col.TITLE) == dk.TITLE[dk.CORRUPT]
