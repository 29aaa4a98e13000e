"""What a session page says each turn cost, and the timeline of its tokens, latency and cost.

A turn is priced as `waybook stats` and `waybook stats --by` price it (`projections.usage_entries`: each
request at its model's rates at its own timestamp, every branch counted), from the price table the
caller passes: `installed_prices()` is genai-prices' table when the `prices` extra is installed, and
None otherwise, when the page shows tokens only and says why. A model the table does not know is named
as unpriced, never priced as zero. Pure functions of records, nodes and the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from waybook.model._records import Record
from waybook.projections import Cost, PriceTable, Tokens, tokens_of, usage_entries

NO_PRICES = "no price table: pip install 'waybook[prices]' to show what each turn cost"


def installed_prices() -> PriceTable | None:
    """genai-prices' table (`waybook.prices.GenaiPrices`), or None when the `prices` extra is missing."""
    from waybook.prices import GenaiPrices, PricesMissingError

    try:
        return GenaiPrices()
    except PricesMissingError:
        return None


def usage_data(
    records: Sequence[Record], nodes: Iterable[dict[str, Any]], *, prices: PriceTable | None
) -> dict[str, Any]:
    """Each priced turn's cost (`cost` on its node, in USD), the session's total by model, and the
    timeline: one point per assistant turn with its tokens, latency and cost, in seq order."""
    entries = usage_entries(records, prices=prices)
    by_record = {entry.record: entry for entry in entries}
    models: dict[str, dict[str, Any]] = {}
    total = Cost()
    priced = False
    for entry in entries:
        row = models.setdefault(
            entry.model, {"requests": 0, "cost": Decimal(0), "priced": True, "tokens": Tokens()}
        )
        row["requests"] += 1
        row["tokens"] += entry.tokens
        if entry.cost is None:
            row["priced"] = False
        else:
            row["cost"] += entry.cost.total
            total += entry.cost
            priced = True
    timeline = []
    for node in nodes:
        if node["role"] != "assistant":
            continue
        turn = by_record.get(node["id"])
        tokens = tokens_of(node.get("usage") or {})
        if turn is not None and turn.cost is not None:
            node["cost"] = float(turn.cost.total)
        if tokens is not None:
            node["tokens"] = tokens.as_json()
        if tokens is None and node.get("latency") is None:
            continue
        timeline.append(
            {
                "id": node["id"],
                "seq": node["seq"],
                "at": node["at"],
                "model": node.get("model"),
                "tokens": None if tokens is None else tokens.as_json(),
                "latency": node.get("latency"),
                "cost": node.get("cost"),
            }
        )
    return {
        "cost": {
            "prices": None if prices is None else prices.name,
            "note": NO_PRICES if prices is None else None,
            "total": float(total.total) if priced else None,
            "unpriced": sorted(model for model, row in models.items() if not row["priced"]),
            "models": {
                model: {
                    "requests": row["requests"],
                    "tokens": row["tokens"].as_json(),
                    "cost": float(row["cost"]) if row["priced"] else None,
                }
                for model, row in sorted(models.items())
            },
        },
        "timeline": timeline,
    }
