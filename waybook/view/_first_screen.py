"""The first screen of a session page, as data of its own, so a page of any size shows it at once.

A page carries the whole session as JSON; parsing it is linear in the session's size. The first
screen (the beginning of the active branch, `FIRST_SCREEN` entries the reader sees, with the harness
entries between them and the tool results inside their calls) goes into the page again, in a small
element before the page's script, with everything else the page draws that is small (title, branches,
graph, moves, usage): the script lays it out before the browser has even read the whole session. Then
the whole session is parsed and the page goes on from there (a permalink waits for that, since its
target may be anywhere). Pure: page data in, page data out.
"""

from __future__ import annotations

from typing import Any, Final

FIRST_SCREEN: Final = 60
"""Entries a reader sees on the first screen (viewer.js lays out as many before the page is ready)."""
FIRST_NODES: Final = 2000
"""The most nodes the first screen carries, whatever they are (a run of harness entries counts too)."""
LARGE: Final = ("nodes", "results", "links", "memory", "subagents", "subagent_order", "subagents_missing")
"""The parts of page data that grow with the session; the first screen carries its own slice of them."""


def active_path(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes from the root to the active leaf (or the first leaf), in order."""
    by_id = {node["id"]: node for node in data["nodes"]}
    leaf = data["active_leaf"] or (data["leaves"][0]["id"] if data["leaves"] else None)
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    node = by_id.get(leaf) if leaf else None
    while node is not None and node["id"] not in seen:
        seen.add(node["id"])
        path.append(node)
        node = by_id.get(node["parent"]) if node["parent"] else None
    return path[::-1]


def first_screen(data: dict[str, Any], *, entries: int = FIRST_SCREEN) -> dict[str, Any]:
    """`data` without its large parts, and `first_path`: the ids of the active branch's first entries,
    up to `entries` that are not harness entries or tool results drawn inside their calls, with the
    nodes, results, links and memory that those need."""
    path = active_path(data)
    results = data["results"]
    in_call = {answer for node in path for answer in results.get(node["id"], {}).values()}
    shown: list[str] = []
    visible = 0
    for node in path:
        if visible >= entries or len(shown) >= FIRST_NODES:
            break
        shown.append(node["id"])
        if node["id"] not in in_call and not node["harness"]:
            visible += 1
    wanted = set(shown) | {answer for node_id in shown for answer in results.get(node_id, {}).values()}
    return {
        **{key: value for key, value in data.items() if key not in LARGE},
        "first_path": shown,
        "nodes": [node for node in data["nodes"] if node["id"] in wanted],
        "results": {key: value for key, value in results.items() if key in wanted},
        "links": {key: value for key, value in data["links"].items() if key in wanted},
        "memory": {key: value for key, value in data["memory"].items() if key in wanted},
    }
