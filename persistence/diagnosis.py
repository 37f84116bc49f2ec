"""What a viewer learns from one read of a stored session: ``SessionDiagnosis`` and ``SessionView``.

Why a module of its own: ``diagnose`` and ``view`` are the same read (``persistence.pipeline``
computes both from one prepared source), and the window, ``verify`` and ``repair`` all consume
these values; none of them needs the coordinator to hold them.  A failure is a value here (status
``corrupt``, ``unsupported``, ``missing`` or ``busy``), never an exception.

May import: ``persistence.backend`` (``CutFacts``), ``persistence.model``, ``persistence.artifact``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from persistence.artifact import RawBytes
from persistence.backend import CutFacts
from persistence.model.event import EventLog
from persistence.model.header import SessionHeader

OK = "ok"
OPEN_TURN = "open-turn"
TORN_TAIL = "torn-tail"
CORRUPT = "corrupt"
UNSUPPORTED = "unsupported"
MISSING = "missing"
BUSY = "busy"
READABLE_STATUSES = frozenset({OK, OPEN_TURN, TORN_TAIL})


@dataclass(frozen=True, slots=True)
class SessionDiagnosis:
    """What a viewer needs to label one stored session, computed without writing anything.

    status is one of ``ok``, ``open-turn`` (crashed mid-turn: closers would be appended),
    ``torn-tail`` (a damaged tail would be cut), ``corrupt``, ``unsupported``, ``missing``, or
    ``busy`` (a SQLite store locked by a writer: nothing can be judged now, nothing is wrong).
    ``cut`` says what a repair of a torn tail would destroy; ``intact_after_damage`` > 0 means the
    "torn tail" holds records that parse and continue past the kept ones, which is damage followed
    by data, not a torn write: a repair must not cut them without explicit consent.
    """

    session_id: str
    status: str
    reason: str
    event_count: int
    closers: tuple[dict[str, Any], ...]
    torn_offset: Any
    recovered_count: int
    revision: str | None
    error_class: str | None = None
    cut: CutFacts | None = None

    @property
    def repairable(self) -> bool:
        """Whether a repair would change the log (open turn or torn tail)."""
        return self.status in (OPEN_TURN, TORN_TAIL)

    @property
    def intact_after_damage(self) -> int:
        """Records after the damage that a repair would cut although they parse (0 when none)."""
        return 0 if self.cut is None else self.cut.intact_records


@dataclass(frozen=True, slots=True)
class TornFacts:
    """A damaged tail: where it starts, what it still yields, and what cutting it would destroy."""

    offset: int  # JSONL: byte offset of the first damaged byte; SQLite: seq of the first damaged row
    recovered: int  # complete records recovered from the damaged tail (a repair re-appends them)
    cut: CutFacts


@dataclass(frozen=True, slots=True)
class SessionView:
    """One read of a stored session: header, stored events, synthetic closers, torn facts, revision, verdict.

    ``events`` is exactly what ``inspect`` returns (stored events, then the in-memory crash closers);
    ``events[closer_start:]`` are the closers, which are not in the log (``stored`` is the rest).  When
    the log cannot be read (``diagnosis.status`` not in ``READABLE_STATUSES``) ``header`` is None and
    the event logs are empty.  ``raw`` holds the artifact bytes this very read parsed, when they were
    asked for and the backend has a byte artifact (JSONL; SQLite has rows, not bytes).
    """

    diagnosis: SessionDiagnosis
    header: SessionHeader | None
    events: EventLog
    stored: EventLog
    closers: tuple[dict[str, Any], ...]
    closer_start: int
    torn: TornFacts | None
    raw: RawBytes | None = None

    @property
    def session_id(self) -> str:
        """The id that was read."""
        return self.diagnosis.session_id

    @property
    def status(self) -> str:
        """The diagnosis status (``ok``, ``open-turn``, ``torn-tail``, ``corrupt``, ...)."""
        return self.diagnosis.status

    @property
    def reason(self) -> str:
        """One line saying why the session has its status."""
        return self.diagnosis.reason

    @property
    def revision(self) -> str | None:
        """The stored revision the read saw (None when nothing could be read)."""
        return self.diagnosis.revision

    @property
    def readable(self) -> bool:
        """Whether events were read (status ok, open-turn or torn-tail)."""
        return self.diagnosis.status in READABLE_STATUSES

    def is_synthetic(self, index: int) -> bool:
        """Whether ``events[index]`` is a crash closer made in memory (never stored)."""
        return index >= self.closer_start


_EMPTY: list[dict[str, Any]] = []


def failed_view(diagnosis: SessionDiagnosis) -> SessionView:
    """The view of a session that could not be read: the diagnosis says why."""
    return SessionView(diagnosis, None, EventLog(_EMPTY), EventLog(_EMPTY), (), 0, None)


__all__ = [
    "BUSY",
    "CORRUPT",
    "MISSING",
    "OK",
    "OPEN_TURN",
    "READABLE_STATUSES",
    "TORN_TAIL",
    "UNSUPPORTED",
    "SessionDiagnosis",
    "SessionView",
    "TornFacts",
    "failed_view",
]
