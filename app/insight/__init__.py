"""Insight: statistics of a session and of a root, the lineage of forks and subagents.

Qt-free and pure so the window (Stats tab, dashboard, lineage view), the command line, the exports
and the tests share the same numbers:

- ``stats``     the fold over one session's events -> ``SessionStats`` (and its per-turn series)
- ``prices``    the optional price table per model (a JSON file in the data folder) and costs
- ``cache``     per-session summaries kept by revision in the user's cache folder (``InsightCache``)
- ``dashboard`` root aggregations over the cache (per day, per project, top tools, longest, costliest)
- ``lineage``   the sessions of a root as a tree by parent, and ``compare_with_parent``

Import rule: the standard library, ``app.records``, ``app.paths``, ``app.search.location`` and the
public ``persistence`` package; never Qt, the window, the actions or the command line.
"""

from __future__ import annotations

from app.insight.cache import CacheProgress, CacheReport, InsightCache, SessionSummary, cache_path, summarize, summary_of
from app.insight.dashboard import (
    NO_PROJECT,
    DayTotal,
    ProjectTotal,
    RootFilter,
    RootTotals,
    SessionRef,
    ToolTotal,
    aggregate,
)
from app.insight.lineage import (
    FORK,
    ROOT,
    SUBAGENT,
    ForkComparison,
    Lineage,
    LineageNode,
    SessionInfo,
    ToolUse,
    TurnDigest,
    build_lineage,
    compare_with_parent,
    lineage_from_cache,
    lineage_from_entries,
    turn_digests,
)
from app.insight.prices import Cost, ModelPrice, PriceTable, PriceTableError, cost_of, load_prices, prices_path, save_prices
from app.insight.stats import ModelStats, SessionStats, ToolStats, TurnStats, fold_stats
from app.records import Tokens

__all__ = [
    "FORK",
    "NO_PROJECT",
    "ROOT",
    "SUBAGENT",
    "CacheProgress",
    "CacheReport",
    "Cost",
    "DayTotal",
    "ForkComparison",
    "InsightCache",
    "Lineage",
    "LineageNode",
    "ModelPrice",
    "ModelStats",
    "PriceTable",
    "PriceTableError",
    "ProjectTotal",
    "RootFilter",
    "RootTotals",
    "SessionInfo",
    "SessionRef",
    "SessionStats",
    "SessionSummary",
    "Tokens",
    "ToolStats",
    "ToolTotal",
    "ToolUse",
    "TurnDigest",
    "TurnStats",
    "aggregate",
    "build_lineage",
    "cache_path",
    "compare_with_parent",
    "cost_of",
    "fold_stats",
    "lineage_from_cache",
    "lineage_from_entries",
    "load_prices",
    "prices_path",
    "save_prices",
    "summarize",
    "summary_of",
    "turn_digests",
]
