"""``ListedEntry``: one row of a lenient listing, a session or a problem, for either backend.

Why: ``list()`` follows upstream (it skips what it cannot list and fails the root on a foreign
layout), but ``verify`` and the window must show every session *and* every bad entry as a row of
its own.  ``CoordinatedPersistence.list_entries()`` returns these for both backends (JSONL from the
engine's one root walker, ``persistence.jsonl.entries``; SQLite from the lenient row reader), so no
caller walks a root or reads rows itself.

May import: nothing from the engine (a plain value module).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

# ``ListedEntry.kind``: what the row is.
SESSION = "session"  # a session whose header (JSONL) or row (SQLite) reads: meta and revision are set
UNREADABLE = "unreadable"  # the OS refuses a project folder, session folder or transcript
SYMLINK = "symlink"  # a link below the root: never listed, read or written through
FLAT_FILE = "flat-file"  # <project>/<id>.jsonl[.zstd], the legacy layout upstream refuses
BAD_HEADER = "bad-header"  # JSONL: a transcript whose first line cannot be listed
BAD_ROW = "bad-row"  # SQLite: a ``sessions`` row that fails validation

# ``ListedEntry.level`` for JSONL walk problems: what ``path`` is.
PROJECT = "project"
SESSION_FOLDER = "session"
TRANSCRIPT = "transcript"

# ``ListedEntry.status`` of a bad row, as the window and ``verify`` label it.
STATUS_CORRUPT = "corrupt"
STATUS_UNSUPPORTED = "unsupported"
STATUS_UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class ListedEntry:
    """One session or one bad entry of a store, in the backend's list order.

    A good row has ``kind == "session"``, ``meta`` (the header) and ``revision``; ``problem`` is None.
    Every other kind is a bad row: ``problem`` says why in one line and ``status`` is ``corrupt``,
    ``unsupported`` or ``unreadable``.  A flat-file row also carries the header when it reads (it
    is still a bad row: upstream refuses the layout).  JSONL rows carry the entry's ``path``, its
    ``compression`` when it is a transcript, and ``size``/``mtime_ns`` when it could be stat'ed.
    """

    kind: str
    session_id: str  # the header's id; else the id the folder (or flat file) name encodes, or the name itself
    meta: dict[str, Any] | None = None
    revision: str | None = None
    problem: str | None = None
    status: str | None = None
    path: str | None = None  # JSONL: the transcript or the entry at fault; SQLite: None
    compression: str | None = None  # JSONL transcript encoding ("zstd" | "none"); None when not a transcript
    size: int | None = None  # bytes of the transcript
    mtime_ns: int | None = None  # the transcript's st_mtime_ns
    project: str | None = None  # JSONL: the project folder the entry is in
    folder_name: str | None = None  # JSONL: the session folder name (the encoded id) or the flat file's name
    level: str | None = None  # JSONL walk problems: "project" | "session" | "transcript"
    target: str | None = None  # a symlink's resolved target
    detail: str | None = None  # the bare cause of a bad header or row (``problem`` without its prefix)

    # The values of ``kind``, ``level`` and ``status``, for callers that import only ``persistence``.
    SESSION: ClassVar[str] = SESSION
    UNREADABLE: ClassVar[str] = UNREADABLE
    SYMLINK: ClassVar[str] = SYMLINK
    FLAT_FILE: ClassVar[str] = FLAT_FILE
    BAD_HEADER: ClassVar[str] = BAD_HEADER
    BAD_ROW: ClassVar[str] = BAD_ROW
    PROJECT: ClassVar[str] = PROJECT
    SESSION_FOLDER: ClassVar[str] = SESSION_FOLDER
    TRANSCRIPT: ClassVar[str] = TRANSCRIPT
    STATUS_CORRUPT: ClassVar[str] = STATUS_CORRUPT
    STATUS_UNSUPPORTED: ClassVar[str] = STATUS_UNSUPPORTED
    STATUS_UNREADABLE: ClassVar[str] = STATUS_UNREADABLE

    @property
    def ok(self) -> bool:
        """Whether this is a good session row."""
        return self.problem is None


__all__ = [
    "BAD_HEADER",
    "BAD_ROW",
    "FLAT_FILE",
    "PROJECT",
    "SESSION",
    "SESSION_FOLDER",
    "STATUS_CORRUPT",
    "STATUS_UNREADABLE",
    "STATUS_UNSUPPORTED",
    "SYMLINK",
    "TRANSCRIPT",
    "UNREADABLE",
    "ListedEntry",
]
