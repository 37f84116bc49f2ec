"""One session's entry in the statistics cache: ``SessionSummary`` (what the dashboard lists and filters
by, stored as one row plus its turns, tools and models) and how it is made from the engine's view of a
session, a bad listing row, or a refused log's readable part.

Qt-free; may import the engine's public package, ``app.insight.stats`` and ``app.search.db`` (clean text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.insight.stats import SessionStats, Tokens, fold_stats
from app.search.db import clean_text
from persistence import ListedEntry, SessionHeader, SessionView


def _int_or_none(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session's cached numbers (a row of ``sessions``): everything the dashboard and lineage read."""

    session_id: str
    revision: str | None
    status: str
    reason: str | None
    title: str | None
    project: str | None  # the header's cwd
    created_ms: int | None
    first_ms: int | None
    last_ms: int | None
    events: int
    turns: int
    steps: int
    model_calls: int
    retries: int
    tool_calls: int
    tool_errors: int
    tokens: Tokens
    active_ms: int
    span_ms: int
    compactions: int
    parent: str | None
    origin: str | None
    delegation_depth: int | None
    seed_length: int | None
    fork_turn: int | None

    @property
    def start_ms(self) -> int | None:
        """When the session began: its header's ``createdAt``, else its first event."""
        return self.created_ms if self.created_ms is not None else self.first_ms

    def to_json(self) -> dict[str, Any]:
        """The JSON-able summary record (keyed by ``revision``)."""
        return {
            "id": self.session_id,
            "revision": self.revision,
            "status": self.status,
            "reason": self.reason,
            "title": self.title,
            "project": self.project,
            "createdAt": self.created_ms,
            "firstTime": self.first_ms,
            "lastTime": self.last_ms,
            "events": self.events,
            "turns": self.turns,
            "steps": self.steps,
            "modelCalls": self.model_calls,
            "retries": self.retries,
            "toolCalls": self.tool_calls,
            "toolErrors": self.tool_errors,
            "tokens": self.tokens.to_json(),
            "activeMs": self.active_ms,
            "spanMs": self.span_ms,
            "compactions": self.compactions,
            "parentSession": self.parent,
            "origin": self.origin,
            "delegationDepth": self.delegation_depth,
            "seedLength": self.seed_length,
            "forkTurn": self.fork_turn,
        }

    def row(self) -> tuple[Any, ...]:
        t = self.tokens
        return (
            clean_text(self.session_id),
            self.revision,
            self.status,
            None if self.reason is None else clean_text(self.reason),
            None if self.title is None else clean_text(self.title),
            None if self.project is None else clean_text(self.project),
            self.created_ms,
            self.first_ms,
            self.last_ms,
            self.events,
            self.turns,
            self.steps,
            self.model_calls,
            self.retries,
            self.tool_calls,
            self.tool_errors,
            t.input,
            t.output,
            t.cache_read,
            t.cache_write,
            t.reasoning,
            self.active_ms,
            self.span_ms,
            self.compactions,
            None if self.parent is None else clean_text(self.parent),
            self.origin,
            self.delegation_depth,
            self.seed_length,
            self.fork_turn,
        )

    @classmethod
    def from_row(cls, r: Sequence[Any]) -> SessionSummary:
        return cls(
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15],
            Tokens(r[16], r[17], r[18], r[19], r[20]),
            r[21], r[22], r[23], r[24], r[25], r[26], r[27], r[28],
        )  # fmt: skip


def summarize(view: SessionView) -> tuple[SessionSummary, SessionStats | None]:
    """A session's summary from one engine read (``view``): its stats when the log is readable (stored
    events only; the in-memory crash closers are not the session's work), else zeros and the verdict."""
    header: SessionHeader | None = view.header
    seed = _int_or_none(header.seed_length) if header is not None else None
    stats = fold_stats(view.stored, seed_length=seed) if view.readable else None
    return summary_of(view.session_id, view.revision, view.status, view.reason, header, stats), stats


def summary_of(
    session_id: str,
    revision: str | None,
    status: str,
    reason: str | None,
    header: SessionHeader | None,
    stats: SessionStats | None,
) -> SessionSummary:
    """The cached row of a session from its header and folded stats (None: unreadable, all zeros)."""
    h = header
    return SessionSummary(
        session_id=session_id,
        revision=revision,
        status=status,
        reason=reason,
        title=stats.title if stats is not None else None,
        project=h.cwd if h is not None and isinstance(h.cwd, str) else None,
        created_ms=_int_or_none(h.created_at) if h is not None else None,
        first_ms=stats.first_time if stats is not None else None,
        last_ms=stats.last_time if stats is not None else None,
        events=stats.events if stats is not None else 0,
        turns=stats.turns if stats is not None else 0,
        steps=stats.steps if stats is not None else 0,
        model_calls=stats.model_calls if stats is not None else 0,
        retries=stats.retries if stats is not None else 0,
        tool_calls=stats.tool_calls if stats is not None else 0,
        tool_errors=stats.tool_errors if stats is not None else 0,
        tokens=stats.tokens if stats is not None else Tokens(),
        active_ms=stats.active_ms if stats is not None else 0,
        span_ms=stats.span_ms if stats is not None else 0,
        compactions=stats.compactions if stats is not None else 0,
        parent=h.parent_session if h is not None and isinstance(h.parent_session, str) else None,
        origin=h.origin if h is not None and isinstance(h.origin, str) else None,
        delegation_depth=_int_or_none(h.delegation_depth) if h is not None else None,
        seed_length=_int_or_none(h.seed_length) if h is not None else None,
        fork_turn=stats.fork_turn if stats is not None else None,
    )


def entry_summary(entry: ListedEntry, status: str, reason: str | None) -> SessionSummary:
    """A summary from a listing row alone (the log could not be read): header fields and the verdict."""
    meta = entry.meta or {}
    return SessionSummary(
        entry.session_id, entry.revision, status, reason, None,
        meta.get("cwd") if isinstance(meta.get("cwd"), str) else None,
        _int_or_none(meta.get("createdAt")), None, None, 0, 0, 0, 0, 0, 0, 0, Tokens(), 0, 0, 0,
        meta.get("parentSession") if isinstance(meta.get("parentSession"), str) else None,
        meta.get("origin") if isinstance(meta.get("origin"), str) else None,
        _int_or_none(meta.get("delegationDepth")), _int_or_none(meta.get("seedLength")), None,
    )  # fmt: skip


def prefix_summary(summary: SessionSummary, events: Any) -> tuple[SessionSummary, SessionStats | None]:
    """A refused log's summary completed from its readable events (``readable_prefix``): its title and their
    numbers, its status and header fields kept (issue 24 item 5: a damaged session keeps its name)."""
    if not len(events):
        return summary, None
    stats = fold_stats(events, seed_length=summary.seed_length)
    full = summary_of(summary.session_id, summary.revision, summary.status, summary.reason, None, stats)
    head = summary
    return (
        replace(
            full,
            project=head.project,
            created_ms=head.created_ms,
            parent=head.parent,
            origin=head.origin,
            delegation_depth=head.delegation_depth,
            seed_length=head.seed_length,
        ),
        stats,
    )
