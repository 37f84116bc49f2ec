"""The synchronous hook interface every storage backend implements.

The coordinator owns the rules that are the same for every backend (per-id ordering,
seq contiguity, read pipeline, repair decisions); a backend only moves bytes.  Hooks run
on worker threads and must call ``token.check()`` at their I/O boundaries so a
cancelled caller stops before the next write.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from persistence.artifact import ArtifactInfo, RawBytes
from persistence.errors import SessionAbortedError
from persistence.listing import SESSION, ListedEntry
from persistence.lost import LostRecord
from persistence.model.event_table import EventTable
from persistence.model.header import SessionHeader
from persistence.readable_prefix import ReadablePrefix
from persistence.values import SessionPersistenceSnapshot

T = TypeVar("T")


class CancelToken:
    """Thread-safe cancellation flag checked by hooks between I/O steps."""

    __slots__ = ("_event", "reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: Any = None

    def cancel(self, reason: Any = None) -> None:
        """Ask the hook to stop at its next I/O boundary (``check`` raises from then on)."""
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel`` was called."""
        return self._event.is_set()

    def check(self) -> None:
        """Raise ``SessionAbortedError(reason)`` once cancelled."""
        if self._event.is_set():
            raise SessionAbortedError(self.reason)


NEVER_CANCELLED = CancelToken()


@dataclass(slots=True)
class TornMarker:
    """A recoverable damaged tail: cut the artifact back to ``truncate_to`` and re-append ``recovered``."""

    truncate_to: Any
    recovered: list[dict[str, Any]] = field(default_factory=list)
    # Backend-private: what the read saw from ``truncate_to`` on (JSONL: the bytes; SQLite: the rows),
    # so ``describe_cut`` need not read the log a second time.  None: ``describe_cut`` reads it.
    evidence: Any = field(default=None, repr=False, compare=False)


@dataclass(slots=True)
class StoredLog:
    """One read of a session's log as the backend found it (before the read pipeline checks it)."""

    meta: dict[str, Any]
    events: EventTable  # chunk runs stay packed (persistence.model.event_table)
    revision: str
    torn: TornMarker | None = None
    raw_path: str | None = None  # what refusal messages cite as "(raw log: ...)"
    location: dict[str, str] | None = None
    base_seq: int = 0  # first seq of ``events`` (a backend may return only a suffix)
    tail_mark: Any = None  # backend-private resume point, trusted only via ``trust_tail``
    raw: RawBytes | None = None  # the artifact bytes this read parsed (JSONL whole reads); dropped unless asked for


@dataclass(frozen=True, slots=True)
class CutFacts:
    """What cutting a torn tail would destroy, so a repair can refuse or ask first.

    ``intact_records`` counts records in the cut region that parse and carry a seq at or past the
    next kept seq: damage followed by such records is not a torn write, and cutting them loses data.
    """

    cut_bytes: int | None = None
    cut_rows: int | None = None
    intact_records: int = 0
    first_intact_seq: int | None = None
    lost: tuple[LostRecord, ...] = ()  # the records the cut destroys, decoded leniently (``persistence.lost``)


@dataclass(frozen=True, slots=True)
class RawArtifact:
    """What ``read_raw`` returns: the header, the artifact's file name and its text."""

    meta: dict[str, Any]
    filename: str
    content: str


class StorageBackend(ABC):
    """The synchronous hooks of one storage kind; the coordinator calls them on worker threads."""

    kind: str = "abstract"
    supports_raw_artifacts: bool = False
    compression: str | None = None  # JSONL: "zstd" | "none"; None for stores without transcripts
    read_only: bool = False  # a store opened for browsing (SQLite ``mode=ro``)

    @property
    def root_path(self) -> str:
        """Where the store lives: a JSONL root directory or a SQLite database file."""
        return ""

    @abstractmethod
    def locate(self, meta: dict[str, Any]) -> dict[str, str] | None:
        """Where the session of ``meta`` is (or would be) stored, as ``{"kind", "path"}``; None when nowhere."""

    @abstractmethod
    def load_stored(self, session_id: str, token: CancelToken) -> StoredLog | None:
        """The whole log (a torn tail as ``StoredLog.torn``); None when the session does not exist."""

    def load_suffix(self, session_id: str, from_seq: int, token: CancelToken) -> StoredLog | None:
        """Events from ``from_seq`` on (JSONL reads everything; SQLite seeks)."""
        return self.load_stored(session_id, token)

    def load_readable_prefix(self, session_id: str, token: CancelToken) -> ReadablePrefix | None:
        """The decodable events of a refused log before its first damage; None where the backend has no
        lenient reader (JSONL: a viewer decodes the artifact's bytes with ``iter_raw`` instead)."""
        return None

    def load_tail(self, session_id: str, min_events: int, token: CancelToken) -> StoredLog | None:
        """The newest events: at least ``min_events`` of them (all when the log is shorter) and at least
        one ``turn/start`` when the log has one, so a viewer can fold the tail on its own.  The default
        reads everything."""
        return self.load_stored(session_id, token)

    def load_after(
        self, session_id: str, mark: Any, token: CancelToken, *, since: str | None = None, whole_raw: bool = False
    ) -> StoredLog | None:
        """What was stored after ``mark`` (the ``tail_mark`` of an earlier read that passed the pipeline) when
        the log only grew since and the bytes or rows before the mark are unchanged (``persistence.incremental``).

        ``events`` start at ``base_seq`` (the mark's next seq), ``torn`` is absolute, ``tail_mark`` is where
        this read stopped.  None: the mark no longer describes the log (the caller reads it whole).
        ``since``: the revision that read saw (JSONL: a file changed without growing is read whole).
        ``whole_raw``: ``raw`` holds the whole artifact (read at once; only its new part is parsed).  By
        default nothing is extended.
        """
        return None

    def trust_tail(self, stored: StoredLog) -> None:  # noqa: B027 - optional hook, most backends need nothing
        """``stored``'s events passed the read pipeline: a later suffix read may start where it ended."""

    @abstractmethod
    def read_stored_revision(self, session_id: str, token: CancelToken) -> str | None:
        """The session's opaque revision now (cheap: no decoding); None when it does not exist."""

    @abstractmethod
    def append_batch(
        self,
        meta: dict[str, Any],
        events: list[dict[str, Any]],
        materialized: bool,
        token: CancelToken,
        *,
        expected_next_seq: int,
    ) -> None:
        """Durably append ``events`` (materializing the session first unless ``materialized``)."""

    @abstractmethod
    def commit_repair(
        self,
        meta: dict[str, Any],
        torn: TornMarker | None,
        closers: list[dict[str, Any]],
        token: CancelToken,
        *,
        expected_revision: str,
    ) -> None:
        """Cut ``torn`` and append its recovered records plus ``closers``, pinned to ``expected_revision``."""

    def describe_cut(self, session_id: str, torn: TornMarker, next_seq: int, token: CancelToken) -> CutFacts:
        """What the repair of ``torn`` would cut (read only); backends without a cheap answer say nothing."""
        return CutFacts()

    def backup_candidates(self, token: CancelToken) -> list[tuple[str, str]]:
        """(session id, backup path) of every repair backup the store has; none by default."""
        return []

    def assert_writable_path(self, path: str) -> None:  # noqa: B027 - optional hook
        """Refuse a write to ``path`` the backend's layout forbids (JSONL: through a symlink)."""

    def hold_writer(self, meta: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """A live session is attached: leave a sign other processes can see until ``release_writer``
        (JSONL: a shared lock on the transcript; SQLite needs none, its writer keeps the database open)."""

    def release_writer(self, meta: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """The live session was disposed: drop what ``hold_writer`` left."""

    def read_backup(self, session_id: str, backup_path: str, token: CancelToken) -> StoredLog | None:
        """The session as a backup copy of its artifact holds it (never writes either file)."""
        from persistence.errors import SessionPersistenceError

        raise SessionPersistenceError(f"the {self.kind} backend cannot read backups")

    def restore_backup(self, session_id: str, backup_path: str, token: CancelToken, *, expected_revision: str) -> None:
        """Make the session what ``backup_path`` holds, atomically, if its revision is still ``expected_revision``."""
        from persistence.errors import SessionPersistenceError

        raise SessionPersistenceError(f"the {self.kind} backend cannot restore backups")

    @abstractmethod
    def list_headers(self, token: CancelToken) -> list[dict[str, Any]]:
        """Headers of the listable sessions in list order (upstream's ``list``)."""

    @abstractmethod
    def list_snapshots(self, token: CancelToken) -> list[tuple[dict[str, Any], str]]:
        """(header, revision) of the listable sessions in list order."""

    def list_header_values(self, token: CancelToken, *, at_most: int | None = None) -> list[SessionHeader] | None:
        """``list()``'s values: the listable headers, skipping one the engine cannot represent
        (``SessionHeader.from_listing``).  A backend may build them faster (SQLite: straight from the
        rows).  With ``at_most``, a backend that can tell cheaply returns None for a bigger store."""
        return [h for h in map(SessionHeader.from_listing, self.list_headers(token)) if h is not None]

    def list_snapshot_values(self, token: CancelToken, *, at_most: int | None = None) -> list[SessionPersistenceSnapshot] | None:
        """``listSnapshots()``'s values (same skipping rule as ``list_header_values``; ``at_most`` likewise)."""
        out = []
        for meta, revision in self.list_snapshots(token):
            header = SessionHeader.from_listing(meta)
            if header is not None:
                out.append(SessionPersistenceSnapshot(header, revision))
        return out

    def run_if_tiny(self, hook: Callable[..., T | None]) -> T | None:
        """Run a listing hook on the calling thread (the event loop) when it is known to be tiny and
        unable to wait on a lock; None: it did not run, so run it on a worker.  By default never."""
        return None

    def list_entries(self, token: CancelToken) -> list[ListedEntry]:
        """Every session and every bad entry as one row (lenient); by default the snapshots, all good."""
        return [ListedEntry(SESSION, meta["id"], meta, revision) for meta, revision in self.list_snapshots(token)]

    def read_raw(self, session_id: str, token: CancelToken) -> RawArtifact | None:
        """Upstream's ``readRaw``: the artifact's text (backends without byte artifacts refuse)."""
        from persistence.errors import SessionPersistenceError

        raise SessionPersistenceError("this session persistence backend does not expose raw artifacts")

    def read_raw_bytes(self, session_id: str, offset: int, token: CancelToken) -> RawBytes | None:
        """The artifact's bytes from ``offset`` on, read stably; None when the session has no byte artifact."""
        return None

    def read_artifact_bytes(self, path: str, offset: int, token: CancelToken) -> RawBytes | None:
        """A listed artifact's bytes by path (rows no session id addresses); None without byte artifacts."""
        return None

    def artifact(self, session_id: str) -> ArtifactInfo | None:
        """The file holding the session's bytes, stat'ed now; None when there is none (in memory, absent)."""
        return None

    def session_sizes(self, session_ids: list[str] | None, token: CancelToken) -> dict[str, tuple[int, int | None]]:
        """session id -> (bytes, newest change in ms) for the listing's Size/Modified columns; {} by default."""
        return {}

    def integrity_check(self, token: CancelToken) -> str | None:
        """The store's own structural check: None when sound, else what is wrong (JSONL has none: None)."""
        return None

    def close(self) -> None:
        """Release connections and files (called once, after every hook returned)."""
        return None
