"""Root aggregations over the statistics cache: what View > Dashboard shows, filtered by date and project.

Why SQL over the cached tables: the dashboard of a 10,000-session root must open in under a second
once the summaries exist (``benchmarks/bench_export.py --dashboard`` measures it).  Grouping by day,
project and tool runs inside SQLite; only the per-model token rows of the filtered sessions come back
to Python, to be costed by the user's price table (a cost only where a price exists, never made up).

Days: a session belongs to the day it started (its header's ``createdAt``, else its first event);
tokens are counted on the day each turn started.  Days are local dates (SQLite's ``localtime``)
unless ``RootFilter.utc_offset_s`` fixes the offset (tests, or a user's chosen zone).

May import: the standard library and ``app.insight``'s own modules.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from app.insight.prices import Cost, PriceTable, cost_of
from app.insight.stats import Tokens

TOP_N = 10  # rows of each ranking (top tools, longest, most expensive)
NO_PROJECT = ""  # how a filter names the sessions without a cwd


@dataclass(frozen=True, slots=True)
class RootFilter:
    """Which sessions count: started within ``date_from``..``date_to`` (inclusive local days; None:
    open-ended), in one of ``projects`` (None: every project; ``NO_PROJECT`` for sessions without cwd)."""

    date_from: date | None = None
    date_to: date | None = None
    projects: frozenset[str] | None = None
    utc_offset_s: int | None = None  # None: the machine's local time


@dataclass(frozen=True, slots=True)
class DayTotal:
    day: str  # YYYY-MM-DD
    sessions: int  # sessions started that day
    tokens: Tokens  # tokens of the turns started that day


@dataclass(frozen=True, slots=True)
class ProjectTotal:
    project: str | None  # the sessions' cwd (None: no cwd)
    sessions: int
    tokens: Tokens
    active_ms: int
    cost: Cost | None


@dataclass(frozen=True, slots=True)
class ToolTotal:
    name: str
    calls: int
    errors: int
    sessions: int  # sessions that called it

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0


@dataclass(frozen=True, slots=True)
class SessionRef:
    """A session in a ranking (the dashboard opens it on click)."""

    session_id: str
    title: str | None
    project: str | None
    status: str
    start_ms: int | None
    active_ms: int
    turns: int
    tokens: Tokens
    cost: Cost | None


@dataclass(frozen=True, slots=True)
class RootTotals:
    sessions: int
    tokens: Tokens
    active_ms: int
    cost: Cost | None  # None: no price table, or nothing priced
    statuses: tuple[tuple[str, int], ...]  # (status, sessions), most frequent first
    per_day: tuple[DayTotal, ...]  # oldest first
    per_project: tuple[ProjectTotal, ...]  # most tokens first
    top_tools: tuple[ToolTotal, ...]  # most called first
    longest: tuple[SessionRef, ...]  # most active time first
    most_expensive: tuple[SessionRef, ...]  # by cost when prices exist, else by tokens (``ranked_by``)
    ranked_by: str  # "cost" | "tokens"
    projects: tuple[str | None, ...]  # every project of the root (unfiltered), for the filter's choices


def _day_sql(column: str, offset_s: int | None) -> str:
    if offset_s is None:
        return f"date({column} / 1000, 'unixepoch', 'localtime')"
    return f"date({column} / 1000 + {int(offset_s)}, 'unixepoch')"


_START = "COALESCE(s.created_ms, s.first_ms)"


def _where(f: RootFilter) -> tuple[str, list[Any]]:
    """The WHERE clause (over ``sessions s``) of a filter, and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    day = _day_sql(_START, f.utc_offset_s)
    if f.date_from is not None:
        clauses.append(f"{day} >= ?")
        params.append(f.date_from.isoformat())
    if f.date_to is not None:
        clauses.append(f"{day} <= ?")
        params.append(f.date_to.isoformat())
    if f.projects is not None:
        clauses.append("COALESCE(s.project, '') IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(sorted(f.projects)))
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _tokens(row: Iterable[Any]) -> Tokens:
    i, o, cr, cw, r = (int(v or 0) for v in row)
    return Tokens(i, o, cr, cw, r)


def aggregate(
    conn: sqlite3.Connection, filt: RootFilter | None = None, prices: PriceTable | None = None, *, top: int = TOP_N
) -> RootTotals:
    """The dashboard's numbers from a statistics cache connection (``InsightCache.conn`` or ``reader()``)."""
    f = filt or RootFilter()
    where, params = _where(f)
    filtered = f"SELECT s.session_id FROM sessions s{where}"
    tok = "SUM(s.input), SUM(s.output), SUM(s.cache_read), SUM(s.cache_write), SUM(s.reasoning)"

    row = conn.execute(f"SELECT COUNT(*), {tok}, SUM(s.active_ms) FROM sessions s{where}", params).fetchone()
    n_sessions = int(row[0])
    tokens = _tokens(row[1:6])
    active = int(row[6] or 0)
    statuses = tuple(
        (str(st), int(n))
        for st, n in conn.execute(
            f"SELECT s.status, COUNT(*) AS n FROM sessions s{where} GROUP BY s.status ORDER BY n DESC, s.status", params
        )
    )

    # Per day: sessions by start day, tokens by the day each turn started (a turn without a time: its session's day).
    sday = _day_sql(_START, f.utc_offset_s)
    sessions_by_day = {
        d: int(n)
        for d, n in conn.execute(f"SELECT {sday} AS d, COUNT(*) FROM sessions s{where} GROUP BY d", params)
        if d is not None
    }
    tday = _day_sql(f"COALESCE(t.start_ms, {_START})", f.utc_offset_s)
    day_clauses = []
    day_params: list[Any] = []
    if f.date_from is not None:
        day_clauses.append("d >= ?")
        day_params.append(f.date_from.isoformat())
    if f.date_to is not None:
        day_clauses.append("d <= ?")
        day_params.append(f.date_to.isoformat())
    having = (" HAVING " + " AND ".join(day_clauses)) if day_clauses else ""
    tokens_by_day = {
        d: _tokens((i, o, cr, cw, 0))
        for d, i, o, cr, cw in conn.execute(
            f"SELECT {tday} AS d, SUM(t.input), SUM(t.output), SUM(t.cache_read), SUM(t.cache_write) "
            f"FROM turns t JOIN sessions s ON s.session_id = t.session_id{where} GROUP BY d{having}",
            params + day_params,
        )
        if d is not None
    }
    per_day = tuple(
        DayTotal(d, sessions_by_day.get(d, 0), tokens_by_day.get(d, Tokens()))
        for d in sorted(set(sessions_by_day) | set(tokens_by_day))
    )

    # Per-model tokens of every filtered session: costs per session, per project and in total.
    usage_by_session: dict[str, list[tuple[str, str, int, int, int, int]]] = {}
    usage_by_project: dict[str | None, list[tuple[str, str, int, int, int, int]]] = {}
    if prices is not None and not prices.empty:
        for sid, project, provider, model, i, o, cr, cw in conn.execute(
            "SELECT m.session_id, s.project, m.provider, m.model, m.input, m.output, m.cache_read, m.cache_write "
            f"FROM models m JOIN sessions s ON s.session_id = m.session_id{where}",
            params,
        ):
            usage_by_session.setdefault(sid, []).append((provider, model, i, o, cr, cw))
            usage_by_project.setdefault(project, []).append((provider, model, i, o, cr, cw))
    cost_by_session = {sid: cost_of(prices, rows) for sid, rows in usage_by_session.items()}
    total_cost = cost_of(prices, (r for rows in usage_by_session.values() for r in rows))

    per_project_rows = conn.execute(
        f"SELECT s.project, COUNT(*), {tok}, SUM(s.active_ms) FROM sessions s{where} GROUP BY s.project "
        "ORDER BY SUM(s.input + s.output + s.cache_read + s.cache_write) DESC, s.project",
        params,
    ).fetchall()
    per_project = tuple(
        ProjectTotal(r[0], int(r[1]), _tokens(r[2:7]), int(r[7] or 0), cost_of(prices, usage_by_project.get(r[0], ())))
        for r in per_project_rows
    )

    top_tools = tuple(
        ToolTotal(name, int(calls), int(errors), int(ns))
        for name, calls, errors, ns in conn.execute(
            "SELECT t.name, SUM(t.calls) AS c, SUM(t.errors), COUNT(DISTINCT t.session_id) FROM tools t "
            f"WHERE t.session_id IN ({filtered}) GROUP BY t.name ORDER BY c DESC, t.name LIMIT ?",
            [*params, top],
        )
    )

    ref_cols = (
        f"s.session_id, s.title, s.project, s.status, {_START}, s.active_ms, s.turns, "
        "s.input, s.output, s.cache_read, s.cache_write, s.reasoning"
    )

    def refs(rows: Iterable[Any]) -> tuple[SessionRef, ...]:
        return tuple(
            SessionRef(r[0], r[1], r[2], r[3], r[4], int(r[5] or 0), int(r[6] or 0), _tokens(r[7:12]), cost_by_session.get(r[0]))
            for r in rows
        )

    longest = refs(
        conn.execute(f"SELECT {ref_cols} FROM sessions s{where} ORDER BY s.active_ms DESC, s.session_id LIMIT ?", [*params, top])
    )
    priced = [sid for sid, c in cost_by_session.items() if c is not None]
    if priced:
        ranked = sorted(priced, key=lambda sid: (-(cost_by_session[sid].amount), sid))[:top]  # type: ignore[union-attr]
        rows = conn.execute(
            f"SELECT {ref_cols} FROM sessions s WHERE s.session_id IN (SELECT value FROM json_each(?))", [json.dumps(ranked)]
        ).fetchall()
        order = {sid: k for k, sid in enumerate(ranked)}
        most_expensive = refs(sorted(rows, key=lambda r: order[r[0]]))
        ranked_by = "cost"
    else:
        most_expensive = refs(
            conn.execute(
                f"SELECT {ref_cols} FROM sessions s{where} "
                "ORDER BY s.input + s.output + s.cache_read + s.cache_write DESC, s.session_id LIMIT ?",
                [*params, top],
            )
        )
        ranked_by = "tokens"

    projects = tuple(p for (p,) in conn.execute("SELECT DISTINCT project FROM sessions ORDER BY project"))
    return RootTotals(
        n_sessions,
        tokens,
        active,
        total_cost,
        statuses,
        per_day,
        per_project,
        top_tools,
        longest,
        most_expensive,
        ranked_by,
        projects,
    )


__all__ = ["NO_PROJECT", "TOP_N", "DayTotal", "ProjectTotal", "RootFilter", "RootTotals", "SessionRef", "ToolTotal", "aggregate"]
