"""What a search answers: the filters that narrow it, its hits grouped by session, the counts, and the
snippet around a match (the window, ``search`` on the command line and its ``--json`` all show these).

May import: the standard library and ``app.search``'s own modules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from app.search.extract import KINDS
from app.search.language import SearchQueryError

SNIPPET_BEFORE = 60  # characters of context before the first match in a snippet
SNIPPET_CHARS = 200  # characters of a snippet


# ---------------------------------------------------------------- filters and results


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """What narrows a search.  Empty sets and None mean "any"."""

    project: str | None = None  # a session whose cwd contains this text (case-insensitive for ASCII)
    kinds: frozenset[str] = frozenset()  # hit kinds (``app.search.extract.KINDS``)
    tool: str | None = None  # tool name, exactly
    since: int | None = None  # event time, ms since the epoch, inclusive
    until: int | None = None  # event time, ms since the epoch, exclusive
    statuses: frozenset[str] = frozenset()  # session statuses (ok, open-turn, torn-tail, corrupt, ...)
    session_id: str | None = None  # one session (find inside the open session)

    def check(self) -> None:
        unknown = sorted(k for k in self.kinds if k not in KINDS)
        if unknown:
            raise SearchQueryError(f"unknown kind {', '.join(unknown)}; choose from {', '.join(KINDS)}")


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching event field."""

    session_id: str
    key: str  # the session's row key (JSONL transcript path, else ``id:<id>``)
    seq: int | None  # None: the session header (id, cwd), which is no event
    event_type: str
    kind: str
    tool: str | None
    turn: int | None
    time: int | None  # ms since the epoch
    status: str  # the session's status when indexed (hits in damaged logs say so)
    snippet: str  # one line around the first match
    spans: tuple[tuple[int, int], ...]  # [start, end) of every match inside ``snippet``

    def marked(self, before: str = "[", after: str = "]") -> str:
        """The snippet with every match wrapped in markers."""
        out, pos = [], 0
        for a, b in self.spans:
            out += [self.snippet[pos:a], before, self.snippet[a:b], after]
            pos = b
        out.append(self.snippet[pos:])
        return "".join(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "type": self.event_type,
            "kind": self.kind,
            "tool": self.tool,
            "turn": self.turn,
            "time": self.time,
            "snippet": self.snippet,
            "spans": [list(s) for s in self.spans],
        }


@dataclass(frozen=True, slots=True)
class SessionHits:
    """The hits of one session, with how many it has in all."""

    session_id: str
    key: str
    path: str | None
    title: str | None
    cwd: str | None
    status: str
    reason: str | None
    created_at: int | None
    updated: int | None  # newest event time
    hit_count: int  # matches in this session (within the scan cap)
    hits: tuple[Hit, ...]  # the ones returned, in seq order

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "key": self.key,
            "path": self.path,
            "title": self.title,
            "cwd": self.cwd,
            "status": self.status,
            "reason": self.reason,
            "createdAt": self.created_at,
            "updated": self.updated,
            "hitCount": self.hit_count,
            "hits": [h.to_json() for h in self.hits],
        }


@dataclass(frozen=True, slots=True)
class HitCounts:
    """The whole counts of a query (up to ``SCAN_CAP`` rows): in all, and per session key."""

    hit_count: int
    session_count: int
    exact: bool  # False: the count stopped at the cap
    per_session: tuple[tuple[str, int], ...]  # (session key, hits), sorted by key


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits grouped by session (newest session first) and the counts the window shows."""

    query: str
    # "fts" (trigram index), "cjk" (two-letter CJK terms: the pair index), "like" (another short term:
    # scanned), "session" (one session's rows), "scan" (no FTS5 here)
    mode: str
    hit_count: int
    session_count: int
    exact: bool  # False: the counts stopped at the scan cap (there are at least that many)
    sessions: tuple[SessionHits, ...]
    elapsed_ms: float
    messages: tuple[str, ...] = field(default=())
    counted: bool = True  # False: the counts are of the hits read so far (``Searcher.count`` has the rest)

    @property
    def hits(self) -> tuple[Hit, ...]:
        return tuple(h for s in self.sessions for h in s.hits)

    def with_counts(self, counts: HitCounts) -> SearchResult:
        """This result with the whole counts (the hits shown stay as they are)."""
        per = dict(counts.per_session)
        sessions = tuple(replace(g, hit_count=max(per.get(g.key, 0), g.hit_count)) for g in self.sessions)
        return replace(
            self,
            hit_count=max(counts.hit_count, self.hit_count),
            session_count=max(counts.session_count, self.session_count),
            exact=counts.exact,
            sessions=sessions,
            counted=True,
        )

    def summary(self) -> str:
        """``214 hits in 37 sessions`` (``2,000+ hits in 1,234+ sessions`` past the cap)."""
        plus = "" if self.exact else "+"
        h = "hit" if self.hit_count == 1 and self.exact else "hits"
        s = "session" if self.session_count == 1 and self.exact else "sessions"
        return f"{self.hit_count:,}{plus} {h} in {self.session_count:,}{plus} {s}"

    def empty_text(self, filters: SearchFilters | None = None) -> str:
        """What an empty result says: what was searched, and with which filters."""
        parts = [f"No hits for {self.query!r}"]
        f = filters or SearchFilters()
        narrowed = []
        if f.project:
            narrowed.append(f"project containing {f.project!r}")
        if f.kinds:
            narrowed.append("kind " + "/".join(sorted(f.kinds)))
        if f.tool:
            narrowed.append(f"tool {f.tool}")
        if f.statuses:
            narrowed.append("status " + "/".join(sorted(f.statuses)))
        if f.since is not None or f.until is not None:
            narrowed.append("the chosen dates")
        if f.session_id:
            narrowed.append(f"session {f.session_id}")
        if narrowed:
            parts.append(" in " + ", ".join(narrowed))
        parts.append(" (searched user and assistant text, reasoning, tool calls and results, titles, cwd and ids)")
        return "".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "hits": self.hit_count,
            "sessions": self.session_count,
            "exact": self.exact,
            "counted": self.counted,
            "summary": self.summary(),
            "results": [s.to_json() for s in self.sessions],
            "messages": list(self.messages),
        }


# ---------------------------------------------------------------- snippets


def snippet_of(body: str, pattern: re.Pattern[str] | None) -> tuple[str, tuple[tuple[int, int], ...]]:
    """One line of ``SNIPPET_CHARS`` around the first match, whitespace collapsed, and the matches in it."""
    m = pattern.search(body) if pattern is not None else None
    start = 0 if m is None else max(0, m.start() - SNIPPET_BEFORE)
    if start > 0:  # start on a character boundary of a word, not mid-word, when one is near
        space = body.find(" ", start, start + 20)
        if 0 <= space < (m.start() if m else start + 20):
            start = space + 1
    window = body[start : start + SNIPPET_CHARS * 2]
    text = " ".join(window.split())[:SNIPPET_CHARS]
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + len(window) < len(body) or len(" ".join(window.split())) > SNIPPET_CHARS else ""
    text = prefix + text + suffix
    spans: tuple[tuple[int, int], ...] = ()
    if pattern is not None:
        spans = tuple((x.start(), x.end()) for x in pattern.finditer(text) if x.end() > x.start())
    return text, spans
