"""A bit-flipped index file heals (issue 21 item 4): any error reading it (a corrupt page, a stored text
that is not UTF-8, a schema that is not ours) rebuilds it with a clean message, as a missing index is,
for a search, for ``--reindex`` and for the window's index worker; never a traceback, never a codec
message.  A flip SQLite cannot see (a letter of a stored text changed into another letter) is not an
error: ``--reindex`` answers correctly whatever the flip."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
import searchkit as k
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.search import index_path, run_search
from app.search.command import SearchOutcome

pytestmark = [pytest.mark.usefixtures("fast_fsync"), pytest.mark.timeout(300)]

BACKEND = "jsonl-zstd"
QUERY = "order.ts"
RAW_CODEC_WORDS = ("codec", "Could not decode", "position", "UnicodeDecodeError")


class Built:
    """One root, its pristine index file and the right answer to ``QUERY``."""

    def __init__(self, root: str, pristine: bytes, hits: list[tuple[str, int | None]]) -> None:
        self.root = root
        self.pristine = pristine
        self.hits = hits


def hits_of(out: SearchOutcome) -> list[tuple[str, int | None]]:
    assert out.result is not None, out.notes
    return sorted(((h.session_id, h.seq) for h in out.result.hits), key=repr)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("bitflip")
    root = k.store_path(tmp, BACKEND)
    for n in range(3):
        k.run(k.write_session(root, BACKEND, f"s{n}", k.rich_log()))
    cache = str(tmp / "cache0")
    out = run_search(root, QUERY, cache_dir=cache)
    assert out.code == 0
    hits = hits_of(out)
    assert len(hits) >= 3  # the answer a healed index must give again
    path = index_path(root, "jsonl", cache)
    # A closed index: its WAL was checkpointed into the file on close.
    assert not os.path.exists(path + "-wal") or os.path.getsize(path + "-wal") == 0
    return Built(root, Path(path).read_bytes(), hits)


def place(built: Built, cache: Path, data: bytes) -> str:
    """Put ``data`` as the root's index file below the (fresh) cache folder ``cache``."""
    shutil.rmtree(cache, ignore_errors=True)
    path = index_path(built.root, "jsonl", str(cache))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Path(path).write_bytes(data)
    return path


def flip(data: bytes, offset: int, mask: int) -> bytes:
    out = bytearray(data)
    out[offset] ^= mask
    return bytes(out)


def at(data: bytes, needle: bytes, skip: int = 0) -> int:
    """The offset of the ``skip``-th byte of the first ``needle`` in the file (the test needs it there)."""
    i = data.find(needle)
    assert i >= 0, f"{needle!r} is not in the index file"
    return i + skip


def assert_clean(out: SearchOutcome) -> None:
    for word in RAW_CODEC_WORDS:
        assert word not in out.notes and word not in out.text, out.notes


# Flips SQLite or the decoder sees, each where a different read meets it: the schema text (a column
# renamed, or not UTF-8), the meta and sessions rows the open and the plan read, the rows a query reads.
SEEN_FLIPS = {
    "schema column renamed": (b"revision TEXT", 0, 0x01),  # 'sevision': no such column
    "schema text not UTF-8": (b"CREATE TABLE docs", 3, 0x80),
    "docs schema column renamed": (b"etype TEXT NOT NULL", 1, 0x01),
    "session key not UTF-8": (b"/s1/session.jsonl", 2, 0x80),
    "session reason not UTF-8": (b"balanced log", 3, 0x80),
    "hit body not UTF-8": (b"Where does the agent", 2, 0x80),
    "hit type not UTF-8": (b"tool/call", 2, 0x80),
}


@pytest.mark.parametrize("name", list(SEEN_FLIPS))
def test_a_flip_sqlite_sees_rebuilds_the_index_with_a_message(built: Built, tmp_path: Path, name: str) -> None:
    needle, skip, mask = SEEN_FLIPS[name]
    cache = tmp_path / "cache"
    place(built, cache, flip(built.pristine, at(built.pristine, needle, skip), mask))
    out = run_search(built.root, QUERY, cache_dir=str(cache))
    assert out.code == 0, out.notes
    assert "rebuilding it" in out.notes, out.notes
    assert hits_of(out) == built.hits
    assert_clean(out)
    # Healed for good: the next search reuses the rebuilt file and says nothing about damage.
    again = run_search(built.root, QUERY, cache_dir=str(cache))
    assert again.code == 0 and hits_of(again) == built.hits and "damaged" not in again.notes, again.notes


@pytest.mark.parametrize("name", list(SEEN_FLIPS))
def test_reindex_rebuilds_a_flipped_index(built: Built, tmp_path: Path, name: str) -> None:
    needle, skip, mask = SEEN_FLIPS[name]
    cache = tmp_path / "cache"
    place(built, cache, flip(built.pristine, at(built.pristine, needle, skip), mask))
    out = run_search(built.root, QUERY, cache_dir=str(cache), reindex=True)
    assert out.code == 0, out.notes
    assert hits_of(out) == built.hits
    assert "rebuilding it" in out.notes
    assert_clean(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(min_value=0.0, max_value=1.0, exclude_max=True), mask=st.integers(min_value=1, max_value=255))
def test_any_flip_never_breaks_a_search_and_reindex_always_answers(
    built: Built, tmp_path_factory: pytest.TempPathFactory, where: float, mask: int
) -> None:
    offset = int(where * len(built.pristine))
    data = flip(built.pristine, offset, mask)
    cache = tmp_path_factory.mktemp("flip")
    place(built, cache, data)
    out = run_search(built.root, QUERY, cache_dir=str(cache))  # never raises (a raise fails the test)
    assert out.code == 0, out.notes
    assert_clean(out)
    if "rebuilding it" in out.notes:
        assert hits_of(out) == built.hits, (offset, mask, out.notes)
    place(built, cache, data)
    out = run_search(built.root, QUERY, cache_dir=str(cache), reindex=True)
    assert out.code == 0 and hits_of(out) == built.hits, (offset, mask, out.notes)
    assert_clean(out)


def test_the_window_worker_heals_a_flipped_index(built: Built, tmp_path: Path) -> None:
    """The window's index thread: a flip met at open, in the plan or by a query rebuilds, then answers."""
    from app.gui.controllers.search_index import IndexWorker
    from app.search import SearchFilters

    for name in ("session key not UTF-8", "hit body not UTF-8", "schema column renamed"):
        needle, skip, mask = SEEN_FLIPS[name]
        cache = tmp_path / name.replace(" ", "-")
        place(built, cache, flip(built.pristine, at(built.pristine, needle, skip), mask))
        events: list[tuple[str, Any]] = []
        finished = threading.Event()

        def notify(
            event: str, payload: Any, events: list[tuple[str, Any]] = events, finished: threading.Event = finished
        ) -> None:
            events.append((event, payload))
            if event in ("finished", "failed"):
                finished.set()

        worker = IndexWorker(built.root, notify, cache_dir=str(cache), niceness=0)
        try:
            worker.request_full()
            assert finished.wait(60), events
            result = worker.search(QUERY, SearchFilters())
            if sorted(((h.session_id, h.seq) for h in result.hits), key=repr) != built.hits:
                # The query met the damage: the worker rebuilds, and the next query answers.
                finished.clear()
                assert finished.wait(60), events
                result = worker.search(QUERY, SearchFilters())
            assert sorted(((h.session_id, h.seq) for h in result.hits), key=repr) == built.hits, (name, events)
            assert not [e for e in events if e[0] == "failed"], events
            said = " ".join(m for e, p in events if e == "messages" for m in p)
            assert "rebuilding it" in said, (name, events)
            for word in RAW_CODEC_WORDS:
                assert word not in said, said
        finally:
            worker.close()
