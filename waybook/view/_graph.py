"""The branch graph a session page draws: every branch of the tree, the active path, and the leaf moves.

A tree of thousands of nodes has few branch points, so the graph is drawn by segments: a segment is a
run of nodes each the only child of the one before (a root, or a child of a branch point, up to the
next branch point or a leaf). Segments are laid out as `git log --graph` lays out commits: one row
each, in depth-first order, a segment's first child continuing its lane, each other child opening a
lane to the right; the child on the active path comes first, so the active path is the straight line
on the left. Leaf moves are drawn between the segments of the nodes they moved from and to. Pure:
node entries in, plain data out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

GRAPH_SEGMENTS: Final = 2000
"""The most segments a page draws; a tree with more is drawn up to there and says so."""


def branch_graph(
    nodes: Sequence[dict[str, Any]],
    leaves: Sequence[dict[str, Any]],
    *,
    active_leaf: str | None,
    moves: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """Segments (`first`, `last`, `count`, `parent`, `lane`, `row`, `leaf`, `active`, `summary`) and the
    moves between them (`index` into `moves`, `from` and `to` segment or None)."""
    by_id = {node["id"]: node for node in nodes}
    children: dict[str | None, list[str]] = {}
    for node in nodes:
        parent = node["parent"] if node["parent"] in by_id else None
        children.setdefault(parent, []).append(node["id"])
    on_active: set[str] = set()
    current = by_id.get(active_leaf) if active_leaf else None
    while current is not None and current["id"] not in on_active:
        on_active.add(current["id"])
        current = by_id.get(current["parent"]) if current["parent"] else None
    summaries = {leaf["id"]: leaf["summary"] for leaf in leaves}

    def ordered(ids: list[str]) -> list[str]:
        return sorted(ids, key=lambda i: i not in on_active)  # stable: seq order otherwise

    segments: list[dict[str, Any]] = []
    segment_of: dict[str, int] = {}
    lanes = 0
    stack: list[tuple[str, int | None, int]] = []
    for root in reversed(ordered(children.get(None, []))):
        stack.append((root, None, -1))
    truncated = False
    while stack:
        start, parent, lane = stack.pop()
        if len(segments) >= GRAPH_SEGMENTS:
            truncated = True
            break
        if lane < 0:
            lane, lanes = lanes, lanes + 1
        index = len(segments)
        last, count = start, 1
        segment_of[start] = index
        while len(below := children.get(last, [])) == 1:
            last = below[0]
            segment_of[last] = index
            count += 1
        segments.append(
            {
                "first": start,
                "last": last,
                "count": count,
                "parent": parent,
                "lane": lane,
                "row": index,
                "leaf": not below,
                "active": start in on_active,
                "summary": summaries.get(last, ""),
            }
        )
        for position, child in reversed(list(enumerate(ordered(below)))):
            stack.append((child, index, lane if position == 0 else -1))
    drawn = [
        {"index": i, "from": segment_of.get(m["from"] or ""), "to": segment_of.get(m["to"] or "")}
        for i, m in enumerate(moves)
        if m.get("from") or m.get("to")
    ]
    return {
        "segments": segments,
        "moves": drawn,
        "lanes": lanes,
        "rows": len(segments),
        "truncated": truncated,
    }
