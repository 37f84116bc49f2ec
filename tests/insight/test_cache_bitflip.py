"""A bit-flipped statistics cache heals (issue 21 item 4): any error reading it (a stored text that is not
UTF-8, a schema that is not ours, a corrupt page) rebuilds it with a clean message, for an update and for
the dashboard's reads on the window's statistics thread; never a traceback, never a codec message."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import insightkit as ik
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.insight import InsightCache, RootFilter, aggregate
from app.insight.cache import cache_path

BACKEND = "jsonl-none"
RAW_CODEC_WORDS = ("codec", "Could not decode", "position", "UnicodeDecodeError")


class Built:
    def __init__(self, root: str, pristine: bytes, totals: Any, summaries: list[dict[str, Any]]) -> None:
        self.root = root
        self.pristine = pristine
        self.totals = totals
        self.summaries = summaries


def _answer(cache: InsightCache) -> tuple[Any, list[dict[str, Any]]]:
    return aggregate(cache.conn, RootFilter(utc_offset_s=0), None), [s.to_json() for s in cache.summaries()]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("insight-bitflip")
    root = ik.store_path(tmp, BACKEND)
    ik.run(ik.write_sessions(root, BACKEND, {f"sess-{n}": (ik.rich_session(n, 3), {}) for n in range(3)}))
    file = str(tmp / "pristine.sqlite")
    cache = InsightCache(ik.reader(root, BACKEND), cache_file=file)
    try:
        ik.run(cache.update())
        totals, summaries = _answer(cache)
    finally:
        ik.run(cache.aclose())
    assert totals.sessions == 3 and totals.top_tools
    return Built(root, Path(file).read_bytes(), totals, summaries)


def flipped(built: Built, needle: bytes | None, skip: int, mask: int) -> bytes:
    if needle is None:  # a session's revision: the first copy in the file is its ``sessions`` column
        needle = str(built.summaries[1]["revision"]).encode()
    data = bytearray(built.pristine)
    i = data.find(needle)
    assert i >= 0, f"{needle!r} is not in the cache file"
    data[i + skip] ^= mask
    return bytes(data)


def place(file: Path, data: bytes) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(file) + suffix).unlink(missing_ok=True)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)


def assert_clean(messages: list[str]) -> None:
    text = " ".join(messages)
    for word in RAW_CODEC_WORDS:
        assert word not in text, text


# Flips met by the open (the schema), by an update (the revisions it compares) and only by the
# dashboard's reads (a tool's name).
SEEN_FLIPS: dict[str, tuple[bytes | None, int, int]] = {
    "schema column renamed": (b"revision TEXT", 0, 0x01),
    "schema text not UTF-8": (b"CREATE TABLE tools", 3, 0x80),
    "revision not UTF-8": (None, 2, 0x80),
    "tool name not UTF-8": (b"read_file", 2, 0x80),
}


@pytest.mark.parametrize("name", [n for n in SEEN_FLIPS if n != "tool name not UTF-8"])  # the dashboard's alone
def test_a_flipped_cache_is_rebuilt_by_an_update_and_answers(built: Built, tmp_path: Path, name: str) -> None:
    file = tmp_path / "cache.sqlite"
    place(file, flipped(built, *SEEN_FLIPS[name]))
    cache = InsightCache(ik.reader(built.root, BACKEND), cache_file=str(file))
    try:
        ik.run(cache.update())
        totals, summaries = _answer(cache)
        assert (totals, summaries) == (built.totals, built.summaries)
        assert any("rebuilding it" in m for m in cache.messages), cache.messages
        assert_clean(cache.messages)
    finally:
        ik.run(cache.aclose())


@pytest.mark.parametrize("name", list(SEEN_FLIPS))
def test_the_dashboard_thread_heals_a_flipped_cache(built: Built, tmp_path: Path, name: str) -> None:
    from app.gui.controllers.insight_cache import InsightWorker

    cache_dir = tmp_path / "cache"
    place(Path(cache_path(built.root, "jsonl", str(cache_dir))), flipped(built, *SEEN_FLIPS[name]))
    worker = InsightWorker(built.root, cache_dir=str(cache_dir), niceness=0)
    try:
        assert worker.alive, worker.error
        worker.update().result(60)
        totals = worker.totals(RootFilter(utc_offset_s=0), None).result(60)
        assert totals == built.totals
        messages = worker.messages().result(60)
        assert any("rebuilding it" in m for m in messages), messages
        assert_clean(messages)
    finally:
        worker.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(min_value=0.0, max_value=1.0, exclude_max=True), mask=st.integers(min_value=1, max_value=255))
def test_any_flip_never_breaks_an_update_or_the_dashboard(
    built: Built, tmp_path_factory: pytest.TempPathFactory, where: float, mask: int
) -> None:
    data = bytearray(built.pristine)
    offset = int(where * len(data))
    data[offset] ^= mask
    folder = tmp_path_factory.mktemp("flip")
    file = folder / "cache.sqlite"
    place(file, bytes(data))
    cache = InsightCache(ik.reader(built.root, BACKEND), cache_file=str(file))
    try:
        ik.run(cache.update())  # never raises (a raise fails the test)
        said = list(cache.messages)
        if any("rebuilding it" in m for m in said):
            assert _answer(cache) == (built.totals, built.summaries), (offset, mask, said)
        assert_clean(said)
    finally:
        ik.run(cache.aclose())
    shutil.rmtree(folder, ignore_errors=True)
    assert not os.path.exists(file)
