"""Lenient listing of a JSONL root: every transcript and every bad entry as one ``ListedEntry``.

Why: the walk itself (``discovery``) says which folders and files exist; a viewer and ``verify`` also
need each transcript's header, revision and size, and a row for each entry that cannot be used.
They used to build those rows themselves from the walker's internals.  Here the engine builds them
once, in the walker's list order, with the header rules of a listing (a number outside JSON's
range, a first line that is not a header, an unreadable file: each one bad row).

Every function here is module-level and takes paths, so a worker *process* can list one project
folder of a big root without an engine store.  ``header_cache`` (optional, owned by the caller)
keeps header outcomes per (path, device, inode) between listings of the same root: an append-only
log never rewrites its first line, so a poll of 10,000 sessions reads no header twice.

May import: ``persistence.jsonl`` (discovery, paths, storage's header reader), ``persistence.listing``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from persistence.errors import SessionPersistenceError
from persistence.jsonl import discovery
from persistence.jsonl.files import read_first_line, revision_of
from persistence.jsonl.paths import RAW_SUFFIX, ZSTD_SUFFIX, decode_segment
from persistence.listing import (
    BAD_HEADER,
    FLAT_FILE,
    SESSION,
    STATUS_CORRUPT,
    STATUS_UNREADABLE,
    STATUS_UNSUPPORTED,
    UNREADABLE,
    ListedEntry,
)

# A listing reads at most this much of a transcript looking for its header line (a longer first
# line is listed as "no complete header record"; ``diagnose`` then reads the whole log and says more).
LISTING_HEADER_LIMIT_BYTES = 1 << 20

# (meta, problem, status, detail) of one transcript's header, as cached per (path, device, inode).
HeaderOutcome = tuple[dict[str, Any] | None, str | None, str | None, str | None]
HeaderCache = dict[tuple[str, int, int], HeaderOutcome]


class ListingCancelled(Exception):
    """A listing stopped because its ``cancelled`` callback said so."""


def read_header_line(path: str, compression: str, *, limit: int | None = LISTING_HEADER_LIMIT_BYTES) -> bytes:
    """The header record of a transcript (without newline); raises ``SessionPersistenceError`` saying what is wrong.

    ``OSError`` (an unreadable or vanished file) propagates.
    """
    line = read_first_line(path, compression, limit=limit)
    if line is not None:
        return line
    if os.path.getsize(path) == 0:
        raise SessionPersistenceError("empty session log (no header)")
    raise SessionPersistenceError("no complete header record at the start of the log")


def read_header_outcome(path: str, compression: str) -> HeaderOutcome:
    """(meta, problem, status, detail) of a transcript's header as a listing judges it."""
    try:
        line = read_header_line(path, compression)
    except SessionPersistenceError as err:
        return None, f"header unreadable: {err}", STATUS_CORRUPT, str(err)
    except OSError as err:
        reason = discovery.unreadable(err, discovery.TRANSCRIPT, path, path).reason
        return None, reason, STATUS_UNREADABLE, reason
    try:
        meta, problem = discovery.read_listing_header(line)
    except SessionPersistenceError as err:  # retired header fields: upstream's list() refuses the root
        return None, f"header unreadable: {err}", STATUS_CORRUPT, str(err)
    if problem is not None:
        return None, f"header unreadable: {problem}", STATUS_CORRUPT, problem
    if meta is None:
        detail = "first line is not a session header"
        return None, f"corrupt session log: {detail}", STATUS_CORRUPT, detail
    return meta, None, None, None


def header_listing_problem(path: str, compression: str) -> tuple[str, str] | None:
    """(verdict, reason) when a transcript's own header explains why ``list()`` skipped it, else None.

    ``unreadable`` when the OS refuses the file; ``corrupt`` when the header parses but cannot be
    listed (a number outside JSON's range, a missing id...).  None when the header frame itself is
    damaged or absent: ``diagnose`` then names the damage with the engine's exact message.
    """
    try:
        first = read_first_line(path, compression)
    except FileNotFoundError:
        return None
    except OSError as err:
        return "unreadable", discovery.unreadable(err, discovery.TRANSCRIPT, path, path).reason + " (transcript)"
    except SessionPersistenceError:
        return None
    if first is None:
        return None
    try:
        _meta, problem = discovery.read_listing_header(first)
    except SessionPersistenceError:
        return None
    if problem is None:
        return None
    return "corrupt", f"{problem}, so the session cannot be listed"


def id_of_name(name: str, *, flat: bool = False) -> str:
    """The session id a session folder name (``flat``: a flat file's name) encodes; the name itself when it encodes none."""
    if flat:
        for suffix in (ZSTD_SUFFIX, RAW_SUFFIX):
            if name.endswith(suffix) and name != suffix:
                name = name[: -len(suffix)]
                break
    return decode_segment(name) or name


def transcript_entry(
    path: str, compression: str, project: str, folder_name: str, header_cache: HeaderCache | None = None, *, flat: bool = False
) -> ListedEntry | None:
    """Stat one transcript and read its header (through ``header_cache``); None when it vanished.

    ``folder_name`` is the session folder's name (``flat``: the flat file's own name).
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:
        reason = discovery.unreadable(err, discovery.TRANSCRIPT, path, project).reason
        return ListedEntry(
            UNREADABLE,
            id_of_name(folder_name, flat=flat),
            problem=reason,
            status=STATUS_UNREADABLE,
            path=path,
            compression=compression,
            project=project,
            folder_name=folder_name,
            level=discovery.TRANSCRIPT,
            detail=reason,
        )
    key = (path, st.st_dev, st.st_ino)
    outcome = header_cache.get(key) if header_cache is not None else None
    if outcome is None or (outcome[0] is None and st.st_size > 0):
        outcome = read_header_outcome(path, compression)
        if header_cache is not None:
            header_cache[key] = outcome
    meta, problem, status, detail = outcome
    sid = meta["id"] if meta is not None and isinstance(meta.get("id"), str) else id_of_name(folder_name, flat=flat)
    kind = SESSION if meta is not None else (UNREADABLE if status == STATUS_UNREADABLE else BAD_HEADER)
    return ListedEntry(
        kind,
        sid,
        meta,
        revision_of(st),
        problem,
        status,
        path,
        compression,
        st.st_size,
        st.st_mtime_ns,
        project,
        folder_name,
        discovery.TRANSCRIPT if kind == UNREADABLE else None,
        None,
        detail,
    )


def problem_entry(p: discovery.Problem) -> ListedEntry:
    """The row of an entry the walk could not use (unreadable, symlink, flat file without its header)."""
    if p.level == discovery.PROJECT:
        name = os.path.basename(p.project)
        sid = name
    else:
        name = os.path.basename(p.path) if p.kind == discovery.FLAT_FILE else p.folder_name
        sid = id_of_name(name, flat=p.kind == discovery.FLAT_FILE)
    status = STATUS_UNREADABLE if p.kind == discovery.UNREADABLE else STATUS_UNSUPPORTED
    compression = None
    if p.level == discovery.TRANSCRIPT:
        compression = "zstd" if p.path.endswith(".zstd") else "none"
    return ListedEntry(
        p.kind,
        sid,
        problem=p.reason,
        status=status,
        path=p.path,
        compression=compression,
        project=p.project,
        folder_name=name,
        level=p.level,
        target=p.target,
        detail=p.reason,
    )


def _flat_entry(p: discovery.Problem, header_cache: HeaderCache | None) -> ListedEntry | None:
    """A flat-file transcript: a bad row (upstream refuses the layout) that still shows its header."""
    name = os.path.basename(p.path)
    compression = "zstd" if name.endswith(".zstd") else "none"
    found = transcript_entry(p.path, compression, p.project, name, header_cache, flat=True)
    if found is None:
        return None
    return ListedEntry(
        FLAT_FILE,
        found.session_id,
        found.meta,
        found.revision,
        p.reason,
        STATUS_UNSUPPORTED,
        p.path,
        compression,
        found.size,
        found.mtime_ns,
        p.project,
        name,
        p.level,
        None,
        p.reason,
    )


def _folder_entries(folder: discovery.SessionFolder, header_cache: HeaderCache | None) -> Iterator[ListedEntry]:
    """Both transcripts a session folder may hold (zstd first): a mixed root shows each as its own row."""
    for path, compression in ((folder.zstd, "zstd"), (folder.raw, "none")):
        if path is None:
            continue
        found = transcript_entry(path, compression, folder.project, folder.name, header_cache)
        if found is not None:
            yield found


def _entries_of(
    walk: Iterator[discovery.Entry], header_cache: HeaderCache | None, cancelled: Callable[[], bool] | None
) -> Iterator[ListedEntry]:
    for entry in walk:
        if cancelled is not None and cancelled():
            raise ListingCancelled()
        if isinstance(entry, discovery.SessionFolder):
            yield from _folder_entries(entry, header_cache)
        elif entry.kind == discovery.FLAT_FILE:
            flat = _flat_entry(entry, header_cache)
            if flat is not None:
                yield flat
        else:
            yield problem_entry(entry)


def list_jsonl_root(
    root: str, *, header_cache: HeaderCache | None = None, cancelled: Callable[[], bool] | None = None
) -> Iterator[ListedEntry]:
    """Every transcript and bad entry under ``root``, in the engine's list order (``discovery.walk_root``).

    A missing root yields nothing; a root that cannot be listed raises ``OSError`` (a bad root).
    """
    return _entries_of(discovery.walk_root(root), header_cache, cancelled)


def jsonl_project_dirs(root: str) -> list[str]:
    """The root's real project folders in list order (a root that cannot be listed raises)."""
    return discovery.project_dirs(root)


def list_jsonl_project(
    project_dir: str, *, header_cache: HeaderCache | None = None, cancelled: Callable[[], bool] | None = None
) -> Iterator[ListedEntry]:
    """The rows of one project folder: its flat files first, then its session folders and links."""
    return _entries_of(discovery.walk_project(project_dir), header_cache, cancelled)


def list_jsonl_root_links(root: str) -> list[ListedEntry]:
    """Rows for the project-folder links that lead out of the root (a per-project listing cannot see them)."""
    return [problem_entry(p) for p in discovery.walk_root_links(root)]


def list_jsonl_session_dir(session_dir: str, *, header_cache: HeaderCache | None = None) -> list[ListedEntry]:
    """The rows of one session folder (a link or an unreadable folder is one bad row)."""
    project = os.path.dirname(session_dir)
    if os.path.islink(session_dir):
        return [problem_entry(discovery.link_problem(discovery.SESSION, session_dir, project))]
    entry = discovery.probe_folder(project, session_dir)
    if isinstance(entry, discovery.Problem):
        return [problem_entry(entry)]
    return list(_folder_entries(entry, header_cache))


__all__ = [
    "LISTING_HEADER_LIMIT_BYTES",
    "HeaderCache",
    "HeaderOutcome",
    "ListingCancelled",
    "id_of_name",
    "jsonl_project_dirs",
    "list_jsonl_project",
    "list_jsonl_root",
    "list_jsonl_root_links",
    "list_jsonl_session_dir",
    "problem_entry",
    "read_header_line",
    "read_header_outcome",
    "transcript_entry",
]
