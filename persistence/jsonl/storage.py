"""JSONL storage hooks: discovery, stable reads, frame/line decoding, durable appends (jsonl-backend §4-§13)."""

from __future__ import annotations

import os
import secrets
import threading
from typing import Any

from persistence.backend import CancelToken, RawArtifact, StorageBackend, StoredLog, TornMarker
from persistence.errors import (
    SessionLayoutError,
    SessionPersistenceError,
    SessionRollbackError,
    SessionStorageCorruptError,
)
from persistence.jsonl import frames
from persistence.jsonl.lines import HeaderLessError, LineScanner, parse_header_meta, parse_header_record
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
from persistence.jsonl.tail_marks import CHECK_BYTES, TailMark, TailMarks
from persistence.model.chunk_rows import ROW_TAGS, pack_runs
from persistence.model.header import SessionHeader
from persistence.model.jsontext import JsonTextError, js_dumps, js_loads, json_quote
from persistence.model.repair import has_turn_start

HEADER_CHUNK = 8192


def revision_of(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


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
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sorted_entries(path: str) -> list[os.DirEntry[str]]:
    with os.scandir(path) as it:
        entries = list(it)
    # Node's readdir returns names in byte order; upstream's list order depends on it (spec §4.2).
    entries.sort(key=lambda e: os.fsencode(e.name))
    return entries


def read_stable(path: str, token: CancelToken) -> tuple[bytes, str]:
    while True:
        token.check()
        before = revision_of(os.stat(path))
        with open(path, "rb") as f:
            data = f.read()
        after = revision_of(os.stat(path))
        if before == after:
            return data, after


def read_first_line(path: str, compression: str, *, limit: int | None = None) -> bytes | None:
    """The header record without its newline, reading 8 KiB at a time; None when the file ends
    (or ``limit`` bytes pass) before a complete first line/frame. Structural damage raises."""
    acc = b""
    fd = os.open(path, os.O_RDONLY)
    try:
        while limit is None or len(acc) < limit:
            chunk = os.read(fd, HEADER_CHUNK)
            if not chunk:
                return None
            acc += chunk
            if compression == "none":
                nl = acc.find(b"\n")
                if nl >= 0:
                    return acc[:nl]
                continue
            ranges, _torn = frames.scan_frames(acc, max_frames=1)
            if ranges:
                plain = frames.decode_frame(acc, *ranges[0], header=True)
                if not plain or plain[-1:] != b"\n" or b"\n" in plain[:-1]:
                    raise frames.corrupt("first frame is not exactly one header line")
                return plain[:-1]
        return None
    finally:
        os.close(fd)


def event_lines(events: list[dict[str, Any]], pack_chunks: bool) -> bytes:
    records = pack_runs(events) if pack_chunks else events
    return b"\n".join(js_dumps(r) for r in records)


class JsonlStorage(StorageBackend):
    kind = "jsonl"
    supports_raw_artifacts = True

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
        try:
            os.listdir(self.root)
        except FileNotFoundError:
            pass

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

    def _project_dirs(self) -> list[str]:
        try:
            entries = _sorted_entries(self.root)
        except FileNotFoundError:
            return []
        return [e.path for e in entries if e.is_dir(follow_symlinks=False)]

    def _session_dirs(self, project: str) -> list[str]:
        entries = _sorted_entries(project)
        for e in entries:
            if e.is_file(follow_symlinks=False) and (e.name.endswith(".jsonl") or e.name.endswith(".jsonl.zstd")):
                raise self._flat(e.path)
        return [e.path for e in entries if e.is_dir(follow_symlinks=False)]

    def preflight(self) -> None:
        with self._preflight_lock:
            outcome = self._preflight_outcome
            if outcome is True:
                return
            if isinstance(outcome, BaseException):
                # Upstream caches the failed promise: a broken root stays broken for this instance.
                raise outcome
            try:
                for project in self._project_dirs():
                    for d in self._session_dirs(project):
                        other = os.path.join(d, "session" + self.opposite_suffix)
                        if exists(other):
                            raise self._mismatch(other)
            except BaseException as err:
                self._preflight_outcome = err
                raise
            self._preflight_outcome = True

    def find_log(self, session_id: str) -> str | None:
        seg = encode_segment(session_id)
        matches = []
        for project in self._project_dirs():
            for suffix in (".jsonl.zstd", ".jsonl"):
                flat = os.path.join(project, seg + suffix)
                if exists(flat):
                    raise self._flat(flat)
            d = os.path.join(project, seg)
            other = os.path.join(d, "session" + self.opposite_suffix)
            if exists(other):
                raise self._mismatch(other)
            path = os.path.join(d, "session" + self.suffix)
            if exists(path):
                matches.append(path)
        if len(matches) > 1:
            raise SessionLayoutError(f'duplicate JSONL session id "{session_id}" appears in multiple project directories')
        return matches[0] if matches else None

    def log_path(self, meta: dict[str, Any]) -> str:
        return log_path(self.root, meta.get("cwd"), meta.get("id"), self.compression)  # type: ignore[arg-type]

    def locate(self, meta: dict[str, Any]) -> dict[str, str] | None:
        return {"kind": "jsonl", "path": self.log_path(meta)}

    def assert_identity(self, path: str, meta: dict[str, Any], expected_id: str | None) -> None:
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

    def _parse(self, data: bytes, path: str) -> tuple[dict[str, Any], list[dict[str, Any]], TornMarker | None, int, int]:
        """(meta, events, torn, committed file offset, committed event count) of a whole transcript."""
        if self.compression == "zstd":
            return self._parse_zstd(data, path)
        nl = data.find(b"\n")
        if nl < 0:
            raise HeaderLessError("empty or header-less session log")
        meta = parse_header_record(data[: nl + 1], path)
        events, torn, committed = _scan_lines(data, nl + 1, 0)
        return meta, events, torn, committed, len(events)

    def _parse_zstd(self, data: bytes, path: str) -> tuple[dict[str, Any], list[dict[str, Any]], TornMarker | None, int, int]:
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
        mark = _mark(revision, data[max(0, committed - CHECK_BYTES) : committed], committed, count, dict(meta))
        return _stored(path, meta, events, revision, torn, tail_mark=mark)

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

    def _parse_tail(self, data: bytes, path: str, min_events: int
                    ) -> tuple[dict[str, Any], list[dict[str, Any]], TornMarker | None, int] | None:
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
            torn = TornMarker(torn_start, recovered)
        return meta, events, torn, first_seq

    @staticmethod
    def _zstd_meta(view: memoryview, header_range: tuple[int, int], path: str) -> tuple[dict[str, Any], int]:
        """The header of a zstd log and its plaintext length."""
        first = frames.decode_frame(view, *header_range)
        if not first or first[-1:] != b"\n" or b"\n" in first[:-1]:
            raise frames.corrupt("first frame is not exactly one header line")
        return parse_header_record(first, path), len(first)

    def trust_tail(self, stored: StoredLog) -> None:
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
        token.check()
        self.preflight()
        seen: set[str] = set()
        out: list[tuple[dict[str, Any], str]] = []
        for project in self._project_dirs():
            for d in self._session_dirs(project):
                token.check()
                other = os.path.join(d, "session" + self.opposite_suffix)
                if exists(other):
                    raise self._mismatch(other)
                path = os.path.join(d, "session" + self.suffix)
                try:
                    first = self._read_first_line(path)
                except (FileNotFoundError, IsADirectoryError):
                    continue
                if first is None:
                    continue
                meta = parse_header_meta(first)
                if meta is None:
                    continue
                self.assert_identity(path, meta, None)
                if meta["id"] in seen:
                    raise SessionLayoutError(
                        f'duplicate JSONL session id "{meta["id"]}" appears in multiple project directories'
                    )
                seen.add(meta["id"])
                out.append((meta, path))
        return out

    def list_headers(self, token: CancelToken) -> list[dict[str, Any]]:
        return [meta for meta, _path in self._list_artifacts(token)]

    def list_snapshots(self, token: CancelToken) -> list[tuple[dict[str, Any], str]]:
        out = []
        for meta, path in self._list_artifacts(token):
            token.check()
            try:
                out.append((meta, revision_of(os.stat(path))))
            except FileNotFoundError:
                continue
        return out

    def read_raw(self, session_id: str, token: CancelToken) -> RawArtifact | None:
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
        meta = parse_header_meta(plain if nl < 0 else plain[:nl])
        if meta is None or meta.get("id") != session_id:
            raise SessionStorageCorruptError(f'corrupt session log: invalid header line in "{path}"')
        return RawArtifact(meta, ARTIFACT_NAME, text)

    # ------------------------------------------------------------ writing

    def _encode_batch(self, events: list[dict[str, Any]]) -> bytes:
        text = event_lines(events, self.pack_chunks) + b"\n"
        return frames.compress_frame(text) if self.compression == "zstd" else text

    def _mkdir(self, path: str, parent: str) -> None:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
            return
        fsync_dir(parent)

    def append_batch(self, meta: dict[str, Any], events: list[dict[str, Any]], materialized: bool,
                     token: CancelToken, *, expected_next_seq: int) -> None:
        token.check()
        self.preflight()
        if materialized:
            self._append_lines(meta, self._encode_batch(events), token)
        else:
            self._materialize(meta, events, token)

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
        parent = os.path.dirname(self.root) or "/"
        if not os.path.isdir(self.root):
            os.makedirs(parent, exist_ok=True)
        self._mkdir(self.root, parent)
        self._mkdir(project, self.root)
        self._mkdir(d, project)
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
        try:
            # A hard link never replaces: two racing writers cannot clobber a committed log.
            os.link(tmp, final)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        fsync_dir(d)
        try:
            os.unlink(tmp)
        except OSError:
            pass

    def _append_lines(self, meta: dict[str, Any], content: bytes, token: CancelToken) -> None:
        path = self.log_path(meta)
        token.check()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        closed = False
        try:
            before = os.fstat(fd).st_size
            try:
                _write_all(fd, content)
                os.fsync(fd)
            except BaseException as err:
                try:
                    os.close(fd)
                    closed = True
                    fd2 = os.open(path, os.O_RDWR)
                    try:
                        os.ftruncate(fd2, before)
                        os.fsync(fd2)
                    finally:
                        os.close(fd2)
                except BaseException as rollback_err:
                    raise SessionRollbackError(
                        f'failed to roll back append to "{path}"', [err, rollback_err]
                    ) from err
                raise
        finally:
            if not closed:
                os.close(fd)

    def commit_repair(self, meta: dict[str, Any], torn: TornMarker | None, closers: list[dict[str, Any]],
                      token: CancelToken, *, expected_revision: str) -> None:
        token.check()
        path = self.log_path(meta)
        self._tails.drop(path)
        if torn is not None:
            fd = os.open(path, os.O_RDWR)
            try:
                os.ftruncate(fd, torn.truncate_to)
                os.fsync(fd)
            finally:
                os.close(fd)
        batch = (list(torn.recovered) if torn is not None else []) + closers
        if batch:
            self._append_lines(meta, self._encode_batch(batch), NEVER)


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


def _tail_of_lines(data: bytes, floor: int, min_events: int) -> tuple[list[dict[str, Any]], TornMarker | None, int] | None:
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


def _stored(path: str, meta: dict[str, Any], events: list[dict[str, Any]], revision: str, torn: TornMarker | None,
            **extra: Any) -> StoredLog:
    return StoredLog(meta, events, revision, torn, raw_path=path, location={"kind": "jsonl", "path": path}, **extra)


def _mark(revision: str, check: bytes, offset: int, next_seq: int, meta: dict[str, Any]) -> TailMark:
    dev, ino = revision.split(":", 2)[:2]
    return TailMark((int(dev), int(ino)), offset, next_seq, check, meta)


def _scan_lines(data: bytes, start: int, first_seq: int) -> tuple[list[dict[str, Any]], TornMarker | None, int]:
    """Plain records of ``data[start:]``: (events, torn marker, committed offset in ``data``)."""
    scanner = LineScanner(start, first_seq)
    scanner.write(data[start:] if start else data)
    scanner.finish()
    torn = TornMarker(scanner.committed_bytes, []) if scanner.committed_bytes < len(data) else None
    return scanner.events, torn, scanner.committed_bytes


def _scan_frames(view: memoryview, ranges: list[tuple[int, int]], torn_start: int | None, first_seq: int,
                 plain_start: int) -> tuple[list[dict[str, Any]], TornMarker | None, int, int]:
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
    return scanner.events, TornMarker(torn_start, scanner.events[complete:]), torn_start, complete


def _write_all(fd: int, content: bytes) -> None:
    view = memoryview(content)
    while view:
        n = os.write(fd, view)
        view = view[n:]


NEVER = CancelToken()
