"""A store's listing in parts, for callers that list it without opening a store (worker processes).

Why: the window lists a 10,000-session root in several worker processes, each handed one part, and
re-lists only the part a file watcher saw change.  A part is a path, so it crosses a process boundary;
what a part is (a JSONL root's project folder or session folder; the links that lead out of the root)
stays the engine's: a caller only asks for the parts and lists each.  ``CoordinatedPersistence.
list_entries`` is the same listing in one call, and its rows are the same ``ListedEntry`` values.

May import: ``persistence.jsonl`` (the only layout listed in parts today), ``persistence.listing``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from persistence.jsonl.entries import (
    HeaderCache,
    jsonl_project_dirs,
    list_jsonl_project,
    list_jsonl_root_links,
    list_jsonl_session_dir,
)
from persistence.listing import ListedEntry


def listing_parts(root: str) -> list[str]:
    """The parts of the store at ``root`` in list order, ``root`` itself last (its own rows: links that
    lead out of it).  A missing root has only itself; a root that cannot be listed raises ``OSError``."""
    if not os.path.isdir(root):
        return [root]
    return [*jsonl_project_dirs(root), root]


def list_part(
    root: str, part: str, *, header_cache: HeaderCache | None = None, cancelled: Callable[[], bool] | None = None
) -> Iterator[ListedEntry]:
    """The rows of one part of the store at ``root``, in list order: ``root`` itself (its own rows), a
    project folder (its flat files, then its session folders) or a session folder.  A path deeper than
    a session folder lists the session folder holding it; a path outside ``root`` lists nothing.

    ``header_cache`` (owned by the caller) skips re-reading headers of unchanged transcripts;
    ``cancelled`` stops a long part between two rows (``ListingCancelled``).
    """
    try:
        rel = os.path.relpath(part, root)
    except ValueError:
        return iter(())
    pieces = [p for p in rel.split(os.sep) if p and p != "."]
    if pieces[:1] == [".."]:
        return iter(())
    if not pieces:
        return iter(list_jsonl_root_links(root)) if os.path.isdir(root) else iter(())
    if len(pieces) == 1:
        return list_jsonl_project(os.path.join(root, pieces[0]), header_cache=header_cache, cancelled=cancelled)
    return iter(list_jsonl_session_dir(os.path.join(root, *pieces[:2]), header_cache=header_cache))


__all__ = ["HeaderCache", "list_part", "listing_parts"]
