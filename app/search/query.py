"""Queries: the little query language, its translation to FTS5 (or LIKE), filters, grouping and snippets.

The language (what a person types; every match is a case-insensitive substring):

- ``order.ts``, ``S3``: a term matches where it occurs, also inside words and paths; terms side by
  side must all match (``npm build`` = both somewhere in the same event text);
- ``"npm run build"``: a phrase, matched as one substring, spaces included;
- ``build*``: a term that starts a word (``rebuild`` does not match ``build*``, ``builder`` does);
- ``AND``, ``OR``, ``NOT`` (upper case; ``a NOT b`` as in FTS5) and parentheses.
A syntax error (an unclosed quote or parenthesis, an operator without a term) is a
``SearchQueryError`` saying where; so is any FTS5 error the translation could still meet.

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
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.cache_db import DAMAGE_ERRORS, CacheDamaged, damage_text, is_busy
from app.search.cjk import cjk_bigram
from app.search.db import clean_text
from app.search.extract import KINDS

TRIGRAM_CHARS = 3  # the shortest term a trigram index can answer
MAX_TRIGRAMS_PER_TERM = 12  # trigrams of one term sent to the index (more narrow little, and each costs a merge)
# Matching rows counted at most; past it counts are "at least" ("2,000+ hits in 435+ sessions").  Measured
# on a 10,000-session index: at 10,000 a common query took 75-155 ms (median), at 2,000 it takes 27-35 ms,
# which keeps the window's first results inside 150 ms of the last key.
SCAN_CAP = 2_000
DEFAULT_LIMIT = 200  # hits returned (the window shows them grouped by session)
SNIPPET_BEFORE = 60  # characters of context before the first match in a snippet
SNIPPET_CHARS = 200  # characters of a snippet
READ_BUSY_TIMEOUT_MS = 2000  # a query waits at most this long for a checkpoint of the indexer
PARAMS_PER_QUERY = 500  # ids bound per ``IN (...)`` statement (SQLite's limit is 32766 on 3.32+; small keeps plans simple)


class SearchQueryError(ValueError):
    """A query that cannot be run: a syntax error, an unknown filter value.  The message says what to fix."""


def _query_error(query: str, err: BaseException) -> None:
    """Raise ``SearchQueryError`` when ``err`` is FTS5 refusing the query's text (not the file's damage)."""
    text = str(err)
    if isinstance(err, sqlite3.OperationalError) and (text.startswith("fts5:") or "malformed MATCH" in text):
        raise SearchQueryError(f"cannot search for {query!r}: {text.removeprefix('fts5: ')}") from None


# ---------------------------------------------------------------- the query language


@dataclass(frozen=True, slots=True)
class Term:
    text: str
    word_start: bool = False  # ``term*``
    phrase: bool = False  # ``"..."``


@dataclass(frozen=True, slots=True)
class Op:
    op: str  # "AND" | "OR" | "NOT"
    parts: tuple[Node, ...]


Node = Term | Op

_OPERATORS = ("AND", "OR", "NOT")


def _tokens(query: str) -> list[tuple[str, str, int]]:
    """(kind, text, position) tokens: ``term``, ``phrase``, ``(``, ``)``, ``op``."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            out.append((ch, ch, i))
            i += 1
        elif ch == '"':
            # A phrase runs to the next lone quote; "" inside it is a literal quote (FTS5's rule).
            end = i + 1
            while True:
                end = query.find('"', end)
                if end < 0:
                    raise SearchQueryError(f'unclosed quote at character {i + 1}: close the phrase with another "')
                if query.startswith('""', end):
                    end += 2
                    continue
                break
            text = query[i + 1 : end].replace('""', '"')
            star = end + 1 < n and query[end + 1] == "*"
            out.append(("phrase*" if star else "phrase", text, i))
            i = end + (2 if star else 1)
        else:
            j = i
            while j < n and not query[j].isspace() and query[j] not in '()"':
                j += 1
            word = query[i:j]
            out.append(("op" if word in _OPERATORS else "term", word, i))
            i = j
    return out


class _Parser:
    """FTS5's grammar and precedence: NOT binds tightest, then AND (also implicit), then OR."""

    def __init__(self, tokens: list[tuple[str, str, int]]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def parse(self) -> Node:
        if not self.tokens:
            raise SearchQueryError("empty query: type something to search for")
        node = self.or_expr()
        tok = self.peek()
        if tok is not None:
            raise SearchQueryError(
                f"unexpected {tok[1]!r} at character {tok[2] + 1}" + (": no ( to close" if tok[0] == ")" else "")
            )
        return node

    def or_expr(self) -> Node:
        parts = [self.and_expr()]
        while (tok := self.peek()) is not None and tok[:2] == ("op", "OR"):
            self.i += 1
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else Op("OR", tuple(parts))

    def and_expr(self) -> Node:
        parts = [self.not_expr()]
        while (tok := self.peek()) is not None and (tok[0] in ("term", "phrase", "phrase*", "(") or tok[:2] == ("op", "AND")):
            if tok[0] == "op":
                self.i += 1
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else Op("AND", tuple(parts))

    def not_expr(self) -> Node:
        node = self.primary()
        while (tok := self.peek()) is not None and tok[:2] == ("op", "NOT"):
            self.i += 1
            node = Op("NOT", (node, self.primary()))
        return node

    def primary(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise SearchQueryError("the query ends with an operator: add a term after it")
        kind, text, pos = tok
        self.i += 1
        if kind == "(":
            node = self.or_expr()
            close = self.peek()
            if close is None or close[0] != ")":
                raise SearchQueryError(f"unclosed parenthesis at character {pos + 1}: add a )")
            self.i += 1
            return node
        if kind == ")":
            raise SearchQueryError(f"unexpected ) at character {pos + 1}")
        if kind == "op":
            hint = " (a NOT needs a term on its left: 'build NOT test')" if text == "NOT" else ""
            raise SearchQueryError(
                f'{text} at character {pos + 1} has no term before it{hint}; search for the word itself in quotes: "{text}"'
            )
        if kind in ("phrase", "phrase*"):
            if not text.strip():
                raise SearchQueryError(f"empty phrase at character {pos + 1}")
            return Term(text, word_start=kind == "phrase*", phrase=True)
        star = text.endswith("*")
        core = text.rstrip("*")
        if not core:
            raise SearchQueryError(f"a lone * at character {pos + 1}: put it after a term, as in build*")
        if "*" in core:
            raise SearchQueryError(f"* at character {pos + 1 + core.index('*')} must end a term, as in build*")
        return Term(core, word_start=star)


def parse_query(query: str) -> Node:
    """The query's syntax tree, or ``SearchQueryError`` saying what is wrong and where."""
    return _Parser(_tokens(query)).parse()


def terms_of(node: Node, positive: bool = True) -> Iterable[Term]:
    """The terms that must occur (not those under the right side of a NOT): what a snippet highlights."""
    if isinstance(node, Term):
        if positive:
            yield node
        return
    for k, part in enumerate(node.parts):
        yield from terms_of(part, positive and not (node.op == "NOT" and k == 1))


def all_terms(node: Node) -> Iterable[Term]:
    if isinstance(node, Term):
        yield node
    else:
        for part in node.parts:
            yield from all_terms(part)


def _fts_quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def trigrams(text: str) -> list[str]:
    """The distinct trigrams of ``text``, at most
    ``MAX_TRIGRAMS_PER_TERM`` spread over the term: the check on the text is exact anyway, and a
    60-character phrase needs no 58-way merge to be narrowed."""
    # Sliced from the text as typed: the index folds each quoted token itself (``str.lower`` may change
    # a character's length, and with it which trigrams exist).
    grams = list(dict.fromkeys(text[i : i + TRIGRAM_CHARS] for i in range(len(text) - TRIGRAM_CHARS + 1)))
    if len(grams) > MAX_TRIGRAMS_PER_TERM:
        step = len(grams) / MAX_TRIGRAMS_PER_TERM
        grams = [grams[int(k * step)] for k in range(MAX_TRIGRAMS_PER_TERM - 1)] + [grams[-1]]
    return grams


def skeleton(node: Node) -> str | None:
    """An FTS5 MATCH expression whose rows are a superset of the tree's matches (None: no narrowing).

    A term is the AND of its trigrams; a short term cannot narrow (an AND drops it, an OR holding
    it cannot narrow at all); ``a NOT b`` narrows by ``a`` only, since rows that hold all of b's
    trigrams need not hold b.  Every token is quoted, so the expression is always valid FTS5.
    """
    if isinstance(node, Term):
        grams = trigrams(node.text) if len(node.text) >= TRIGRAM_CHARS else []
        if not grams:
            return None
        if len(grams) == 1:
            return _fts_quote(grams[0])
        return "(" + " AND ".join(_fts_quote(g) for g in grams) + ")"
    if node.op == "NOT":
        return skeleton(node.parts[0])
    parts = [skeleton(p) for p in node.parts]
    if node.op == "OR":
        if any(p is None for p in parts):
            return None
        return "(" + " OR ".join(p for p in parts if p is not None) + ")"
    kept = [p for p in parts if p is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else "(" + " AND ".join(kept) + ")"


def pair_skeleton(node: Node) -> str | None:
    """A MATCH expression for the ``cjk`` pair index whose rows are a superset of the tree's matches,
    or None: the same rules as ``skeleton``, where only a term of exactly two CJK letters narrows."""
    if isinstance(node, Term):
        pair = cjk_bigram(node.text)
        return _fts_quote(pair) if pair is not None else None
    if node.op == "NOT":
        return pair_skeleton(node.parts[0])
    parts = [pair_skeleton(p) for p in node.parts]
    if node.op == "OR":
        if any(p is None for p in parts):
            return None
        return "(" + " OR ".join(p for p in parts if p is not None) + ")"
    kept = [p for p in parts if p is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else "(" + " AND ".join(kept) + ")"


def exact_in_index(node: Node) -> bool:
    """Whether the skeleton's rows are exactly the matches: 3-character terms under AND/OR only."""
    if isinstance(node, Term):
        return len(node.text) == TRIGRAM_CHARS and not node.word_start
    return node.op != "NOT" and all(exact_in_index(p) for p in node.parts)


def _like_escape(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _needs_python_case(text: str) -> bool:
    """Whether SQLite's LIKE (ASCII-only case folding) would miss a case variant of ``text``."""
    return any(ord(ch) > 127 and ch.lower() != ch.upper() for ch in text)


def to_like(node: Node, params: list[Any], column: str = "d.body") -> str:
    """A SQL boolean expression over ``column`` equivalent to the tree (the short-term fallback)."""
    if isinstance(node, Term):
        if _needs_python_case(node.text):
            params.append(node.text)
            expr = f"ss_contains({column}, ?)"
        else:
            params.append(_like_escape(node.text))
            expr = f"{column} LIKE ? ESCAPE '\\'"
        return expr
    if node.op == "NOT":
        return f"({to_like(node.parts[0], params, column)} AND NOT {to_like(node.parts[1], params, column)})"
    return "(" + f" {node.op} ".join(to_like(p, params, column) for p in node.parts) + ")"


def term_pattern(term: Term) -> str:
    body = re.escape(term.text)
    return rf"(?<!\w){body}" if term.word_start else body


def evaluate(node: Node, text: str) -> bool:
    """Whether ``text`` matches the tree (Python's reading: used to check word-start terms)."""
    if isinstance(node, Term):
        return re.search(term_pattern(node), text, re.IGNORECASE) is not None
    if node.op == "AND":
        return all(evaluate(p, text) for p in node.parts)
    if node.op == "OR":
        return any(evaluate(p, text) for p in node.parts)
    return evaluate(node.parts[0], text) and not evaluate(node.parts[1], text)


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


def highlight_pattern(node: Node) -> re.Pattern[str] | None:
    """A regex matching every positive term (longest first, so a phrase wins over its words)."""
    terms = sorted({(t.text, t.word_start) for t in terms_of(node)}, key=lambda t: -len(t[0]))
    if not terms:
        return None
    return re.compile("|".join(term_pattern(Term(t, w)) for t, w in terms), re.IGNORECASE)


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
        params.append(_like_escape(filters.project))
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


__all__ = [
    "DEFAULT_LIMIT",
    "SCAN_CAP",
    "Hit",
    "HitCounts",
    "SearchFilters",
    "SearchQueryError",
    "SearchResult",
    "Searcher",
    "SessionHits",
    "highlight_pattern",
    "parse_query",
    "skeleton",
    "snippet_of",
]
