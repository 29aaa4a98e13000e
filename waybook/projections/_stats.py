"""Session statistics: turns, tool calls, tokens by model and reply latency, per branch and in total.

A pure function of records. Tokens are what assistant turns recorded (`usage`); latency is what the
journal's timestamps show: the time from a reply's parent (the user turn or tool result it answers) to
the reply. Timestamps are the writers' clocks, so this is the latency the session saw, not a benchmark.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from waybook.model import AssistantMessage, Node, Record, ToolCallBlock, ToolResult, UserMessage
from waybook.projections._base import fold
from waybook.projections._harness import is_harness
from waybook.projections._tree import NONE, TreeProjection, TreeState


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


def _rank(count: int, fraction: float) -> int:
    """The index of the `fraction` percentile in `count` sorted values (nearest rank)."""
    return min(count - 1, round(fraction * (count - 1)))


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    return ordered[_rank(len(ordered), fraction)]


def _wait(record: Record, parent: Record | None) -> float | None:
    """Seconds from `parent` (the turn a reply answers) to the reply `record`; None where a timestamp is
    not ISO 8601 (an imported oddity gives no latency)."""
    if parent is None:
        return None
    try:
        return max(0.0, _seconds(record.at) - _seconds(parent.at))
    except ValueError:
        return None


def _latency(ordered: Sequence[float]) -> dict[str, float] | None:
    if not ordered:
        return None
    return {
        "p50": statistics.median(ordered),
        "p90": _percentile(ordered, 0.90),
        "p99": _percentile(ordered, 0.99),
        "max": ordered[-1],
    }


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
            wait = _wait(record, by_id.get(body.parent) if body.parent else None)
            if wait is not None:
                waits.append(wait)
    return Tally(
        turns=turns,
        replies=replies,
        tool_calls=dict(sorted(calls.items())),
        tool_errors=errors,
        tokens={model: dict(sorted(c.items())) for model, c in sorted(tokens.items()) if c},
        latency=_latency(sorted(waits)),
        harness=hidden,
    )


def session_stats(records: Sequence[Record], *, harness: bool = False) -> SessionStats:
    """Statistics of every node of `records`, and of each branch (root-to-leaf path) on its own; harness
    entries (a Claude Code caveat, say) are no turns, and are counted apart, unless `harness`.

    O(records log records) on any tree shape: the branches are tallied in one walk of the tree (see
    `_BranchWalk`), never one walk of each branch's path, which a deep tree with a branch at every
    level would make quadratic.
    """
    tree = fold(TreeProjection(), records)
    nodes = [r for r in records if isinstance(r.body, Node)]
    by_id = {r.id: r for r in nodes}
    leaves = tree.leaves()
    tallies = _BranchWalk(tree, by_id, harness=harness).tallies({tree.index[leaf] for leaf in leaves})
    branches = tuple(BranchStats(leaf, leaf == tree.leaf_id, tallies[tree.index[leaf]]) for leaf in leaves)
    return SessionStats(records=len(records), total=tally(nodes, by_id, harness=harness), branches=branches)


class _BranchWalk:
    """The tally of every branch end's path, in one depth-first walk of the tree.

    Entering a node adds what it holds to running counts and leaving it takes that away again, so at
    each node the counts are its path's. Latency percentiles come from a Fenwick tree of counts over the
    session's distinct waits (the k-th smallest wait on the path in O(log n)). Each node is entered and
    left once; each end costs O(log n) plus the size of its tally.
    """

    def __init__(self, tree: TreeState, by_id: Mapping[str, Record], *, harness: bool = False) -> None:
        self.tree = tree
        self.records = [by_id[node_id] for node_id in tree.ids]
        # which nodes are harness entries, left out and counted apart (unless `harness`: counted as any)
        self.hidden_at = [not harness and is_harness(record.body) for record in self.records]
        self.hidden = 0
        waits: list[float | None] = []
        for record, hidden in zip(self.records, self.hidden_at, strict=True):
            body = record.body
            if hidden:
                waits.append(None)
                continue
            parent = by_id.get(body.parent) if isinstance(body, AssistantMessage) and body.parent else None
            waits.append(_wait(record, parent))
        self.values = sorted({w for w in waits if w is not None})
        rank = {value: i for i, value in enumerate(self.values)}
        self.ranks = [NONE if w is None else rank[w] for w in waits]
        self.counts = [0] * (len(self.values) + 1)  # the Fenwick tree, 1-based
        self.waits = 0
        self.turns = self.replies = self.errors = 0
        self.calls: dict[str, int] = {}
        self.tokens: dict[str, dict[str, list[int]]] = {}  # model -> key -> [sum, turns that gave it]

    def tallies(self, ends: set[int]) -> dict[int, Tally]:
        tree, found = self.tree, {}
        parents, first_child, next_sibling = tree.parents, tree.first_child, tree.next_sibling
        for root in range(tree.node_count):
            if parents[root] != NONE:
                continue
            node = root
            while True:
                self._step(node, 1)
                if node in ends:
                    found[node] = self._tally()
                child = first_child[node]
                if child != NONE:
                    node = child
                    continue
                while True:  # leave the node, and every ancestor whose children are all done
                    self._step(node, -1)
                    if node == root:
                        break
                    sibling = next_sibling[node]
                    if sibling != NONE:
                        node = sibling
                        break
                    node = parents[node]
                if node == root:
                    break
        return found

    def _step(self, position: int, sign: int) -> None:
        """Add (sign 1) or take away (sign -1) what the node at `position` holds."""
        body = self.records[position].body
        if self.hidden_at[position]:
            self.hidden += sign
        elif isinstance(body, UserMessage):
            self.turns += sign
        elif isinstance(body, ToolResult):
            self.errors += sign * body.is_error
        elif isinstance(body, AssistantMessage):
            self.replies += sign
            calls = self.calls
            for block in body.content:
                if isinstance(block, ToolCallBlock):
                    left = calls.get(block.name, 0) + sign
                    if left:
                        calls[block.name] = left
                    else:
                        del calls[block.name]
            model = body.model or "(unknown model)"
            counts = self.tokens.setdefault(model, {})
            for key, value in (body.usage or {}).items():
                if type(value) is int:
                    entry = counts.setdefault(key, [0, 0])
                    entry[0] += sign * value
                    entry[1] += sign
                    if not entry[1]:
                        del counts[key]
            if not counts:
                del self.tokens[model]
            rank = self.ranks[position]
            if rank != NONE:
                self.waits += sign
                counts_tree, size, i = self.counts, len(self.counts), rank + 1
                while i < size:
                    counts_tree[i] += sign
                    i += i & -i

    def _kth(self, k: int) -> float:
        """The k-th smallest wait on the path (0-based)."""
        counts, position, step = self.counts, 0, 1 << (len(self.counts) - 1).bit_length()
        while step:
            nxt = position + step
            if nxt < len(counts) and counts[nxt] <= k:
                position = nxt
                k -= counts[nxt]
            step >>= 1
        return self.values[position]

    def _tally(self) -> Tally:
        return Tally(
            turns=self.turns,
            replies=self.replies,
            tool_calls=dict(sorted(self.calls.items())),
            tool_errors=self.errors,
            tokens={
                model: {key: entry[0] for key, entry in sorted(c.items())}
                for model, c in sorted(self.tokens.items())
            },
            latency=self._latency(),
            harness=self.hidden,
        )

    def _latency(self) -> dict[str, float] | None:
        """`_latency` of the path's sorted waits, reading only the ranks it needs."""
        n, kth = self.waits, self._kth
        if not n:
            return None
        median = kth(n // 2) if n % 2 else (kth(n // 2 - 1) + kth(n // 2)) / 2  # statistics.median's
        return {"p50": median, "p90": kth(_rank(n, 0.90)), "p99": kth(_rank(n, 0.99)), "max": kth(n - 1)}
