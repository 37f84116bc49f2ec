"""The lineage of a root's sessions (forks and subagents as a tree by parent) and "compare with parent".

Why here and not in the engine: lineage is navigation metadata a viewer derives from headers
(session-model §5.5): ``parentSession`` names the parent, ``origin: "subagent"`` marks a delegated
child with its ``delegationDepth``, and ``seedLength`` says how many of the child's first events
were inherited from the parent (the fork point).  Nothing checks that a parent exists, so a
missing parent is listed (an *orphan*, with the id it names), and a damaged root whose parents form
a loop still gives a finite tree (the loop is cut and flagged).

``compare_with_parent`` puts a fork beside its parent: how much of the inherited prefix is still
identical (compared a packed run at a time, never expanding either log), then each side's turns
after the fork point as plain values for a side-by-side view.

May import: the standard library, ``app.insight``'s own modules, ``app.timeline`` and the public ``persistence``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.insight.cache import InsightCache, SessionSummary
from app.insight.stats import Tokens, fold_stats, table_of_log
from app.records import content_text, get_path, one_line
from persistence import EventLog, EventTable, EventType, ListedEntry, PackedRun

ROOT = "root"  # no parent
FORK = "fork"  # a parent and no origin (SessionScope's fork, a harness fork, a replay)
SUBAGENT = "subagent"  # origin "subagent": a delegated child

DIGEST_TEXT_CHARS = 2000  # characters of one assistant reply kept in a turn digest (a side-by-side cell)
PROMPT_CHARS = 500  # characters of a turn's human prompt in a digest


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What the tree needs of one session (from the statistics cache, or a listing row)."""

    session_id: str
    parent: str | None = None
    origin: str | None = None
    delegation_depth: int | None = None
    seed_length: int | None = None
    fork_turn: int | None = None  # the last turn completed inside the inherited prefix
    title: str | None = None
    status: str | None = None
    start_ms: int | None = None

    @classmethod
    def from_summary(cls, s: SessionSummary) -> SessionInfo:
        return cls(
            s.session_id, s.parent, s.origin, s.delegation_depth, s.seed_length, s.fork_turn, s.title, s.status, s.start_ms
        )

    @classmethod
    def from_entry(cls, e: ListedEntry) -> SessionInfo:
        """A listing row's header fields (no title or fork turn: those need the log)."""
        m = e.meta or {}

        def text(key: str) -> str | None:
            v = m.get(key)
            return v if isinstance(v, str) else None

        def num(key: str) -> int | None:
            v = m.get(key)
            return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        return cls(e.session_id, text("parentSession"), text("origin"), num("delegationDepth"), num("seedLength"),
                   None, None, e.status or ("ok" if e.ok else None), num("createdAt"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class LineageNode:
    """One session in the tree, with its children (oldest first)."""

    info: SessionInfo
    kind: str  # ROOT | FORK | SUBAGENT
    depth: int  # depth in the tree (0: a root or an orphan)
    children: tuple[LineageNode, ...] = ()
    missing_parent: str | None = None  # an orphan: the parent id no session of the root has
    cycle: bool = False  # an orphan cut out of a loop of parents (a damaged root)

    @property
    def session_id(self) -> str:
        return self.info.session_id

    @property
    def title(self) -> str | None:
        return self.info.title

    @property
    def status(self) -> str | None:
        return self.info.status

    @property
    def fork_point(self) -> tuple[int | None, int | None]:
        """(seed length, the turn the fork falls after); (None, None) for a root."""
        return self.info.seed_length, self.info.fork_turn

    def walk(self) -> Iterator[LineageNode]:
        """This node and every descendant, depth first (iterative: a chain of 10,000 forks is fine)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


@dataclass(frozen=True, slots=True)
class Lineage:
    """A root's sessions as trees: ``roots`` (no parent) and ``orphans`` (parent missing, or in a loop)."""

    roots: tuple[LineageNode, ...]
    orphans: tuple[LineageNode, ...] = ()

    def nodes(self) -> Iterator[LineageNode]:
        for top in (*self.roots, *self.orphans):
            yield from top.walk()

    def __len__(self) -> int:
        return sum(1 for _ in self.nodes())

    def find(self, session_id: str) -> LineageNode | None:
        return next((n for n in self.nodes() if n.session_id == session_id), None)


def _kind(info: SessionInfo) -> str:
    if info.origin == "subagent":
        return SUBAGENT
    return FORK if info.parent is not None else ROOT


def _order(info: SessionInfo) -> tuple[int, str]:
    return (info.start_ms if info.start_ms is not None else 0, info.session_id)


def build_lineage(infos: Iterable[SessionInfo]) -> Lineage:
    """The tree of ``infos`` by parent.  Of two infos with one id the first is kept."""
    by_id: dict[str, SessionInfo] = {}
    for info in infos:
        by_id.setdefault(info.session_id, info)
    children: dict[str, list[str]] = {}
    for sid, info in by_id.items():
        if info.parent is not None and info.parent != sid:
            children.setdefault(info.parent, []).append(sid)
    for siblings in children.values():
        siblings.sort(key=lambda k: _order(by_id[k]))

    placed: set[str] = set()
    tops: list[tuple[str, str | None, bool]] = []  # (id, missing parent, cut from a loop)
    for sid, info in sorted(by_id.items(), key=lambda kv: _order(kv[1])):
        if info.parent is None:
            tops.append((sid, None, False))
        elif info.parent not in by_id:
            tops.append((sid, info.parent, False))
    order: list[tuple[str, int]] = []  # every placed id with its depth, parents before children

    def place(top: str) -> None:
        stack = [(top, 0)]
        placed.add(top)
        while stack:
            sid, depth = stack.pop()
            order.append((sid, depth))
            for kid in reversed(children.get(sid, ())):
                if kid not in placed:
                    placed.add(kid)
                    stack.append((kid, depth + 1))

    for top_id, _missing, _cut in tops:
        place(top_id)
    # What is left hangs below a loop of parents (or is one, a session naming itself): cut each loop
    # at its smallest id, which becomes an orphan flagged ``cycle``.
    for start in sorted(by_id, key=lambda k: _order(by_id[k])):
        if start in placed:
            continue
        seen: list[str] = []
        cur = start
        while cur not in seen and cur in by_id and cur not in placed:
            seen.append(cur)
            parent = by_id[cur].parent
            cur = parent if parent is not None else cur
        loop = seen[seen.index(cur) :] if cur in seen else seen
        tops.append((min(loop), None, True))
        place(min(loop))

    built: dict[str, LineageNode] = {}
    top_info: dict[str, tuple[str | None, bool]] = {t[0]: (t[1], t[2]) for t in tops}
    for sid, depth in reversed(order):
        kids = tuple(built[k] for k in children.get(sid, ()) if k in built and k not in top_info)
        missing_parent, in_loop = top_info.get(sid, (None, False))
        built[sid] = LineageNode(by_id[sid], _kind(by_id[sid]), depth, kids, missing_parent, in_loop)
    roots = tuple(built[t[0]] for t in tops if t[1] is None and not t[2])
    orphans = tuple(built[t[0]] for t in tops if t[1] is not None or t[2])
    return Lineage(roots, orphans)


def lineage_from_cache(cache: InsightCache) -> Lineage:
    """The tree of every session the statistics cache holds (titles, status and fork turns included)."""
    return build_lineage(SessionInfo.from_summary(s) for s in cache.summaries())


def lineage_from_entries(entries: Iterable[ListedEntry]) -> Lineage:
    """The tree from a listing alone (no titles, no fork turns): good session rows only."""
    return build_lineage(SessionInfo.from_entry(e) for e in entries if e.kind == ListedEntry.SESSION)


# ---------------------------------------------------------------- compare with parent


@dataclass(frozen=True, slots=True)
class ToolUse:
    name: str
    error: bool


@dataclass(frozen=True, slots=True)
class TurnDigest:
    """One turn as a side-by-side cell: the prompt, the replies, the tools, and its numbers."""

    turn: Any
    start_seq: int
    reason: str | None  # None: the turn is still open
    prompt: str  # the human prompt, on one line (cut at PROMPT_CHARS)
    replies: tuple[str, ...]  # assistant text blocks (each cut at DIGEST_TEXT_CHARS)
    tools: tuple[ToolUse, ...]
    steps: int
    tokens: Tokens
    duration_ms: int


@dataclass(frozen=True, slots=True)
class ForkComparison:
    """A fork beside its parent.  ``shared_count`` events of the inherited prefix are identical in
    both logs (== ``seed_length`` unless one of them was rewritten since, e.g. repaired);
    ``parent_after``/``fork_after`` are each side's turns after the fork point."""

    seed_length: int
    shared_count: int
    shared_turns: int  # turns completed inside the identical prefix
    fork_turn: int | None  # the last turn completed inside the prefix (the "fork after turn N")
    parent_after: tuple[TurnDigest, ...]
    fork_after: tuple[TurnDigest, ...]
    parent_events_after: int
    fork_events_after: int

    @property
    def identical_prefix(self) -> bool:
        return self.shared_count == self.seed_length


def _pieces(records: Sequence[dict[str, Any]], stop: int) -> Iterator[dict[str, Any] | PackedRun]:
    if isinstance(records, EventTable):
        yield from records.segments(0, stop)
        return
    for i in range(min(stop, len(records))):
        yield records[i]


def common_prefix(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]], limit: int) -> int:
    """How many leading events (at most ``limit``) the two logs hold identically.

    Walked item by item: two runs are compared whole when they line up (a dataclass compare of their
    packed fields), cut to the shorter when their boundaries differ, and member by member only where
    they differ; so a 200k-event prefix costs a few thousand compares, not 200k dicts.
    """
    ia, ib = _pieces(a, limit), _pieces(b, limit)
    pa, pb = next(ia, None), next(ib, None)
    n = 0
    while pa is not None and pb is not None and n < limit:
        if type(pa) is PackedRun and type(pb) is PackedRun:
            k = min(len(pa), len(pb), limit - n)
            ha, hb = pa.sub(0, k), pb.sub(0, k)
            if ha != hb:
                j = 0
                while j < k and ha.member(j) == hb.member(j):
                    j += 1
                return n + j
            n += k
            pa = pa.sub(k, len(pa)) if k < len(pa) else next(ia, None)
            pb = pb.sub(k, len(pb)) if k < len(pb) else next(ib, None)
            continue
        ra = pa.member(0) if type(pa) is PackedRun else pa
        rb = pb.member(0) if type(pb) is PackedRun else pb
        if ra != rb:
            return n
        n += 1
        pa = pa.sub(1, len(pa)) if type(pa) is PackedRun and len(pa) > 1 else next(ia, None)
        pb = pb.sub(1, len(pb)) if type(pb) is PackedRun and len(pb) > 1 else next(ib, None)
    return n


@dataclass(slots=True)
class _Digest:
    turn: Any
    start_seq: int
    reason: str | None = None
    prompt: str = ""
    replies: list[str] = field(default_factory=list)
    tools: list[ToolUse] = field(default_factory=list)


def _scalars(records: Sequence[dict[str, Any]], start: int) -> Iterator[tuple[int, dict[str, Any]]]:
    if isinstance(records, EventTable):
        yield from records.scalars(start)
        return
    for i in range(start, len(records)):
        rec = records[i]
        if type(rec) is dict:
            yield i, rec


def turn_digests(events: EventLog | Sequence[dict[str, Any]], start: int = 0) -> tuple[TurnDigest, ...]:
    """The turns that start at or after event ``start``, as side-by-side cells (runs of deltas skipped)."""
    records = table_of_log(events)
    digests: list[_Digest] = []
    cur: _Digest | None = None
    names: dict[Any, str] = {}
    for i, rec in _scalars(records, start):
        etype = rec.get("type")
        data = rec.get("data")
        if etype == EventType.TURN_START:
            seq = rec.get("seq")
            cur = _Digest(get_path(data, "turn"), seq if type(seq) is int else i)
            digests.append(cur)
        elif cur is None:
            continue
        elif etype == EventType.TURN_END:
            kind = get_path(data, "reason", "kind")
            cur.reason = str(kind) if kind is not None else "ended"
            cur = None
        elif etype == EventType.USER_MESSAGE:
            if not cur.prompt and get_path(data, "source", "kind") == "user" and type(rec.get("surfaceOp")) is not dict:
                cur.prompt = one_line(content_text(get_path(data, "content")), PROMPT_CHARS)
        elif etype == EventType.ASSISTANT_MESSAGE:
            content = get_path(data, "message", "content")
            for block in content if type(content) is list else ():
                if type(block) is not dict:
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                    text = block["text"]
                    cur.replies.append(text if len(text) <= DIGEST_TEXT_CHARS else text[: DIGEST_TEXT_CHARS - 1] + "…")
                elif block.get("type") == "tool-call" and isinstance(block.get("name"), str):
                    try:
                        names[block.get("id")] = block["name"]
                    except TypeError:
                        pass
        elif etype == EventType.TOOL_RESULT and type(rec.get("surfaceOp")) is not dict:
            msg = get_path(data, "message")
            blocks = get_path(msg, "content")
            first = blocks[0] if type(blocks) is list and blocks and type(blocks[0]) is dict else {}
            call_id = get_path(msg, "source", "callId") or first.get("toolCallId")
            try:
                name = names.get(call_id, "(unknown tool)")
            except TypeError:
                name = "(unknown tool)"
            cur.tools.append(ToolUse(name, first.get("isError") is True or get_path(data, "error") is not None))
        elif etype == EventType.TOOL_CALL:
            try:
                names[get_path(data, "callId")] = str(get_path(data, "name"))
            except TypeError:
                pass
    tail: Sequence[dict[str, Any]]
    if start == 0:
        tail = records
    elif isinstance(records, EventTable):
        tail = records.between(start, len(records))  # shares records and runs: nothing is expanded
    else:
        tail = records[start:]
    numbers = {t.start_seq: t for t in fold_stats(tail).per_turn}
    out = []
    for d in digests:
        t = numbers.get(d.start_seq)
        out.append(
            TurnDigest(
                d.turn, d.start_seq, d.reason, d.prompt, tuple(d.replies), tuple(d.tools),
                t.steps if t else 0, t.tokens if t else Tokens(), t.duration_ms if t else 0,
            )
        )  # fmt: skip
    return tuple(out)


def compare_with_parent(
    parent_log: EventLog | Sequence[dict[str, Any]], fork_log: EventLog | Sequence[dict[str, Any]], seed_length: int
) -> ForkComparison:
    """The fork beside its parent: the shared prefix (count, turns) and each side's turns after the fork point.

    ``seed_length`` is the fork's header value: its first ``seed_length`` events were the parent's
    (the fork's own ``session/end-seed`` marker follows them and is no turn).
    """
    parent = table_of_log(parent_log)
    fork = table_of_log(fork_log)
    seed = max(0, int(seed_length))
    shared = common_prefix(parent, fork, seed)
    shared_turns = 0
    fork_turn: int | None = None
    for _i, rec in _scalars(fork, 0):
        if _i >= shared:
            break
        if rec.get("type") == EventType.TURN_END:
            shared_turns += 1
            t = get_path(rec, "data", "turn")
            fork_turn = t if type(t) is int else fork_turn
    return ForkComparison(
        seed_length=seed,
        shared_count=shared,
        shared_turns=shared_turns,
        fork_turn=fork_turn,
        parent_after=turn_digests(parent, seed),
        fork_after=turn_digests(fork, seed),
        parent_events_after=max(0, len(parent) - seed),
        fork_events_after=max(0, len(fork) - seed),
    )


__all__ = [
    "FORK",
    "ROOT",
    "SUBAGENT",
    "ForkComparison",
    "Lineage",
    "LineageNode",
    "SessionInfo",
    "ToolUse",
    "TurnDigest",
    "build_lineage",
    "common_prefix",
    "compare_with_parent",
    "lineage_from_cache",
    "lineage_from_entries",
    "turn_digests",
]
