"""The synchronous hook interface every storage backend implements.

The coordinator owns the rules that are the same for every backend (per-id ordering,
seq contiguity, read pipeline, repair decisions); a backend only moves bytes.  Hooks run
on worker threads and must call ``token.check()`` at their I/O boundaries so a
cancelled caller stops before the next write.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from persistence.errors import SessionAbortedError


class CancelToken:
    """Thread-safe cancellation flag checked by hooks between I/O steps."""

    __slots__ = ("_event", "reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: Any = None

    def cancel(self, reason: Any = None) -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise SessionAbortedError(self.reason)


NEVER_CANCELLED = CancelToken()


@dataclass(slots=True)
class TornMarker:
    """A recoverable damaged tail: cut the artifact back to ``truncate_to`` and re-append ``recovered``."""

    truncate_to: Any
    recovered: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class StoredLog:
    meta: dict[str, Any]
    events: list[dict[str, Any]]
    revision: str
    torn: TornMarker | None = None
    raw_path: str | None = None  # what refusal messages cite as "(raw log: ...)"
    location: dict[str, str] | None = None
    base_seq: int = 0  # first seq of ``events`` (a backend may return only a suffix)
    tail_mark: Any = None  # backend-private resume point, trusted only via ``trust_tail``


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


@dataclass(frozen=True, slots=True)
class RawArtifact:
    meta: dict[str, Any]
    filename: str
    content: str


class StorageBackend(ABC):
    kind: str = "abstract"
    supports_raw_artifacts: bool = False

    @abstractmethod
    def locate(self, meta: dict[str, Any]) -> dict[str, str] | None: ...

    @abstractmethod
    def load_stored(self, session_id: str, token: CancelToken) -> StoredLog | None: ...

    def load_suffix(self, session_id: str, from_seq: int, token: CancelToken) -> StoredLog | None:
        """Events from ``from_seq`` on (JSONL reads everything; SQLite seeks)."""
        return self.load_stored(session_id, token)

    def load_tail(self, session_id: str, min_events: int, token: CancelToken) -> StoredLog | None:
        """The newest events: at least ``min_events`` of them (all when the log is shorter) and at least
        one ``turn/start`` when the log has one, so a viewer can fold the tail on its own.  The default
        reads everything."""
        return self.load_stored(session_id, token)

    def trust_tail(self, stored: StoredLog) -> None:  # noqa: B027 - optional hook, most backends need nothing
        """``stored``'s events passed the read pipeline: a later suffix read may start where it ended."""

    @abstractmethod
    def read_stored_revision(self, session_id: str, token: CancelToken) -> str | None: ...

    @abstractmethod
    def append_batch(self, meta: dict[str, Any], events: list[dict[str, Any]], materialized: bool,
                     token: CancelToken, *, expected_next_seq: int) -> None: ...

    @abstractmethod
    def commit_repair(self, meta: dict[str, Any], torn: TornMarker | None, closers: list[dict[str, Any]],
                      token: CancelToken, *, expected_revision: str) -> None: ...

    def describe_cut(self, session_id: str, torn: TornMarker, next_seq: int, token: CancelToken) -> CutFacts:
        """What the repair of ``torn`` would cut (read only); backends without a cheap answer say nothing."""
        return CutFacts()

    def backup_candidates(self, token: CancelToken) -> list[tuple[str, str]]:
        """(session id, backup path) of every repair backup the store has; none by default."""
        return []

    def assert_writable_path(self, path: str) -> None:  # noqa: B027 - optional hook
        """Refuse a write to ``path`` the backend's layout forbids (JSONL: through a symlink)."""

    def read_backup(self, session_id: str, backup_path: str, token: CancelToken) -> StoredLog | None:
        """The session as a backup copy of its artifact holds it (never writes either file)."""
        from persistence.errors import SessionPersistenceError

        raise SessionPersistenceError(f"the {self.kind} backend cannot read backups")

    def restore_backup(self, session_id: str, backup_path: str, token: CancelToken, *, expected_revision: str) -> None:
        """Make the session what ``backup_path`` holds, atomically, if its revision is still ``expected_revision``."""
        from persistence.errors import SessionPersistenceError

        raise SessionPersistenceError(f"the {self.kind} backend cannot restore backups")

    @abstractmethod
    def list_headers(self, token: CancelToken) -> list[dict[str, Any]]: ...

    @abstractmethod
    def list_snapshots(self, token: CancelToken) -> list[tuple[dict[str, Any], str]]: ...

    def read_raw(self, session_id: str, token: CancelToken) -> RawArtifact | None:
        from persistence.errors import SessionPersistenceError

        raise SessionPersistenceError("this session persistence backend does not expose raw artifacts")

    def close(self) -> None:
        return None
