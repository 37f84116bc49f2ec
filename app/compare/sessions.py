"""Two sessions side by side: prompt alignment, per-pair differences, and the text and JSON of it.

See the package docstring for why turns are aligned by prompt.  Everything here is a frozen value
computed in one pass over each log's turn digests; nothing reads a store.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.glossary import EVENT, noun, plural
from app.insight import Tokens, TurnDigest, fold_stats, turn_digests
from app.insight.lineage import common_prefix
from app.insight.stats import table_of_log
from persistence import EventLog

SAME = "same"  # a pair whose prompts, answers and tools all match
CHANGED = "changed"  # same prompt, different answer or tools
REPLACED = "replaced"  # different prompts at the same place of both sessions
ONLY_A = "only-a"  # a turn only session A ran
ONLY_B = "only-b"
TEXT_PROMPT_CHARS = 90  # characters of a prompt on one line of the text output


@dataclass(frozen=True, slots=True)
class ToolDelta:
    """A tool one side called more often than the other in an aligned pair (``a``/``b``: its calls there)."""

    name: str
    a: int
    b: int

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.name, "a": self.a, "b": self.b}


@dataclass(frozen=True, slots=True)
class AlignedTurn:
    """One row of the comparison: a turn of A beside a turn of B (either may be missing)."""

    a: TurnDigest | None
    b: TurnDigest | None
    status: str  # SAME | CHANGED | REPLACED | ONLY_A | ONLY_B
    same_prompt: bool
    same_answer: bool
    tools: tuple[ToolDelta, ...]  # tools called a different number of times (empty: the same multiset)

    @property
    def same(self) -> bool:
        return self.status == SAME

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "samePrompt": self.same_prompt,
            "sameAnswer": self.same_answer,
            "a": _turn_json(self.a),
            "b": _turn_json(self.b),
            "toolsDiffer": [t.to_json() for t in self.tools],
        }


@dataclass(frozen=True, slots=True)
class SideInfo:
    """What the comparison says of one session as a whole."""

    label: str  # how the user named it (``PATH#ID``, a title)
    session_id: str
    events: int
    turns: int
    tokens: Tokens
    tool_calls: int
    active_ms: int

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "session": self.session_id,
            "events": self.events,
            "turns": self.turns,
            "tokens": _tokens_json(self.tokens),
            "toolCalls": self.tool_calls,
            "activeMs": self.active_ms,
        }


@dataclass(frozen=True, slots=True)
class SessionComparison:
    """Two sessions aligned by prompt.  ``first_difference`` indexes ``rows`` (None: every pair is the same)."""

    a: SideInfo
    b: SideInfo
    rows: tuple[AlignedTurn, ...]
    shared_events: int  # leading events both logs hold identically (a fork's inherited prefix, say)

    @property
    def first_difference(self) -> int | None:
        return next((i for i, r in enumerate(self.rows) if not r.same), None)

    @property
    def identical(self) -> bool:
        return self.first_difference is None and self.a.events == self.b.events == self.shared_events

    def counts(self) -> dict[str, int]:
        """How many rows have each status."""
        out = dict.fromkeys((SAME, CHANGED, REPLACED, ONLY_A, ONLY_B), 0)
        for r in self.rows:
            out[r.status] += 1
        return out


# ---------------------------------------------------------------- building


def _prompt_key(d: TurnDigest) -> str:
    """What makes two prompts "the same": their words, case and spacing aside."""
    return " ".join(d.prompt.split()).casefold()


def _tool_deltas(a: TurnDigest, b: TurnDigest) -> tuple[ToolDelta, ...]:
    ca, cb = Counter(t.name for t in a.tools), Counter(t.name for t in b.tools)
    names = sorted(set(ca) | set(cb), key=lambda n: (-abs(ca[n] - cb[n]), n))
    return tuple(ToolDelta(n, ca[n], cb[n]) for n in names if ca[n] != cb[n])


def _pair(a: TurnDigest, b: TurnDigest) -> AlignedTurn:
    same_prompt = _prompt_key(a) == _prompt_key(b)
    same_answer = a.replies == b.replies
    tools = _tool_deltas(a, b)
    errors_match = [t.error for t in a.tools] == [t.error for t in b.tools]
    if not same_prompt:
        status = REPLACED
    elif same_answer and not tools and errors_match and a.reason == b.reason:
        status = SAME
    else:
        status = CHANGED
    return AlignedTurn(a, b, status, same_prompt, same_answer, tools)


def align_turns(a: Sequence[TurnDigest], b: Sequence[TurnDigest]) -> tuple[AlignedTurn, ...]:
    """The turns of ``a`` and ``b`` aligned by prompt (see the package docstring)."""
    matcher = difflib.SequenceMatcher(None, [_prompt_key(d) for d in a], [_prompt_key(d) for d in b], autojunk=False)
    rows: list[AlignedTurn] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows.extend(_pair(a[i1 + k], b[j1 + k]) for k in range(i2 - i1))
            continue
        n = min(i2 - i1, j2 - j1) if op == "replace" else 0
        rows.extend(_pair(a[i1 + k], b[j1 + k]) for k in range(n))
        rows.extend(AlignedTurn(d, None, ONLY_A, False, False, ()) for d in a[i1 + n : i2])
        rows.extend(AlignedTurn(None, d, ONLY_B, False, False, ()) for d in b[j1 + n : j2])
    return tuple(rows)


def _side(label: str, session_id: str, log: EventLog | Sequence[dict[str, Any]]) -> tuple[SideInfo, tuple[TurnDigest, ...]]:
    stats = fold_stats(log)
    info = SideInfo(label, session_id, stats.events, stats.turns, stats.tokens, stats.tool_calls, stats.active_ms)
    return info, turn_digests(log)


def compare_sessions(
    a_log: EventLog | Sequence[dict[str, Any]],
    b_log: EventLog | Sequence[dict[str, Any]],
    *,
    a_id: str = "A",
    b_id: str = "B",
    a_label: str | None = None,
    b_label: str | None = None,
) -> SessionComparison:
    """Session A beside session B (their stored events: crash closers are not the session's work)."""
    a_info, a_turns = _side(a_label or a_id, a_id, a_log)
    b_info, b_turns = _side(b_label or b_id, b_id, b_log)
    ta, tb = table_of_log(a_log), table_of_log(b_log)
    shared = common_prefix(ta, tb, min(len(ta), len(tb)))
    return SessionComparison(a_info, b_info, align_turns(a_turns, b_turns), shared)


# ---------------------------------------------------------------- output


def _tokens_json(t: Tokens) -> dict[str, int]:
    return {
        "input": t.input,
        "output": t.output,
        "cacheRead": t.cache_read,
        "cacheWrite": t.cache_write,
        "reasoning": t.reasoning,
        "total": t.total,
    }


def _turn_json(d: TurnDigest | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {
        "turn": d.turn,
        "startSeq": d.start_seq,
        "reason": d.reason,
        "prompt": d.prompt,
        "replies": list(d.replies),
        "tools": [{"name": t.name, "error": t.error} for t in d.tools],
        "steps": d.steps,
        "tokens": _tokens_json(d.tokens),
        "durationMs": d.duration_ms,
    }


def comparison_json(c: SessionComparison) -> dict[str, Any]:
    """The comparison as JSON: both sides' totals, the aligned rows, the first difference."""
    first = c.first_difference
    return {
        "a": c.a.to_json(),
        "b": c.b.to_json(),
        "sharedEvents": c.shared_events,
        "identical": c.identical,
        "firstDifference": first,
        "counts": c.counts(),
        "rows": [r.to_json() for r in c.rows],
    }


def _num(n: int) -> str:
    return f"{n:,}"


def _duration(ms: int) -> str:
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(s), 60)
    return f"{m} min {s:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def _cut(text: str, n: int = TEXT_PROMPT_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _turn_no(d: TurnDigest | None) -> str:
    if d is None:
        return "—"
    return f"#{d.turn}" if d.turn is not None else "#?"


_MARK = {SAME: "=", CHANGED: "~", REPLACED: "≠", ONLY_A: "<", ONLY_B: ">"}
_WORDS = {
    SAME: "same",
    CHANGED: "same prompt, different run",
    REPLACED: "different prompts",
    ONLY_A: "only in A",
    ONLY_B: "only in B",
}


def comparison_text(c: SessionComparison) -> str:
    """A person's reading of the comparison: totals side by side, the first divergence, one line per row."""
    a, b = c.a, c.b
    w = max(len("session"), len(_num(a.tokens.total)), len(a.session_id), 12)
    lines = [
        f"A: {a.label}",
        f"B: {b.label}",
        "",
        f"{'':<14}{'A':<{w + 2}}B",
        f"{'session':<14}{a.session_id:<{w + 2}}{b.session_id}",
        f"{'events':<14}{_num(a.events):<{w + 2}}{_num(b.events)}",
        f"{'turns':<14}{_num(a.turns):<{w + 2}}{_num(b.turns)}",
        f"{'tool calls':<14}{_num(a.tool_calls):<{w + 2}}{_num(b.tool_calls)}",
        f"{'tokens':<14}{_num(a.tokens.total):<{w + 2}}{_num(b.tokens.total)}",
        f"{'  input':<14}{_num(a.tokens.input):<{w + 2}}{_num(b.tokens.input)}",
        f"{'  output':<14}{_num(a.tokens.output):<{w + 2}}{_num(b.tokens.output)}",
        f"{'active time':<14}{_duration(a.active_ms):<{w + 2}}{_duration(b.active_ms)}",
        "",
    ]
    if c.shared_events:
        lines.append(f"The first {plural(c.shared_events, EVENT)} {noun(c.shared_events, 'is')} identical in both logs.")
    first = c.first_difference
    if c.identical:
        lines.append("The two sessions are identical.")
    elif first is None:
        lines.append("Every turn is the same in both (their logs differ outside the turns).")
    else:
        r = c.rows[first]
        turn = r.a if r.a is not None else r.b
        where = f"turn {_turn_no(r.a)} of A / {_turn_no(r.b)} of B" if r.a and r.b else f"turn {_turn_no(turn)}"
        lines.append(f"First difference: row {first + 1}, {where}: {_WORDS[r.status]}.")
    counts = c.counts()
    lines.append(
        f"{counts[SAME]} same, {counts[CHANGED]} changed, {counts[REPLACED]} with different prompts, "
        f"{counts[ONLY_A]} only in A, {counts[ONLY_B]} only in B."
    )
    lines.append("")
    lines.append("    A      B      tokens A → B        prompt")
    for r in c.rows:
        d = r.a if r.a is not None else r.b
        assert d is not None  # a row has at least one side
        ta = _num(r.a.tokens.total) if r.a is not None else "—"
        tb = _num(r.b.tokens.total) if r.b is not None else "—"
        prompt = _cut(d.prompt or "(no prompt)")
        lines.append(f"{_MARK[r.status]}   {_turn_no(r.a):<6} {_turn_no(r.b):<6} {ta + ' → ' + tb:<19} {prompt}")
        if r.status == REPLACED and r.b is not None:
            lines.append(f"{'':<22}{'':<19}  B: {_cut(r.b.prompt or '(no prompt)')}")
        if r.a is not None and r.b is not None and not r.same_answer and r.same_prompt:
            lines.append(f"{'':<42}the answers differ")
        for t in r.tools:
            lines.append(f"{'':<42}tool {t.name}: {t.a} call(s) in A, {t.b} in B")
    return "\n".join(lines) + "\n"


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
]
