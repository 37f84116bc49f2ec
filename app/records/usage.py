"""Token usage: the one value every reader of usage samples shares (timeline rows, statistics, caches, exports).

Why one type: the timeline and the statistics each had their own (``Usage``, ``Tokens``) with the
same buckets and the same defensive read; two copies of the rule "a non-number counts 0" can drift.
A sample is the spec's ``TokenUsage`` (session-model §6.4): disjoint buckets, ``inputTokens`` is
uncached input.  Stdlib, ``app.records.summaries`` and the public ``persistence`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.records.summaries import compact_count
from persistence import TokenUsage


def _num(v: Any) -> int:
    """A token count as an int (JSON numbers only; anything else counts 0)."""
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token buckets of one or more usage samples; ``input`` is uncached input (buckets are disjoint)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0  # informational: part of ``output``, never added to ``total``

    @classmethod
    def from_usage(cls, usage: TokenUsage | Any) -> Tokens | None:
        """A ``TokenUsage`` JSON object as tokens (None when it is not an object)."""
        if not isinstance(usage, dict):
            return None
        return cls(
            _num(usage.get("inputTokens")),
            _num(usage.get("outputTokens")),
            _num(usage.get("cacheReadTokens")),
            _num(usage.get("cacheWriteTokens")),
            _num(usage.get("reasoningTokens")),
        )

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.reasoning + other.reasoning,
        )

    @property
    def total(self) -> int:
        """Every token billed: input + output + cache read + cache write."""
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def prompt(self) -> int:
        """Prompt-side pressure of a request: uncached input + cache read + cache write."""
        return self.input + self.cache_read + self.cache_write

    def short(self) -> str:
        """The row text: input and output, and the cache buckets when there are any."""
        parts = [f"in {compact_count(self.input)}", f"out {compact_count(self.output)}"]
        if self.cache_read:
            parts.append(f"cache {compact_count(self.cache_read)}")
        if self.cache_write:
            parts.append(f"cache-write {compact_count(self.cache_write)}")
        return " · ".join(parts)

    def to_json(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "reasoning": self.reasoning,
        }

    @classmethod
    def from_json(cls, data: Any) -> Tokens:
        """The inverse of ``to_json`` (missing keys are 0)."""
        d = data if isinstance(data, dict) else {}
        return cls(
            _num(d.get("input")),
            _num(d.get("output")),
            _num(d.get("cacheRead")),
            _num(d.get("cacheWrite")),
            _num(d.get("reasoning")),
        )


NO_TOKENS = Tokens()
