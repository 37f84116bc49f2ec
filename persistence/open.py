"""``open_store(path)``: pick the backend from what is on disk."""

from __future__ import annotations

import os

from persistence.coordinator import CoordinatedPersistence
from persistence.errors import SessionLayoutError, SessionPersistenceError
from persistence.jsonl import discovery
from persistence.jsonl.backend import JsonlSessionPersistence
from persistence.sniff import SQLITE_MAGIC, transcript_compression

BACKENDS = ("jsonl-zstd", "jsonl-none", "jsonl", "sqlite", "transcript")


def detect_jsonl_compression(root: str) -> str:
    """The encoding of the artifacts under ``root``; zstd for an empty or absent root.

    Mixed roots open as zstd (the backend's preflight then names the stray artifact), so the first
    zstd artifact settles it; only a root of plain logs is walked to the end.  The engine's one walker
    (``discovery.walk_root``) decides what counts: unreadable and symlinked entries say nothing about
    the encoding (one bad folder must not make the root unopenable).
    """
    found_plain = False
    for entry in discovery.walk_root(root):
        if isinstance(entry, discovery.Problem):
            continue
        if entry.zstd is not None:
            return "zstd"
        found_plain = found_plain or entry.raw is not None
    return "none" if found_plain else "zstd"


def _refuse_non_database(path: str) -> None:
    """An existing regular file must already be a SQLite database: SQLite would silently turn an empty
    file (or one it cannot parse yet) into a new store, so the 16-byte magic is checked first, by a
    plain read that changes neither the bytes nor the mtime. Symlinks and other kinds are left to the
    backend's own path checks, which refuse them before SQLite sees them."""
    if os.path.islink(path) or not os.path.isfile(path):
        return
    with open(path, "rb") as f:
        magic = f.read(len(SQLITE_MAGIC))
    if magic == SQLITE_MAGIC:
        return
    what = "it is empty" if not magic else "it does not start with the SQLite header"
    raise SessionLayoutError(f"{path} is not a SQLite database ({what}); refusing to open it as a session store")


def open_store(
    path: str | os.PathLike[str],
    backend: str | None = None,
    *,
    read_only: bool = False,
    create: bool = True,
    received: bool = False,
) -> CoordinatedPersistence:
    """A directory (or a path that does not exist) is a JSONL root; a file is a SQLite store, or a lone
    transcript when its content says so (zstd magic, a JSONL header line; ``persistence.sniff``).

    A lone transcript (``backend`` None or ``"transcript"``) opens read-only whatever ``read_only``
    says: it is a received file, so every write raises ``SessionReadOnlyError``
    (``persistence.jsonl.received``).  ``received`` opens any store as a received file: read-only, a
    JSONL root included (a folder that came in a case folder), so the engine refuses every write.

    ``read_only`` opens a SQLite store for browsing (``mode=ro``, honouring a live ``-wal``);
    JSONL reads never write, so it changes nothing there.

    An existing file that is not a SQLite database (an empty one included) is refused before SQLite
    touches it. ``create=False`` (every verb that reads or repairs existing sessions) also refuses a
    SQLite path that does not exist instead of creating the store there; JSONL roots are never
    created by reads, so it changes nothing for them.
    """
    p = os.fspath(path)
    read_only = read_only or received
    if backend in (None, "transcript") and os.path.isfile(p) and not os.path.islink(p):
        compression = transcript_compression(p)
        if compression is not None:
            from persistence.jsonl.received import TranscriptFilePersistence

            return TranscriptFilePersistence(p, compression=compression)
    if backend == "transcript":
        raise SessionLayoutError(f"{p} is not a session transcript (no zstd frame, no JSONL header line)")
    if backend is None:
        backend = "sqlite" if os.path.isfile(p) else "jsonl"
    if backend not in BACKENDS:
        raise SessionPersistenceError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "sqlite":
        try:
            from persistence.sqlite.backend import SqliteSessionPersistence
        except ImportError as err:
            raise SessionLayoutError(f"{p} is a file (a SQLite store) but the SQLite backend is not available") from err
        if not create and not os.path.lexists(p):
            raise SessionLayoutError(f"{p} does not exist; refusing to create a session store for a read")
        _refuse_non_database(p)
        return SqliteSessionPersistence(p, read_only=read_only)
    if os.path.exists(p) and not os.path.isdir(p):
        raise SessionLayoutError(f"{p} is not a directory, so it cannot be a JSONL root")
    if backend == "jsonl":
        compression = detect_jsonl_compression(p)
    else:
        compression = "zstd" if backend == "jsonl-zstd" else "none"
    if received:
        from persistence.jsonl.received import ReceivedJsonlPersistence

        return ReceivedJsonlPersistence(p, compression=compression)
    return JsonlSessionPersistence(p, compression=compression)
