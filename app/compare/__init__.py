"""Compare any two sessions: turns aligned by their user prompts, and where the two runs diverge.

Why a package of its own: "Compare with parent" (``app.insight.lineage.compare_with_parent``) puts a
fork beside the session it was forked from, turn k after the fork point beside turn k.  Two sessions
a support engineer compares (yesterday's run and today's, the customer's and ours, two forks of one
parent) share no fork point: their turns are matched by what the person asked.  Both views are
built from the same turn digests (``app.insight.turn_digests``: prompt, replies, tools, tokens,
duration of each turn) and the same common-prefix walk (``common_prefix``, a packed run at a time).

``compare_sessions(a, b)`` aligns the two prompt lists with ``difflib.SequenceMatcher`` (a longest
common subsequence of whole prompts, no junk heuristic): equal prompts pair up in order, a replaced
stretch pairs its turns position by position (different prompts, same place), and what is left is a
turn only one side ran.  Each aligned pair says whether the answers are the same, which tools one
side called more often (a multiset difference of tool names), and both sides' tokens and durations.
The first pair that is not the same turn is the divergence.

Qt-free: the command line (``sessionscope diff``) and the window's compare view render these values.
``read_session(path, id)`` reads one side from any source (``app.sources``), for both.
May import the standard library, ``app.insight`` (turn digests, common prefix), ``app.records``,
``app.sources`` and the public ``persistence``.
"""

from app.compare.reading import read_session
from app.compare.sessions import (
    CHANGED,
    ONLY_A,
    ONLY_B,
    REPLACED,
    SAME,
    AlignedTurn,
    SessionComparison,
    SideInfo,
    ToolDelta,
    align_turns,
    compare_sessions,
    comparison_json,
    comparison_text,
)

__all__ = [
    "CHANGED",
    "ONLY_A",
    "ONLY_B",
    "REPLACED",
    "SAME",
    "AlignedTurn",
    "SessionComparison",
    "SideInfo",
    "ToolDelta",
    "align_turns",
    "compare_sessions",
    "comparison_json",
    "comparison_text",
    "read_session",
]
