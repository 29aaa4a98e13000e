"""Sub-agent links: which nodes of a session started a sub-agent, and which journal holds its session."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from waybook.model._records import Record, SubagentLink


@attrs.frozen
class LinkRef:
    """One `waybook.subagent_link/1` record: the node (and tool call) and the linked journal."""

    seq: int
    node: str
    journal: str
    call_id: str | None
    agent: str | None
    reason: str


def subagent_links(records: Iterable[Record]) -> tuple[LinkRef, ...]:
    """Every sub-agent link among `records`, in journal order. O(n) over the records given."""
    return tuple(
        LinkRef(r.seq, r.body.node, r.body.journal, r.body.call_id, r.body.agent, r.body.reason)
        for r in records
        if isinstance(r.body, SubagentLink)
    )
