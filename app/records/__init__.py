"""Reading event records: the helpers every reader of a session's records shares.

Why a package of its own: the timeline, the statistics (``app.insight``), the search index
(``app.search``) and the exports (``app.export``) all read the same records — a field that may be
missing or mistyped, a message's text, the session title, a log walked a packed run at a time, a
usage sample.  These helpers lived in ``app.timeline``, which made the viewer's tree a library the
other readers depended on; here they sit below all four.

- ``fields``     defensive reads of record fields (``get_path``, ``seq_of``)
- ``summaries``  one-line summaries, compact JSON, token counts, message text
- ``title``      the session title (latest ``session/title`` wins)
- ``walk``       walking a log a packed run at a time (``walk``, ``walk_items``, ``item_type``)
- ``usage``      ``Tokens``: the one token-usage value (timeline rows, statistics, caches, exports)

Event type names are the engine's (``persistence.EventType``), never spelled here.  Import rule:
the standard library and the public ``persistence`` package only — never Qt, never another ``app``
package (an import-linter contract keeps it so).
"""

from __future__ import annotations

from app.records.fields import get_path, seq_of
from app.records.summaries import compact_count, compact_json, content_text, one_line, tool_arguments_summary
from app.records.title import latest_title
from app.records.usage import NO_TOKENS, Tokens
from app.records.walk import Item, item_type, walk, walk_items

__all__ = [
    "NO_TOKENS",
    "Item",
    "Tokens",
    "compact_count",
    "compact_json",
    "content_text",
    "get_path",
    "item_type",
    "latest_title",
    "one_line",
    "seq_of",
    "tool_arguments_summary",
    "walk",
    "walk_items",
]
