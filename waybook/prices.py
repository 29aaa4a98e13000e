"""Model prices from genai-prices, Pydantic's maintained price table (the `prices` extra).

`GenaiPrices()` is a `waybook.projections.PriceTable` over the table genai-prices ships inside its
package: no network, the same answer every run for the same installed version (`name` says which). It
matches a model name as genai-prices does (its own match rules, the provider guessed from the name), takes
the prices in force at the request's instant, and hands back the token rates: input, output, cache read,
cache write (5-minute) and the hour-long cache write, each with its long-context tiers. The arithmetic is
`waybook.projections.price`, pure. Batch, priority and "fast" price variants are not applied: every
request is priced at the standard rates.

Without genai-prices installed, `GenaiPrices()` raises PricesMissingError, naming the extra.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from waybook.projections import Rate, Rates

EXTRA: Final = "prices"
"""The extra that installs genai-prices: pip install 'waybook[prices]'."""


class PricesMissingError(ImportError):
    """A price lookup was asked for without genai-prices installed."""


def _genai() -> Any:
    try:
        import genai_prices
        import genai_prices.data_snapshot
    except ImportError:
        msg = (
            "pricing needs Pydantic's genai-prices table (module 'genai_prices' is not installed): "
            f"pip install 'waybook[{EXTRA}]'"
        )
        raise PricesMissingError(msg) from None
    return genai_prices


def _rate(value: Any) -> Rate | None:
    if value is None:
        return None
    tiers = getattr(value, "tiers", None)
    if tiers is None:
        return Rate(value)
    return Rate(value.base, tuple((tier.start, tier.price) for tier in tiers))


class GenaiPrices:
    """Rates by model and instant from the genai-prices table installed (no network)."""

    def __init__(self) -> None:
        genai = _genai()
        self._snapshot = genai.data_snapshot.get_snapshot()
        self.name: str = f"genai-prices {genai.__version__}"
        self._found: dict[str, Any] = {}
        self._rates: dict[int, tuple[Any, Rates | None]] = {}

    def rates(self, model: str, at: datetime) -> Rates | None:
        """The rates of `model` at `at`; None when genai-prices has no model of that name."""
        if model not in self._found:
            try:
                self._found[model] = self._snapshot.find_provider_model(model, None, None, None)
            except LookupError:
                self._found[model] = None
        found = self._found[model]
        if found is None:
            return None
        provider, info = found
        prices = info.get_prices(at)
        # The table's price objects live as long as its snapshot, which this table holds.
        cached = self._rates.get(id(prices))
        if cached is None or cached[0] is not prices:
            cached = (prices, self._convert(prices, f"{self.name}: {provider.id}/{info.id}"))
            self._rates[id(prices)] = cached
        return cached[1]

    @staticmethod
    def _convert(prices: Any, source: str) -> Rates | None:
        input_rate, output_rate = _rate(prices.input_mtok), _rate(prices.output_mtok)
        if input_rate is None or output_rate is None:
            return None  # not a text model's price (an image, audio or embedding model)
        return Rates(
            input=input_rate,
            output=output_rate,
            cache_read=_rate(prices.cache_read_mtok),
            cache_write=_rate(getattr(prices, "cache_write_5m_mtok", None) or prices.cache_write_mtok),
            cache_write_1h=_rate(prices.cache_write_1h_mtok),
            source=source,
        )


__all__ = ["EXTRA", "GenaiPrices", "PricesMissingError"]
