"""``sessionscope stats PATH [ID]``: the numbers of the window's Stats tab, for a terminal or a script.

The same fold as the Stats tab (``app.insight.fold_stats`` over the session's stored events, crash
closers left out) and the same price table (``app.insight.load_prices``: the cost appears when the
user has one).  Text groups the numbers as the tab does (activity, time, tokens, models, tools);
``--json`` is ``SessionStats.to_summary()`` (what the root cache keeps) plus the cost and per-turn rows.

May import ``app.insight``, the standard library and the public engine; never Qt.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from app.glossary import plural
from app.insight import Cost, PriceTable, SessionStats, cost_of, fold_stats, load_prices
from app.insight.prices import PriceTableError
from persistence import CoordinatedPersistence, not_found


@dataclass(frozen=True, slots=True)
class StatsReport:
    session_id: str
    status: str
    stats: SessionStats
    cost: Cost | None
    model_costs: tuple[Cost | None, ...]
    priced: bool  # a price table exists (so "no cost" means "no price for these models")


def _prices() -> PriceTable | None:
    try:
        table = load_prices()
    except (PriceTableError, OSError):
        return None  # a broken table is the window's to explain (Settings > Model prices); the numbers stand
    return None if table.empty else table


async def stats(store: CoordinatedPersistence, args: argparse.Namespace) -> StatsReport:
    view = await store.view(args.id)
    if view.status == "missing":
        raise not_found(args.id)
    events: Any = view.stored
    if not view.readable and (prefix := await store.readable_prefix(args.id)) is not None:
        events = prefix.events  # a refused log: the numbers of its readable part (issue 24 item 5)
    numbers = fold_stats(events)
    prices = _prices()
    rows = [
        (m.provider, m.model, m.tokens.input, m.tokens.output, m.tokens.cache_read, m.tokens.cache_write) for m in numbers.models
    ]
    return StatsReport(
        args.id, view.status, numbers, cost_of(prices, rows), tuple(cost_of(prices, [r]) for r in rows), prices is not None
    )


def _count(n: int) -> str:
    return f"{n:,}"


def _rate(errors: int, calls: int) -> str:
    return f"{100 * errors / calls:.0f} %" if calls else "–"


def _duration(ms: float) -> str:
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(round(s), 60)
    if m < 60:
        return f"{m} min {sec:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def _money(cost: Cost | None) -> str:
    if cost is None:
        return "–"
    amount = f"{cost.amount:.2f}" if cost.amount >= 1 else f"{cost.amount:.4f}"
    return f"{amount} {cost.currency}" + ("" if cost.complete else f" (no price for {', '.join(cost.unpriced)})")


def _turn(s: SessionStats, slot: int) -> str:
    t = s.per_turn[slot].turn
    return str(t) if t is not None else f"#{slot + 1}"


def stats_text(report: StatsReport, _args: argparse.Namespace) -> str:
    s = report.stats
    durations = [t.duration_ms for t in s.per_turn]
    longest = max(range(len(durations)), key=durations.__getitem__) if durations else None
    sections: list[tuple[str, list[tuple[str, str]]]] = [
        (
            "Activity",
            [
                ("Events", _count(s.events)),
                ("Turns", _count(s.turns) + (f" ({s.open_turns} open)" if s.open_turns else "")),
                ("Steps", _count(s.steps)),
                ("Model calls", _count(s.model_calls)),
                ("Retries", _count(s.retries)),
                ("Tool calls", _count(s.tool_calls)),
                ("Tool errors", _count(s.tool_errors) + (f" ({_rate(s.tool_errors, s.tool_calls)})" if s.tool_calls else "")),
                ("Compactions", _count(s.compactions) + (f" ({s.compactions_failed} failed)" if s.compactions_failed else "")),
            ],
        ),
        (
            "Time",
            [
                ("Wall time (turns)", _duration(s.active_ms)),
                ("Span", _duration(s.span_ms)),
                ("Longest turn", "–" if longest is None else f"{_duration(durations[longest])} (turn {_turn(s, longest)})"),
                ("Mean turn", _duration(sum(durations) / len(durations)) if durations else "–"),
            ],
        ),
        (
            "Tokens",
            [
                ("Input", _count(s.tokens.input)),
                ("Output", _count(s.tokens.output)),
                ("Cache read", _count(s.tokens.cache_read)),
                ("Cache write", _count(s.tokens.cache_write)),
                *([("Reasoning", _count(s.tokens.reasoning) + " (part of the output)")] if s.tokens.reasoning else []),
                ("Total", _count(s.tokens.total)),
                ("Cost", _money(report.cost) if report.priced else "– (no price table: Settings > Model prices in the window)"),
            ],
        ),
    ]
    title = s.title or "Untitled session"
    lines = [f"{title} — {report.session_id} · {report.status}"]
    for name, pairs in sections:
        width = max(len(k) for k, _v in pairs)
        lines.append("")
        lines.append(name)
        lines += [f"  {k:<{width}}  {v}" for k, v in pairs]
    if s.models:
        lines += ["", "Models"]
        for m, c in zip(s.models, report.model_costs, strict=True):
            money = f"  {_money(c)}" if report.priced else ""
            lines.append(f"  {m.key}  {plural(m.calls, 'call')}  {_count(m.tokens.total)} tokens{money}")
    if s.tools:
        lines += ["", "Tools"]
        width = max(len(t.name) for t in s.tools)
        for t in s.tools:
            lines.append(
                f"  {t.name:<{width}}  {plural(t.calls, 'call')}  {plural(t.errors, 'error')}  {_rate(t.errors, t.calls)}"
            )
    return "\n".join(lines)


def _cost_json(cost: Cost | None) -> dict[str, Any] | None:
    return None if cost is None else {"amount": cost.amount, "currency": cost.currency, "unpriced": list(cost.unpriced)}


def stats_json(report: StatsReport) -> dict[str, Any]:
    s = report.stats
    return {
        "session": report.session_id,
        "status": report.status,
        **s.to_summary(),
        "cost": _cost_json(report.cost),
        "perTurn": [
            {
                "turn": t.turn,
                "startSeq": t.start_seq,
                "reason": t.reason,
                "steps": t.steps,
                "modelCalls": t.model_calls,
                "toolCalls": t.tool_calls,
                "toolErrors": t.tool_errors,
                "retries": t.retries,
                "tokens": t.tokens.to_json(),
                "durationMs": t.duration_ms,
            }
            for t in s.per_turn
        ],
    }


__all__ = ["StatsReport", "stats", "stats_json", "stats_text"]
