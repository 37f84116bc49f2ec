"""The session list without Qt: what a root holds, and the list's rows in order, filtered, marked unseen.

- ``root_scan``     every session artifact under a JSONL root as ``FoundArtifact`` rows (a worker process
                    runs it; headers only, statuses come later from the engine's ``diagnose``)
- ``session_list``  ``SessionList``: the rows, the sort order, the filter and the unseen marks, as a plain
                    evented model; a ``ListObserver`` hears each change (the window's ``SessionListModel``
                    is a thin Qt adapter that turns them into Qt signals)
- ``unseen``        which sessions changed since the user last looked (the looked-at state of one root)

Why a package of its own: this is the list's logic, and it is tested and measured without a window.
Import rule: the standard library and the public ``persistence`` package only; never Qt, ``app.gui``,
``app.actions`` or ``app.cli`` (a ``forbidden`` contract in pyproject.toml checks it).
"""

from __future__ import annotations

from app.listing.session_list import BULK_INSERT, ListedRow, ListObserver, SessionList
from app.listing.unseen import SEEN_MAX_PER_ROOT, SeenState

__all__ = ["BULK_INSERT", "SEEN_MAX_PER_ROOT", "ListObserver", "ListedRow", "SeenState", "SessionList"]
