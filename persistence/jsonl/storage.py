"""JSONL storage hooks: discovery, stable reads, frame/line decoding, durable appends (jsonl-backend §4-§13)."""

from __future__ import annotations

import os
import re
import secrets
import threading
from typing import Any

from persistence.artifact import JSONL, ArtifactInfo, RawBytes, stat_artifact
from persistence.backend import CancelToken, CutFacts, RawArtifact, StorageBackend, StoredLog, TornMarker
from persistence.errors import (
    SessionLayoutError,
    SessionPersistenceError,
    SessionRollbackError,
    SessionStorageCorruptError,
)
from persistence.jsonl import discovery, frames, locks
from persistence.jsonl.lines import HeaderLessError, LineScanner, parse_header_record
from persistence.jsonl.paths import (
    ARTIFACT_NAME,
    PathEncodingError,
    encode_segment,
    log_path,
    opposite,
    project_dir,
    session_dir,
    suffix_for,
)
from persistence.jsonl.repair_commit import atomic_replace_tail, atomic_replace_whole
from persistence.jsonl.tail_marks import CHECK_BYTES, TailMark, TailMarks
from persistence.listing import ListedEntry
from persistence.model.chunk_rows import ROW_TAGS, pack_runs
from persistence.model.event_table import EventTable
from persistence.model.header import SessionHeader
from persistence.model.jsontext import JsonTextError, js_dumps, js_loads, json_quote
from persistence.model.repair import has_turn_start

HEADER_CHUNK = 8192  # bytes read per step while looking for the header line


# ``session.jsonl[.zstd].bak-<UTC stamp>[-N]``: what a repair or restore leaves (never ``.partial-`` copies).
BACKUP_NAME = re.compile(r"^session\.jsonl(?:\.zstd)?\.bak-\d{8}T\d{6}Z(?:-\d+)?$")


def revision_of(st: os.stat_result) -> str:
    """A transcript's opaque revision: device, inode, size, mtime and ctime (any write changes it)."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def revision_stamp(revision: str) -> tuple[int, int, int, int, int]:
    """The (dev, ino, size, mtime_ns, ctime_ns) a ``revision_of`` text names."""
    dev, ino, size, mtime, ctime = (int(part) for part in revision.split(":"))
    return dev, ino, size, mtime, ctime


def exists(path: str) -> bool:
    """Open-probe: ENOENT is absence, every other failure propagates (absence is never assumed)."""
    try:
        # A stat answers the common "absent" case cheaply; anything present is then really opened.
        os.stat(path)
    except FileNotFoundError:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    os.close(fd)
    return True


def fsync_dir(path: str) -> None:
    """Make a folder's entries (a new or renamed file) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_stable(path: str, token: CancelToken) -> tuple[bytes, str]:
    """The whole file and its revision, re-read until no writer changed it during the read."""
    return read_stable_from(path, 0, token)


def read_stable_from(path: str, offset: int, token: CancelToken) -> tuple[bytes, str]:
    """The file's bytes from ``offset`` on and its revision, re-read until no writer changed it meanwhile."""
    while True:
        token.check()
        before = revision_of(os.stat(path))
        with open(path, "rb") as f:
            if offset:
                f.seek(offset)
            data = f.read()
        after = revision_of(os.stat(path))
        if before == after:
            return data, after


def read_first_line(path: str, compression: str, *, limit: int | None = None) -> bytes | None:
    """The header record without its newline, reading 8 KiB at a time; None when the file ends
    (or ``limit`` bytes pass) before a complete first line/frame. Structural damage raises.

    Linear in the header's size: only the new bytes of each chunk are searched, and the frame's block
    headers are walked once (a 16 MB line took 9.8 s when every chunk re-scanned from byte 0). A header
    past ``frames.MAX_FRAME_PLAINTEXT_BYTES`` (a line, or a compressed frame) is corruption, refused
    before more of the file is read.
    """
    cap = frames.MAX_FRAME_PLAINTEXT_BYTES
    acc = bytearray()
    resume = 0
    fd = os.open(path, os.O_RDONLY)
    try:
        while limit is None or len(acc) < limit:
            chunk = os.read(fd, HEADER_CHUNK)
            if not chunk:
                return None
            searched = len(acc)
            acc += chunk
            if compression == "none":
                nl = acc.find(b"\n", searched)
                if nl > cap or (nl < 0 and len(acc) > cap):
                    raise SessionStorageCorruptError(f"corrupt session log: header line exceeds {cap} bytes")
                if nl >= 0:
                    return bytes(acc[:nl])
                continue
            end, resume = frames.first_frame_end(acc, resume)
            if end is None:
                # A real encoder stores an incompressible block raw: 3 header bytes per 128 KiB block
                # plus an 18-byte frame header and a 4-byte checksum is the most it adds to the plaintext.
                if len(acc) > cap + 3 * (cap // (128 * 1024) + 1) + 22:
                    raise frames.corrupt(f"header frame exceeds {cap} bytes")
                continue
            plain = frames.decode_frame(acc, 0, end, header=True)
            if not plain or plain[-1:] != b"\n" or b"\n" in plain[:-1]:
                raise frames.corrupt("first frame is not exactly one header line")
            return plain[:-1]
        return None
    finally:
        os.close(fd)


def event_lines(events: list[dict[str, Any]], pack_chunks: bool) -> bytes:
    """The JSONL lines of ``events`` (chunk runs packed when ``pack_chunks``), without the final newline."""
    records = pack_runs(events) if pack_chunks else events
    return b"\n".join(js_dumps(r) for r in records)


class JsonlStorage(StorageBackend):
    """The hooks over a JSONL root: ``<root>/<project>/<session>/session.jsonl[.zstd]``."""

    kind = "jsonl"
    supports_raw_artifacts = True
    compression: str  # "zstd" | "none", set by __init__

    def __init__(self, root: str | os.PathLike[str], *, compression: str = "zstd", pack_chunks: bool = True) -> None:
        if compression not in ("zstd", "none"):
            raise TypeError('compression must be "zstd" or "none"')
        self.root = os.path.abspath(os.fspath(root))
        self.compression = compression
        self.pack_chunks = True if pack_chunks is None else bool(pack_chunks)
        self.suffix = suffix_for(compression)
        self.opposite_suffix = suffix_for(opposite(compression))
        self._preflight_lock = threading.Lock()
        self._preflight_outcome: BaseException | bool | None = None
        self._tails = TailMarks()
        self._holds: dict[str, locks.WriterHold] = {}  # transcript path -> a live session's shared lock
        self._holds_lock = threading.Lock()
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
        matches = []
        for project in discovery.project_dirs(self.root):
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

    def _parse(self, data: bytes, path: str) -> tuple[dict[str, Any], EventTable, TornMarker | None, int, int]:
        """(meta, events, torn, committed file offset, committed event count) of a whole transcript."""
        if self.compression == "zstd":
            return self._parse_zstd(data, path)
        nl = data.find(b"\n")
        if nl < 0:
            raise HeaderLessError("empty or header-less session log")
        meta = parse_header_record(data[: nl + 1], path)
        events, torn, committed = _scan_lines(data, nl + 1, 0)
        return meta, events, torn, committed, len(events)

    def _parse_zstd(self, data: bytes, path: str) -> tuple[dict[str, Any], EventTable, TornMarker | None, int, int]:
        view = memoryview(data)
        ranges, torn_start = frames.scan_frames(view)
        if not ranges:
            raise HeaderLessError("empty or header-less Zstandard session log")
        meta, header_len = self._zstd_meta(view, ranges[0], path)
        events, torn, committed, count = _scan_frames(view, ranges[1:], torn_start, 0, header_len)
        if torn is None and len(ranges) == 1:
            committed = ranges[0][1]  # a header-only log: the boundary is the end of the header frame
        return meta, events, torn, committed, count

    def _log_of(self, session_id: str, token: CancelToken) -> str | None:
        token.check()
        self.preflight()
        return self.find_log(session_id)

    def load_stored(self, session_id: str, token: CancelToken) -> StoredLog | None:
        """The whole transcript, parsed (a torn tail as ``torn``); None when the session has none."""
        path = self._log_of(session_id, token)
        return None if path is None else self._load_whole(path, session_id, token)

    def _load_whole(self, path: str, session_id: str, token: CancelToken) -> StoredLog:
        data, revision = read_stable(path, token)
        token.check()
        return self._whole(path, session_id, data, revision)

    def _whole(self, path: str, session_id: str, data: bytes, revision: str) -> StoredLog:
        """Every record of the file, with the tail mark a later suffix read may start from."""
        meta, events, torn, committed, count = self._parse(data, path)
        self.assert_identity(path, meta, session_id)
        if torn is None:
            # A clean whole read is what the coordinator bases its append cursor on (load, resume,
            # adopt): from here on this instance expects exactly these bytes. A torn log is left
            # alone: it is repaired (and re-read) before anything is appended to it.
            dev, ino, size = revision_stamp(revision)[:3]
            self._expect_size(self.log_path(meta), size, (dev, ino))
        else:
            torn.evidence = data[int(torn.truncate_to) :]  # describe_cut reads it from here, not the file again
        mark = _mark(revision, data[max(0, committed - CHECK_BYTES) : committed], committed, count, dict(meta))
        raw = RawBytes(data, self.compression, 0, revision, path)
        return _stored(path, meta, events, revision, torn, tail_mark=mark, raw=raw)

    def load_tail(self, session_id: str, min_events: int, token: CancelToken) -> StoredLog | None:
        """Decode only the last frames (or lines) of the transcript; the whole file when in doubt."""
        path = self._log_of(session_id, token)
        if path is None:
            return None
        data, revision = read_stable(path, token)
        token.check()
        try:
            got = self._parse_tail(data, path, min_events)
        except SessionStorageCorruptError:
            got = None  # the whole-file parse reports it with its exact message
        if got is None:
            return self._whole(path, session_id, data, revision)
        meta, events, torn, base = got
        self.assert_identity(path, meta, session_id)
        return _stored(path, meta, events, revision, torn, base_seq=base)

    def _parse_tail(
        self, data: bytes, path: str, min_events: int
    ) -> tuple[dict[str, Any], EventTable, TornMarker | None, int] | None:
        """(meta, events, torn, first seq) of a tail holding ``min_events`` committed events and a
        ``turn/start``; None when only the whole log would do."""
        if self.compression != "zstd":
            nl = data.find(b"\n")
            if nl < 0:
                return None
            meta = parse_header_record(data[: nl + 1], path)
            got = _tail_of_lines(data, nl + 1, min_events)
            return None if got is None else (meta, *got)
        view = memoryview(data)
        ranges, torn_start = frames.scan_frames(view)
        if len(ranges) < 2:
            return None
        meta, _header_len = self._zstd_meta(view, ranges[0], path)
        body = ranges[1:]
        k = 2
        while k < len(body):  # whole frames from the end: each is decoded once per attempt
            chosen = body[len(body) - k :]
            first_seq = _first_seq(frames.decode_frame(view, *chosen[0]))
            if first_seq is not None:
                events, torn, _committed, count = _scan_frames(view, chosen, torn_start, first_seq, 0)
                if count >= min_events and has_turn_start(events, 0, count):
                    return meta, events, torn, first_seq
            k *= 4
        # Few, large frames (a fork's seed is one): decompress them (cheap) and cut inside the text.
        plain = b"".join(frames.decode_frame(view, start, end) for start, end in body)
        got = _tail_of_lines(plain, 0, min_events)
        if got is None or got[1] is not None:
            return None  # a complete frame ending mid-record is corruption: the whole read reports it
        events, _torn, first_seq = got
        torn = None
        if torn_start is not None:
            recovered, _t, _c = _scan_lines(frames.decompress_prefix(view[torn_start:]), 0, first_seq + len(events))
            events = events + recovered
            torn = TornMarker(torn_start, recovered.records())
        return meta, events, torn, first_seq

    @staticmethod
    def _zstd_meta(view: memoryview, header_range: tuple[int, int], path: str) -> tuple[dict[str, Any], int]:
        """The header of a zstd log and its plaintext length."""
        first = frames.decode_frame(view, *header_range)
        if not first or first[-1:] != b"\n" or b"\n" in first[:-1]:
            raise frames.corrupt("first frame is not exactly one header line")
        return parse_header_record(first, path), len(first)

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
            with open(path, "rb") as f:
                f.seek(mark.offset - len(mark.check))
                check = f.read(len(mark.check))
                data = f.read()
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
                events, torn, committed, count = _scan_frames(view, ranges, torn_start, mark.next_seq, 0)
            else:
                events, torn, committed = _scan_lines(data, 0, mark.next_seq)
                count = len(events)
        except SessionStorageCorruptError:
            # Let the full read report it: its messages cite absolute offsets and line numbers.
            self._tails.drop(path)
            return None
        if torn is not None:
            torn = TornMarker(mark.offset + torn.truncate_to, torn.recovered)
        tail = (mark.check + data[:committed])[-CHECK_BYTES:]
        new = _mark(revision, tail, mark.offset + committed, mark.next_seq + count, mark.meta)
        return _stored(path, dict(mark.meta), events, revision, torn, base_seq=mark.next_seq, tail_mark=new)

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
        from persistence.jsonl.entries import list_jsonl_root

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
            from persistence.jsonl.entries import list_jsonl_root

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
        data, _rev = read_stable(path, token)
        if self.compression == "zstd":
            view = memoryview(data)
            ranges, _torn = frames.scan_frames(view)
            if not ranges:
                raise SessionStorageCorruptError("empty or header-less Zstandard session log")
            plain = b"".join(frames.decode_frame(view, s, e) for s, e in ranges)
        else:
            plain = data
        text = plain.decode("utf-8", "replace")
        nl = plain.find(b"\n")
        meta, problem = discovery.read_listing_header(plain if nl < 0 else plain[:nl])
        if problem is not None:  # a header no caller could print (a number outside JSON's range)
            raise SessionStorageCorruptError(f'corrupt session log: invalid header line in "{path}" ({problem})')
        if meta is None or meta.get("id") != session_id:
            raise SessionStorageCorruptError(f'corrupt session log: invalid header line in "{path}"')
        return RawArtifact(meta, ARTIFACT_NAME, text)

    # ------------------------------------------------------------ writing

    def _encode_batch(self, events: list[dict[str, Any]]) -> bytes:
        text = event_lines(events, self.pack_chunks) + b"\n"
        return frames.compress_frame(text) if self.compression == "zstd" else text

    def _mkdir(self, path: str, parent: str) -> bool:
        """Create one private folder (0700, like upstream's ``mkdir -p``); True when this call created it."""
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
            return False
        fsync_dir(parent)
        return True

    def append_batch(
        self,
        meta: dict[str, Any],
        events: list[dict[str, Any]],
        materialized: bool,
        token: CancelToken,
        *,
        expected_next_seq: int,
    ) -> None:
        """Append one batch (one frame, or its lines) under the two-writer check; materialize a new session."""
        token.check()
        self.preflight()
        self.assert_writable_path(self.log_path(meta))
        if materialized:
            self._append_lines(meta, self._encode_batch(events), token)
        else:
            self._materialize(meta, events, token)

    def assert_writable_path(self, path: str) -> None:
        """Refuse (``SessionLayoutError`` naming the link) a write to ``path`` when its project folder, session
        folder or transcript is a symbolic link, or when ``path`` is outside the root (issue 10 item 6).

        Every write path calls it before touching the disk: appends and materialization here, the repair
        commit, and ``repair``'s backup (which lives beside the transcript).  Missing components are fine.
        """
        discovery.assert_writable_path(self.root, path)

    def _materialize(self, meta: dict[str, Any], events: list[dict[str, Any]], token: CancelToken) -> None:
        cwd, sid = meta.get("cwd"), meta["id"]
        other = log_path(self.root, cwd, sid, opposite(self.compression))
        if exists(other):
            raise self._mismatch(other)
        header = js_dumps(SessionHeader.from_json(meta).header_line()) + b"\n"
        body = event_lines(events, self.pack_chunks) + b"\n"
        if self.compression == "zstd":
            content = frames.compress_frame(header) + frames.compress_frame(body)
        else:
            content = header + body
        project = project_dir(self.root, cwd)
        d = session_dir(self.root, cwd, sid)
        final = os.path.join(d, "session" + self.suffix)
        token.check()
        # Every missing level, from the outermost, as upstream's ``mkdir -p`` does with mode 0700:
        # ``os.makedirs`` would give the parents of the root 0777 & ~umask (0755), readable by all.
        missing: list[str] = []
        level = os.path.abspath(self.root)
        while not os.path.isdir(level) and os.path.dirname(level) != level:
            missing.append(level)
            level = os.path.dirname(level)
        levels = [(p, os.path.dirname(p) or "/") for p in reversed(missing)]
        levels += [(project, self.root), (d, project)]
        # What this call created, innermost last: a failed first write removes exactly these (when
        # still empty), so a full disk leaves no empty session folder and no 0-byte temp behind.
        created: list[str] = []
        tmp: str | None = None
        try:
            for path, parent in levels:
                if self._mkdir(path, parent):
                    created.append(path)
            if exists(final):
                raise SessionPersistenceError(
                    f'refusing to materialize "{sid}": a log already exists on disk (load/resume it instead)'
                )
            tmp = f"{final}.{secrets.token_hex(6)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                _write_all(fd, content)
                os.fsync(fd)
            finally:
                os.close(fd)
            # A hard link never replaces: two racing writers cannot clobber a committed log.
            os.link(tmp, final)
        except BaseException as err:
            left: list[str] = []
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except FileNotFoundError:
                    pass
                except OSError:
                    left.append(tmp)
            for path in reversed(created):
                try:
                    os.rmdir(path)  # only when empty: never anything another writer put there
                except OSError:
                    left.append(path)
            if not isinstance(err, OSError) or err.errno is None:
                raise
            outcome = "nothing was left on disk" if not left else "left on disk: " + ", ".join(left)
            raise type(err)(
                err.errno, f'{err.strerror}; session "{sid}" was not written, {outcome}', err.filename, None, err.filename2
            ) from err
        fsync_dir(d)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        st = os.stat(final)
        self._expect_size(final, st.st_size, (st.st_dev, st.st_ino))
        self._refresh_hold(final)

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

    def _check_expected_size(self, path: str, st: os.stat_result) -> None:
        """Raise ``SessionConflictError`` when the open transcript is not the one this instance expects."""
        from persistence.errors import SessionConflictError

        got = self.__dict__.get("_expected_sizes", {}).get(path)
        if got is None:
            return  # nothing known yet (a log this instance only materialized): the append records it
        size, dev_ino = got
        if dev_ino is not None and (st.st_dev, st.st_ino) != dev_ino:
            raise SessionConflictError(
                f'another writer replaced "{path}" since this instance last read or wrote it; nothing was written'
            )
        if st.st_size != size:
            raise SessionConflictError(
                f'another writer appended to "{path}" (expected {size} bytes, found {st.st_size}); nothing was written'
            )

    @staticmethod
    def _lock_exclusive(fd: int, path: str) -> int | None:
        """The append's locks (see ``locks``): ``LOCK_EX`` on the session folder, so two SessionScope writers
        cannot interleave between the size check and the write, then ``LOCK_SH`` on the transcript, so no
        repair or restore swaps it meanwhile (a live writer's own shared hold does not block it).  Returns
        the folder's descriptor: closing it (after the transcript's) releases the writers' lock.

        Upstream's harness takes no lock (the size check still catches its appends).  Windows has no
        ``fcntl``, and a file system without flock (some network mounts) locks nothing: there the check and
        the write are not atomic against another writer (a race of microseconds per append), which the
        size check of the next append still reports."""
        folder = locks.lock_folder(os.path.dirname(path))
        try:
            locks.lock_shared(fd)
        except BaseException:
            if folder is not None:
                os.close(folder)
            raise
        return folder

    def _append_lines(self, meta: dict[str, Any], content: bytes, token: CancelToken) -> None:
        from persistence.errors import SessionConflictError

        path = self.log_path(meta)
        token.check()
        # O_NOFOLLOW closes the gap between assert_writable_path and this open (0 where the OS lacks it).
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
        folder: int | None = None
        try:
            # The locks are released by the closes below (they belong to these open file descriptions).
            folder = self._lock_exclusive(fd, path)
            # A repair or restore may have swapped the file while we waited: our descriptor is then the
            # orphaned old inode, and an append there would be acknowledged yet never read (issue 21 item 1).
            if not locks.same_file(fd, path):
                raise SessionConflictError(
                    f'another writer replaced "{path}" (a repair or restore) while this append waited for its lock; '
                    "nothing was written"
                )
            st = os.fstat(fd)
            self._check_expected_size(path, st)
            before = st.st_size
            try:
                _write_all(fd, content)
                os.fsync(fd)
            except BaseException as err:
                # Roll back while the locks are still held: no other SessionScope writer can have
                # appended past our bytes, so the cut removes only what this call wrote.
                try:
                    fd2 = os.open(path, os.O_RDWR)
                    try:
                        os.ftruncate(fd2, before)
                        os.fsync(fd2)
                    finally:
                        os.close(fd2)
                except BaseException as rollback_err:
                    self._expect_size(path, None)  # the file's length is unknown now
                    raise SessionRollbackError(f'failed to roll back append to "{path}"', [err, rollback_err]) from err
                raise
            # What this instance wrote, not a fresh fstat: bytes another (lock-less) writer slipped in
            # after ours must still make the next append fail.
            self._expect_size(path, before + len(content), (st.st_dev, st.st_ino))
        finally:
            os.close(fd)
            if folder is not None:
                os.close(folder)
        self._refresh_hold(path)

    # ------------------------------------------------------------ live writers' holds (issue 21 item 2)

    def hold_writer(self, meta: dict[str, Any]) -> None:
        """Keep a shared lock on the session's transcript until ``release_writer``: the sign a repair guard
        sees (``locks.writer_holds``) while a live session is attached, quiet or not.  A transcript not
        written yet is held from its first append on."""
        path = self.log_path(meta)
        with self._holds_lock:
            hold = self._holds.get(path)
            if hold is None:
                hold = self._holds[path] = locks.WriterHold(path)
            hold.acquire()

    def release_writer(self, meta: dict[str, Any]) -> None:
        """Drop the live session's hold (dispose)."""
        with self._holds_lock:
            hold = self._holds.pop(self.log_path(meta), None)
        if hold is not None:
            hold.release()

    def _refresh_hold(self, path: str) -> None:
        """After an append: a hold waiting for its transcript (a new session) takes it now."""
        with self._holds_lock:
            hold = self._holds.get(path)
            if hold is not None and hold.fd is None:
                hold.acquire()

    def close(self) -> None:
        """Release every live session's hold (each is also released on dispose)."""
        with self._holds_lock:
            holds, self._holds = list(self._holds.values()), {}
        for hold in holds:
            hold.release()

    def describe_cut(self, session_id: str, torn: TornMarker, next_seq: int, token: CancelToken) -> CutFacts:
        """Bytes after ``torn.truncate_to`` and the records among them that parse and would be lost."""
        if isinstance(torn.evidence, bytes):
            cut = torn.evidence  # what the read that found the damage saw: no second read of the log
        else:
            path = self._log_of(session_id, token)
            if path is None:
                return CutFacts()
            with open(path, "rb") as f:
                f.seek(int(torn.truncate_to))
                cut = f.read()
        try:
            plain = frames.decompress_prefix(memoryview(cut)) if self.compression == "zstd" else cut
        except SessionPersistenceError:
            plain = b""
        intact, first = count_intact_records(plain, next_seq)
        return CutFacts(cut_bytes=len(cut), intact_records=intact, first_intact_seq=first)

    def backup_candidates(self, token: CancelToken) -> list[tuple[str, str]]:
        """(session id, backup path) of every ``session.jsonl*.bak-<stamp>`` beside a readable transcript."""
        out: list[tuple[str, str]] = []
        for entry in discovery.walk_root(self.root):
            token.check()
            if not isinstance(entry, discovery.SessionFolder):
                continue
            transcript = entry.transcript(self.compression)
            if transcript is None:
                continue
            try:
                names = sorted(n for n in os.listdir(entry.path) if BACKUP_NAME.match(n))
            except OSError:
                continue
            if not names:
                continue
            try:
                first = read_first_line(transcript, self.compression)
            except (SessionPersistenceError, OSError):
                first = None
            meta = discovery.read_listing_header(first)[0] if first is not None else None
            if meta is None or not isinstance(meta.get("id"), str):
                continue
            out.extend((meta["id"], os.path.join(entry.path, n)) for n in names)
        return out

    def read_backup(self, session_id: str, backup_path: str, token: CancelToken) -> StoredLog | None:
        """A backup copy of the transcript, read like the log itself (its torn tail tolerated)."""
        token.check()
        try:
            with open(backup_path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        meta, events, torn, _committed, _count = self._parse(data, backup_path)
        if meta.get("id") != session_id:
            raise SessionStorageCorruptError(f'backup "{backup_path}" belongs to session "{meta.get("id")}", not "{session_id}"')
        return _stored(backup_path, meta, events, revision_of(os.stat(backup_path)), torn)

    def restore_backup(self, session_id: str, backup_path: str, token: CancelToken, *, expected_revision: str) -> None:
        """Put a backup copy back over the transcript in one atomic swap, pinned to ``expected_revision``."""
        token.check()
        path = self._log_of(session_id, token)
        if path is None:
            raise SessionPersistenceError(f'session "{session_id}" has no log to restore into')
        self.assert_writable_path(path)
        self._tails.drop(path)
        atomic_replace_whole(path, backup_path, revision_stamp(expected_revision), revision_text=expected_revision)
        self._expect_size(path, None)  # a restored log is another file: the next whole read sets it again

    def commit_repair(
        self,
        meta: dict[str, Any],
        torn: TornMarker | None,
        closers: list[dict[str, Any]],
        token: CancelToken,
        *,
        expected_revision: str,
    ) -> None:
        """Cut the torn tail and append recovered records plus closers, as one atomic swap (see repair_commit)."""
        token.check()
        path = self.log_path(meta)
        self.assert_writable_path(path)
        self._tails.drop(path)
        batch = (list(torn.recovered) if torn is not None else []) + closers
        if torn is None and not batch:
            return
        # Encode everything before the log is touched: a kill can no longer strand recovered records.
        suffix = self._encode_batch(batch) if batch else b""
        stamp = revision_stamp(expected_revision)
        keep = int(torn.truncate_to) if torn is not None else stamp[2]
        atomic_replace_tail(path, keep, suffix, stamp, revision_text=expected_revision)
        st = os.stat(path)
        self._expect_size(path, st.st_size, (st.st_dev, st.st_ino))


def count_intact_records(plain: bytes, next_seq: int) -> tuple[int, int | None]:
    """(how many lines of ``plain`` parse as records with a seq >= ``next_seq``, the first such seq)."""
    count, first = 0, None
    for line in plain.split(b"\n"):
        if not line.strip():
            continue
        seq = _first_seq(line)
        if seq is not None and seq >= next_seq:
            count += 1
            first = seq if first is None else first
    return count, first


def _first_seq(plain: bytes) -> int | None:
    """The seq of the first record in ``plain`` (a packed chunk row starts at its ``seq0``)."""
    end = plain.find(b"\n")
    try:
        value = js_loads(plain[: end if end >= 0 else len(plain)])
    except (JsonTextError, ValueError):
        return None
    if type(value) is not dict:
        return None
    seq = value.get("seq0") if value.get("type") in ROW_TAGS else value.get("seq")
    return seq if type(seq) is int and seq >= 0 else None


def _tail_of_lines(data: bytes, floor: int, min_events: int) -> tuple[EventTable, TornMarker | None, int] | None:
    """(events, torn, first seq) of the shortest line-aligned suffix of ``data[floor:]`` (widened 4x at a
    time) that holds ``min_events`` committed events and a ``turn/start``; None when only all of it would."""
    window = 1 << 16
    while len(data) - window > floor:
        cut = data.find(b"\n", len(data) - window)
        start = cut + 1
        if cut >= 0 and start < len(data):
            end = data.find(b"\n", start)
            first_seq = _first_seq(data[start : end + 1 if end >= 0 else len(data)])
            if first_seq is not None:
                events, torn, _committed = _scan_lines(data, start, first_seq)
                if len(events) >= min_events and has_turn_start(events):
                    return events, torn, first_seq
        window *= 4  # one huge record at the end, an unreadable first line, or too few events
    return None


def _stored(
    path: str, meta: dict[str, Any], events: EventTable, revision: str, torn: TornMarker | None, **extra: Any
) -> StoredLog:
    return StoredLog(meta, events, revision, torn, raw_path=path, location={"kind": "jsonl", "path": path}, **extra)


def _mark(revision: str, check: bytes, offset: int, next_seq: int, meta: dict[str, Any]) -> TailMark:
    dev, ino = revision.split(":", 2)[:2]
    return TailMark((int(dev), int(ino)), offset, next_seq, check, meta)


def _scan_lines(data: bytes, start: int, first_seq: int) -> tuple[EventTable, TornMarker | None, int]:
    """Plain records of ``data[start:]``: (events, torn marker, committed offset in ``data``)."""
    scanner = LineScanner(start, first_seq)
    scanner.write(data[start:] if start else data)
    scanner.finish()
    torn = TornMarker(scanner.committed_bytes, []) if scanner.committed_bytes < len(data) else None
    return scanner.events, torn, scanner.committed_bytes


def _scan_frames(
    view: memoryview, ranges: list[tuple[int, int]], torn_start: int | None, first_seq: int, plain_start: int
) -> tuple[EventTable, TornMarker | None, int, int]:
    """Records of complete event frames (plus what a torn last frame yields).

    Returns (events, torn marker, committed offset in ``view``, committed event count); records
    recovered from a torn frame follow the committed ones in ``events``.
    """
    scanner = LineScanner(plain_start, first_seq)
    for start, end in ranges:
        scanner.write(frames.decode_frame(view, start, end))
    if scanner.committed_bytes != scanner.input_bytes:
        raise frames.corrupt("complete frame contains a torn JSONL record")
    if torn_start is None:
        scanner.finish()
        committed = ranges[-1][1] if ranges else 0
        return scanner.events, None, committed, len(scanner.events)
    complete = len(scanner.events)
    scanner.write(frames.decompress_prefix(view[torn_start:]))
    scanner.finish()
    return scanner.events, TornMarker(torn_start, scanner.events[complete:].records()), torn_start, complete


def _write_all(fd: int, content: bytes) -> None:
    view = memoryview(content)
    while view:
        n = os.write(fd, view)
        view = view[n:]


NEVER = CancelToken()
