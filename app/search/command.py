"""``sessionscope search ROOT QUERY``: bring the root's index up to date, run the query, print hits.

The verb's whole logic lives here so the command line only wires arguments to it
(``search_store`` for a verb handler that already holds an opened store, ``run_search`` for
synchronous callers).  Text output is one hit per line, ``session-id<TAB>seq<TAB>kind<TAB>snippet``
(``-`` for the header row's missing seq); ``notes`` carries what goes to stderr: the index's
messages (created, rebuilt, fell back) and the count line ("214 hits in 37 sessions").  A bad query
is exit code 1 with one clear line (or ``{"error": ...}`` with ``--json``), checked before any
indexing starts.

May import: the standard library, the public ``persistence`` package and ``app.search``'s own modules.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.search.indexer import Indexer
from app.search.language import SearchQueryError, parse_query
from app.search.progress import IndexProgress, IndexReport
from app.search.results import SearchFilters, SearchResult
from persistence import CoordinatedPersistence, SessionPersistenceError, error_fields, open_store

DEFAULT_CLI_LIMIT = 100  # hits printed unless --limit says otherwise


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """What the verb prints: ``text`` on stdout, ``notes`` on stderr, and the exit code."""

    text: str
    notes: str
    code: int
    result: SearchResult | None = None
    report: IndexReport | None = None
    value: dict[str, Any] | None = None  # what ``--json`` prints (``text`` is its JSON text)


def filters_of(
    project: str | None = None,
    kind: str | Sequence[str] | None = None,
    tool: str | None = None,
    status: str | Sequence[str] | None = None,
    session: str | None = None,
) -> SearchFilters:
    """Filters from command-line values (``kind``/``status`` may be comma-separated lists)."""

    def split(v: str | Sequence[str] | None) -> frozenset[str]:
        if v is None:
            return frozenset()
        items = v.split(",") if isinstance(v, str) else [x for part in v for x in part.split(",")]
        return frozenset(x.strip() for x in items if x.strip())

    filters = SearchFilters(
        project=project or None, kinds=split(kind), tool=tool or None, statuses=split(status), session_id=session
    )
    filters.check()
    return filters


def hit_lines(result: SearchResult) -> str:
    """One line per hit: session id, seq, kind, snippet (tab-separated)."""
    lines = []
    for group in result.sessions:
        for h in group.hits:
            seq = "-" if h.seq is None else str(h.seq)
            lines.append(f"{h.session_id}\t{seq}\t{h.kind}\t{h.snippet}")
    return "\n".join(lines) + ("\n" if lines else "")


def _error(message: str, as_json: bool) -> SearchOutcome:
    if as_json:
        payload: dict[str, Any] = {"error": {"class": "SearchQueryError", "message": message}}
        return SearchOutcome(jsonlib.dumps(payload, ensure_ascii=False) + "\n", "", 1, value=payload)
    return SearchOutcome("", f"sessionscope search: {message}\n", 1)


def _failure(err: BaseException, as_json: bool) -> SearchOutcome:
    """A root that cannot be opened (the same shape as every verb's failure)."""
    fields = error_fields(err)
    if as_json:
        payload: dict[str, Any] = {"error": fields}
        return SearchOutcome(jsonlib.dumps(payload, ensure_ascii=False) + "\n", "", 1, value=payload)
    return SearchOutcome("", f"sessionscope: {fields['class']}: {fields['message']}\n", 1)


async def search_store(
    store: CoordinatedPersistence,
    query: str,
    *,
    project: str | None = None,
    kind: str | Sequence[str] | None = None,
    tool: str | None = None,
    status: str | Sequence[str] | None = None,
    limit: int = DEFAULT_CLI_LIMIT,
    json: bool = False,
    reindex: bool = False,
    cache_dir: str | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
) -> SearchOutcome:
    """Index ``store``'s root (incrementally; ``reindex`` rebuilds first), then search it.  ``progress``
    hears of each indexing step (a first search indexes every session: the command line shows it)."""
    try:
        parse_query(query)
        filters = filters_of(project, kind, tool, status)
        if limit < 1:
            raise SearchQueryError(f"--limit must be at least 1, got {limit}")
    except SearchQueryError as err:
        return _error(str(err), json)
    indexer = Indexer(store, cache_dir=cache_dir)
    searcher = None
    try:
        if reindex:
            indexer.rebuild("--reindex")
        report = await indexer.update(progress=progress)
        searcher = indexer.searcher()
        result = searcher.search(query, filters, limit=limit)
        if searcher.damaged is not None:  # found damaged while reading: rebuild once and ask again
            searcher.close()
            indexer.rebuild(searcher.damaged)
            report = await indexer.update(progress=progress)
            searcher = indexer.searcher()
            result = searcher.search(query, filters, limit=limit)
    except SearchQueryError as err:
        return _error(str(err), json)
    finally:
        if searcher is not None:
            searcher.close()
        indexer.close()
    messages = [*indexer.messages, *result.messages]  # open-time notes (created, rebuilt) included
    notes = "".join(f"sessionscope search: {m}\n" for m in messages)
    if json:
        value: dict[str, Any] = result.to_json()
        value["messages"] = messages
        return SearchOutcome(jsonlib.dumps(value, ensure_ascii=False) + "\n", notes, 0, result, report, value)
    notes += (result.summary() if result.hit_count else result.empty_text(filters)) + "\n"
    value = {**result.to_json(), "messages": messages}
    return SearchOutcome(hit_lines(result), notes, 0, result, report, value)


def run_search(
    root: str,
    query: str,
    *,
    backend: str | None = None,
    project: str | None = None,
    kind: str | Sequence[str] | None = None,
    tool: str | None = None,
    status: str | Sequence[str] | None = None,
    limit: int = DEFAULT_CLI_LIMIT,
    json: bool = False,
    reindex: bool = False,
    cache_dir: str | None = None,
) -> SearchOutcome:
    """``search_store`` on ``root`` opened read-only (never created), from synchronous code."""

    async def go() -> SearchOutcome:
        try:
            parse_query(query)  # a typo is reported before the root is even opened
        except SearchQueryError as err:
            return _error(str(err), json)
        try:
            store = open_store(root, backend, read_only=True, create=False)
        except (SessionPersistenceError, OSError) as err:
            return _failure(err, json)
        try:
            return await search_store(
                store,
                query,
                project=project,
                kind=kind,
                tool=tool,
                status=status,
                limit=limit,
                json=json,
                reindex=reindex,
                cache_dir=cache_dir,
            )
        finally:
            await store.close()

    return asyncio.run(go())


__all__ = ["DEFAULT_CLI_LIMIT", "SearchOutcome", "filters_of", "hit_lines", "run_search", "search_store"]
