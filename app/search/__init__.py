"""Full-text search over every session of a root: the Qt-free index, its queries and the ``search`` verb.

What it holds, one concept per module:

- ``location``  where a root's index file lives (the user's cache folder, never the session root)
- ``db``        the index file: schema, opening with rebuild, the indexer's writes
- ``extract``   what a person searches for in a log, as index rows (a packed run is one step)
- ``damaged``   the decodable part of a log the engine refuses
- ``outcome``   what a whole read of one session writes (shared by the serial run and the workers)
- ``run``       one indexing run: its plan, serial steps, tail reads, group commits
- ``parallel``  the cold build on every core: chunks, the worker pool, adopting a finished chunk
- ``shards``    a worker process's side of it: one chunk into a scratch index file
- ``segments``  moving a finished FTS5 index into the real one without tokenizing again
- ``indexer``   ``Indexer``: incremental, one session (or one chunk) per step, cancellable between them
- ``query``     the query language, FTS5/LIKE translation, filters, grouping, snippets (``Searcher``)
- ``command``   the ``sessionscope search`` verb's logic (``search_store``, ``run_search``)

Typical use (the window runs the indexer on a worker thread with its own store and event loop)::

    indexer = Indexer(store)                     # opens or rebuilds the index; indexer.messages says which
    report = await indexer.update(progress=cb)   # cb(IndexProgress): "Indexing 3,412 / 10,000 sessions"
    result = indexer.searcher().search("order.ts", SearchFilters(kinds=frozenset({"tool-call"})))
    result.summary()                             # "214 hits in 37 sessions"

Import rule: the standard library, ``app.paths``, ``app.records`` and the public ``persistence``
package; never Qt, never ``app.gui``, ``app.cli`` or ``app.actions``.
"""

from __future__ import annotations

from app.search.command import SearchOutcome, run_search, search_store
from app.search.db import SCHEMA_VERSION, fts_problem
from app.search.extract import KINDS
from app.search.indexer import Indexer, index_root, run_index
from app.search.language import SearchQueryError, parse_query
from app.search.location import index_path
from app.search.progress import IndexCancelled, IndexProgress, IndexReport, entry_key
from app.search.query import Searcher
from app.search.results import Hit, HitCounts, SearchFilters, SearchResult, SessionHits
from app.search.run import IndexRun

__all__ = [
    "KINDS",
    "SCHEMA_VERSION",
    "Hit",
    "HitCounts",
    "IndexCancelled",
    "IndexProgress",
    "IndexReport",
    "IndexRun",
    "Indexer",
    "SearchFilters",
    "SearchOutcome",
    "SearchQueryError",
    "SearchResult",
    "Searcher",
    "SessionHits",
    "entry_key",
    "fts_problem",
    "index_path",
    "index_root",
    "parse_query",
    "run_index",
    "run_search",
    "search_store",
]
