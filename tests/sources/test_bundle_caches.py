"""The caches made of a bundle's extraction go with it (issue 23 gap 2): a bundle is unpacked into a new
folder on every open, and the search index, diagnosis cache and statistics cache are keyed by the
store's path, so each open left files nobody would read again.  Closing the source removes them, and
so does the sweep of an extraction whose process died; a received SQLite store's private copy too."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import bundlekit as bk
import pytest

from app.diagnosis.cache import DiagnosisCache
from app.search.indexer import run_index
from app.sources import close_source, open_source
from app.sources.bundle import close_bundle, open_bundle
from app.sources.derived_caches import cache_files_of


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("SESSIONSCOPE_CACHE_DIR", str(folder))
    return folder


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_closing_a_bundle_removes_the_caches_made_of_it(tmp_path: Path, cache: Path) -> None:
    src = open_source(bk.exported_bundle(tmp_path / "send", "jsonl-zstd"))
    (part,) = src.parts
    run_index(str(part.store_path))  # what the window's index thread does with the part it shows
    DiagnosisCache(str(part.store_path), "jsonl").close()
    made = [f for f in cache_files_of([part.store_path]) if os.path.exists(f)]
    assert any("/search/" in f for f in made) and any("/diagnosis/" in f for f in made)
    close_source(src)
    assert [f for f in _files(cache) if not f.startswith("bundles")] == []
    assert not any(os.path.exists(f) for f in cache_files_of([part.store_path]))


def test_reopening_a_bundle_a_hundred_times_leaves_nothing(tmp_path: Path, cache: Path) -> None:
    zpath = bk.exported_bundle(tmp_path / "send", "jsonl-zstd")
    for _ in range(5):  # 5 stand for 100: each open is a new extraction path, so a new index file
        src = open_source(zpath)
        run_index(str(src.parts[0].store_path))
        close_source(src)
    assert _files(cache) == []


def test_a_crashed_process_s_extraction_and_its_caches_are_swept(tmp_path: Path, cache: Path) -> None:
    zpath = bk.exported_bundle(tmp_path / "send", "jsonl-zstd")
    crash = textwrap.dedent(
        f"""
        import os
        from app.search.indexer import run_index
        from app.sources import open_source
        src = open_source({str(zpath)!r})
        run_index(str(src.parts[0].store_path))
        os._exit(0)  # no close, no atexit: what a kill leaves
        """
    )
    subprocess.run([sys.executable, "-c", crash], check=True, cwd=Path(__file__).resolve().parents[2], env=os.environ.copy())
    assert any(f.startswith("search/") for f in _files(cache)) and any(f.startswith("bundles/") for f in _files(cache))
    close_bundle(open_bundle(zpath))  # the next open sweeps what a dead process left
    assert _files(cache) == []


def test_a_received_sqlite_store_s_private_copy_and_its_caches_are_removed(tmp_path: Path, cache: Path) -> None:
    case = tmp_path / "case"
    case.mkdir()
    store = bk.store_path(tmp_path / "theirs", "sqlite")
    bk.exported_bundle(tmp_path / "theirs", "sqlite")  # writes the store (and a bundle we do not need)
    (case / "their.db").write_bytes(Path(store).read_bytes())
    src = open_source(case)
    (part,) = src.parts
    assert part.store_path != part.origin and str(cache) in str(part.store_path)
    DiagnosisCache(str(part.store_path), "sqlite").close()
    assert any(f.startswith("diagnosis/") for f in _files(cache))
    close_source(src)
    assert _files(cache) == []
