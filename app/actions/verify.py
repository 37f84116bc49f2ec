"""fsck for a session root: every session classified ok / repairable / corrupt / unsupported / unreadable.

One bad session is one bad row: an unreadable folder or transcript, a symlink below the root, a header
the engine cannot represent, or a SQLite row that fails validation gets its own row, and every other
session is judged normally.  Only a bad root (a foreign layout, a store that cannot be read) is a root
error.  The JSONL root is walked by the engine's one walker (``persistence.jsonl.discovery``).
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from typing import Any

from app.actions.artifacts import read_only_view
from persistence import (
    CancelToken,
    CoordinatedPersistence,
    SessionDiagnosis,
    SessionLayoutError,
    SessionPersistenceError,
)
from persistence.errors import upstream_class_of
from persistence.jsonl import discovery
from persistence.jsonl.paths import encode_segment
from persistence.jsonl.storage import read_first_line


@dataclass(frozen=True, slots=True)
class VerifyRow:
    session_id: str
    verdict: str  # ok | repairable | corrupt | unsupported | unreadable
    status: str
    reason: str
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.session_id, "verdict": self.verdict, "status": self.status, "reason": self.reason,
                "path": self.path}


_VERDICT = {"ok": "ok", "open-turn": "repairable", "torn-tail": "repairable", "unsupported": "unsupported"}
_UNLISTABLE = "the first line is not a readable session header, so the session cannot be listed"
_ESCAPE = re.compile(r"~([0-9A-F]{4})")


def decode_segment(name: str) -> str | None:
    """The session id a session directory name encodes (inverse of ``encode_segment``), or None."""
    units = bytearray()
    i = 0
    while i < len(name):
        m = _ESCAPE.match(name, i)
        if m is not None:
            units += int(m.group(1), 16).to_bytes(2, "little")
            i = m.end()
        elif ord(name[i]) < 0x80:
            units += ord(name[i]).to_bytes(2, "little")
            i += 1
        else:
            return None  # encode_segment escapes every non-ASCII code unit
    try:
        raw = units.decode("utf-16-le", "surrogatepass")
        return raw if raw and encode_segment(raw) == name else None
    except (UnicodeDecodeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class _Walk:
    """What the engine's walker found under a JSONL root: transcripts (list order) and bad entries."""

    artifacts: list[str]
    problems: list[discovery.Problem]
    compression: str


def _walk(store: CoordinatedPersistence) -> _Walk | None:
    """The JSONL root's transcripts for the store's encoding and its problems; None for other stores."""
    backend = store.backend
    root = getattr(backend, "root", None)
    compression = getattr(backend, "compression", None)
    if backend.kind != "jsonl" or root is None or compression is None or not os.path.isdir(root):
        return None
    artifacts: list[str] = []
    problems: list[discovery.Problem] = []
    for entry in discovery.walk_root(root):
        if isinstance(entry, discovery.Problem):
            if entry.kind != discovery.FLAT_FILE:  # a flat file fails the root: list() reports it
                problems.append(entry)
            continue
        path = entry.transcript(compression)
        if path is not None and os.path.isfile(path):
            artifacts.append(path)
    return _Walk(artifacts, problems, compression)


def _dir_id(path: str) -> str:
    name = os.path.basename(os.path.dirname(path))
    return decode_segment(name) or name


def _problem_row(p: discovery.Problem) -> VerifyRow:
    name = os.path.basename(p.project) if p.level == discovery.PROJECT else p.folder_name
    sid = name if p.level == discovery.PROJECT else (decode_segment(name) or name)
    if p.kind == discovery.UNREADABLE:
        what = {discovery.PROJECT: "project folder; its sessions were not checked",
                discovery.SESSION: "session folder", discovery.TRANSCRIPT: "transcript"}[p.level]
        return VerifyRow(sid, "unreadable", "unreadable", f"{p.reason} ({what})", p.path)
    return VerifyRow(sid, "unsupported", p.kind, p.reason, p.path)


async def _diagnosed_row(store: CoordinatedPersistence, session_id: str, path: str | None) -> VerifyRow:
    diag = await _diagnose(store, session_id)
    if isinstance(diag, str):
        return VerifyRow(session_id, "corrupt", "corrupt", diag, path)
    return VerifyRow(session_id, _VERDICT.get(diag.status, "corrupt"), diag.status, diag.reason, path)


async def _diagnose(store: CoordinatedPersistence, session_id: str) -> SessionDiagnosis | str:
    """The engine's diagnosis, or the text of whatever it raised (one session never stops the check)."""
    try:
        return await store.diagnose(session_id)
    except SessionPersistenceError as err:
        return str(err)
    except Exception as err:
        return f"{upstream_class_of(err)}: {err}"


def _header_problem(path: str, compression: str) -> tuple[str, str] | None:
    """(verdict, reason) when the header itself explains why ``list()`` skipped the transcript."""
    try:
        first = read_first_line(path, compression)
    except FileNotFoundError:
        return None
    except OSError as err:
        return "unreadable", discovery.unreadable(err, discovery.TRANSCRIPT, path, path).reason + " (transcript)"
    except SessionPersistenceError:
        return None  # a damaged header frame: diagnose names it
    if first is None:
        return None
    try:
        _meta, problem = discovery.read_listing_header(first)
    except SessionPersistenceError:
        return None
    if problem is None:
        return None
    return "corrupt", f"{problem}, so the session cannot be listed"


async def _row_for_unlisted(store: CoordinatedPersistence, path: str, compression: str | None = None) -> VerifyRow:
    """A transcript ``list()`` skipped or choked on: unreadable, or corrupt with the engine's reason."""
    sid = _dir_id(path)
    if compression is not None:
        found = await asyncio.to_thread(_header_problem, path, compression)
        if found is not None:
            return VerifyRow(sid, found[0], found[0], found[1], path)
    diag = await _diagnose(store, sid)
    reason = _UNLISTABLE
    if isinstance(diag, str):
        reason += f" ({diag})"
    elif diag.status not in ("ok", "missing", "open-turn", "torn-tail"):
        reason += f" ({diag.reason})"
    return VerifyRow(sid, "corrupt", "corrupt", reason, path)


async def verify_root(store: CoordinatedPersistence) -> tuple[list[VerifyRow], str | None]:
    """(rows, root-level error). A root-level error (foreign layout) makes the whole root fail.

    One damaged JSONL header (a corrupt header frame, an identity mismatch) makes upstream's ``list()``
    throw for the whole root; verify then goes by the walk so every other session still gets its own
    verdict and the damaged one is named.  Unreadable and symlinked entries are rows of their own
    (verdict ``unreadable`` / ``unsupported``).  A SQLite row that fails validation makes ``list()``
    reject as a whole (upstream); verify then reads the rows leniently and names the bad one.  Writes
    nothing (SQLite is read through a read-only twin).
    """
    async with read_only_view(store) as view:
        return await _verify(view)


async def _verify(store: CoordinatedPersistence) -> tuple[list[VerifyRow], str | None]:
    try:
        walk = await asyncio.to_thread(_walk, store)
    except OSError as err:  # the root itself cannot be listed: a bad root
        return [], f"{upstream_class_of(err)}: {err}"
    try:
        headers = await store.list()
    except SessionLayoutError as err:
        return [], f"{upstream_class_of(err)}: {err}"
    except Exception as err:
        if walk is None:
            return await _verify_rows_leniently(store, err)
        return await _verify_by_walk(store, walk, err)
    rows: list[VerifyRow] = []
    listed_paths: set[str] = set()
    for header in headers:
        loc = store.locate(header)
        path = loc.path if loc is not None else None
        if path is not None:
            listed_paths.add(path)
        rows.append(await _diagnosed_row(store, header.id, path))
    if walk is not None:
        for path in walk.artifacts:
            if path not in listed_paths:
                rows.append(await _row_for_unlisted(store, path, walk.compression))
        rows.extend(_problem_row(p) for p in walk.problems)
    return rows, None


async def _verify_by_walk(store: CoordinatedPersistence, walk: _Walk,
                          list_error: BaseException) -> tuple[list[VerifyRow], str | None]:
    rows: list[VerifyRow] = []
    for path in walk.artifacts:
        sid = _dir_id(path)
        diag = await _diagnose(store, sid)
        if not isinstance(diag, str) and diag.status == "missing":
            rows.append(await _row_for_unlisted(store, path, walk.compression))
        elif isinstance(diag, str):
            rows.append(VerifyRow(sid, "corrupt", "corrupt", diag, path))
        else:
            rows.append(VerifyRow(sid, _VERDICT.get(diag.status, "corrupt"), diag.status, diag.reason, path))
    rows.extend(_problem_row(p) for p in walk.problems)
    if all(r.verdict != "corrupt" for r in rows):
        # Nothing explains the failure session by session: report it for the root.
        return rows, f"{upstream_class_of(list_error)}: {list_error}"
    return rows, None


async def _verify_rows_leniently(store: CoordinatedPersistence,
                                 list_error: BaseException) -> tuple[list[VerifyRow], str | None]:
    """A store whose ``list()`` rejects as a whole (SQLite, one bad row): each row on its own."""
    lenient = getattr(store.backend, "list_entries", None)
    if lenient is None:
        return [], f"{upstream_class_of(list_error)}: {list_error}"
    try:
        entries = await asyncio.to_thread(lenient, CancelToken())
    except Exception as err:  # the store itself is bad (not a database, wrong schema, I/O)
        return [], f"{upstream_class_of(err)}: {err}"
    rows: list[VerifyRow] = []
    for e in entries:
        if e.problem is not None:
            rows.append(VerifyRow(e.session_id, "corrupt", "corrupt", e.problem, None))
        else:
            rows.append(await _diagnosed_row(store, e.session_id, None))
    if not any(r.verdict == "corrupt" for r in rows):
        return rows, f"{upstream_class_of(list_error)}: {list_error}"
    return rows, None
