"""fsck for a session root: every session classified ok / repairable / corrupt / unsupported / unreadable.

One bad session is one bad row: an unreadable folder or transcript, a symlink below the root, a header
the engine cannot represent, or a SQLite row that fails validation gets its own row, and every other
session is judged normally.  Only a bad root (a foreign layout, a store that cannot be read) is a root
error.  The JSONL root is walked by the engine's one walker (``persistence.jsonl.discovery``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.actions.artifacts import read_only_view
from app.diagnosis.cache import DiagnosisCache, sqlite_place
from app.diagnosis.parallel import judge_all, open_cache, place_of
from app.diagnosis.verdicts import Verdict
from persistence import (
    CoordinatedPersistence,
    ListedEntry,
    SessionDiagnosis,
    SessionHeader,
    SessionLayoutError,
    SessionPersistenceError,
    decode_segment,
    header_listing_problem,
    jsonl_backups_beside,
    upstream_class_of,
)


@dataclass(frozen=True, slots=True)
class VerifyRow:
    session_id: str
    verdict: str  # ok | repairable | corrupt | unsupported | unreadable
    status: str
    reason: str
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.session_id, "verdict": self.verdict, "status": self.status, "reason": self.reason, "path": self.path}


_VERDICT = {"ok": "ok", "open-turn": "repairable", "torn-tail": "repairable", "unsupported": "unsupported"}
_UNLISTABLE = "the first line is not a readable session header, so the session cannot be listed"


@dataclass(frozen=True, slots=True)
class _Walk:
    """What the engine's walker found under a JSONL root: transcripts (list order) and bad entries."""

    artifacts: list[str]
    problems: list[ListedEntry]
    compression: str
    revisions: dict[str, str | None]  # transcript path -> the revision the listing saw
    # (id, transcript) of every session when each entry is one ``list()`` would return as is (else None)
    clean: list[tuple[str, str | None]] | None = None


async def _walk(store: CoordinatedPersistence) -> _Walk | None:
    """The JSONL root's transcripts for the store's encoding and its bad entries (the engine's lenient
    listing); None for other stores."""
    compression = store.compression
    if store.kind != "jsonl" or compression is None or not os.path.isdir(store.root_path):
        return None
    artifacts: list[str] = []
    problems: list[ListedEntry] = []
    revisions: dict[str, str | None] = {}
    entries = await store.list_entries()
    for entry in entries:
        if entry.path is not None:
            revisions.setdefault(entry.path, entry.revision)
        if entry.kind in (ListedEntry.UNREADABLE, ListedEntry.SYMLINK):
            problems.append(entry)  # a flat file fails the root: list() reports it
        elif (
            entry.kind in (ListedEntry.SESSION, ListedEntry.BAD_HEADER)
            and entry.compression == compression
            and entry.path is not None
            and entry.level is None
        ):
            artifacts.append(entry.path)
    return _Walk(artifacts, problems, compression, revisions, _clean(store, entries, compression))


def _clean(store: CoordinatedPersistence, entries: list[ListedEntry], compression: str) -> list[tuple[str, str | None]] | None:
    """The sessions in list order when ``list()`` would return exactly these (no bad entry, flat file,
    other encoding, duplicate id, or header naming another path): then the walk stands for ``list()``
    and the root is listed once, not twice (~0.3 s of 10,000 sessions).  Anything else: None."""
    out: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for e in entries:
        if e.kind != ListedEntry.SESSION or e.compression != compression or e.level is not None or e.meta is None:
            return None
        header = SessionHeader.from_listing(e.meta)
        if header is None or header.id in seen:
            return None
        try:
            loc = store.locate(e.meta)
        except (SessionPersistenceError, TypeError, ValueError):
            return None
        if loc is None or loc.path != e.path:
            return None
        seen.add(header.id)
        out.append((header.id, e.path))
    return out


def _dir_id(path: str) -> str:
    name = os.path.basename(os.path.dirname(path))
    return decode_segment(name) or name


def _problem_row(p: ListedEntry) -> VerifyRow:
    name = os.path.basename(p.project or "") if p.level == ListedEntry.PROJECT else (p.folder_name or "")
    sid = name if p.level == ListedEntry.PROJECT else (decode_segment(name) or name)
    reason = p.problem or p.kind
    if p.kind == ListedEntry.UNREADABLE:
        what = {
            ListedEntry.PROJECT: "project folder; its sessions were not checked",
            ListedEntry.SESSION_FOLDER: "session folder",
            ListedEntry.TRANSCRIPT: "transcript",
        }.get(p.level or "", "transcript")
        return VerifyRow(sid, "unreadable", "unreadable", f"{reason} ({what})", p.path)
    return VerifyRow(sid, "unsupported", p.kind, reason, p.path)


async def _diagnose(store: CoordinatedPersistence, session_id: str) -> SessionDiagnosis | str:
    """The engine's diagnosis, or the text of whatever it raised (one session never stops the check)."""
    try:
        return await store.diagnose(session_id)
    except SessionPersistenceError as err:
        return str(err)
    except Exception as err:
        return f"{upstream_class_of(err)}: {err}"


async def _row_for_unlisted(store: CoordinatedPersistence, path: str, compression: str | None = None) -> VerifyRow:
    """A transcript ``list()`` skipped or choked on: unreadable, or corrupt with the engine's reason."""
    sid = _dir_id(path)
    if compression is not None:
        found = await asyncio.to_thread(header_listing_problem, path, compression)
        if found is not None:
            return VerifyRow(sid, found[0], found[0], found[1], path)
    diag = await _diagnose(store, sid)
    reason = _UNLISTABLE
    if isinstance(diag, str):
        reason += f" ({diag})"
    elif diag.status not in ("ok", "missing", "open-turn", "torn-tail"):
        reason += f" ({diag.reason})"
    return VerifyRow(sid, "corrupt", "corrupt", reason, path)


# ``progress(done, total, session id)`` before each session is judged (total None when not known yet).
Progress = Callable[[int, "int | None", str], None]
# Hears the root's (session id, backup path) pairs when the walk could find them itself (a clean root).
BackupsFound = Callable[[list[tuple[str, str]]], None]


def _no_progress(_done: int, _total: int | None, _sid: str) -> None:
    pass


async def verify_root(
    store: CoordinatedPersistence,
    progress: Progress | None = None,
    *,
    use_cache: bool = True,
    messages: list[str] | None = None,
    backups_found: BackupsFound | None = None,
) -> tuple[list[VerifyRow], str | None]:
    """(rows, root-level error). A root-level error (foreign layout) makes the whole root fail.

    One damaged JSONL header (a corrupt header frame, an identity mismatch) makes upstream's ``list()``
    throw for the whole root; verify then goes by the walk so every other session still gets its own
    verdict and the damaged one is named.  Unreadable and symlinked entries are rows of their own
    (verdict ``unreadable`` / ``unsupported``).  A SQLite row that fails validation makes ``list()``
    reject as a whole (upstream); verify then reads the rows leniently and names the bad one.  Writes
    nothing to the root (SQLite is read through a read-only twin).  ``progress`` hears of each session as
    it is judged.  Listed sessions are judged through the root's diagnosis cache (``use_cache=False``:
    every log is read; the cache is neither read nor written), the ones it does not know in worker
    processes; what the cache says about itself (rebuilt, kept in memory) is appended to ``messages``.
    When the walk of a JSONL root stood for ``list()`` it also looks beside each transcript for repair
    backups, while the cache is read, and hands them to ``backups_found`` (what the engine's
    ``backup_candidates`` would return; not called otherwise): the root is then walked once, not twice.
    """
    cache = await asyncio.to_thread(open_cache, store, use=use_cache)
    try:
        async with read_only_view(store) as view:
            return await _verify(view, progress or _no_progress, cache, backups_found)
    finally:
        if cache is not None:
            if messages is not None:
                messages.extend(cache.messages)
            cache.close()


def _row_of(v: Verdict, path: str | None) -> VerifyRow:
    return VerifyRow(v.session_id, _VERDICT.get(v.status, "corrupt"), v.status, v.reason, path)


async def _judged(
    store: CoordinatedPersistence,
    items: Sequence[tuple[str, str | None, str | None]],
    cache: DiagnosisCache | None,
    progress: Progress,
) -> list[Verdict]:
    """The verdicts of (id, transcript path, listed revision) items, in order, through the cache."""
    where = sqlite_place(store.root_path) if store.kind == "sqlite" else ""
    wanted = [(sid, place_of(store, path, where), rev) for sid, path, rev in items]
    verdicts = await judge_all(store, wanted, cache=cache, progress=progress)
    return [verdicts[(sid, place)] for sid, place, _ in wanted]


async def _listed_rows(
    store: CoordinatedPersistence,
    located: list[tuple[str, str | None]],
    walk: _Walk | None,
    cache: DiagnosisCache | None,
    progress: Progress,
) -> list[VerifyRow]:
    """The rows of the listed sessions ((id, transcript path) in list order), judged through the cache."""
    if walk is not None:
        items = [(sid, path, walk.revisions.get(path or "")) for sid, path in located]
    elif cache is not None and store.kind == "sqlite":
        revisions = {e.session_id: e.revision for e in await store.list_entries() if e.kind == ListedEntry.SESSION}
        items = [(sid, path, revisions.get(sid)) for sid, path in located]
    else:
        items = [(sid, path, None) for sid, path in located]
    verdicts = await _judged(store, items, cache, progress)
    return [_row_of(v, path) for v, (_, path) in zip(verdicts, located, strict=True)]


async def _verify(
    store: CoordinatedPersistence, progress: Progress, cache: DiagnosisCache | None, backups_found: BackupsFound | None
) -> tuple[list[VerifyRow], str | None]:
    try:
        walk = await _walk(store)
    except OSError as err:  # the root itself cannot be listed: a bad root
        return [], f"{upstream_class_of(err)}: {err}"
    if walk is not None and walk.clean is not None:
        return await _clean_rows(store, walk, walk.clean, cache, progress, backups_found), None
    try:
        headers = await store.list()
    except SessionLayoutError as err:
        return [], f"{upstream_class_of(err)}: {err}"
    except Exception as err:
        if walk is None:
            return await _verify_rows_leniently(store, err, progress, cache)
        return await _verify_by_walk(store, walk, err, progress, cache)
    located: list[tuple[str, str | None]] = []
    for header in headers:
        loc = store.locate(header)
        located.append((header.id, loc.path if loc is not None else None))
    listed_paths = {path for _, path in located if path is not None}
    rows = await _listed_rows(store, located, walk, cache, progress)
    if walk is not None:
        for path in walk.artifacts:
            if path not in listed_paths:
                rows.append(await _row_for_unlisted(store, path, walk.compression))
        rows.extend(_problem_row(p) for p in walk.problems)
    return rows, None


async def _clean_rows(
    store: CoordinatedPersistence,
    walk: _Walk,
    clean: list[tuple[str, str | None]],
    cache: DiagnosisCache | None,
    progress: Progress,
    backups_found: BackupsFound | None,
) -> list[VerifyRow]:
    """The rows of a clean root; its backups are looked for (one ``listdir`` per folder, in a thread)
    while the cache is read and the sessions judged."""
    if backups_found is None:
        return await _listed_rows(store, clean, walk, cache, progress)
    looking = asyncio.ensure_future(asyncio.to_thread(jsonl_backups_beside, [(sid, p) for sid, p in clean if p is not None]))
    try:
        rows = await _listed_rows(store, clean, walk, cache, progress)
    except BaseException:
        looking.cancel()
        raise
    backups_found(await looking)
    return rows


async def _verify_by_walk(
    store: CoordinatedPersistence, walk: _Walk, list_error: BaseException, progress: Progress, cache: DiagnosisCache | None
) -> tuple[list[VerifyRow], str | None]:
    rows: list[VerifyRow] = []
    items = [(_dir_id(path), path, walk.revisions.get(path)) for path in walk.artifacts]
    for (_sid, path, _), v in zip(items, await _judged(store, items, cache, progress), strict=True):
        if v.status == "missing":
            rows.append(await _row_for_unlisted(store, path or "", walk.compression))
        else:
            rows.append(_row_of(v, path))
    rows.extend(_problem_row(p) for p in walk.problems)
    if all(r.verdict != "corrupt" for r in rows):
        # Nothing explains the failure session by session: report it for the root.
        return rows, f"{upstream_class_of(list_error)}: {list_error}"
    return rows, None


async def _verify_rows_leniently(
    store: CoordinatedPersistence, list_error: BaseException, progress: Progress, cache: DiagnosisCache | None
) -> tuple[list[VerifyRow], str | None]:
    """A store whose ``list()`` rejects as a whole (SQLite, one bad row): each row on its own."""
    try:
        entries = await store.list_entries()
    except Exception as err:  # the store itself is bad (not a database, wrong schema, I/O)
        return [], f"{upstream_class_of(err)}: {err}"
    good = [(e.session_id, None, e.revision) for e in entries if e.problem is None]
    judged = iter(await _judged(store, good, cache, progress))
    rows: list[VerifyRow] = []
    for e in entries:
        if e.problem is not None:
            rows.append(VerifyRow(e.session_id, "corrupt", "corrupt", e.problem, None))
        else:
            rows.append(_row_of(next(judged), None))
    if not any(r.verdict == "corrupt" for r in rows):
        return rows, f"{upstream_class_of(list_error)}: {list_error}"
    return rows, None
