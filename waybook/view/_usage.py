"""What a session page says each turn cost, and what its timeline of tokens, latency and cost shows.

A turn is priced as `waybook stats` and `waybook stats --by` price it (`projections.usage_entries`: each
request at its model's rates at its own timestamp, every branch counted), from the price table the
caller passes: `installed_prices()` is genai-prices' table when the `prices` extra is installed, and
None otherwise, when the page shows tokens only and says why. A model the table does not know is named
as unpriced, never priced as zero. Pure functions of records, nodes and the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from functools import cache
from typing import Any

from waybook.model import Record
from waybook.projections import Cost, PriceTable, Tokens, tokens_of, usage_entries

TURN_TOKENS = ("input", "output", "cache_read", "cache_write")
"""The token categories a turn's header and the timeline show."""
TIMELINE_BARS = 400
"""The most bars a page's timeline draws: past that, each bar is a run of consecutive turns."""
NO_PRICES = "no price table: pip install 'waybook[prices]' to show what each turn cost"


def installed_prices() -> PriceTable | None:
    """genai-prices' table (`waybook.prices.GenaiPrices`), or None when the `prices` extra is missing."""
    from waybook.prices import GenaiPrices, PricesMissingError

    try:
        return GenaiPrices()
    except PricesMissingError:
        return None


@cache
def shared_prices() -> PriceTable | None:
    """`installed_prices()`, read once for a process that makes many pages (`waybook serve`): the table
    is the installed package's, the same for every page."""
    return installed_prices()


def usage_data(
    records: Sequence[Record], nodes: Iterable[dict[str, Any]], *, prices: PriceTable | None
) -> dict[str, Any]:
    """Each assistant turn's tokens by category (`tokens` on its node) and, priced, its cost (`cost`, in
    USD); the session's total and each model's requests, tokens and cost. The page's timeline is drawn
    from the turns' `tokens`, `latency` and `cost`."""
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
    for node in nodes:
        if node["role"] != "assistant":
            continue
        turn = by_record.get(node["id"])
        if turn is not None and turn.cost is not None:
            node["cost"] = float(turn.cost.total)
        if (tokens := tokens_of(node.get("usage") or {})) is not None:
            node["tokens"] = {key: tokens.as_json()[key] for key in TURN_TOKENS}
    return {
        "timeline": timeline(nodes),
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
    }


def timeline(nodes: Iterable[dict[str, Any]], *, bars: int = TIMELINE_BARS) -> list[dict[str, Any]]:
    """The bars of a page's timeline: each assistant turn with tokens or a latency, in seq order, or past
    `bars` turns, runs of consecutive turns (tokens and cost summed, the slowest latency), so a long
    session draws as many bars as a short one. `spent` is the cost up to the bar's last turn."""
    turns = [
        n
        for n in nodes
        if n["role"] == "assistant" and (n.get("tokens") is not None or n.get("latency") is not None)
    ]
    size = max(1, -(-len(turns) // bars))
    drawn: list[dict[str, Any]] = []
    spent: float | None = None
    for start in range(0, len(turns), size):
        run = turns[start : start + size]
        bar: dict[str, Any] = {
            "first": run[0]["id"],
            "seq": [run[0]["seq"], run[-1]["seq"]],
            "at": run[0]["at"],
            "model": run[0].get("model"),
            "turns": len(run),
            "input": 0,
            "output": 0,
            "cache_read": 0,
            "latency": None,
            "cost": None,
        }
        for turn in run:
            if (tokens := turn.get("tokens")) is not None:
                bar["input"] += tokens["input"] + tokens["cache_read"] + tokens["cache_write"]
                bar["output"] += tokens["output"]
                bar["cache_read"] += tokens["cache_read"]
            if turn.get("latency") is not None:
                bar["latency"] = max(bar["latency"] or 0.0, turn["latency"])
            if turn.get("cost") is not None:
                bar["cost"] = (bar["cost"] or 0.0) + turn["cost"]
                spent = (spent or 0.0) + turn["cost"]
        bar["spent"] = spent
        drawn.append(bar)
    return drawn
