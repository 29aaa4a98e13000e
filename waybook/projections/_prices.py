"""Prices as data: a model's rates per million tokens, and what one request's tokens cost at them.

A price table is anything with `rates(model, at)`: the rates for a model at an instant (prices change
over time), or None for a model it does not know. `waybook.prices.GenaiPrices` reads Pydantic's
maintained genai-prices table; `FixedPrices` is a table given by hand (tests, a private price list).
`price` is pure arithmetic on Decimals, so the same tokens and rates always cost the same.

The arithmetic is genai-prices' own: a rate may have long-context tiers, decided by the request's whole
input (uncached, cache read and cache write), and a tier once crossed prices every token of that
category; a category without a rate of its own falls back to the next broader one (the hour-long cache
writes to the cache writes, cache writes and reads to plain input), as genai-prices decomposes usage.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Final, Protocol

import attrs

from waybook.projections._tokens import Tokens, added

MILLION: Final = Decimal(1_000_000)


@attrs.frozen
class Rate:
    """USD per million tokens: `base`, or the price of the highest tier whose `start` the request's whole
    input exceeds (`tiers`: (start, price) pairs, ascending)."""

    base: Decimal
    tiers: tuple[tuple[int, Decimal], ...] = ()

    def at(self, input_tokens: int) -> Decimal:
        for start, price in reversed(self.tiers):
            if input_tokens > start:
                return price
        return self.base


@attrs.frozen
class Rates:
    """A model's rates. A missing cache rate means the tokens are charged as the next broader category."""

    input: Rate
    output: Rate
    cache_read: Rate | None = None
    cache_write: Rate | None = None
    cache_write_1h: Rate | None = None
    source: str = ""
    """Where the rates come from (the table and the model it matched), for the report."""


class PriceTable(Protocol):
    """Rates by model and instant. `name` says which table (and version) it is."""

    @property
    def name(self) -> str: ...

    def rates(self, model: str, at: datetime) -> Rates | None:
        """The rates of `model` at `at`, or None when the table has no price for it."""
        ...


@attrs.frozen
class FixedPrices:
    """A price table given as data: model name -> rates, the same at every instant."""

    table: Mapping[str, Rates]
    name: str = "fixed prices"

    def rates(self, model: str, at: datetime) -> Rates | None:
        return self.table.get(model)


@attrs.frozen
class Cost:
    """USD by category; `cache_write` includes the hour-long writes."""

    input: Decimal = Decimal(0)
    output: Decimal = Decimal(0)
    cache_read: Decimal = Decimal(0)
    cache_write: Decimal = Decimal(0)

    @property
    def total(self) -> Decimal:
        return self.input + self.output + self.cache_read + self.cache_write

    def __add__(self, other: Cost) -> Cost:
        return added(self, other)

    def as_json(self) -> dict[str, float]:
        return {
            "input": float(self.input),
            "output": float(self.output),
            "cache_write": float(self.cache_write),
            "cache_read": float(self.cache_read),
            "total": float(self.total),
        }


def price(tokens: Tokens, rates: Rates) -> Cost:
    """What one request's `tokens` cost at `rates` (per request: tiers look at this request's input)."""
    whole = tokens.input_with_cache
    write = rates.cache_write or rates.input
    hour = rates.cache_write_1h or write
    read = rates.cache_read or rates.input
    standard_writes = tokens.cache_write - tokens.cache_write_1h
    return Cost(  # each category divided on its own, as genai-prices does: the same Decimal digits
        input=tokens.input * rates.input.at(whole) / MILLION,
        output=tokens.output * rates.output.at(whole) / MILLION,
        cache_read=tokens.cache_read * read.at(whole) / MILLION,
        cache_write=standard_writes * write.at(whole) / MILLION
        + tokens.cache_write_1h * hour.at(whole) / MILLION,
    )
