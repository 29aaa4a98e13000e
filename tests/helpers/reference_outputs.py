"""The straightforward code that issue 50 replaced, kept as the reference the new code must match byte for
byte: each branch tallied by a walk of its own path (stats), the tree's labels laid out at every depth
and its JSON built whole (tree), every branch end below a fork found and judged by its own path (the
preference pairs' forks), the context recomputed at every move (context). Quadratic on a deep tree that
branches at every level, and plainly right: the tests compare the new code's outputs with these on
small shapes and on the real sessions.
"""

from __future__ import annotations

import contextlib
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.text import Text
from rich.tree import Tree

from waybook.commands.common import short_kind, summary
from waybook.commands.terminal import visible
from waybook.model import AssistantMessage, Record, ToolCallBlock, ToolResult, UserMessage
from waybook.model._records import Node
from waybook.projections import (
    BranchStats,
    SessionStats,
    Tally,
    TreeProjection,
    TreeState,
    fold,
    is_harness,
    move_runs,
)
from waybook.projections._stats import _seconds


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def reference_tally(nodes: Iterable[Record], by_id: Mapping[str, Record], *, harness: bool = False) -> Tally:
    """Harness entries (issue 44) are left out and counted apart unless `harness`."""
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


def reference_session_stats(records: Sequence[Record], *, harness: bool = False) -> SessionStats:
    """`session_stats` as it was: each branch tallied by a walk of its own path."""
    tree = fold(TreeProjection(), records)
    nodes = [r for r in records if isinstance(r.body, Node)]
    by_id = {r.id: r for r in nodes}
    branches = tuple(
        BranchStats(
            leaf,
            leaf == tree.leaf_id,
            reference_tally((by_id[i] for i in tree.path_to(leaf) if i in by_id), by_id, harness=harness),
        )
        for leaf in tree.leaves()
    )
    total = reference_tally(nodes, by_id, harness=harness)
    return SessionStats(records=len(records), total=total, branches=branches)


def reference_tree_json(tree: TreeState) -> dict[str, Any]:
    """`tree --json`'s document as it was built: whole, every branch's path a list."""
    return {
        "seq": tree.seq,
        "digest": tree.digest,
        "leaf": tree.leaf_id,
        "nodes": [
            {
                "id": tree.ids[i],
                "kind": tree.kinds[i],
                "seq": tree.seqs[i],
                "parent": tree.parent_of(tree.ids[i]),
            }
            for i in range(tree.node_count)
        ],
        "branches": [{"end": b.end, "active": b.active, "path": list(b.path)} for b in tree.branches()],
        "moves": [
            {
                "seq": m.seq,
                "id": m.record_id,
                "from": m.from_leaf,
                "to": m.to_leaf,
                "reason": m.reason,
                "actor": m.actor,
                "at": m.at,
                "reset": m.reset,
            }
            for m in tree.moves
        ],
    }


_MESSAGES = frozenset({"user", "assistant", "tool_result", "system", "compaction"})


def _segment_end(tree: TreeState, start: int) -> int:
    node = start
    while True:
        children = list(tree.children_positions(node))
        if len(children) != 1 or node == tree.leaf:
            return node
        node = children[0]


def _told(tree: TreeState, start: int, end: int) -> int:
    node = end
    while True:
        if short_kind(tree.kinds[node]) in _MESSAGES:
            return node
        if node == start:
            return end
        parent = tree.parent_of(tree.ids[node])
        if parent is None:
            return end
        node = tree.index[parent]


def reference_shown_seqs(tree: TreeState) -> set[int]:
    """The seqs of every run's label records, at every depth."""
    seqs = set()
    starts = [tree.index[r] for r in tree.roots()]
    while starts:
        start = starts.pop()
        end = _segment_end(tree, start)
        seqs.update({tree.seqs[start], tree.seqs[end], tree.seqs[_told(tree, start, end)]})
        starts.extend(tree.children_positions(end))
    return seqs


def reference_segment_tree(
    tree: TreeState, root: str, active: set[str], labels: dict[str, Any], names: dict[str, str]
) -> Tree:
    """`waybook tree`'s Rich tree of the runs from `root` as it was built: every depth."""

    def label(start: int) -> tuple[Text, int]:
        end = _segment_end(tree, start)
        first, last = tree.ids[start], tree.ids[end]
        count = len(tree.path_positions(end)) - len(tree.path_positions(start)) + 1
        is_active = last in active
        mark = "* " if is_active else "  "
        run = names[first] if start == end else f"{names[first]} .. {names[last]} ({count} entries)"
        record = labels[tree.ids[_told(tree, start, end)]]
        said = escape(summary(record, 200))
        leaf = "  <- leaf" if tree.leaf_id == last else ""
        text = f"{mark}{escape(visible(run, one_line=True))}{leaf}  {escape(short_kind(record.kind))}: {said}"
        markup = text if is_active else f"[dim]{text}[/dim]"
        label_text = Text.from_markup(markup, overflow="ellipsis")
        label_text.no_wrap = True
        return label_text, end

    text, end = label(tree.index[root])
    top = Tree(text, guide_style="dim")
    stack = [(top, end)]
    while stack:
        node, end = stack.pop()
        for child in tree.children_positions(end):
            text, child_end = label(child)
            stack.append((node.add(text), child_end))
    return top


def reference_fork_ends(tree: TreeState, labels: Mapping[str, str], child: int, fork: int) -> dict[int, str]:
    """The branch ends below `child` (a child of `fork`) and each one's verdict at the fork, judged by
    the labels on its own path after the fork: rejected wins over chosen, neither is unlabelled."""
    ends = {tree.position(end) for end in tree.leaves()}
    found, stack = [], [child]
    while stack:
        node = stack.pop()
        if node in ends:
            found.append(node)
        stack.extend(tree.children_positions(node))
    verdicts = {}
    for end in sorted(found):
        positions = tree.path_positions(end)
        after = {labels.get(tree.ids[p]) for p in positions[positions.index(fork) + 1 :]}
        verdicts[end] = "rejected" if "rejected" in after else "chosen" if "chosen" in after else "unlabelled"
    return verdicts


def reference_prompt_exclusions(tree: TreeState, fork: int, ends: Iterable[int]) -> set[int]:
    """The entries the exclusions on any of `ends`' paths take back."""
    return {tree.exclusions[p] for end in ends for p in tree.path_positions(end) if p in tree.exclusions}


def reference_move_lines(console: Any, tree: TreeState, names: Mapping[str, str]) -> None:
    """`waybook tree`'s leaf moves as it printed them before issue 50: a `console.print` of markup per
    line (about 75 us a line in Rich)."""
    console.print("leaf moves:")
    for run in move_runs(tree.moves):
        move = run.first
        ends = (names.get(run.from_leaf or "", run.from_leaf), names.get(run.to_leaf or "", run.to_leaf))
        what = "reset" if move.reset else f"{ends[0]} -> {ends[1]}"
        who = f" by {move.actor}" if move.actor else ""
        many = f" ({run.count} moves, one after another)" if run.count > 1 else ""
        seqs = f"{move.seq}-{run.last.seq}" if run.count > 1 else str(move.seq)
        console.print(f"  seq {seqs}: {escape(visible(what + who + many, one_line=True))}")
        if move.reason:
            console.print(f"    {escape(visible(move.reason))}")
