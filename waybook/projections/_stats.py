"""Session statistics: turns, tool calls, tokens by model and reply latency, per branch and in total.

A pure function of records. Tokens are what assistant turns recorded (`usage`); latency is what the
journal's timestamps show: the time from a reply's parent (the user turn or tool result it answers) to
the reply. Timestamps are the writers' clocks, so this is the latency the session saw, not a benchmark.
"""

from __future__ import annotations

import contextlib
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from waybook.model._records import AssistantMessage, Node, Record, ToolCallBlock, ToolResult, UserMessage
from waybook.projections._base import fold
from waybook.projections._harness import is_harness
from waybook.projections._tree import TreeProjection


@attrs.frozen
class Tally:
    """What a set of nodes (one branch, or the whole tree) holds."""

    turns: int
    """User messages."""
    replies: int
    """Assistant messages."""
    tool_calls: Mapping[str, int]
    """Tool name -> calls."""
    tool_errors: int
    tokens: Mapping[str, Mapping[str, int]]
    """Model -> usage key (input_tokens, output_tokens, ...) -> sum."""
    latency: Mapping[str, float] | None
    """p50, p90, p99 and max reply latency in seconds, where timestamps allow; None without replies."""
    harness: int = 0
    """Harness entries (`harness_kind`) left out of the counts above; 0 when they were counted."""

    def as_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "replies": self.replies,
            "tool_calls": dict(self.tool_calls),
            "tool_errors": self.tool_errors,
            "tokens": {model: dict(counts) for model, counts in self.tokens.items()},
            "latency_seconds": None if self.latency is None else dict(self.latency),
            "harness_entries": self.harness,
        }


@attrs.frozen
class BranchStats:
    leaf: str
    active: bool
    tally: Tally


@attrs.frozen
class SessionStats:
    records: int
    total: Tally
    branches: tuple[BranchStats, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "total": self.total.as_json(),
            "branches": [{"leaf": b.leaf, "active": b.active, **b.tally.as_json()} for b in self.branches],
        }


def _seconds(at: str) -> float:
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def tally(nodes: Iterable[Record], by_id: Mapping[str, Record], *, harness: bool = False) -> Tally:
    """What `nodes` hold; harness entries are left out and counted apart unless `harness`."""
    turns = replies = errors = hidden = 0
    calls: Counter[str] = Counter()
    tokens: dict[str, Counter[str]] = {}
    waits: list[float] = []
    for record in nodes:
        body = record.body
        if not harness and is_harness(body):
            hidden += 1
        elif isinstance(body, UserMessage):
            turns += 1
        elif isinstance(body, ToolResult):
            errors += body.is_error
        elif isinstance(body, AssistantMessage):
            replies += 1
            calls.update(b.name for b in body.content if isinstance(b, ToolCallBlock))
            counts = tokens.setdefault(body.model or "(unknown model)", Counter())
            for key, value in (body.usage or {}).items():
                if type(value) is int:
                    counts[key] += value
            parent = by_id.get(body.parent) if body.parent else None
            if parent is not None:
                # A timestamp that is not ISO 8601 (an imported oddity) gives no latency.
                with contextlib.suppress(ValueError):
                    waits.append(max(0.0, _seconds(record.at) - _seconds(parent.at)))
    ordered = sorted(waits)
    latency = (
        {
            "p50": statistics.median(ordered),
            "p90": _percentile(ordered, 0.90),
            "p99": _percentile(ordered, 0.99),
            "max": ordered[-1],
        }
        if ordered
        else None
    )
    return Tally(
        turns=turns,
        replies=replies,
        tool_calls=dict(sorted(calls.items())),
        tool_errors=errors,
        tokens={model: dict(sorted(c.items())) for model, c in sorted(tokens.items()) if c},
        latency=latency,
        harness=hidden,
    )


def session_stats(records: Sequence[Record], *, harness: bool = False) -> SessionStats:
    """Statistics of every node of `records`, and of each branch (root-to-leaf path) on its own; harness
    entries (a Claude Code caveat, say) are no turns, and are counted apart, unless `harness`."""
    tree = fold(TreeProjection(), records)
    nodes = [r for r in records if isinstance(r.body, Node)]
    by_id = {r.id: r for r in nodes}
    branches = tuple(
        BranchStats(
            leaf,
            leaf == tree.leaf_id,
            tally((by_id[i] for i in tree.path_to(leaf) if i in by_id), by_id, harness=harness),
        )
        for leaf in tree.leaves()
    )
    return SessionStats(records=len(records), total=tally(nodes, by_id, harness=harness), branches=branches)
