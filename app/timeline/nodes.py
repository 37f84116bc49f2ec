"""What the timeline is made of: ``TimelineNode`` (one row of the tree) and its flags.

Values only, so the fold, the span index, the detail text and the Qt adapter can all share them
without importing each other.  May import the stdlib and ``app.records`` (``Tokens``, a row's usage) only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.records import Tokens

# Node flags (a frozenset of these strings travels with every node).
ERROR = "error"
SYNTHETIC = "synthetic"  # an in-memory crash closer: inspect() adds it, nothing on disk
REPAIRED = "repaired"  # a crash-repair closer (TOOL_NOT_STARTED / TOOL_OUTCOME_UNKNOWN / turn interrupted)
INTERRUPTED = "interrupted"  # a turn that ended with reason "interrupted" (only crash repair writes that)
OPEN = "open"  # a turn/step with no end event
CANCELLED = "cancelled"  # assistant message cut mid-stream (interrupted: true) or a stream without message
HUMAN = "human"  # a direct human prompt (source.kind == "user")
SEED = "seed"  # the session/end-seed marker
PRUNED = "pruned"  # a surface replacement (compaction / prune): model-only annotation (§6.2)

# Error codes crash repair writes into a tool result, and how a row names them.
REPAIR_CODES = frozenset({"TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN"})
REPAIR_LABELS = {"TOOL_OUTCOME_UNKNOWN": "outcome unknown (crash)", "TOOL_NOT_STARTED": "never started (crash)"}


@dataclass(slots=True, eq=False)
class TimelineNode:
    """One row of the timeline tree.

    ``key`` is stable across re-derivations of the same events (a viewer merges a re-derived tail
    into what it shows by key).  ``seqs`` lists every event seq the row stands for, so a raw line
    can be mapped back to its row; ``index`` is the record index of the primary event (details).
    Mutable on purpose: a viewer merges a re-derived node into the one it shows, in place.
    """

    kind: str
    key: tuple[Any, ...]
    label: str
    summary: str = ""
    info: str = ""
    seq: int = -1
    index: int = -1
    seqs: list[int] = field(default_factory=list)
    time: Any = None
    flags: frozenset[str] = frozenset()
    usage: Tokens | None = None
    children: list[TimelineNode] = field(default_factory=list)
    parent: TimelineNode | None = field(default=None, repr=False)

    def add(self, child: TimelineNode) -> TimelineNode:
        child.parent = self
        self.children.append(child)
        return child

    def flag(self, *names: str) -> None:
        self.flags = self.flags | frozenset(names)

    def same_content(self, other: TimelineNode) -> bool:
        return (self.label, self.summary, self.info, self.flags, self.seq, len(self.seqs)) == (
            other.label,
            other.summary,
            other.info,
            other.flags,
            other.seq,
            len(other.seqs),
        )

    def walk(self) -> Iterable[TimelineNode]:
        yield self
        for c in self.children:
            yield from c.walk()

    @property
    def first_seq(self) -> int:
        return self.seq if self.seq >= 0 else min(self.seqs, default=-1)
