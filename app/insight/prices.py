"""The optional price table per model, and what tokens cost by it: a cost only where a price exists.

Why a file the user edits (``prices.json`` in the data folder) and no built-in prices: providers
change prices and bill differently (cache reads, cache writes), and a number SessionScope made up
would be trusted.  Without a table the window shows tokens only.  A model whose price lacks a bucket
the session used (cache writes priced nowhere, say) is *unpriced*, never priced at zero.

The file::

    {"currency": "USD",
     "models": {"deepseek/deepseek-chat": {"input": 0.27, "output": 1.10, "cacheRead": 0.07, "cacheWrite": 0.27},
                "gpt-4o": {"input": 2.5, "output": 10}}}

Prices are per million tokens.  A key is ``provider/model`` or a bare model name (matched when no
``provider/model`` key names the pair).  ``input`` prices uncached input tokens (session-model §6.4).

May import: the standard library and ``app.paths``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.paths import data_dir

PRICES_FILE_NAME = "prices.json"
TOKENS_PER_PRICE_UNIT = 1_000_000  # prices are per million tokens
DEFAULT_CURRENCY = "USD"
_BUCKETS = (("input", "input"), ("output", "output"), ("cacheRead", "cache_read"), ("cacheWrite", "cache_write"))


class PriceTableError(ValueError):
    """The price file exists but cannot be used (not JSON, or a price that is not a non-negative number)."""


def prices_path() -> str:
    """Where the price table lives: ``prices.json`` in the user data folder."""
    return os.path.join(data_dir(), PRICES_FILE_NAME)


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """Per-million-token prices of one model; None: that bucket has no price."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, input: int, output: int, cache_read: int, cache_write: int) -> float | None:
        """What these tokens cost, or None when a bucket with tokens has no price."""
        total = 0.0
        for count, price in (
            (input, self.input),
            (output, self.output),
            (cache_read, self.cache_read),
            (cache_write, self.cache_write),
        ):
            if count:
                if price is None:
                    return None
                total += count * price / TOKENS_PER_PRICE_UNIT
        return total

    def to_json(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for wire, attr in _BUCKETS:
            v = getattr(self, attr)
            if v is not None:
                out[wire] = v
        return out


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model key (``provider/model`` or a bare model name) in one currency."""

    currency: str = DEFAULT_CURRENCY
    models: Mapping[str, ModelPrice] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.models

    def price_of(self, provider: str, model: str) -> ModelPrice | None:
        """The price of ``provider/model``, else of the bare ``model``; None when neither is listed."""
        if provider:
            hit = self.models.get(f"{provider}/{model}")
            if hit is not None:
                return hit
        return self.models.get(model)

    def cost(self, provider: str, model: str, input: int, output: int, cache_read: int, cache_write: int) -> float | None:
        """What one model's tokens cost; None when the model or a used bucket has no price."""
        price = self.price_of(provider, model)
        return None if price is None else price.cost(input, output, cache_read, cache_write)

    def to_json(self) -> dict[str, Any]:
        return {"currency": self.currency, "models": {k: p.to_json() for k, p in sorted(self.models.items())}}

    @classmethod
    def from_json(cls, data: Any) -> PriceTable:
        """A table from its file's JSON (``PriceTableError`` says what is wrong)."""
        if not isinstance(data, dict):
            raise PriceTableError("the price table must be a JSON object")
        currency = data.get("currency", DEFAULT_CURRENCY)
        if not isinstance(currency, str) or not currency:
            raise PriceTableError("currency must be a non-empty string")
        models = data.get("models", {})
        if not isinstance(models, dict):
            raise PriceTableError("models must be an object of model -> prices")
        out: dict[str, ModelPrice] = {}
        for key, prices in models.items():
            if not isinstance(prices, dict):
                raise PriceTableError(f"the prices of {key!r} must be an object")
            values: dict[str, float | None] = {}
            for wire, attr in _BUCKETS:
                v = prices.get(wire)
                if v is None:
                    values[attr] = None
                    continue
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                    raise PriceTableError(f"{key!r}: {wire} must be a non-negative number (per million tokens)")
                values[attr] = float(v)
            out[key] = ModelPrice(**values)
        return cls(currency, out)


def load_prices(path: str | None = None) -> PriceTable:
    """The price table at ``path`` (default ``prices_path()``); an absent file is an empty table."""
    path = path or prices_path()
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return PriceTable()
    except OSError as err:
        raise PriceTableError(f"cannot read {path}: {err}") from err
    try:
        data = json.loads(text)
    except ValueError as err:
        raise PriceTableError(f"{path} is not JSON: {err}") from err
    return PriceTable.from_json(data)


def save_prices(table: PriceTable, path: str | None = None) -> str:
    """Write the table atomically (a temporary file in the same folder, fsync, rename); returns the path."""
    path = path or prices_path()
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(table.to_json(), f, indent=2, sort_keys=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


@dataclass(frozen=True, slots=True)
class Cost:
    """A cost in the table's currency: ``amount`` covers the priced models only; ``unpriced`` names
    the models whose tokens have no price (then the amount is a lower bound, and says so)."""

    amount: float
    currency: str
    unpriced: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.unpriced


def cost_of(table: PriceTable | None, usage: Iterable[tuple[str, str, int, int, int, int]]) -> Cost | None:
    """The cost of (provider, model, input, output, cache read, cache write) rows; None when nothing
    in them has a price (no table, or no model of theirs is priced)."""
    if table is None or table.empty:
        return None
    amount = 0.0
    priced = False
    unpriced: list[str] = []
    for provider, model, i, o, cr, cw in usage:
        if not (i or o or cr or cw):
            continue
        c = table.cost(provider, model, i, o, cr, cw)
        if c is None:
            key = f"{provider}/{model}" if provider else model
            if key not in unpriced:
                unpriced.append(key)
            continue
        priced = True
        amount += c
    if not priced:
        return None
    return Cost(amount, table.currency, tuple(unpriced))


__all__ = [
    "PRICES_FILE_NAME",
    "Cost",
    "ModelPrice",
    "PriceTable",
    "PriceTableError",
    "cost_of",
    "load_prices",
    "prices_path",
    "save_prices",
]
