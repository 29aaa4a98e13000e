"""Per-turn memory provenance for `waybook show`: what memory each assistant turn's prompt carried.

A runtime records it with `load_index(..., session=...)` (a `waybook.memory.used/1` record before the
turn). A turn's provenance is the last such record written between the previous entry of the shown path
and the turn itself; a turn with none used no memory index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from waybook.model import MemoryUsed, Record


def memory_used(records: Iterable[Record]) -> list[tuple[int, dict[str, Any]]]:
    """(seq, what was recorded) for every memory-used record among `records`, in order."""
    found = []
    for record in records:
        body = record.body
        if isinstance(body, MemoryUsed):
            found.append(
                (
                    record.seq,
                    {
                        "memory": body.memory,
                        "seq": body.seq,
                        "digest": body.digest,
                        "index_sha256": body.index_sha256,
                        "unavailable": body.unavailable,
                        "policy": body.policy,
                    }
                    | _index(body)
                    | _block(body),
                )
            )
    return found


def _index(body: MemoryUsed) -> dict[str, Any]:
    """What renders the index again (`replay_index`), where the record has it."""
    if body.limit is None:
        return {}
    return {"revisions": list(body.revisions), "limit": body.limit, "pinned": body.pinned}


def _block(body: MemoryUsed) -> dict[str, Any]:
    """The compiled block's digest and the prompt layers, where the record has them."""
    if body.block_sha256 is None:
        return {}
    layers = [{"name": n, "authority": a, "sha256": d} for n, a, d in body.layers]
    return {"block_sha256": body.block_sha256, "layers": layers}


def turn_memory(
    used: Sequence[tuple[int, dict[str, Any]]], path: Sequence[Record], index: int
) -> dict[str, Any] | None:
    """The memory recorded for the turn at `path[index]` (None if that turn recorded none)."""
    after = path[index - 1].seq if index else 0
    before = path[index].seq
    chosen = None
    for seq, entry in used:
        if after < seq < before:
            chosen = entry
    return chosen


def describe(entry: dict[str, Any]) -> str:
    """One line for a person: the head and index rendered, or the decision to go on without memory."""
    if entry["unavailable"] is not None and entry["policy"] == "require":
        return f"memory unavailable, the turn was refused (policy require): {entry['unavailable']}"
    if entry["unavailable"] is not None:
        return f"memory unavailable, went on without it (policy {entry['policy']}): {entry['unavailable']}"
    if "block_sha256" in entry:
        layers = ", ".join(f"{x['name']} ({x['authority']}) {x['sha256'][:12]}" for x in entry["layers"])
        return (
            f"memory {entry['memory']} at seq {entry['seq']} ({str(entry['digest'])[:12]}), "
            f"block sha256 {entry['block_sha256'][:12]}; layers: {layers}"
        )
    return (
        f"memory {entry['memory']} at seq {entry['seq']} ({str(entry['digest'])[:12]}), "
        f"index sha256 {str(entry['index_sha256'])[:12]}"
    )
