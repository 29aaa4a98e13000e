"""What a runtime's fold keeps to show its erased nodes (docs/erasure.md): each node's record, the
erasures' reasons, and the nodes an erasure took after they were read.

A message-list fold (`_history.Thread`, the OpenAI Agents session's `ItemsState`) holds each node's
decoded message; an erased node has none, and its placeholder pairs calls across the path
(`placeholder_records`), so the fold keeps every node's record beside it. An erasure folded after the
nodes it names were read leaves their decoded messages (their text) in memory: their seqs wait in
`stale` until the fold's owner reads those records again and gives them to `node` once more.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from waybook.model import Erasure, Record, placeholder_records


@attrs.define
class ErasedNodes:
    """One fold's node records and erasures, for showing its erased nodes."""

    records: dict[str, Record] = attrs.Factory(dict)
    """Each node's record, for the placeholders of erased ones (which pair calls across their path)."""
    ids: dict[int, str] = attrs.Factory(dict)
    """Each node's id by its seq (an erasure names seqs)."""
    erased: set[str] = attrs.Factory(set)
    reasons: dict[int, str] = attrs.Factory(dict)
    """Each erasure's reason by its record's seq."""
    stale: list[int] = attrs.Factory(list)
    """Seqs of nodes an erasure took after they were read: to be read again."""

    def node(self, record: Record) -> bool:
        """Keep node `record`'s place; whether its content is erased."""
        self.records[record.id] = record
        self.ids[record.seq] = record.id
        if record.erased is None:
            return False
        self.erased.add(record.id)
        return True

    def erasure(self, record: Record, body: Erasure) -> None:
        """Fold erasure record `record`: its reason, and the nodes it took that were read before it."""
        self.reasons[record.seq] = body.reason
        taken = (self.ids.get(entry.seq) for entry in body.records)
        self.stale += [self.records[rid].seq for rid in taken if rid is not None and rid not in self.erased]

    def shown(self, path: Sequence[str]) -> list[Record] | None:
        """The records of `path` as `placeholder_records` shows them, or None when none is erased."""
        if not self.erased.intersection(path):
            return None
        return placeholder_records([self.records[rid] for rid in path], self.reasons)
