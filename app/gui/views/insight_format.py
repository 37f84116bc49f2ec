"""How the statistics views write numbers: counts, token breakdowns, durations and costs.

One module so the Stats tab, the dashboard, the lineage and the compare view say "1.2 M tokens" and
"≥ 0.42 USD" the same way.  A cost is only ever written from a ``Cost`` (a price table's answer);
without one there is no cost text at all, never a zero.

May import: ``app.insight`` (values) and ``views.charts`` (the axis formatters); no Qt.
"""

from __future__ import annotations

from app.gui.views.charts import value_text_count, value_text_ms
from app.insight import Cost, Tokens

TOKEN_KINDS = ("Input", "Output", "Cache read", "Cache write")  # the stacked series, in bucket order


def count(n: int) -> str:
    """12,345"""
    return f"{n:,}"


def duration(ms: int | float) -> str:
    return value_text_ms(float(ms))


def compact(n: int | float) -> str:
    """1.2k, 3.4M"""
    return value_text_count(float(n))


def token_values(t: Tokens) -> tuple[float, float, float, float]:
    """The four disjoint buckets (reasoning is part of output), in ``TOKEN_KINDS`` order."""
    return (float(t.input), float(t.output), float(t.cache_read), float(t.cache_write))


def tokens_breakdown(t: Tokens) -> str:
    """input 1,000 · output 200 · cache read 11,000 · cache write 145"""
    return f"input {t.input:,} · output {t.output:,} · cache read {t.cache_read:,} · cache write {t.cache_write:,}" + (
        f" (reasoning {t.reasoning:,} of the output)" if t.reasoning else ""
    )


def money(amount: float, currency: str) -> str:
    """Two decimals from 1 up, four below (a session of a cheap model costs fractions of a cent)."""
    return f"{amount:,.2f} {currency}" if amount >= 1 else f"{amount:.4f} {currency}"


def cost_text(cost: Cost | None) -> str:
    """The cost, "≥" when some models had no price; "" when nothing is priced."""
    if cost is None:
        return ""
    if cost.complete:
        return money(cost.amount, cost.currency)
    return f"≥ {money(cost.amount, cost.currency)}"


def cost_note(cost: Cost | None) -> str:
    """Which models the amount leaves out ("" when it covers every token)."""
    if cost is None or cost.complete:
        return ""
    return "no price for " + ", ".join(cost.unpriced)


def rate(errors: int, calls: int) -> str:
    return f"{100 * errors / calls:.0f} %" if calls else "–"


__all__ = [
    "TOKEN_KINDS",
    "compact",
    "cost_note",
    "cost_text",
    "count",
    "duration",
    "money",
    "rate",
    "token_values",
    "tokens_breakdown",
]
