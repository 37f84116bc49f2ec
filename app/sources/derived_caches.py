"""The cache files the window keeps of a store that is ours alone — a bundle's extraction, a private copy of
a received SQLite store — and their removal when that store goes (issue 23 gap 2).

Why: the search index, the diagnosis cache and the statistics cache are each one file per store in the
user's cache folder (``<cache>/search/index-<key>.sqlite``, ``<cache>/diagnosis/<key>.sqlite``,
``<cache>/insight/<key>…``), keyed by the store's real path.  A bundle is unpacked into a new folder on
every open, so every open left a new index (52 KB for a one-turn session, growing with a session's
text) that nothing would ever read again: 100 opens of a bundle, 100 orphans.  Keying them by
the bundle's content instead would keep one per bundle ever opened; removing them with the extraction
keeps none, and a reopen of a small bundle re-indexes in well under a second.

Removed: when the source closes (``close_source``), when a dead process's extraction is swept
(``bundle_extractions.sweep``: a crash leaves no index behind either), and by the window once more at
shutdown (an index thread still closing when the source closed may write its file again).  The keys
are computed by the caches' own path functions for every store kind a file can be opened as.

May import the standard library and the caches' path functions (imported when first needed: the
command line's other verbs never pay for them).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

COMPANIONS = ("", "-wal", "-shm", "-journal")  # a cache file and what SQLite keeps beside it (app.cache_db's)
KINDS = ("jsonl", "sqlite")  # what a file of ours can be opened as (a transcript, a store copy)


CACHE_MODULES = ("app.search.location", "app.diagnosis.cache", "app.insight.cache")


def cache_files_of(store_paths: Iterable[Path | str], *, loaded_only: bool = False) -> list[str]:
    """Every cache file the window or the command line may have made of these stores (existing or not).

    ``loaded_only``: ask only the cache modules this process has imported (at interpreter exit, when
    importing one would fail; a cache module this process never loaded made no file of its extraction).
    """
    paths: list[Callable[[str, str], str]] = []
    for name in CACHE_MODULES:
        if loaded_only and name not in sys.modules:
            continue
        module = importlib.import_module(name)
        paths.append(module.index_path if name.startswith("app.search") else module.cache_path)
    out: list[str] = []
    for store in store_paths:
        path = os.fspath(store)
        out += [where(path, kind) for kind in KINDS for where in paths]
    return out


def files_below(folder: Path | str) -> list[str]:
    """Every regular file below ``folder`` (an extraction: a handful), links never followed."""
    found: list[str] = []
    for dirpath, _dirs, names in os.walk(folder):
        found += [os.path.join(dirpath, n) for n in names if os.path.isfile(os.path.join(dirpath, n))]
    return found


def remove_cache_files(paths: Iterable[str]) -> None:
    """Delete each cache file and its SQLite companions (``-wal``, ``-shm``, ``-journal``); missing is fine."""
    for path in paths:
        for suffix in COMPANIONS:
            try:
                os.remove(path + suffix)
            except FileNotFoundError:
                pass
            except OSError:
                pass  # a cache that cannot be removed now is removed by the window's next pass


__all__ = ["cache_files_of", "files_below", "remove_cache_files"]
