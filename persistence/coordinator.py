"""Backend-neutral orchestration: per-id ordering, the preparation cache, append rules, repair commits.

``CoordinatedPersistence`` is the one implementation of ``SessionPersistence``; each backend
supplies only its ``StorageBackend`` hooks.  Hooks are synchronous and run on worker threads; this
facade keeps the event loop free and turns task cancellation or an ``AbortSignal`` into a token the
hooks check between I/O steps.

What a read does lives in ``persistence.pipeline`` (prepare, read_from, read_tail, the one-pass
diagnosis and view); live sessions are attached by ``persistence.live``; the plumbing both use (id
locks, hook calls on worker threads, the cache, the append rules, repair commits) is
``persistence.coordination``.  This module decides when to read, what to cache, and when a repair is
committed.

May import: every engine module below it (coordination, backend, pipeline, live, values, errors, model); never Qt
or ``app``.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeVar

from persistence.artifact import ArtifactInfo, RawBytes
from persistence.backend import CancelToken, StorageBackend
from persistence.coordination import DEFAULT_PREPARED_CACHE_SIZE, CoordinatorCore, SessionPreparation, header_dict
from persistence.diagnosis import SessionDiagnosis, SessionView
from persistence.errors import (
    SessionArgumentError,
    SessionConflictError,
    SessionPersistenceError,
)
from persistence.id_state import IdState
from persistence.listing import ListedEntry
from persistence.live import LiveEntry, LiveSessions
from persistence.model.event import EventLog, SessionEvent, wire_of
from persistence.model.header import SessionHeader
from persistence.model.jsontext import NotLosslessError, is_nonneg_safe_integer, js_string, lossless_copy
from persistence.pipeline import (
    DIAGNOSABLE_ERRORS,
    PreparedSource,
    diagnosis_of,
    failure_diagnosis,
    prepare_core,
    read_from_core,
    read_tail_core,
    tail_start,
    view_of,
)
from persistence.readable_prefix import ReadablePrefix
from persistence.service import AbortSignal, EventLike, HeaderLike, SessionPersistence
from persistence.values import (
    ReadFromResult,
    SessionInspection,
    SessionLocation,
    SessionPersistenceSnapshot,
    SessionRawArtifact,
)

T = TypeVar("T")


class CoordinatedPersistence(CoordinatorCore, SessionPersistence):
    """The session service over one ``StorageBackend``: every read, write, repair and listing of a store."""

    def __init__(self, backend: StorageBackend, *, prepared_session_cache_size: int = DEFAULT_PREPARED_CACHE_SIZE) -> None:
        super().__init__(backend, prepared_session_cache_size=prepared_session_cache_size)
        self._live_sessions = LiveSessions(self)
        self._live: dict[str, LiveEntry] = self._live_sessions.entries

    # ------------------------------------------------------------ service

    def locate(self, meta: HeaderLike) -> SessionLocation | None:
        """Where the session ``meta`` describes is stored (JSONL: its transcript path; SQLite: None)."""
        loc = self._backend.locate(header_dict(meta))
        return None if loc is None else SessionLocation(loc["kind"], loc["path"])

    @property
    def supports_raw_artifacts(self) -> bool:
        """Whether ``read_raw`` can return an artifact's text (JSONL yes, SQLite no)."""
        return self._backend.supports_raw_artifacts

    async def read_raw(self, session_id: str, signal: AbortSignal | None = None) -> SessionRawArtifact | None:
        """Upstream's ``readRaw``: the artifact's text, strict about its header; None when absent."""
        raw = await self._run(lambda t: self._backend.read_raw(session_id, t), signal)
        if raw is None:
            return None
        return SessionRawArtifact(SessionHeader.from_json(raw.meta), raw.filename, raw.content)

    async def create(self, meta: HeaderLike) -> None:
        """Reserve a new session id with its header (written with the first append)."""
        try:
            header = lossless_copy(header_dict(meta))
        except NotLosslessError:
            raise SessionArgumentError("session metadata must be losslessly JSON-serializable") from None
        if not isinstance(header, dict):
            raise SessionArgumentError("session metadata must be losslessly JSON-serializable")
        if not is_nonneg_safe_integer(header.get("createdAt")):
            raise SessionArgumentError("session metadata createdAt must be a non-negative safe integer")
        session_id = header.get("id")
        if type(session_id) is not str:
            raise SessionArgumentError("session metadata id must be a string")
        header.setdefault("version", 0)
        async with self._lock(session_id):
            if session_id in self._states or session_id in self._reserved or session_id in self._live:
                raise SessionConflictError(f'session "{session_id}" already exists in this backend')
            stored = await self._run(lambda t: self._backend.load_stored(session_id, t))
            if stored is not None:
                raise SessionConflictError(
                    f'session "{session_id}" already has a persisted log on disk; load/resume it instead of creating'
                )
            self._states[session_id] = IdState(header, 0, False)

    async def append(self, session_id: str, events: Sequence[EventLike]) -> None:
        """Durably append a batch whose seqs continue the log (an unseen log is repaired first)."""
        try:
            batch = lossless_copy([wire_of(e) if isinstance(e, SessionEvent) else e for e in events])
        except NotLosslessError:
            raise SessionArgumentError(
                "session event batch is not losslessly JSON-serializable because it contains non-JSON-serializable data"
            ) from None
        async with self._lock(session_id):
            await self._append_locked(session_id, batch)

    async def load(self, session_id: str) -> SessionInspection:
        """The balanced session, committing a pending crash repair first (upstream's ``load``)."""
        live = self._live.get(session_id)
        if live is not None:
            return await self._live_sessions.load(session_id, live)
        async with self._lock(session_id):
            source = await self._balanced_source(session_id)
            self._cache_put(session_id, source)
            self._states[session_id] = IdState(source.meta, len(source.stored_events), True)
            return SessionInspection(SessionHeader.from_json(source.meta), EventLog(source.balanced))

    async def inspect(self, session_id: str, signal: AbortSignal | None = None) -> SessionInspection:
        """The session with in-memory crash closers, never writing (a live session: its snapshot)."""
        if signal is not None:
            signal.throw_if_aborted()
        live = self._live.get(session_id)
        if live is not None:
            # The live Session is the authority: its current snapshot, no flush, no storage access.
            return SessionInspection(live.session.header, live.session.events)
        async with self._lock(session_id):
            source = await self._run(lambda t: self._cached_or_prepared(session_id, t), signal)
            self._cache_put(session_id, source)
            return SessionInspection(SessionHeader.from_json(source.meta), EventLog(source.balanced))

    async def read_from(self, session_id: str, from_seq: int, signal: AbortSignal | None = None) -> ReadFromResult:
        """The stored events from ``from_seq`` on (no closers, never writes; JSONL decodes only new bytes)."""
        if not is_nonneg_safe_integer(from_seq):
            raise SessionArgumentError(f"readFrom fromSeq must be a non-negative safe integer, got {js_string(from_seq)}")
        seq = int(from_seq)
        async with self._lock(session_id):
            return await self._run(lambda t: read_from_core(self._backend, session_id, seq, t), signal)

    async def read_tail(self, session_id: str, min_events: int = 2000, signal: AbortSignal | None = None) -> ReadFromResult:
        """The newest stored events, cheaply: a viewer's first look at a huge log.

        At least ``min_events`` events (all of a shorter log) starting at some seq the backend chose,
        with a ``turn/start`` among them when the log has one; no crash closers, never writes.  Only the
        returned span is decoded and normalized, so a defect earlier in the log is *not* reported
        here: ``inspect``/``diagnose`` remain the verdict on the whole session.
        """
        if not is_nonneg_safe_integer(min_events) or min_events < 1:
            raise SessionArgumentError(f"readTail minEvents must be a positive safe integer, got {js_string(min_events)}")
        live = self._live.get(session_id)
        if live is not None:
            snapshot = live.session.events.record_table()  # the live table's current span: never expanded
            start = tail_start(snapshot, int(min_events))
            return ReadFromResult(live.session.header, EventLog(snapshot.between(start, len(snapshot))))
        async with self._lock(session_id):
            return await self._run(lambda t: read_tail_core(self._backend, session_id, int(min_events), t), signal)

    async def list(self, signal: AbortSignal | None = None) -> builtins.list[SessionHeader]:
        """Headers of the stored sessions, in the backend's list order.

        One bad session never hides the others: a header the engine cannot represent (a number
        outside JSON's range, ``SessionHeader.from_listing``) is skipped here, and the JSONL backend
        skips unreadable and symlinked entries (``persistence.jsonl.discovery``).  ``list_entries``
        (``verify``, the window) shows each skipped one as its own bad row.  What the spec makes a
        root-level error (foreign layout, duplicate ids, SQLite's all-or-nothing row check) still raises.
        """
        headers = await self._listing(self._backend.list_header_values, signal)
        assert headers is not None  # only a hook given ``at_most`` may decline
        return headers

    async def list_snapshots(self, signal: AbortSignal | None = None) -> builtins.list[SessionPersistenceSnapshot]:
        """``list()`` with each session's opaque revision (same skipping rules)."""
        snapshots = await self._listing(self._backend.list_snapshot_values, signal)
        assert snapshots is not None  # only a hook given ``at_most`` may decline
        return snapshots

    async def _listing(self, hook: Callable[[CancelToken], T], signal: AbortSignal | None) -> T:
        """A backend hook that builds the listing's values itself (SQLite's ``list_header_values`` and
        ``list_snapshot_values``: no header dicts, no ``from_listing`` per row).

        First the backend's ``run_if_tiny(hook)`` may run it right here on the loop, when it can tell the
        listing is tiny and can never wait on a lock (a one-session store lists in about 0.25 ms; the hop
        to a worker thread alone costs about 0.085 ms); None means it did not, and the hook runs on a
        worker thread like every other hook.  Nothing awaits inline, so the signal can only have been
        aborted before: that raises its reason first, as ``_run`` does.
        """
        if signal is not None:
            signal.throw_if_aborted()
        result = self._backend.run_if_tiny(hook)
        if result is not None:
            return result
        return await self._run(hook, signal)

    # ------------------------------------------------------------ what a viewer, verify and repair read

    async def list_entries(self, signal: AbortSignal | None = None) -> builtins.list[ListedEntry]:
        """Every session and every bad entry as one ``ListedEntry`` (lenient: one bad row never fails the rest).

        JSONL: the engine's one root walk (both encodings' transcripts, unreadable and symlinked
        entries, flat files, unlistable headers).  SQLite: every ``sessions`` row, a row that fails
        validation as a bad row.  A store that cannot be listed at all (a root the OS refuses, a file
        that is not a store) still raises: that is a bad store, not a bad session.
        """
        return await self._run(self._backend.list_entries, signal)

    async def diagnose(self, session_id: str, signal: AbortSignal | None = None) -> SessionDiagnosis:
        """Classify a stored session (never writes; the same read and verdict as ``view``)."""
        async with self._lock(session_id):
            diagnosis, _source, _raw = await self._run(lambda t: self._examine(session_id, t, False), signal)
            return diagnosis

    async def view(self, session_id: str, signal: AbortSignal | None = None, *, raw: bool = False) -> SessionView:
        """One read of a stored session: verdict, header, stored events, closers, torn facts, revision.

        Never writes.  The verdict is ``diagnose``'s (a failure is a value: ``view.status`` is
        ``corrupt``, ``unsupported``, ``missing`` or ``busy`` and the events are empty), and
        ``view.events`` equals ``inspect``'s.  A live session of this instance is read from storage,
        as ``diagnose`` reads it.  ``raw=True`` also returns the transcript bytes this very read
        parsed (JSONL; None for SQLite or when the read failed), so a viewer reads the log once; it
        always reads the log (a cached read has no bytes).  A log that only grew since this instance's
        last read of it is extended, not parsed again (``persistence.incremental``); the view is the same.
        """
        async with self._lock(session_id):
            diagnosis, source, raw_bytes = await self._run(lambda t: self._examine(session_id, t, raw), signal)
            return view_of(diagnosis, source, raw_bytes)

    async def map_views(
        self, session_ids: Sequence[str], digest: Callable[[SessionView], T], signal: AbortSignal | None = None
    ) -> builtins.list[T]:
        """``digest(view)`` of each id's ``view``, in order, the reads and digests done in one call to a
        worker thread.

        Why: on a small session the read is ~0.4 ms and the hop to a worker thread (locks, handoff,
        wakeup) about as much again, so a worker process judging a root's sessions one ``view`` at a
        time spent half its time hopping (10,000 sessions: ~3.7 s of CPU, issue 25).  Only the digests
        are kept: each view is dropped once digested, so a batch of big logs holds one view at a time
        (besides the prepared-session cache every read fills).  ``digest`` runs on the worker thread (it
        must not touch the event loop); what it raises ends the batch and is raised here.  Each id's
        lock is held for the whole batch (taken in sorted order, so two batches cannot deadlock): keep
        batches small (tens of sessions) where other callers wait on the same ids.  Cancellation is
        checked between sessions; a repeated id is read and digested once.
        """
        unique = sorted(set(session_ids))
        async with AsyncExitStack() as held:
            for session_id in unique:
                await held.enter_async_context(self._lock(session_id))

            def work(t: CancelToken) -> dict[str, T]:
                out: dict[str, T] = {}
                for session_id in unique:
                    t.check()
                    out[session_id] = digest(view_of(*self._examine(session_id, t, False)))
                return out

            by_id = await self._run(work, signal)
        return [by_id[session_id] for session_id in session_ids]

    def _examine(
        self, session_id: str, t: CancelToken, keep_raw: bool
    ) -> tuple[SessionDiagnosis, PreparedSource | None, RawBytes | None]:
        """The one read behind ``diagnose`` and ``view``: (verdict, prepared source or None, raw bytes or None)."""
        try:
            source = self._cached_or_extended(session_id, t, keep_raw=keep_raw)
        except DIAGNOSABLE_ERRORS as err:
            return failure_diagnosis(session_id, err), None, None
        raw, source.raw = source.raw, None  # a cached source never pins the bytes of a read
        self._cache_put(session_id, source)
        return diagnosis_of(self._backend, session_id, source, t), source, raw

    async def read_raw_bytes(self, session_id: str, *, offset: int = 0, signal: AbortSignal | None = None) -> RawBytes | None:
        """The transcript's bytes from ``offset`` on, read while the file did not change (never parsed).

        For ``persistence.raw_decode``: a viewer shows every byte that decodes, even of a log the
        engine refuses (no root preflight: a root ``list()`` refuses still shows its bytes).  None when
        the session has no transcript (absent, or a SQLite store, whose sessions are rows: render
        ``view(...).stored`` with ``render_rows``).  A listed row no id addresses (a flat file, the
        other encoding's transcript) is read by its path with ``read_artifact_bytes``.
        """
        if not is_nonneg_safe_integer(offset):
            raise SessionArgumentError(f"readRawBytes offset must be a non-negative safe integer, got {js_string(offset)}")
        return await self._run(lambda t: self._backend.read_raw_bytes(session_id, int(offset), t), signal)

    async def read_artifact_bytes(self, path: str, *, offset: int = 0, signal: AbortSignal | None = None) -> RawBytes | None:
        """A listed transcript's bytes by path (``ListedEntry.path``), from ``offset`` on, read stably.

        For the rows ``read_raw_bytes`` cannot address by id: a flat file, the other encoding's
        transcript of a mixed root, a transcript whose header cannot be read.  JSONL refuses a path
        outside the root or through a link below it (``SessionLayoutError``); SQLite returns None.
        """
        if not is_nonneg_safe_integer(offset):
            raise SessionArgumentError(f"readArtifactBytes offset must be a non-negative safe integer, got {js_string(offset)}")
        return await self._run(lambda t: self._backend.read_artifact_bytes(path, int(offset), t), signal)

    def artifact(self, session_id: str) -> ArtifactInfo | None:
        """The file holding the session's bytes, stat'ed now (a few system calls; no log is parsed).

        JSONL: its transcript (None when the session has none).  SQLite: the database file, with the
        session's event-data bytes (None for an in-memory store).  A JSONL layout problem (a symlinked
        session folder) raises its ``SessionPersistenceError`` as a read would.
        """
        return self._backend.artifact(session_id)

    async def readable_prefix(self, session_id: str, signal: AbortSignal | None = None) -> ReadablePrefix | None:
        """The events of a stored session before its first damage, decoded leniently, under its header as
        written, and what stopped them (``persistence.readable_prefix``): for viewers of a log ``view``
        refuses (corrupt, unsupported, torn), so every viewer shows the same part of it.

        Never writes and validates nothing beyond decoding; not a verdict (``diagnose`` is).  JSONL: the
        transcript's lines up to the first damage (``persistence.jsonl.prefix``); SQLite: the rows up to the
        first that does not decode.  None for a missing session or a header that names nothing.
        """
        async with self._lock(session_id):
            return await self._run(lambda t: self._backend.load_readable_prefix(session_id, t), signal)

    async def session_sizes(
        self, session_ids: builtins.list[str] | None = None, signal: AbortSignal | None = None
    ) -> dict[str, tuple[int, int | None]]:
        """session id -> (bytes, newest change in ms) for a listing's Size and Modified columns.

        JSONL: the transcript's size and mtime.  SQLite (a session has no file of its own): the bytes
        of its events' data and the time of its newest event, on a read-only connection (an asked-for id
        without event rows measures ``(0, None)``).  Every listed session when ``session_ids`` is None;
        a JSONL id without a transcript, or a store that cannot be read that way, is simply absent.
        """
        ids = None if session_ids is None else builtins.list(session_ids)
        return await self._run(lambda t: self._backend.session_sizes(ids, t), signal)

    async def integrity_check(self, signal: AbortSignal | None = None) -> str | None:
        """The store's structural self-check before a repair: None when sound, else what is wrong.

        SQLite: ``PRAGMA quick_check`` on a read-only connection (a busy store counts as sound: the
        liveness guard reports it).  JSONL has no such check: None.
        """
        return await self._run(self._backend.integrity_check, signal)

    async def schema_version(self, signal: AbortSignal | None = None) -> int | None:
        """The store's own schema version as found on disk now: SQLite's ``user_version`` (read on a
        private read-only connection); None for JSONL, whose transcripts carry only their header's
        ``version``, and when it cannot be read."""
        return None

    @asynccontextmanager
    async def read_only_twin(self) -> AsyncIterator[CoordinatedPersistence]:
        """The store a write-nothing action (preview, dry run, verify) reads through; closed afterwards.

        SQLite: a ``read_only`` store on the same file.  A writable connection checkpoints a leftover
        ``-wal`` into the database file when it closes, so reading through it would rewrite a crashed
        database's bytes; a read-only connection never does.  JSONL (reads never write), an in-memory
        or an already read-only store: this store itself.
        """
        twin = self._open_read_only_twin()
        if twin is None:
            yield self
            return
        try:
            yield twin
        finally:
            await twin.close()

    def _open_read_only_twin(self) -> CoordinatedPersistence | None:
        """A new read-only store on the same storage, or None when this store already writes nothing."""
        return None

    # ------------------------------------------------------------ preparation (cold -> unpublished Session)

    async def prepare(self, session_id: str, signal: AbortSignal | None = None) -> SessionPreparation:
        """Commit pending repair and build the exact unpublished Session a resume will publish."""
        from persistence.session import Session

        if signal is not None:
            signal.throw_if_aborted()
        while True:
            if session_id in self._live:
                raise SessionConflictError(f'cannot prepare session "{session_id}" while it is live')
            # A competing reservation is waited out (S-30): it ends in publication or release.
            if self._reserved.get(session_id) is not None:
                await self._wait_unreserved(session_id, signal)
                continue
            prepared = await self._prepare_once(session_id, signal, Session)
            if prepared is not None:
                return prepared

    async def _wait_unreserved(self, session_id: str, signal: AbortSignal | None) -> None:
        event = self._reservation_events.setdefault(session_id, asyncio.Event())
        if signal is None:
            await event.wait()
            return
        aborted: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_abort(_reason: Any) -> None:
            if not aborted.done():
                aborted.set_result(None)

        remove = signal.add_listener(on_abort)
        waiter = asyncio.ensure_future(event.wait())
        either: set[asyncio.Future[Any]] = {waiter, aborted}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            remove()
            waiter.cancel()
        signal.throw_if_aborted()

    async def _prepare_once(self, session_id: str, signal: AbortSignal | None, Session: Any) -> SessionPreparation | None:
        async with self._lock(session_id):
            if self._reserved.get(session_id) is not None:
                return None
            self._reserved[session_id] = "committing"
            try:
                source = await self._balanced_source(session_id, signal)
                state = self._states.get(session_id)
                if state is not None and state.owner is not None:
                    raise SessionConflictError(f'session "{session_id}" already has a live persistence owner')
                self._states[session_id] = IdState(source.meta, len(source.stored_events), True)
                self._cache_drop(session_id)
                session = Session(source.meta, source.stored_events, restore=True)
            except BaseException:
                self._unreserve(session_id)
                raise
            self._reserved[session_id] = "reserved"
        if session_id in self._live:
            self._unreserve(session_id)
            raise SessionConflictError(f'cannot prepare session "{session_id}" while it is live')
        initial_count = session.seq

        def release() -> None:
            if self._reserved.get(session_id) == "reserved" and getattr(session, "_prepared_for", None) is None:
                if session.seq == initial_count and session_id not in self._live:
                    self._cache_put(session_id, source)
                self._unreserve(session_id)

        return SessionPreparation(self, session, source.meta, release)

    # ------------------------------------------------------------ live sessions (persistence.live)

    def is_live(self, session_id: str) -> bool:
        """Whether a live Session is attached to ``session_id`` on this instance."""
        return session_id in self._live

    def live_session(self, session_id: str) -> Any:
        """The live Session attached to ``session_id``, or None."""
        return self._live_sessions.session(session_id)

    async def attach_live(self, session: Any, *, preparation: SessionPreparation | None = None) -> None:
        """Bind a live Session to its log: persist its seed/suffix, then every append via write-behind."""
        await self._live_sessions.attach(session, preparation)

    async def flush_live(self, session_id: str) -> None:
        """Write everything a live session buffered; no-op for an id that is not live."""
        await self._live_sessions.flush(session_id)

    async def retire_live(self, session_id: str) -> None:
        """Drain a live session and release its ownership (live -> cold)."""
        await self._live_sessions.retire(session_id)

    # ------------------------------------------------------------ repair and backups

    async def repair(self, session_id: str, *, expected_revision: str) -> str:
        """Commit the crash repair a diagnosis previewed, once, pinned to ``expected_revision``.

        Unlike ``load`` (upstream's loop: repair, re-read, repair again), this never retries: if the
        stored log is not exactly the previewed one it raises ``SessionConflictError`` and writes
        nothing, so records a writer appended meanwhile can never be taken for a torn tail and cut.
        Returns the revision after the commit.
        """
        if session_id in self._live or self._reserved.get(session_id) is not None:
            raise SessionConflictError(f'cannot repair session "{session_id}" while it is live or reserved for resume')
        async with self._lock(session_id):

            def work(t: CancelToken) -> str:
                # The preview's read is cached when it came through this store: reuse it (its revision is
                # re-checked against the file now) instead of parsing the whole log a second time.
                source = self._cached_fresh(session_id, t) or prepare_core(self._backend, session_id, t)
                if source.revision != expected_revision:
                    raise SessionConflictError(
                        f'session "{session_id}" changed since its repair was previewed; nothing was changed'
                    )
                if source.needs_repair:
                    self._backend.commit_repair(source.meta, source.torn, source.closers, t, expected_revision=source.revision)
                revision = self._backend.read_stored_revision(session_id, t)
                return "" if revision is None else revision

            try:
                return await self._run(work)
            finally:
                self._cache_drop(session_id)
                self._states.pop(session_id, None)

    async def backup_candidates(self, signal: AbortSignal | None = None) -> builtins.list[tuple[str, str]]:
        """(session id, path) of every repair backup in the store, found without listing sessions
        (a root whose ``list`` fails still has its backups found)."""
        return await self._run(self._backend.backup_candidates, signal)

    def assert_writable_artifact(self, path: str) -> None:
        """Refuse (typed error) a write to ``path`` that the layout forbids, e.g. through a symlink."""
        self._backend.assert_writable_path(path)

    async def compare_backup(self, session_id: str, backup_path: str) -> tuple[int, int]:
        """(records in the backup, how many of them the current log lacks); reads both, writes nothing.

        The log lacks the backup's records from the first seq where the two differ on: a repair that
        re-appended every recovered record keeps the backup a prefix of the log (0 lacking), one that
        lost records does not.  A log that no longer reads lacks everything after its readable part.
        """

        def work(t: CancelToken) -> tuple[int, int]:
            backup = self._backend.read_backup(session_id, backup_path, t)
            if backup is None:
                return 0, 0
            kept = backup.events
            try:
                stored = self._backend.load_stored(session_id, t)
                current = [] if stored is None else stored.events
            except (SessionPersistenceError, OSError):
                current = []
            same = 0
            for a, b in zip(kept, current, strict=False):
                if a != b:
                    break
                same += 1
            return len(kept), len(kept) - same

        async with self._lock(session_id):
            return await self._run(work)

    async def restore_backup(self, session_id: str, backup_path: str, *, expected_revision: str) -> str:
        """Make the session what ``backup_path`` holds (atomically, pinned to ``expected_revision``)."""
        if session_id in self._live or self._reserved.get(session_id) is not None:
            raise SessionConflictError(f'cannot restore session "{session_id}" while it is live or reserved for resume')
        async with self._lock(session_id):

            def work(t: CancelToken) -> str:
                self._backend.restore_backup(session_id, backup_path, t, expected_revision=expected_revision)
                revision = self._backend.read_stored_revision(session_id, t)
                return "" if revision is None else revision

            try:
                return await self._run(work)
            finally:
                self._cache_drop(session_id)
                self._states.pop(session_id, None)

    async def read_stored_revision(self, session_id: str, signal: AbortSignal | None = None) -> str | None:
        """The session's opaque revision now (cheap; None when it is not stored)."""
        return await self._run(lambda t: self._backend.read_stored_revision(session_id, t), signal)

    async def close(self) -> None:
        """Drain every live session, then close the backend (a drain failure is raised first)."""
        failures: builtins.list[BaseException] = []
        for session_id in builtins.list(self._live):
            try:
                await self.retire_live(session_id)
            except Exception as err:
                failures.append(err)
        # Teardown also waits for work still running on any id (a public append, a retirement
        # or a load): close must be the very last step (§6.9, S-44/S-45).
        for session_id in builtins.list(self._locks):
            async with self._lock(session_id):
                pass
        await asyncio.get_running_loop().run_in_executor(None, self._backend.close)
        if failures:
            raise SessionPersistenceError(f"{self._backend.kind} dispose failed: " + "; ".join(map(str, failures)))


__all__ = [
    "DEFAULT_PREPARED_CACHE_SIZE",
    "CoordinatedPersistence",
    "PreparedSource",
    "SessionDiagnosis",
    "SessionPreparation",
    "SessionView",
    "prepare_core",
    "read_from_core",
    "read_tail_core",
]
