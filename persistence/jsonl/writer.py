"""The JSONL backend's write side: materializing a session, appending batches under the two-writer check and
the writers' locks, live writers' holds, and the repair's commit (jsonl-backend §11-§12).

Every write is a transaction: a new transcript is written to a temp name, fsynced and hard-linked in (never
replacing one); an append is rolled back on failure while its locks are held; a repair swaps the file
atomically (``repair_commit``).
"""

from __future__ import annotations

import os
import secrets
import threading
from typing import Any

from persistence.backend import CancelToken, TornMarker
from persistence.errors import SessionConflictError, SessionPersistenceError, SessionRollbackError
from persistence.jsonl import discovery, frames, locks
from persistence.jsonl.files import exists, fsync_dir, revision_stamp
from persistence.jsonl.paths import log_path, opposite, project_dir, session_dir
from persistence.jsonl.reader import JsonlReader
from persistence.jsonl.repair_commit import atomic_replace_tail
from persistence.model.chunk_rows import pack_runs
from persistence.model.header import SessionHeader
from persistence.model.jsontext import js_dumps


def event_lines(events: list[dict[str, Any]], pack_chunks: bool) -> bytes:
    """The JSONL lines of ``events`` (chunk runs packed when ``pack_chunks``), without the final newline."""
    records = pack_runs(events) if pack_chunks else events
    return b"\n".join(js_dumps(r) for r in records)


def _write_all(fd: int, content: bytes) -> None:
    view = memoryview(content)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class JsonlWriter(JsonlReader):
    """Materialize, append and commit repairs over a JSONL root; hold live writers' locks."""

    def __init__(self, root: str | os.PathLike[str], *, compression: str = "zstd", pack_chunks: bool = True) -> None:
        super().__init__(root, compression=compression)
        self.pack_chunks = True if pack_chunks is None else bool(pack_chunks)
        self._holds: dict[str, locks.WriterHold] = {}  # transcript path -> a live session's shared lock
        self._holds_lock = threading.Lock()

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

    def _check_expected_size(self, path: str, st: os.stat_result) -> None:
        """Raise ``SessionConflictError`` when the open transcript is not the one this instance expects."""
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
