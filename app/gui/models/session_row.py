"""One session of the list: what the header listing knows at once, and the details filled in later.

A plain value module (no Qt, no I/O): the list model shows these rows, the controllers build and
update them, and worker processes send back ``Details``.  May import the standard library only:
the runtime imports this module (its workers send ``Details`` back), so a row is made from anything
shaped like the root scan's ``FoundArtifact`` (``ListedArtifact``) rather than by importing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

NAMED_PROBLEMS = ("corrupt", "unsupported")  # listing problems of a transcript that may still name its session
READABLE = ("ok", "open-turn", "torn-tail")  # statuses whose events can be shown (a crash is closed in memory)


class ListedArtifact(Protocol):
    """What a row is made from: the fields of the root scan's ``FoundArtifact`` (read-only)."""

    @property
    def key(self) -> str: ...
    @property
    def session_id(self) -> str: ...
    @property
    def project(self) -> str: ...
    @property
    def meta(self) -> dict[str, Any] | None: ...
    @property
    def path(self) -> str | None: ...
    @property
    def compression(self) -> str | None: ...
    @property
    def size(self) -> int | None: ...
    @property
    def mtime_ns(self) -> int | None: ...
    @property
    def revision(self) -> str | None: ...
    @property
    def problem(self) -> str | None: ...
    @property
    def problem_status(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Details:
    """What the background pass learns from ``diagnose`` (and a title from the events)."""

    revision: str | None
    status: str
    reason: str
    event_count: int | None  # stored events (synthetic closers not counted)
    closers: int
    title: str | None
    error_class: str | None = None


@dataclass(slots=True)
class SessionRow:
    key: str
    session_id: str
    project: str
    meta: dict[str, Any] | None
    path: str | None
    compression: str | None
    size: int | None
    modified_ns: int | None
    revision: str | None
    problem: str | None = None  # a header-level problem found by the scan (final status, no diagnose)
    problem_status: str | None = None
    details: Details | None = None

    # ------------------------------------------------------------ factories

    @classmethod
    def from_artifact(cls, a: ListedArtifact) -> SessionRow:
        return cls(
            a.key,
            a.session_id,
            a.project,
            a.meta,
            a.path,
            a.compression,
            a.size,
            a.mtime_ns,
            a.revision,
            a.problem,
            a.problem_status,
        )

    @classmethod
    def bad_row(cls, key: str, session_id: str, problem: str, status: str, path: str | None = None) -> SessionRow:
        """A session the listing could not read (one bad row, final status, never diagnosed)."""
        return cls(key, session_id, "(bad row)", None, path, None, None, None, f"problem:{problem}", problem, status)

    @classmethod
    def from_snapshot(cls, meta: dict[str, Any], revision: str, location: str | None) -> SessionRow:
        sid = str(meta.get("id"))
        cwd = meta.get("cwd")
        return cls(f"id:{sid}", sid, cwd if isinstance(cwd, str) else "(no cwd)", meta, location, None, None, None, revision)

    # ------------------------------------------------------------ derived fields

    @property
    def status(self) -> str:
        if self.problem_status is not None:
            return self.problem_status
        return self.details.status if self.details is not None else "pending"

    @property
    def reason(self) -> str:
        if self.problem is not None:
            return self.problem
        if self.details is not None:
            return self.details.reason
        return "diagnosis pending"

    @property
    def needs_details(self) -> bool:
        if self.problem_status is not None:
            # A transcript whose header fails validation still has a readable part naming it (issue 24
            # item 5): the background pass reads its title.  A folder, a link or an unreadable entry does not.
            named = self.problem_status in NAMED_PROBLEMS and bool(self.session_id and self.path and self.compression)
            if not named or (self.revision or "").startswith("problem:"):
                return False
        elif self.meta is None:
            return False
        return self.details is None or self.details.revision != self.revision

    def header(self, name: str) -> Any:
        return None if self.meta is None else self.meta.get(name)

    @property
    def cwd(self) -> str | None:
        cwd = self.header("cwd")
        return cwd if isinstance(cwd, str) else None

    @property
    def parent_id(self) -> str | None:
        p = self.header("parentSession")
        return p if isinstance(p, str) else None

    @property
    def lineage(self) -> str:
        """fork / subagent label from the header (session-model §5.2, §5.3)."""
        if self.meta is None:
            return ""
        origin = self.header("origin")
        depth = self.header("delegationDepth")
        if origin == "subagent":
            return f"subagent (depth {depth})" if depth is not None else "subagent"
        if self.parent_id is not None:
            return "fork"
        if isinstance(depth, int) and depth > 0:
            return f"depth {depth}"
        return ""

    @property
    def title(self) -> str | None:
        return None if self.details is None else self.details.title

    @property
    def event_count(self) -> int | None:
        return None if self.details is None else self.details.event_count

    def same_listing(self, other: SessionRow) -> bool:
        return self.revision == other.revision and self.meta == other.meta and self.problem == other.problem
