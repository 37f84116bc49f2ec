"""Received files as read-only stores: a lone transcript file (what a support engineer is sent:
``customer log.txt``, ``transcript(1).zst``), read through exactly the validation and recovery a
transcript in a JSONL root gets, without assuming anything of the harness layout around it; and a JSONL
root that came inside a case folder, read as any root but never written.

Why a backend of its own: a root's reader finds a transcript by ``<root>/<project>/<id>/session.jsonl``
and checks that the header's id and cwd name that path.  A received file has neither a root nor a
name to trust, so here the file *is* the store: it holds the one session its header names, found by
reading the header, and the path check is left out (the id check stays).  Parsing, torn-tail
recovery, crash closers and every refusal are the root reader's (``JsonlReader``), unchanged.

Received files are never written: every write hook (append, create, repair, restore) raises
``SessionReadOnlyError``, and reads only ``open``/``stat`` the file (no byte and no mtime changes).
``open_store(path, received=True)`` opens either.
"""

from __future__ import annotations

import os
from typing import Any

from persistence.artifact import RawBytes
from persistence.backend import CancelToken, TornMarker
from persistence.coordinator import DEFAULT_PREPARED_CACHE_SIZE, CoordinatedPersistence
from persistence.errors import SessionLayoutError, SessionPersistenceError, SessionReadOnlyError, SessionStorageCorruptError
from persistence.jsonl import discovery
from persistence.jsonl.backend import JsonlSessionPersistence
from persistence.jsonl.entries import id_of_name, transcript_entry
from persistence.jsonl.files import read_first_line, read_stable_from
from persistence.jsonl.reader import JsonlReader
from persistence.jsonl.storage import JsonlStorage
from persistence.listing import ListedEntry
from persistence.model.jsontext import json_quote
from persistence.service import HeaderLike
from persistence.sniff import transcript_compression


class TranscriptFileReader(JsonlReader):
    """The hooks over one transcript file (either encoding); read-only."""

    read_only = True

    def __init__(self, path: str | os.PathLike[str], *, compression: str = "zstd") -> None:
        self.path = os.path.abspath(os.fspath(path))
        super().__init__(os.path.dirname(self.path), compression=compression)

    @property
    def root_path(self) -> str:
        """The transcript file itself (what the user opened)."""
        return self.path

    # ------------------------------------------------------------ the one session

    def preflight(self) -> None:
        """Nothing to refuse as a whole: there is no root layout, only this file."""
        if os.path.islink(self.path):
            raise SessionLayoutError(f"{json_quote(self.path)} is a symbolic link; a received transcript is read only as a file")

    def _header_id(self) -> str | None:
        """The id the header names; None when the header cannot be listed (its damage is the read's to report)."""
        try:
            first = read_first_line(self.path, self.compression)
        except (SessionPersistenceError, OSError):
            return None
        if first is None:
            return None
        try:
            meta, _problem = discovery.read_listing_header(first)
        except SessionPersistenceError:
            return None
        sid = meta.get("id") if meta is not None else None
        return sid if isinstance(sid, str) else None

    def fallback_id(self) -> str:
        """The id a transcript whose header cannot be read is listed under: its file name (as a root's
        bad row is listed under its folder's name), so it can still be read and get its verdict."""
        return id_of_name(os.path.basename(self.path))

    def find_log(self, session_id: str) -> str | None:
        """This file when its header names ``session_id`` (or, unreadable, when ``session_id`` is its name)."""
        self.preflight()
        if not os.path.exists(self.path):
            return None
        sid = self._header_id()
        if sid is None:
            return self.path if session_id == self.fallback_id() else None
        return self.path if sid == session_id else None

    def log_path(self, meta: dict[str, Any]) -> str:
        """Every session of this store is this file."""
        return self.path

    def locate(self, meta: dict[str, Any]) -> dict[str, str] | None:
        """The file itself."""
        return {"kind": "jsonl", "path": self.path}

    def assert_identity(self, path: str, meta: dict[str, Any], expected_id: str | None) -> None:
        """Only the id is checked: a received file's name and folder say nothing about its session."""
        if expected_id is not None and meta.get("id") != expected_id:
            raise SessionStorageCorruptError(
                f'corrupt session log "{path}": requested id "{expected_id}" does not match header id "{meta.get("id")}"'
            )

    def _list_artifacts(self, token: CancelToken) -> list[tuple[dict[str, Any], str]]:
        token.check()
        self.preflight()
        try:
            first = read_first_line(self.path, self.compression)
        except OSError:
            return []
        if first is None:
            return []
        meta, _problem = discovery.read_listing_header(first)
        return [] if meta is None else [(meta, self.path)]

    def list_entries(self, token: CancelToken) -> list[ListedEntry]:
        """The file as one row: the session, or a bad row saying why its header cannot be listed."""
        token.check()
        entry = transcript_entry(self.path, self.compression, os.path.dirname(self.path), os.path.basename(self.path))
        return [] if entry is None else [entry]

    def read_artifact_bytes(self, path: str, offset: int, token: CancelToken) -> RawBytes | None:
        """This file's bytes (any other path is refused: this store holds nothing else)."""
        token.check()
        if os.path.abspath(path) != self.path:
            raise SessionLayoutError(f"{json_quote(path)} is not the transcript this store reads ({json_quote(self.path)})")
        data, revision = read_stable_from(self.path, offset, token)
        return RawBytes(data, self.compression, offset, revision, self.path)

    def session_sizes(self, session_ids: list[str] | None, token: CancelToken) -> dict[str, tuple[int, int | None]]:
        """The file's size and mtime under its session's id."""
        token.check()
        sid = self._header_id()
        if sid is None or (session_ids is not None and sid not in session_ids):
            return {}
        try:
            st = os.stat(self.path)
        except OSError:
            return {}
        return {sid: (st.st_size, st.st_mtime_ns // 1_000_000)}

    # ------------------------------------------------------------ writes: never

    def refusal(self, operation: str) -> SessionReadOnlyError:
        """The typed refusal of ``operation``, naming the file and what to do instead."""
        return SessionReadOnlyError(
            f"{json_quote(self.path)} is a received transcript, opened read-only; {operation} would write into it "
            "(repair or fork a copy instead)"
        )

    def append_batch(
        self,
        meta: dict[str, Any],
        events: list[dict[str, Any]],
        materialized: bool,
        token: CancelToken,
        *,
        expected_next_seq: int,
    ) -> None:
        """Refused: a received transcript is never written."""
        raise self.refusal("an append")

    def commit_repair(
        self,
        meta: dict[str, Any],
        torn: TornMarker | None,
        closers: list[dict[str, Any]],
        token: CancelToken,
        *,
        expected_revision: str,
    ) -> None:
        """Refused: a repair of a received transcript goes to a copy."""
        raise self.refusal("a repair")

    def restore_backup(self, session_id: str, backup_path: str, token: CancelToken, *, expected_revision: str) -> None:
        """Refused: a received transcript is never written."""
        raise self.refusal("a restore")

    def assert_writable_path(self, path: str) -> None:
        """Every path of this store is the received file: refused."""
        raise self.refusal("a write")


class TranscriptFilePersistence(CoordinatedPersistence):
    """The session service over one transcript file, read-only (see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        compression: str | None = None,
        prepared_session_cache_size: int = DEFAULT_PREPARED_CACHE_SIZE,
    ) -> None:
        p = os.fspath(path)
        if compression is None:
            compression = transcript_compression(p)
            if compression is None:
                raise SessionLayoutError(f"{json_quote(p)} is not a session transcript (no zstd frame, no JSONL header line)")
        super().__init__(
            TranscriptFileReader(p, compression=compression), prepared_session_cache_size=prepared_session_cache_size
        )

    @property
    def path(self) -> str:
        """The transcript file."""
        return self.backend.root_path

    async def create(self, meta: HeaderLike) -> None:
        """Refused: a new session would be written into the received file (the coordinator's own
        ``create`` only reserves the id, so the refusal must come now, not at the first append)."""
        reader = self.backend
        assert isinstance(reader, TranscriptFileReader)
        raise reader.refusal("creating a session")


class ReceivedJsonlStorage(JsonlStorage):
    """A JSONL root's hooks with every write refused (a root that came inside a case folder)."""

    read_only = True

    def refusal(self, operation: str) -> SessionReadOnlyError:
        """The typed refusal of ``operation``."""
        return SessionReadOnlyError(
            f"{json_quote(self.root)} is a received folder, opened read-only; {operation} would write into it "
            "(repair or fork a copy instead)"
        )

    def append_batch(
        self,
        meta: dict[str, Any],
        events: list[dict[str, Any]],
        materialized: bool,
        token: CancelToken,
        *,
        expected_next_seq: int,
    ) -> None:
        """Refused: a received root is never written."""
        raise self.refusal("an append")

    def commit_repair(
        self,
        meta: dict[str, Any],
        torn: TornMarker | None,
        closers: list[dict[str, Any]],
        token: CancelToken,
        *,
        expected_revision: str,
    ) -> None:
        """Refused: a repair of a received root goes to a copy."""
        raise self.refusal("a repair")

    def restore_backup(self, session_id: str, backup_path: str, token: CancelToken, *, expected_revision: str) -> None:
        """Refused: a received root is never written."""
        raise self.refusal("a restore")

    def assert_writable_path(self, path: str) -> None:
        """Every path below a received root: refused."""
        raise self.refusal("a write")


class ReceivedJsonlPersistence(JsonlSessionPersistence):
    """The session service over a received JSONL root: reads as any root, refuses every write."""

    def __init__(self, root: str | os.PathLike[str], *, compression: str = "zstd") -> None:
        CoordinatedPersistence.__init__(self, ReceivedJsonlStorage(root, compression=compression))

    async def create(self, meta: HeaderLike) -> None:
        """Refused now (the coordinator's ``create`` would only reserve the id)."""
        storage = self.backend
        assert isinstance(storage, ReceivedJsonlStorage)
        raise storage.refusal("creating a session")


__all__ = ["ReceivedJsonlPersistence", "ReceivedJsonlStorage", "TranscriptFilePersistence", "TranscriptFileReader"]
