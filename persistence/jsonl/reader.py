"""The JSONL backend's read side: where a session's transcript is (locate), reading it whole, as a tail or
after a tail mark, and listing the root (jsonl-backend §4-§10, §13).

``JsonlReader`` holds the state every side shares (the root, its encoding, the tail marks, what this
instance last saw of each transcript); ``writer.JsonlWriter`` and ``backups.JsonlBackups`` build on it.
Parsing bytes is ``parse``'s, the file reads are ``files``'.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from persistence.artifact import JSONL, ArtifactInfo, RawBytes, stat_artifact
from persistence.backend import CancelToken, CutFacts, RawArtifact, StorageBackend, StoredLog, TornMarker
from persistence.errors import SessionLayoutError, SessionPersistenceError, SessionStorageCorruptError
from persistence.jsonl import discovery, extend, frames
from persistence.jsonl.entries import list_jsonl_root
from persistence.jsonl.files import (
    read_first_line,
    read_from,
    read_stable,
    read_stable_from,
    revision_of,
    revision_stamp,
    transcript_text,
)
from persistence.jsonl.folder_names import FolderNames, loosened
from persistence.jsonl.parse import (
    count_intact_records,
    parse_log,
    parse_tail,
    scan_frames_records,
    scan_lines,
    stored_log,
    tail_mark,
)
from persistence.jsonl.paths import (
    ARTIFACT_NAME,
    RAW_SUFFIX,
    ZSTD_SUFFIX,
    PathEncodingError,
    encode_segment,
    log_path,
    opposite,
    suffix_for,
)
from persistence.jsonl.prefix import transcript_prefix
from persistence.jsonl.tail_marks import CHECK_BYTES, TailMark, TailMarks
from persistence.listing import ListedEntry
from persistence.lost import lost_lines
from persistence.model.jsontext import json_quote
from persistence.readable_prefix import ReadablePrefix


class JsonlReader(StorageBackend):
    """Locate, read and list the transcripts of a JSONL root: ``<root>/<project>/<session>/session.jsonl[.zstd]``."""

    kind = "jsonl"
    supports_raw_artifacts = True
    root: str
    compression: str  # "zstd" | "none"
    suffix: str
    opposite_suffix: str

    def __init__(self, root: str | os.PathLike[str], *, compression: str = "zstd") -> None:
        if compression not in ("zstd", "none"):
            raise TypeError('compression must be "zstd" or "none"')
        self.root = os.path.abspath(os.fspath(root))
        self.compression = compression
        self.suffix = suffix_for(compression)
        self.opposite_suffix = suffix_for(opposite(compression))
        self._preflight_lock = threading.Lock()
        self._preflight_outcome: BaseException | bool | None = None
        self._tails = TailMarks()
        self._folder_names = FolderNames()
        try:
            os.listdir(self.root)
        except FileNotFoundError:
            pass

    @property
    def root_path(self) -> str:
        """The root directory."""
        return self.root

    # ------------------------------------------------------------ discovery

    def _mismatch(self, path: str) -> SessionLayoutError:
        return SessionLayoutError(
            f"session artifact {json_quote(path)} uses {self.opposite_suffix}, but this backend is configured for "
            f"compression {json_quote(self.compression)}; use a separate root or select the matching compression mode"
        )

    @staticmethod
    def _flat(path: str) -> SessionLayoutError:
        return SessionLayoutError(
            f"session artifact {json_quote(path)} uses the unsupported flat-file layout; use a separate root or "
            "move it into a project/session directory before loading"
        )

    def _session_folders(self) -> list[discovery.SessionFolder]:
        """The root's session folders (``discovery.walk_root``), refusing what upstream refuses for the whole
        root (a flat file, then a transcript of the other encoding, in list order: §4.2, §4.3).

        Unreadable and symlinked entries are skipped, not fatal: one bad folder is one bad row (issue 10),
        which ``verify`` and the window show from the same walk.
        """
        out = []
        for entry in discovery.walk_root(self.root):
            if isinstance(entry, discovery.Problem):
                if entry.kind == discovery.FLAT_FILE:
                    raise self._flat(entry.path)
                continue
            other = entry.other(self.compression)
            if other is not None:
                raise self._mismatch(other)
            out.append(entry)
        return out

    def preflight(self) -> None:
        """Refuse, once per instance and then always, a root upstream refuses (flat files, mixed encodings)."""
        with self._preflight_lock:
            outcome = self._preflight_outcome
            if outcome is True:
                return
            if isinstance(outcome, BaseException):
                # Upstream caches the failed promise: a broken root stays broken for this instance.
                raise outcome
            try:
                self._session_folders()
            except BaseException as err:
                self._preflight_outcome = err
                raise
            self._preflight_outcome = True

    def find_log(self, session_id: str) -> str | None:
        """The transcript of ``session_id`` (§4.4), probing each real project folder.

        Reads are consistent with listing (see ``discovery``): a symlinked session folder or transcript
        raises ``SessionLayoutError`` naming the link, and an unreadable session folder raises
        ``SessionUnreadableError`` ("unreadable: permission denied").  A project folder that cannot be
        searched at all is skipped: the session is found in the others (``list``/``verify`` name that
        folder), so one unreadable folder does not take down every healthy session's reads.
        """
        seg = encode_segment(session_id)
        names = loosened((seg, seg + ZSTD_SUFFIX, seg + RAW_SUFFIX))
        matches = []
        for project in discovery.project_dirs(self.root):
            if self._folder_names.surely_absent(project, names):
                continue
            probe = discovery.probe_id(project, seg)
            if probe.flat is not None:
                raise self._flat(probe.flat)
            folder = probe.folder
            if folder is None:
                continue
            if isinstance(folder, discovery.Problem):
                raise discovery.folder_problem_error(folder)
            other = folder.other(self.compression)
            if other is not None:
                raise self._mismatch(other)
            path = folder.transcript(self.compression)
            if path is not None:
                matches.append(path)
        if len(matches) > 1:
            raise SessionLayoutError(f'duplicate JSONL session id "{session_id}" appears in multiple project directories')
        return matches[0] if matches else None

    def log_path(self, meta: dict[str, Any]) -> str:
        """Where the transcript of the session ``meta`` describes is (or would be) written."""
        return log_path(self.root, meta.get("cwd"), meta.get("id"), self.compression)  # type: ignore[arg-type]

    def locate(self, meta: dict[str, Any]) -> dict[str, str] | None:
        """The transcript path the header names."""
        return {"kind": "jsonl", "path": self.log_path(meta)}

    def assert_identity(self, path: str, meta: dict[str, Any], expected_id: str | None) -> None:
        """Refuse a transcript whose header id/cwd name another path (or another id than requested)."""
        if expected_id is not None and meta.get("id") != expected_id:
            raise SessionStorageCorruptError(
                f'corrupt session log "{path}": requested id "{expected_id}" does not match header id "{meta.get("id")}"'
            )
        try:
            if "cwd" in meta and meta["cwd"] is None:
                # A stored ``"cwd": null`` is not "no cwd" (that key is omitted): upstream's projectKey(null)
                # throws, so such a header cannot name a storage path (jsonl-backend §4.6, verified upstream).
                raise PathEncodingError("session header cwd must be a string to name a storage path")
            expected = self.log_path(meta)
        except PathEncodingError as err:
            raise SessionStorageCorruptError(f'corrupt session log "{path}": header id cannot name a storage path') from err
        if path == expected:
            return
        try:
            same = os.path.realpath(path, strict=True) == os.path.realpath(expected, strict=True)
        except FileNotFoundError:
            same = False
        if not same:
            raise SessionStorageCorruptError(
                f'corrupt session log "{path}": header id "{meta.get("id")}" and cwd identify "{expected}"'
            )

    # ------------------------------------------------------------ reading

    def _log_of(self, session_id: str, token: CancelToken) -> str | None:
        token.check()
        self.preflight()
        return self.find_log(session_id)

    def load_stored(self, session_id: str, token: CancelToken) -> StoredLog | None:
        """The whole transcript, parsed (a torn tail as ``torn``); None when the session has none."""
        path = self._log_of(session_id, token)
        return None if path is None else self._load_whole(path, session_id, token)

    def load_readable_prefix(self, session_id: str, token: CancelToken) -> ReadablePrefix | None:
        """The events of the transcript before its first damage, its header read as written
        (``persistence.jsonl.prefix``); None when there is no transcript or no header line to show."""
        path = self._log_of(session_id, token)
        if path is None:
            return None
        data, _rev = read_stable(path, token)
        token.check()
        return transcript_prefix(data, self.compression)

    def _load_whole(self, path: str, session_id: str, token: CancelToken) -> StoredLog:
        data, revision = read_stable(path, token)
        token.check()
        return self._whole(path, session_id, data, revision)

    def _whole(self, path: str, session_id: str, data: bytes, revision: str) -> StoredLog:
        """Every record of the file, with the tail mark a later suffix read may start from."""
        meta, events, torn, committed, count = parse_log(data, path, self.compression)
        self.assert_identity(path, meta, session_id)
        if torn is None:
            # A clean whole read is what the coordinator bases its append cursor on (load, resume,
            # adopt): from here on this instance expects exactly these bytes. A torn log is left
            # alone: it is repaired (and re-read) before anything is appended to it.
            dev, ino, size = revision_stamp(revision)[:3]
            self._expect_size(self.log_path(meta), size, (dev, ino))
        else:
            torn.evidence = data[int(torn.truncate_to) :]  # describe_cut reads it from here, not the file again
        mark = tail_mark(revision, data[max(0, committed - CHECK_BYTES) : committed], committed, count, dict(meta))
        raw = RawBytes(data, self.compression, 0, revision, path)
        return stored_log(path, meta, events, revision, torn, tail_mark=mark, raw=raw)

    def load_tail(self, session_id: str, min_events: int, token: CancelToken) -> StoredLog | None:
        """Decode only the last frames (or lines) of the transcript; the whole file when in doubt."""
        path = self._log_of(session_id, token)
        if path is None:
            return None
        data, revision = read_stable(path, token)
        token.check()
        try:
            got = parse_tail(data, path, self.compression, min_events)
        except SessionStorageCorruptError:
            got = None  # the whole-file parse reports it with its exact message
        if got is None:
            return self._whole(path, session_id, data, revision)
        meta, events, torn, base = got
        self.assert_identity(path, meta, session_id)
        return stored_log(path, meta, events, revision, torn, base_seq=base)

    def trust_tail(self, stored: StoredLog) -> None:
        """Remember where this fully checked read ended, so the next suffix read decodes only new bytes."""
        # Only a read whose every record passed normalization may be skipped later: a suffix read
        # must refuse exactly what a whole-file read would.
        if isinstance(stored.tail_mark, TailMark) and stored.raw_path is not None:
            self._tails.put(stored.raw_path, stored.tail_mark)

    def load_suffix(self, session_id: str, from_seq: int, token: CancelToken) -> StoredLog | None:
        """Events from ``from_seq`` on: only the bytes appended since the last full read are decoded when a
        tail mark for the transcript is still valid (see ``tail_marks``); otherwise the whole file."""
        path = self._log_of(session_id, token)
        if path is None:
            return None
        mark = self._tails.get(path)
        if mark is not None and from_seq >= mark.next_seq:
            stored = self._read_suffix(path, mark, token)
            if stored is not None:
                return stored
        return self._load_whole(path, session_id, token)

    def _read_suffix(self, path: str, mark: TailMark, token: CancelToken) -> StoredLog | None:
        """The records after ``mark``, or None when the mark no longer describes the file (caller reads it all)."""
        token.check()
        try:
            st = os.stat(path)
            if (st.st_dev, st.st_ino) != mark.dev_ino or st.st_size < mark.offset:
                self._tails.drop(path)
                return None
            data = read_from(path, mark.offset - len(mark.check))
            check, data = data[: len(mark.check)], data[len(mark.check) :]
            after = os.stat(path)
        except FileNotFoundError:
            self._tails.drop(path)
            return None
        revision = revision_of(after)
        if revision_of(st) != revision:
            return None  # a writer raced the read: the full read retries until the file is stable
        if check != mark.check:
            self._tails.drop(path)
            return None
        try:
            if self.compression == "zstd":
                view = memoryview(data)
                ranges, torn_start = frames.scan_frames(view)
                events, torn, committed, count = scan_frames_records(view, ranges, torn_start, mark.next_seq, 0)
            else:
                events, torn, committed = scan_lines(data, 0, mark.next_seq)
                count = len(events)
        except SessionStorageCorruptError:
            # Let the full read report it: its messages cite absolute offsets and line numbers.
            self._tails.drop(path)
            return None
        if torn is not None:
            torn = TornMarker(mark.offset + torn.truncate_to, torn.recovered)
        tail = (mark.check + data[:committed])[-CHECK_BYTES:]
        new = tail_mark(revision, tail, mark.offset + committed, mark.next_seq + count, mark.meta)
        return stored_log(path, dict(mark.meta), events, revision, torn, base_seq=mark.next_seq, tail_mark=new)

    def load_after(
        self, session_id: str, mark: Any, token: CancelToken, *, since: str | None = None, whole_raw: bool = False
    ) -> StoredLog | None:
        """The records appended after ``mark`` (``extend.read_after``), held to what a whole read asserts."""
        path = self._log_of(session_id, token) if isinstance(mark, TailMark) else None
        stored = None
        if path is not None:
            stored = extend.read_after(path, mark, self.compression, token, since=since, whole_raw=whole_raw)
        if stored is None or path is None:
            return None
        self.assert_identity(path, stored.meta, session_id)
        if stored.torn is None:  # as ``_whole``: this instance now expects exactly these bytes
            dev, ino, size = revision_stamp(stored.revision)[:3]
            self._expect_size(self.log_path(stored.meta), size, (dev, ino))
        return stored

    def read_stored_revision(self, session_id: str, token: CancelToken) -> str | None:
        """The transcript's ``revision_of`` (None when the session has no transcript)."""
        path = self._log_of(session_id, token)
        if path is None:
            return None
        try:
            return revision_of(os.stat(path))
        except FileNotFoundError:
            return None

    def _read_first_line(self, path: str) -> bytes | None:
        return read_first_line(path, self.compression)

    def _list_artifacts(self, token: CancelToken) -> list[tuple[dict[str, Any], str]]:
        """(meta, transcript path) of every listable session (§4.5), in list order.

        Skipped, besides what upstream skips (no transcript, no complete or parsable header line): an
        unreadable or symlinked entry (``discovery``), and a header the engine cannot represent (a number
        outside JSON's range, ``discovery.read_listing_header``).  Each is one bad row for ``verify`` and
        the window, never a failed ``list()``.  The spec's root-level errors still raise.
        """
        token.check()
        self.preflight()
        seen: set[str] = set()
        out: list[tuple[dict[str, Any], str]] = []
        for folder in self._session_folders():
            token.check()
            path = folder.transcript(self.compression)
            if path is None:
                continue
            try:
                first = self._read_first_line(path)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
            except OSError:
                continue  # unreadable transcript: a bad row of its own (verify, window), not a failed list
            if first is None:
                continue
            meta, _problem = discovery.read_listing_header(first)
            if meta is None:
                continue
            self.assert_identity(path, meta, None)
            if meta["id"] in seen:
                raise SessionLayoutError(f'duplicate JSONL session id "{meta["id"]}" appears in multiple project directories')
            seen.add(meta["id"])
            out.append((meta, path))
        return out

    def list_headers(self, token: CancelToken) -> list[dict[str, Any]]:
        """Headers of the listable sessions (§4.5), in list order."""
        return [meta for meta, _path in self._list_artifacts(token)]

    def list_snapshots(self, token: CancelToken) -> list[tuple[dict[str, Any], str]]:
        """(header, transcript revision) of the listable sessions, in list order."""
        out = []
        for meta, path in self._list_artifacts(token):
            token.check()
            try:
                out.append((meta, revision_of(os.stat(path))))
            except FileNotFoundError:
                continue
            except OSError:
                continue  # unreadable since its header was read: skipped like any unreadable entry
        return out

    def list_entries(self, token: CancelToken) -> list[ListedEntry]:
        """Every transcript (either encoding) and every bad entry of the root as one row (``jsonl.entries``)."""
        out = []
        for entry in list_jsonl_root(self.root):
            token.check()
            out.append(entry)
        return out

    def read_raw_bytes(self, session_id: str, offset: int, token: CancelToken) -> RawBytes | None:
        """The transcript's bytes from ``offset`` on (None when the session has no transcript).

        No preflight: a viewer shows the bytes of a session in a root ``list()`` refuses as a whole.
        """
        token.check()
        path = self.find_log(session_id)
        if path is None:
            return None
        data, revision = read_stable_from(path, offset, token)
        return RawBytes(data, self.compression, offset, revision, path)

    def read_artifact_bytes(self, path: str, offset: int, token: CancelToken) -> RawBytes | None:
        """A listed transcript's bytes by path (a flat file, the other encoding's transcript included).

        Refused (``SessionLayoutError``) outside the root or through a link below it, as every read is;
        the encoding is the file name's.  A missing file raises ``FileNotFoundError``.
        """
        token.check()
        discovery.assert_writable_path(self.root, path, verb="read")
        compression = "zstd" if path.endswith(".zstd") else "none"
        data, revision = read_stable_from(path, offset, token)
        return RawBytes(data, compression, offset, revision, path)

    def artifact(self, session_id: str) -> ArtifactInfo | None:
        """The session's transcript, stat'ed now (None when it has none)."""
        path = self.find_log(session_id)
        return None if path is None else stat_artifact(JSONL, path)

    def session_sizes(self, session_ids: list[str] | None, token: CancelToken) -> dict[str, tuple[int, int | None]]:
        """session id -> (transcript bytes, transcript mtime in ms) of every session (or of ``session_ids``).

        Lenient like ``list_entries``: a root ``list()`` refuses (a flat file, a mixed encoding) still
        has its sessions measured; an entry that cannot be is absent.
        """
        out: dict[str, tuple[int, int | None]] = {}
        if session_ids is None:
            for entry in list_jsonl_root(self.root):
                token.check()
                if entry.ok and entry.compression == self.compression and entry.size is not None:
                    out[entry.session_id] = (entry.size, None if entry.mtime_ns is None else entry.mtime_ns // 1_000_000)
            return out
        paths = []
        for sid in session_ids:
            token.check()
            try:
                found = self.find_log(sid)
            except (SessionPersistenceError, OSError):
                continue
            if found is not None:
                paths.append((sid, found))
        for sid, path in paths:
            try:
                st = os.stat(path)
            except OSError:
                continue
            out[sid] = (st.st_size, st.st_mtime_ns // 1_000_000)
        return out

    def read_raw(self, session_id: str, token: CancelToken) -> RawArtifact | None:
        """Upstream's ``readRaw`` (§13): the transcript as lossy UTF-8, a torn zstd frame left out."""
        token.check()
        self.preflight()
        path = self.find_log(session_id)
        if path is None:
            return None
        text, first = transcript_text(path, self.compression, token)
        meta, problem = discovery.read_listing_header(first)
        if problem is not None:  # a header no caller could print (a number outside JSON's range)
            raise SessionStorageCorruptError(f'corrupt session log: invalid header line in "{path}" ({problem})')
        if meta is None or meta.get("id") != session_id:
            raise SessionStorageCorruptError(f'corrupt session log: invalid header line in "{path}"')
        return RawArtifact(meta, ARTIFACT_NAME, text)

    def describe_cut(self, session_id: str, torn: TornMarker, next_seq: int, token: CancelToken) -> CutFacts:
        """Bytes after ``torn.truncate_to`` and the records among them that parse and would be lost."""
        if isinstance(torn.evidence, bytes):
            cut = torn.evidence  # what the read that found the damage saw: no second read of the log
        else:
            path = self._log_of(session_id, token)
            if path is None:
                return CutFacts()
            cut = read_from(path, int(torn.truncate_to))
        try:
            plain = frames.decompress_prefix(memoryview(cut)) if self.compression == "zstd" else cut
        except SessionPersistenceError:
            plain = b""
        intact, first = count_intact_records(plain, next_seq)
        return CutFacts(cut_bytes=len(cut), intact_records=intact, first_intact_seq=first, lost=lost_lines(plain, next_seq))

    # Expected transcript sizes kept per instance; beyond this many paths the oldest is forgotten,
    # which only turns the two-writer check off for a transcript this instance has not touched lately.
    MAX_EXPECTED_SIZES = 4096  # transcripts (paths)

    def _expect_size(self, path: str, size: int | None, dev_ino: tuple[int, int] | None = None) -> None:
        """Record the byte size (and file identity) this instance expects ``path`` to have; None forgets it.

        ``_append_lines`` refuses to append when the transcript no longer has this size: another writer
        appended (or replaced the file) since this instance last read or wrote it, so its cursor is
        stale and its seqs would duplicate acknowledged ones (issue 10 item 8).  Set after a clean whole
        read, after each append, and by a repair commit for the log it leaves (pass the new size and
        file identity, or None).  ``dev_ino`` None means "any file at that path".
        """
        expected: dict[str, tuple[int, tuple[int, int] | None]] = self.__dict__.setdefault("_expected_sizes", {})
        expected.pop(path, None)  # re-inserted last: the dict's order is the eviction order
        if size is None:
            return
        expected[path] = (size, dev_ino)
        while len(expected) > self.MAX_EXPECTED_SIZES:
            try:
                del expected[next(iter(expected))]
            except (StopIteration, KeyError, RuntimeError):  # another worker thread changed it meanwhile
                break
