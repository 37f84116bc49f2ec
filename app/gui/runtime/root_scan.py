"""Find every session artifact under a JSONL root with the engine's walker (no Qt).

The engine's ``list()`` raises on a foreign layout and skips a log whose header line is unreadable,
unrepresentable or behind a symlink, but a viewer must show every log it finds, so the session list
is built from the engine's one lenient walk (``persistence.jsonl.discovery``):
``<root>/<project dir>/<session dir>/session.jsonl[.zstd]``.  Stray flat files
(``<project>/<id>.jsonl``) are listed too; they make the engine refuse the whole root.  Every entry
the walk cannot use (an unreadable folder, a symlink, a header with a number outside JSON's range)
is one bad row with its reason, never a failed listing.

Only headers are read here (the first zstd frame or the first line); statuses come later from the
engine's ``diagnose``.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from persistence.errors import SessionPersistenceError
from persistence.jsonl import discovery
from persistence.jsonl.storage import read_first_line, revision_of

RAW_NAME = discovery.RAW_NAME
ZSTD_NAME = discovery.ZSTD_NAME
UNREADABLE = "unreadable"  # row status of an entry the OS refuses to read
HEADER_READ_LIMIT = 1 << 20
_ESCAPE = re.compile(r"~([0-9A-F]{4})")


class ScanCancelled(Exception):
    pass


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

    @property
    def session_id(self) -> str:
        if self.meta is not None and isinstance(self.meta.get("id"), str):
            return self.meta["id"]
        name = self.dir_name
        for suffix in (".jsonl.zstd", ".jsonl"):
            name = name.removesuffix(suffix)
        return decode_segment(name)

    @property
    def dev_ino(self) -> str:
        return ":".join(self.revision.split(":")[:2])


def decode_segment(name: str) -> str:
    """Inverse of the engine's ``encode_segment`` (``~XXXX`` are UTF-16 code units)."""
    if "~" not in name:
        return name
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(name):
        out += name[pos : m.start()].encode("utf-16-le")
        out += int(m.group(1), 16).to_bytes(2, "little")
        pos = m.end()
    out += name[pos:].encode("utf-16-le")
    return out.decode("utf-16-le", "replace")


def read_header_line(path: str, compression: str) -> bytes:
    """The header record (without newline); raises ``SessionPersistenceError`` saying what is wrong."""
    line = read_first_line(path, compression, limit=HEADER_READ_LIMIT)
    if line is not None:
        return line
    if os.path.getsize(path) == 0:
        raise SessionPersistenceError("empty session log (no header)")
    raise SessionPersistenceError("no complete header record at the start of the log")


def problem_row(p: discovery.Problem) -> FoundArtifact:
    """One bad row for an entry the walk could not use (unreadable, symlink): it needs no diagnosis."""
    status = UNREADABLE if p.kind == discovery.UNREADABLE else "unsupported"
    if p.level == discovery.PROJECT:
        reason = f"{p.reason} (project folder: its sessions cannot be listed)"
        dir_name = os.path.basename(p.path)
    else:
        reason, dir_name = p.reason, p.folder_name
    compression = ("zstd" if p.path.endswith(".zstd") else "none") if p.level == discovery.TRANSCRIPT else ""
    return FoundArtifact(p.path, p.path, os.path.basename(p.project), dir_name, compression, None, None,
                         f"problem:{p.kind}:{reason}", None, reason, status)


def inspect_artifact(path: str, project: str, dir_name: str, compression: str,
                     header_cache: dict[tuple[str, int, int], tuple[dict[str, Any] | None, str | None, str | None]]
                     | None = None) -> FoundArtifact | None:
    """Stat and read the header of one artifact; None when it vanished."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:
        p = discovery.unreadable(err, discovery.TRANSCRIPT, path, os.path.dirname(os.path.dirname(path)))
        return FoundArtifact(path, path, project, dir_name, compression, None, None, f"problem:{p.reason}", None,
                             f"{p.reason} (transcript)", UNREADABLE)
    rev = revision_of(st)
    ckey = (path, st.st_dev, st.st_ino)
    cached = header_cache.get(ckey) if header_cache is not None else None
    if cached is None or (cached[0] is None and st.st_size > 0):
        cached = _read_meta(path, compression)
        if header_cache is not None:
            header_cache[ckey] = cached
    meta, problem, status = cached
    return FoundArtifact(path, path, project, dir_name, compression, st.st_size, st.st_mtime_ns, rev, meta, problem, status)


def _read_meta(path: str, compression: str) -> tuple[dict[str, Any] | None, str | None, str | None]:
    try:
        line = read_header_line(path, compression)
    except SessionPersistenceError as err:
        return None, f"header unreadable: {err}", "corrupt"
    except OSError as err:
        return None, f"{discovery.unreadable(err, discovery.TRANSCRIPT, path, path).reason} (transcript)", UNREADABLE
    try:
        meta, problem = discovery.read_listing_header(line)
    except SessionPersistenceError as err:  # retired header fields: upstream's list() refuses the root
        return None, f"header unreadable: {err}", "corrupt"
    if problem is not None:
        return None, f"header unreadable: {problem}", "corrupt"
    if meta is None:
        return None, "corrupt session log: first line is not a session header", "corrupt"
    return meta, None, None


def _folder_artifacts(folder: discovery.SessionFolder, project: str,
                      header_cache: dict[Any, Any] | None) -> list[FoundArtifact]:
    out = []
    for path, compression in ((folder.zstd, "zstd"), (folder.raw, "none")):
        if path is None:
            continue
        found = inspect_artifact(path, project, folder.name, compression, header_cache)
        if found is not None:
            out.append(found)
    return out


def artifacts_in_session_dir(session_dir: str, project: str, header_cache: dict[Any, Any] | None = None) -> list[FoundArtifact]:
    project_dir = os.path.dirname(session_dir)
    if os.path.islink(session_dir):
        return [problem_row(discovery.link_problem(discovery.SESSION, session_dir, project_dir))]
    entry = discovery.probe_folder(project_dir, session_dir)
    if isinstance(entry, discovery.Problem):
        return [problem_row(entry)]
    return _folder_artifacts(entry, project, header_cache)


def artifacts_in_project_dir(project_dir: str, header_cache: dict[Any, Any] | None = None,
                             cancelled: Callable[[], bool] | None = None) -> Iterator[FoundArtifact]:
    project = os.path.basename(project_dir)
    for entry in discovery.walk_project(project_dir):
        if cancelled is not None and cancelled():
            raise ScanCancelled()
        if isinstance(entry, discovery.SessionFolder):
            yield from _folder_artifacts(entry, project, header_cache)
        elif entry.kind == discovery.FLAT_FILE:
            name = os.path.basename(entry.path)
            compression = "zstd" if name.endswith(".zstd") else "none"
            found = inspect_artifact(entry.path, project, name, compression, header_cache)
            if found is not None:
                yield FoundArtifact(found.key, found.path, project, name, compression, found.size, found.mtime_ns,
                                    found.revision, found.meta, entry.reason, "unsupported")
        else:
            yield problem_row(entry)


def project_dirs(root: str) -> list[str]:
    """The root's real project folders (a root that cannot be listed raises: that is a bad root)."""
    return discovery.project_dirs(root)


def root_problem_rows(root: str) -> list[FoundArtifact]:
    """Rows for project-level links out of the root (the per-project walks cannot see them)."""
    return [problem_row(e) for e in discovery.walk_root_links(root)]


def scan_root(root: str, *, batch_size: int = 500, on_batch: Callable[[list[FoundArtifact]], None] | None = None,
              cancel: threading.Event | None = None, header_cache: dict[Any, Any] | None = None) -> list[FoundArtifact]:
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
    "ScanCancelled",
    "artifacts_in_project_dir",
    "artifacts_in_session_dir",
    "decode_segment",
    "inspect_artifact",
    "problem_row",
    "project_dirs",
    "read_header_line",
    "root_problem_rows",
    "scan_root",
    "session_dir_of",
]
