"""``open_source``: whatever a support engineer was sent, as the stores to read; ``close_source`` undoes it.

A path is a JSONL root, a SQLite store, a lone transcript (raw or zstd, by content, whatever its
name), a SessionScope support bundle or a case folder holding any mix of these.  Received files
(a transcript, a bundle, a case folder and everything in it) are read-only: their stores are opened
so that the engine refuses every write (``SessionReadOnlyError``), and opening one never writes into
the path (a bundle is extracted into the user's cache folder, by ``app.sources.bundle``).

May import the standard library, ``app.sources``' own modules and the public ``persistence``.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from app.sources.model import AmbiguousSessionError, OpenedSource, SourceError, SourceKind, SourcePart, display_path
from app.sources.sniff import sniff
from persistence import CoordinatedPersistence, ListedEntry, SessionNotFoundError, SessionPersistenceError, open_store

# A case folder is walked this deep and this wide at most: a folder handed over by a customer is
# small; a home folder opened by mistake must not be walked whole.
MAX_CASE_DEPTH = 6
MAX_CASE_ENTRIES = 20_000
# Marks of an unpacked support bundle: its files are a case folder's, never a JSONL root's.
BUNDLE_MARKS = ("manifest.json", "verify.json")
TRANSCRIPT_NAMES = ("session.jsonl", "session.jsonl.zstd")
RECEIVED_DIR = "received"  # below the cache folder: private copies of received SQLite stores


@dataclass(frozen=True, slots=True)
class SourceSession:
    """One session (or one entry that could not be read as one) of a source, and the part holding it.

    ``failed``: the whole part could not be listed (a damaged store in a case folder); ``entry`` is then a
    bad row named after the part, saying why, and holds no session id.
    """

    part: SourcePart
    entry: ListedEntry
    failed: bool = False

    @property
    def session_id(self) -> str:
        return self.entry.session_id


def open_source(path: Path) -> OpenedSource:
    """What ``path`` is and the stores to read, by content; a typed error when it is no source.

    A folder is a JSONL root unless it holds loose source files (or is an unpacked bundle), which makes
    it a case folder; an empty folder is an empty root.  A file is sniffed (``sniff``).  Raises
    ``SourceError`` (an argument error) for a path that does not exist, cannot be read, is a special
    file, or holds nothing SessionScope reads; never writes into ``path``.
    """
    path = Path(os.path.abspath(os.fspath(path)))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise SourceError(f"no such file or folder: {path}") from None
    except OSError as err:
        raise SourceError(f"cannot read {path}: {err.strerror or err}") from None
    if stat.S_ISDIR(st.st_mode):
        return _open_folder(path)
    if not stat.S_ISREG(st.st_mode):
        raise SourceError(f"{path} is not a file or folder SessionScope can read (a device, FIFO or socket)")
    kind = _sniff(path)
    if kind is None:
        # The engine says why in its own words (an empty file, a file that is not a database), as it
        # always has for a store path; it reads 16 bytes and writes nothing.
        open_store(path, None, read_only=True, create=False)
        raise SourceError(
            f"{path} is not something SessionScope reads: not a transcript (JSONL or zstd), "
            "a SQLite session store, a support bundle or a folder"
        )
    if kind is SourceKind.BUNDLE:
        return _open_bundle(path)
    read_only = kind is SourceKind.TRANSCRIPT
    part = SourcePart(_part_label(path, kind, path.parent if read_only else None), path, kind, read_only, path)
    return OpenedSource(path, kind, read_only, (part,))


def close_source(src: OpenedSource) -> None:
    """Remove what ``open_source`` made (a bundle's extraction); safe to call twice."""
    from app.sources import bundle_adapter

    for handle in src.extractions:
        bundle_adapter.remove_extraction(handle)


def open_part_store(part: SourcePart, *, read_only: bool = False) -> CoordinatedPersistence:
    """The engine store of one part (the caller closes it); read-only parts refuse every write.

    ``read_only`` opens even a writable part (the user's own SQLite store) for reading only: a writable
    SQLite connection may checkpoint a ``-wal`` into the database when it closes.
    """
    backend = "sqlite" if part.kind is SourceKind.SQLITE_STORE else None
    return open_store(part.store_path, backend, read_only=read_only or part.read_only, create=False, received=part.read_only)


async def source_sessions(src: OpenedSource) -> list[SourceSession]:
    """Every session of every part, in part order then each store's list order; a bad entry is a row too
    (``CoordinatedPersistence.list_entries``)."""
    out: list[SourceSession] = []
    for part in src.parts:
        try:
            store = open_part_store(part, read_only=True)
            try:
                out.extend(SourceSession(part, entry) for entry in await store.list_entries())
            finally:
                await store.close()
        except (SessionPersistenceError, OSError) as err:
            if len(src.parts) == 1:
                raise  # the source is this part: its own typed error is the answer
            # One damaged file in a case folder is one bad row; the other parts still read.
            reason = f"{type(err).__name__}: {err}" if isinstance(err, OSError) else str(err)
            row = ListedEntry(
                ListedEntry.UNREADABLE,
                part.label,
                problem=f"cannot be read: {reason}",
                status=ListedEntry.STATUS_UNREADABLE,
                path=str(part.origin),
                detail=reason,
            )
            out.append(SourceSession(part, row, failed=True))
    return out


async def resolve_session(src: OpenedSource, session_id: str | None) -> tuple[SourcePart, str]:
    """(the part holding it, the id): ``session_id``, or the only session of the source when None.

    No id and not exactly one session: ``AmbiguousSessionError`` listing the ids.  An id no part
    holds: ``SessionNotFoundError``.
    """
    sessions = [s for s in await source_sessions(src) if not s.failed]
    if session_id is None:
        ids = list(dict.fromkeys(s.session_id for s in sessions))
        if len(ids) != 1:
            raise AmbiguousSessionError(src.path, ids)
        return sessions[0].part, ids[0]
    for s in sessions:
        if s.session_id == session_id:
            return s.part, session_id
    if len(src.parts) == 1:
        return src.parts[0], session_id  # the store itself says how it is missing (its typed error)
    raise SessionNotFoundError(f'session "{session_id}" is not in {src.label()}')


async def store_for(src: OpenedSource, session_id: str | None = None) -> tuple[CoordinatedPersistence, str]:
    """(an open store holding the session, its id); the caller closes the store.  See ``resolve_session``."""
    part, sid = await resolve_session(src, session_id)
    return open_part_store(part), sid


# ---------------------------------------------------------------- folders


def _sniff(path: Path) -> SourceKind | None:
    try:
        return sniff(path)
    except OSError as err:
        raise SourceError(f"cannot read {path}: {err.strerror or err}") from None


def _part_label(path: Path, kind: SourceKind, base: Path | None = None) -> str:
    name = os.path.relpath(path, base) if base is not None else display_path(path)
    return f"{name} — {kind}"


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as err:
        raise SourceError(f"cannot read the folder {folder}: {err.strerror or err}") from None


def _is_root_layout(folder: Path) -> bool:
    """Whether ``folder`` holds ``<project>/<session>/session.jsonl[.zstd]`` (links never followed)."""
    for project in _entries(folder):
        if not project.is_dir(follow_symlinks=False):
            continue
        try:
            with os.scandir(project.path) as sessions:
                for session in sessions:
                    if session.is_dir(follow_symlinks=False) and any(
                        os.path.lexists(os.path.join(session.path, n)) for n in TRANSCRIPT_NAMES
                    ):
                        return True
        except OSError:
            continue
    return False


def _loose_sources(folder: Path) -> bool:
    """Whether ``folder`` itself holds a source file or the marks of an unpacked bundle."""
    for e in _entries(folder):
        if e.name in BUNDLE_MARKS and e.is_file(follow_symlinks=False):
            return True
        if e.is_file(follow_symlinks=False) and not e.name.startswith(".") and _sniff(Path(e.path)) is not None:
            return True
    return False


def _open_folder(path: Path) -> OpenedSource:
    if not _loose_sources(path) and (_is_root_layout(path) or not any(True for _ in _walk_sources(path, path))):
        # A root (an empty or not-yet-used one included): the user's own store, read and written as ever.
        part = SourcePart(_part_label(path, SourceKind.JSONL_ROOT), path, SourceKind.JSONL_ROOT, False, path)
        return OpenedSource(path, SourceKind.JSONL_ROOT, False, (part,))
    parts: list[SourcePart] = []
    extractions: list[object] = []
    try:
        for found, kind in _walk_sources(path, path):
            if kind is SourceKind.BUNDLE:
                if not _is_bundle(found):
                    continue  # a ZIP that is no support bundle: not ours to unpack
                bundle = _open_bundle(found, base=path)
                parts.extend(bundle.parts)
                extractions.extend(bundle.extractions)
            elif kind is SourceKind.SQLITE_STORE:
                # SQLite writes beside a database it reads (-shm, -wal), even read-only: a received store
                # is read from a private copy in the cache folder, so not one byte lands beside it.
                copy = _private_copy(found)
                extractions.append(copy.parent)
                parts.append(SourcePart(_part_label(found, kind, path), copy, kind, True, found, shown_as=str(found)))
            else:
                parts.append(SourcePart(_part_label(found, kind, path), found, kind, True, found))
    except BaseException:
        from app.sources import bundle_adapter

        for folder in extractions:
            bundle_adapter.remove_extraction(folder)
        raise
    return OpenedSource(path, SourceKind.CASE_FOLDER, True, tuple(parts), None, tuple(extractions))


def _walk_sources(folder: Path, base: Path, depth: int = 0, seen: list[int] | None = None) -> Iterator[tuple[Path, SourceKind]]:
    """(path, kind) of every source below ``folder``: a JSONL root folder as one, files by content.

    Symbolic links are never followed (a received folder must not lead the reader elsewhere).
    """
    seen = [0] if seen is None else seen
    if depth > MAX_CASE_DEPTH:
        return
    if depth > 0 and not _loose_sources(folder) and _is_root_layout(folder):
        yield folder, SourceKind.JSONL_ROOT
        return
    later: list[Path] = []
    for e in _entries(folder):
        seen[0] += 1
        if seen[0] > MAX_CASE_ENTRIES:
            raise SourceError(f"{base} holds more than {MAX_CASE_ENTRIES} entries; open the folder that holds the case")
        if e.is_symlink():
            continue
        if e.is_dir(follow_symlinks=False):
            later.append(Path(e.path))
        elif e.is_file(follow_symlinks=False):
            kind = _sniff(Path(e.path))
            if kind is not None:
                yield Path(e.path), kind
    for sub in later:
        yield from _walk_sources(sub, base, depth + 1, seen)


def _private_copy(db: Path) -> Path:
    """A copy of the SQLite store ``db`` (with its ``-wal`` and ``-journal``, which hold committed or
    rolled-back pages) in a new private folder below the cache folder; the caller removes the folder."""
    from app.sources.bundle_extractions import claim, extractions_root, release, sweep

    # Claimed like a bundle's extraction (a locked folder): a crash's copy is swept by the next open.
    base = extractions_root().parent / RECEIVED_DIR
    sweep(base)
    try:
        folder, _fd = claim(base)
    except (OSError, SessionPersistenceError) as err:
        raise SourceError(f"cannot copy {db} into the cache folder {base}: {err}") from None
    try:
        target = folder / db.name
        copies = [(db, target)]
        for suffix in ("-wal", "-journal"):
            side = Path(str(db) + suffix)
            if side.is_file() and not side.is_symlink():
                copies.append((side, Path(str(target) + suffix)))
        for src, dst in copies:
            shutil.copyfile(src, dst)
            os.chmod(dst, 0o600)  # a store may hold secrets, and the engine wants a private file
    except OSError as err:
        release(folder)
        raise SourceError(f"cannot read {db}: {err.strerror or err}") from None
    return target


# ---------------------------------------------------------------- bundles


def _open_bundle(path: Path, base: Path | None = None) -> OpenedSource:
    """A support bundle: checked and extracted by ``app.sources.bundle`` (into the cache folder)."""
    from app.sources import bundle_adapter

    handle, check, transcripts = bundle_adapter.open_bundle(path)
    try:
        label = _part_label(path, SourceKind.BUNDLE, base)
        # Messages name a file inside the bundle ("case.zip: session/session.jsonl.zstd"), never the extraction.
        name = os.path.relpath(path, base) if base is not None else path.name
        parts = tuple(
            SourcePart(label, t, SourceKind.TRANSCRIPT, True, path, check, shown_as=f"{name}: {member}")
            for t, member in transcripts
        )
    except BaseException:
        bundle_adapter.remove_extraction(handle)
        raise
    return OpenedSource(path, SourceKind.BUNDLE, True, parts, check, (handle,))


def _is_bundle(path: Path) -> bool:
    from app.sources import bundle_adapter

    return bundle_adapter.is_bundle(path)


__all__ = [
    "MAX_CASE_DEPTH",
    "MAX_CASE_ENTRIES",
    "SourceSession",
    "close_source",
    "open_part_store",
    "open_source",
    "resolve_session",
    "source_sessions",
    "store_for",
]
