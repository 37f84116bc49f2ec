"""Where a session's bytes live, whatever the backend: ``ArtifactInfo``, ``RawBytes`` and a safe copy.

Why: the window and the repair actions used to find a session's file by reaching into the backend
(``find_log``, ``backend.path``) and ran their own SQL to size SQLite sessions and to back stores
up.  These values and functions say it once, in the engine.  A JSONL session's artifact is its
transcript; a SQLite session's is the whole database file (one file holds every session).

May import: ``persistence.sqlite.facts`` (lazily: a JSONL-only caller never loads sqlite3).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

JSONL = "jsonl"
SQLITE = "sqlite"
# SQLite keeps uncommitted and not yet checkpointed changes beside the database in these files.
SQLITE_SIDE_SUFFIXES = ("-wal", "-journal")
# Every file SQLite keeps beside the database: the two above and the shared-memory index of the -wal,
# which every connection maps (a viewer's too), so it says nothing about writers.
SQLITE_COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")


def store_files(kind: str, path: str) -> tuple[str, ...]:
    """Every file that is part of an artifact, present or not: ``path`` and, for a SQLite store, the
    companions SQLite keeps beside it (``-wal``, ``-shm``, ``-journal``).  Writing any of them is
    writing the store (an export must never land on one)."""
    if kind == SQLITE:
        return (path, *(path + suffix for suffix in SQLITE_COMPANION_SUFFIXES))
    return (path,)


def writer_files(kind: str, path: str) -> tuple[str, ...]:
    """The files a writer of an artifact holds open, present or not: ``path`` and, for SQLite, its
    ``-wal`` and ``-journal`` (not the ``-shm``, which every reader maps as well)."""
    if kind == SQLITE:
        return (path, *(path + suffix for suffix in SQLITE_SIDE_SUFFIXES))
    return (path,)


def containing_folder(artifact_path: str | None, store_folder: str | None) -> str | None:
    """The folder to show for a session in a file manager: the one holding its own artifact (a JSONL
    transcript's session folder), or ``store_folder`` for a session with no file of its own (rows of a
    SQLite store: the database's folder)."""
    if artifact_path:
        return os.path.dirname(artifact_path)
    return store_folder


@dataclass(frozen=True, slots=True)
class ArtifactInfo:
    """The file holding one session's bytes, with its size and last change when it was looked at."""

    kind: str  # "jsonl" | "sqlite"
    path: str  # the transcript, or the database file
    size: int  # bytes of ``path``
    mtime: float  # seconds since the epoch (``st_mtime``)
    event_data_bytes: int | None = None  # SQLite: bytes of this session's event data; None for JSONL

    def last_change(self) -> float:
        """Seconds since the epoch of the newest change, looked at now (SQLite: also a -wal or -journal)."""
        return newest_change(self.kind, self.path)[1]


def newest_change(kind: str, path: str) -> tuple[str, float]:
    """(file, st_mtime) of the newest change to an artifact: ``path``, or for SQLite its -wal/-journal.

    An empty ``-wal`` is ignored: SQLite creates one when any connection (a viewer's included)
    opens a WAL database, and a commit always leaves frames in it, so its mtime says nothing
    about writers.  Raises ``OSError`` when the artifact itself is gone.
    """
    newest_path, newest = path, os.stat(path).st_mtime
    if kind == SQLITE:
        for suffix in SQLITE_SIDE_SUFFIXES:
            try:
                st = os.stat(path + suffix)
            except FileNotFoundError:
                continue
            if suffix == "-wal" and st.st_size == 0:
                continue
            if st.st_mtime > newest:
                newest_path, newest = path + suffix, st.st_mtime
    return newest_path, newest


@dataclass(frozen=True, slots=True)
class RawBytes:
    """Bytes of a JSONL transcript from ``offset`` on, read while the file did not change."""

    data: bytes
    compression: str  # "zstd" | "none": how ``persistence.raw_decode`` must read ``data``
    offset: int  # file offset of ``data[0]``
    revision: str  # the transcript's revision during the read (device, inode, size, mtime, ctime)
    path: str

    @property
    def end(self) -> int:
        """File offset just past ``data`` (the file's size during the read)."""
        return self.offset + len(self.data)


def stat_artifact(kind: str, path: str, event_data_bytes: int | None = None) -> ArtifactInfo | None:
    """``ArtifactInfo`` of ``path`` as it is now; None when it vanished."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return ArtifactInfo(kind, path, st.st_size, st.st_mtime, event_data_bytes)


def copy_artifact_to(info: ArtifactInfo, target: str) -> None:
    """Copy the artifact into a new private file ``target`` (created exclusively, mode 0600), fsynced.

    JSONL: the transcript's bytes (and its access/modification times).  SQLite: the online backup
    API on a read-only connection, reading through any ``-wal`` without checkpointing it.  The
    caller removes ``target`` when this raises (and chooses a name no one else uses).
    """
    if info.kind == SQLITE:
        from persistence.sqlite.facts import backup_database

        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            backup_database(info.path, target)
        finally:
            _unlink_quietly(target + "-journal")  # only a killed copy leaves one, and it belongs to the copy
        fd = os.open(target, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with open(info.path, "rb") as f:
            while chunk := f.read(1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
        st = os.stat(info.path)
        os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


__all__ = ["JSONL", "SQLITE", "ArtifactInfo", "RawBytes", "copy_artifact_to", "stat_artifact"]
