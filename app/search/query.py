"""The searcher: a parsed query (``language``) run against the index, its hits grouped and counted (``results``).

How: the index (``detail=none`` trigrams, see ``app.search.db``) knows which rows hold a trigram,
so a term of 3 or more characters becomes "all of its trigrams" (``order.ts``: ``ord AND rde AND
der AND er. AND r.t AND .ts``), the tree's positive part becomes an FTS5 MATCH that narrows the
rows to candidates, and the whole tree is checked on the candidates' text in SQL (``LIKE``: ASCII
case-insensitive, C speed; a term with non-ASCII cased letters through a Python ``casefold``).  A
tree of 3-character terms under AND/OR is answered by the index alone (a trigram is the term).
A term shorter than 3 characters has no trigram: a two-letter CJK term (``東京``) is narrowed by the
pair index instead (``app.search.cjk``); where the tree still cannot be narrowed, the rows are
scanned with the same check (the brief's LIKE fallback).  Word-start terms are
checked in Python on the candidates.

Results: the matching rows are read newest rowid first (FTS5 serves ``ORDER BY rowid DESC`` from
the index, so a common word stops after ``SCAN_CAP`` rows instead of reading all of them); they are
counted per session (exact below the cap, "at least" at it), sessions are ordered by their newest
event, and only the hits shown have their text read, for the snippet and the match offsets.  The
window asks in two steps: ``search(count=False)`` reads only the rows it shows (~4 ms for a common
word on 10,000 sessions) and ``count()`` the rest afterwards (30-100 ms), so the first results are on
screen before the counting starts.

May import: the standard library, ``app.cache_db`` (what counts as damage) and ``app.search``'s own modules.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from app.cache_db import DAMAGE_ERRORS, CacheDamaged, damage_text, is_busy
from app.search.db import clean_text
from app.search.language import (
    Node,
    SearchQueryError,
    all_terms,
    evaluate,
    exact_in_index,
    highlight_pattern,
    like_contains,
    pair_skeleton,
    parse_query,
    skeleton,
    to_like,
)
from app.search.results import Hit, HitCounts, SearchFilters, SearchResult, SessionHits, snippet_of

# Matching rows counted at most; past it counts are "at least" ("2,000+ hits in 435+ sessions").  Measured
# on a 10,000-session index: at 10,000 a common query took 75-155 ms (median), at 2,000 it takes 27-35 ms,
# which keeps the window's first results inside 150 ms of the last key.
SCAN_CAP = 2_000
DEFAULT_LIMIT = 200  # hits returned (the window shows them grouped by session)
READ_BUSY_TIMEOUT_MS = 2000  # a query waits at most this long for a checkpoint of the indexer
PARAMS_PER_QUERY = 500  # ids bound per ``IN (...)`` statement (SQLite's limit is 32766 on 3.32+; small keeps plans simple)


def _query_error(query: str, err: BaseException) -> None:
    """Raise ``SearchQueryError`` when ``err`` is FTS5 refusing the query's text (not the file's damage)."""
    text = str(err)
    if isinstance(err, sqlite3.OperationalError) and (text.startswith("fts5:") or "malformed MATCH" in text):
        raise SearchQueryError(f"cannot search for {query!r}: {text.removeprefix('fts5: ')}") from None


# ---------------------------------------------------------------- the searcher


def _register(conn: sqlite3.Connection, trees: dict[int, Node]) -> None:
    """The two Python checks a query may call on candidate rows (``trees``: the query being run)."""

    def contains(body: Any, needle: Any) -> int:
        return int(isinstance(body, str) and isinstance(needle, str) and needle.casefold() in body.casefold())

    def matches(body: Any, tree_id: Any) -> int:
        tree = trees.get(tree_id)
        return int(isinstance(body, str) and tree is not None and evaluate(tree, body))

    conn.create_function("ss_contains", 2, contains, deterministic=True)
    conn.create_function("ss_matches", 2, matches, deterministic=True)


class Searcher:
    """Read-only queries against a root's index file (its own connection: safe beside a running indexer).

    One thread at a time (the window's GUI thread or a worker); ``close()`` when done.
    """

    def __init__(self, index_file: str | None, *, conn: sqlite3.Connection | None = None) -> None:
        self.index_file = index_file
        self.damaged: str | None = None  # set when a query found the file damaged: rebuild it (``Indexer.rebuild``)
        self._trees: dict[int, Node] = {}
        self._conn = conn
        self._own = conn is None
        if conn is not None:
            _register(conn, self._trees)

    def _connection(self) -> sqlite3.Connection | None:
        if self._conn is None:
            if self.index_file is None or not os.path.exists(self.index_file):
                return None  # never create the file: only the indexer does
            try:
                conn = sqlite3.connect(self.index_file, check_same_thread=False)
                conn.execute(f"PRAGMA busy_timeout = {READ_BUSY_TIMEOUT_MS}")
                conn.execute("PRAGMA query_only = 1")  # a reader: this connection never writes
            except DAMAGE_ERRORS:
                return None
            _register(conn, self._trees)
            self._conn = conn
        return self._conn

    def close(self) -> None:
        if self._own and self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None

    def search(
        self,
        query: str,
        filters: SearchFilters | None = None,
        *,
        limit: int = DEFAULT_LIMIT,
        per_session: int | None = None,
        count: bool = True,
    ) -> SearchResult:
        """Hits of ``query`` (``SearchQueryError`` for a query that cannot run; an unusable index is an
        empty result whose ``messages`` say why, with ``damaged`` set).

        ``count=False`` reads only the rows it can show: the result says ``counted=False`` when there
        may be more, and ``count()`` gives the whole counts later (``SearchResult.with_counts``)."""
        t0 = time.perf_counter()
        tree = parse_query(query)
        filters = filters or SearchFilters()
        filters.check()
        conn = self._connection()
        if conn is None:
            return SearchResult(query, "none", 0, 0, True, (), 0.0, ("the search index is not built yet",))
        try:
            return self._search(conn, query, tree, filters, limit, per_session, t0, count)
        except SearchQueryError:
            raise
        except DAMAGE_ERRORS as err:
            _query_error(query, err)
            return self._unusable(query, err, t0)

    def _unusable(self, query: str, err: BaseException, t0: float) -> SearchResult:
        """An empty result saying why; anything but a busy file is damage (``damaged``: rebuild it)."""
        if is_busy(err):
            message = f"the search index cannot be read now ({err})"
        else:
            self.damaged = damage_text(err)
            message = f"the search index is damaged ({self.damaged}); it is rebuilt by the next indexing run"
        return SearchResult(query, "none", 0, 0, True, (), (time.perf_counter() - t0) * 1000, (message,))

    def count(self, query: str, filters: SearchFilters | None = None) -> HitCounts:
        """How many rows match ``query`` (up to ``SCAN_CAP``), in all and per session: the second half of
        a window query whose first half (``search(count=False)``) stopped at the hits it shows."""
        tree = parse_query(query)
        filters = filters or SearchFilters()
        filters.check()
        conn = self._connection()
        if conn is None:
            return HitCounts(0, 0, True, ())
        try:
            plan = self._plan(conn, tree, filters)
            sids = [r[0] for r in conn.execute(plan.sql("d.sid", SCAN_CAP), plan.params)]
            per_sid = Counter(sids)
            keys = _session_keys(conn, per_sid)
        except DAMAGE_ERRORS as err:
            _query_error(query, err)
            if not is_busy(err):
                self.damaged = damage_text(err)
            return HitCounts(0, 0, False, ())
        per_key = tuple(sorted((keys[sid], n) for sid, n in per_sid.items() if sid in keys))
        return HitCounts(len(sids), len(per_sid), len(sids) < SCAN_CAP, per_key)

    def _plan(self, conn: sqlite3.Connection, tree: Node, filters: SearchFilters) -> _Plan:
        """The statement that finds the rows of ``tree``: the same for the hits and for their count."""
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name IN ('fts', 'cjk')")}
        has_fts = "fts" in tables
        terms = list(all_terms(tree))
        # Clauses in the order SQLite evaluates them: the index's candidates, then the cheap metadata
        # filters, then the check of the text, then the Python word-start check.
        where: list[str] = []
        params: list[Any] = []
        match = skeleton(tree) if has_fts else None
        pairs = pair_skeleton(tree) if match is None and "cjk" in tables else None
        session_sids = _session_sids(conn, filters.session_id) if filters.session_id is not None else None
        if session_sids is not None:
            # Find inside one session: its own rows (the sid index) bound the work, however common the term.
            mode = "session"
            source = "docs d INDEXED BY docs_sid"
            where.append(f"d.sid IN ({', '.join('?' * len(session_sids))})" if session_sids else "0")
            params.extend(session_sids)
            order = "d.id DESC"
            verify = True
        elif match is not None:
            mode = "fts"
            source = "fts JOIN docs d ON d.id = fts.rowid"
            where.append("fts MATCH ?")
            params.append(match)
            order = "fts.rowid DESC"
            verify = not exact_in_index(tree)
        elif pairs is not None:
            # Two-character CJK terms: the pair index narrows (``app.search.cjk``), the text decides.
            mode = "cjk"
            source = "cjk JOIN docs d ON d.id = cjk.rowid"
            where.append("cjk MATCH ?")
            params.append(pairs)
            order = "cjk.rowid DESC"
            verify = True
        else:
            mode = "like" if has_fts else "scan"
            source = "docs d"
            order = "d.id DESC"
            verify = True
        _filter_sql(filters, where, params)
        if verify:
            where.append(to_like(tree, params))
        if any(t.word_start for t in terms):
            # Word starts are checked in Python on the candidates (substring matches) the index found.
            self._trees.clear()
            self._trees[0] = tree
            where.append("ss_matches(d.body, 0)")
        return _Plan(mode, source, tuple(where), tuple(params), order)

    def _search(
        self,
        conn: sqlite3.Connection,
        query: str,
        tree: Node,
        filters: SearchFilters,
        limit: int,
        per_session: int | None,
        t0: float,
        count: bool = True,
    ) -> SearchResult:
        plan = self._plan(conn, tree, filters)
        # Without the count, only the rows that can be shown are read: a common word's 100 newest rows
        # take ~4 ms where counting 2,000 takes 30-100 ms on a 10,000-session index (``Searcher.count``).
        cap = SCAN_CAP if count else limit
        rows = conn.execute(plan.sql("d.id, d.sid, d.seq", cap), plan.params).fetchall()
        exact = len(rows) < cap
        per_sid = Counter(r[1] for r in rows)
        sessions = _sessions(conn, per_sid)
        if len(sessions) != len(per_sid):  # a row naming a session the index does not hold: a flipped sid
            raise CacheDamaged("an index row names a session the index does not hold")
        # Newest session first (its newest event), then the session id for a stable order.
        order_sids = sorted(per_sid, key=lambda s: (-(sessions[s][7] or 0), sessions[s][1]))
        by_sid: dict[int, list[tuple[int, int | None]]] = {}
        for doc_id, sid, seq in rows:
            by_sid.setdefault(sid, []).append((doc_id, seq))
        chosen: list[int] = []
        picked: dict[int, list[int]] = {}
        for sid in order_sids:
            if len(chosen) >= limit:
                break
            docs = sorted(by_sid[sid], key=lambda d: -1 if d[1] is None else d[1])
            take = docs[:per_session] if per_session is not None else docs
            take = take[: limit - len(chosen)]
            picked[sid] = [d[0] for d in take]
            chosen.extend(d[0] for d in take)
        details = _docs(conn, chosen)
        if len(details) != len(set(chosen)):
            raise CacheDamaged("an index row vanished between two reads of one query")
        pattern = highlight_pattern(tree)
        groups = []
        for sid, ids in picked.items():
            s = sessions[sid]
            hits = []
            for doc_id in ids:
                seq, kind, etype, tool, turn, tm, body = details[doc_id]
                text, spans = snippet_of(body, pattern)
                hits.append(Hit(s[1], s[0], seq, etype, kind, tool, turn, tm, s[4], text, spans))
            groups.append(SessionHits(s[1], s[0], s[2], s[6], s[3], s[4], s[5], s[8], s[7], per_sid[sid], tuple(hits)))
        elapsed = (time.perf_counter() - t0) * 1000
        counted = count or exact  # fewer rows than the limit: every match was read, the counts are whole
        return SearchResult(query, plan.mode, len(rows), len(per_sid), exact, tuple(groups), elapsed, counted=counted)


@dataclass(frozen=True, slots=True)
class _Plan:
    mode: str
    source: str
    where: tuple[str, ...]
    params: tuple[Any, ...]
    order: str

    def sql(self, columns: str, cap: int) -> str:
        return f"SELECT {columns} FROM {self.source} WHERE {' AND '.join(self.where)} ORDER BY {self.order} LIMIT {cap}"


def _filter_sql(filters: SearchFilters, where: list[str], params: list[Any]) -> None:
    if filters.kinds:
        kinds = sorted(filters.kinds)
        where.append(f"d.kind IN ({', '.join('?' * len(kinds))})")
        params.extend(kinds)
    if filters.tool:
        where.append("d.tool = ?")
        params.append(filters.tool)
    if filters.since is not None:
        where.append("d.time >= ?")
        params.append(filters.since)
    if filters.until is not None:
        where.append("d.time < ?")
        params.append(filters.until)
    session_where: list[str] = []
    if filters.project:
        session_where.append("cwd LIKE ? ESCAPE '\\'")
        params.append(like_contains(filters.project))
    if filters.statuses:
        st = sorted(filters.statuses)
        session_where.append(f"status IN ({', '.join('?' * len(st))})")
        params.extend(st)
    if session_where:
        where.append(f"d.sid IN (SELECT sid FROM sessions WHERE {' AND '.join(session_where)})")


def _session_sids(conn: sqlite3.Connection, session_id: str) -> list[int]:
    """The index's sessions with this id (a mixed JSONL root may list one id twice)."""
    return [r[0] for r in conn.execute("SELECT sid FROM sessions WHERE session_id = ?", (clean_text(session_id),))]


def _chunks(values: Sequence[int]) -> Iterable[Sequence[int]]:
    for lo in range(0, len(values), PARAMS_PER_QUERY):
        yield values[lo : lo + PARAMS_PER_QUERY]


def _sessions(conn: sqlite3.Connection, sids: Iterable[int]) -> dict[int, tuple[Any, ...]]:
    """sid -> (key, session_id, path, cwd, status, reason, title, updated, created_at)."""
    out: dict[int, tuple[Any, ...]] = {}
    for part in _chunks(list(sids)):
        for row in conn.execute(
            "SELECT sid, key, session_id, path, cwd, status, reason, title, updated, created_at FROM sessions "
            f"WHERE sid IN ({', '.join('?' * len(part))})",
            part,
        ):
            out[row[0]] = row[1:]
    return out


def _session_keys(conn: sqlite3.Connection, sids: Iterable[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for part in _chunks(list(sids)):
        out.update(conn.execute(f"SELECT sid, key FROM sessions WHERE sid IN ({', '.join('?' * len(part))})", part).fetchall())
    return out


def _docs(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """id -> (seq, kind, etype, tool, turn, time, body) of the hits shown."""
    out: dict[int, tuple[Any, ...]] = {}
    for part in _chunks(list(ids)):
        for row in conn.execute(
            f"SELECT id, seq, kind, etype, tool, turn, time, body FROM docs WHERE id IN ({', '.join('?' * len(part))})", part
        ):
            out[row[0]] = row[1:]
    return out


__all__ = ["DEFAULT_LIMIT", "SCAN_CAP", "Searcher"]
