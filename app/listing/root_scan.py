"""Every session artifact under a JSONL root, as the list's ``FoundArtifact`` rows (no Qt).

The engine's ``list()`` raises on a foreign layout and skips a log whose header line is unreadable,
unrepresentable or behind a symlink, but a viewer must show every log it finds.  The engine's one
lenient walk does that (``persistence.listing_parts``/``list_part``: one ``ListedEntry`` per
transcript or bad entry, in list order, a part at a time); this module only words each entry as a row of the window's
list: ``<root>/<project dir>/<session dir>/session.jsonl[.zstd]`` and stray flat files
(``<project>/<id>.jsonl``, which make the engine refuse the whole root) alike.  Every entry the walk
cannot use (an unreadable folder, a symlink, a header with a number outside JSON's range) is one
bad row with its reason, never a failed listing.

Only headers are read here (the first zstd frame or the first line); statuses come later from the
engine's ``diagnose``.  The functions take paths, so a worker *process* runs them (the window's
``app.gui.runtime.worker_processes``); ``header_cache`` is the engine's ``HeaderCache``, owned by the caller.

May import: the public ``persistence`` package and the standard library.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from persistence import HeaderCache, ListedEntry, list_part, listing_parts

UNREADABLE = "unreadable"  # row status (and ``ListedEntry.kind``) of an entry the OS refuses to read
_SESSION = "session"  # ``ListedEntry.kind`` of a good session row
_PROJECT_LEVEL = "project"  # ``ListedEntry.level`` of a project folder's problem
_TRANSCRIPT_LEVEL = "transcript"  # ``ListedEntry.level`` of a transcript's problem


@dataclass(frozen=True, slots=True)
class FoundArtifact:
    """One session artifact on disk, with its header when that line can be read."""

    key: str  # unique row key: the artifact path
    path: str
    project: str  # project directory name (the lossy cwd key, or _no-cwd)
    dir_name: str  # session directory name (the encoded id)
    compression: str  # "zstd" | "none" ("" for a problem row that is not a transcript)
    size: int | None
    mtime_ns: int | None
    revision: str
    meta: dict[str, Any] | None
    problem: str | None = None  # why the header could not be used (listed as corrupt/unsupported)
    problem_status: str | None = None  # "corrupt" | "unsupported" | "unreadable"
    session_id: str = ""  # the header's id, else the id the folder name encodes (the engine's reading)

    @property
    def dev_ino(self) -> str:
        return ":".join(self.revision.split(":")[:2])


def found_artifact(e: ListedEntry) -> FoundArtifact:
    """The list row of one engine listing entry (the wording of bad rows is the window's own)."""
    path = e.path or ""
    project = os.path.basename(e.project or "")
    name = e.folder_name or os.path.basename(path)
    compression = e.compression or ""
    if e.kind == _SESSION or (e.revision is not None and e.kind != UNREADABLE):
        # A good row, a bad header or a flat file: a transcript that could be stat'ed.
        return FoundArtifact(
            path,
            path,
            project,
            name,
            compression,
            e.size,
            e.mtime_ns,
            e.revision or "",
            e.meta,
            e.problem,
            e.status,
            e.session_id,
        )
    if e.kind == UNREADABLE and e.level == _TRANSCRIPT_LEVEL:
        # The OS refused the transcript itself (its stat, or opening it for the header).
        problem = f"{e.problem} (transcript)"
        revision = e.revision if e.revision is not None else f"problem:{e.problem}"
        return FoundArtifact(
            path, path, project, name, compression, e.size, e.mtime_ns, revision, None, problem, UNREADABLE, e.session_id
        )
    # A folder or link the walk could not use: it needs no diagnosis.
    problem = e.problem or ""
    if e.level == _PROJECT_LEVEL:
        problem = f"{problem} (project folder: its sessions cannot be listed)"
    return FoundArtifact(
        path, path, project, name, compression, None, None, f"problem:{e.kind}:{problem}", None, problem, e.status, e.session_id
    )


def _rows(entries: Iterable[ListedEntry]) -> Iterator[FoundArtifact]:
    return (found_artifact(e) for e in entries)


def artifacts_in_session_dir(session_dir: str, project: str, header_cache: HeaderCache | None = None) -> list[FoundArtifact]:
    """The rows of one session folder (a link or an unreadable folder is one bad row)."""
    del project  # the folder's own parent names it (kept for callers that pass it)
    root = os.path.dirname(os.path.dirname(session_dir))
    return list(_rows(list_part(root, session_dir, header_cache=header_cache)))


def artifacts_in_project_dir(
    project_dir: str, header_cache: HeaderCache | None = None, cancelled: Callable[[], bool] | None = None
) -> Iterator[FoundArtifact]:
    """The rows of one project folder: its flat files first, then its session folders and links."""
    return _rows(list_part(os.path.dirname(project_dir), project_dir, header_cache=header_cache, cancelled=cancelled))


def project_dirs(root: str) -> list[str]:
    """The root's real project folders (a root that cannot be listed raises: that is a bad root)."""
    return listing_parts(root)[:-1]  # the last part is the root's own rows (``root_problem_rows``)


def root_problem_rows(root: str) -> list[FoundArtifact]:
    """Rows for project-level links out of the root (the per-project walks cannot see them)."""
    return list(_rows(list_part(root, root)))


def scan_root(
    root: str,
    *,
    batch_size: int = 500,
    on_batch: Callable[[list[FoundArtifact]], None] | None = None,
    cancel: threading.Event | None = None,
    header_cache: HeaderCache | None = None,
) -> list[FoundArtifact]:
    """Every artifact under ``root`` in the engine's list order; batches are reported as they fill."""
    out: list[FoundArtifact] = []
    batch: list[FoundArtifact] = []

    def cancelled() -> bool:
        return cancel is not None and cancel.is_set()

    def add(found: FoundArtifact) -> None:
        nonlocal batch
        out.append(found)
        batch.append(found)
        if on_batch is not None and len(batch) >= batch_size:
            on_batch(batch)
            batch = []

    for project in project_dirs(root):
        for found in artifacts_in_project_dir(project, header_cache, cancelled):
            add(found)
    for found in root_problem_rows(root):
        add(found)
    if on_batch is not None and batch:
        on_batch(batch)
    return out


def session_dir_of(root: str, path: str) -> str | None:
    """The ``<root>/<project>/<session>`` directory a changed path belongs to (None for root-level paths).

    A changed project directory itself maps to that project directory (a whole subtree may have moved).
    """
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return None
    if rel.startswith(".."):
        return None
    parts = [p for p in rel.split(os.sep) if p and p != "."]
    if not parts:
        return None
    return os.path.join(root, *parts[:2])


__all__ = [
    "FoundArtifact",
    "artifacts_in_project_dir",
    "artifacts_in_session_dir",
    "found_artifact",
    "project_dirs",
    "root_problem_rows",
    "scan_root",
    "session_dir_of",
]
