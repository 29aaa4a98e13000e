"""Sub-agent links both ways, for an import that writes a session with its sub-agents' sessions.

An importer records each link where the foreign format has it: in the parent session, at the node and
tool call that started the sub-agent (`waybook.subagent_link/1`). The sub-agent's own transcript
rarely says who started it, so the importer of the whole set names the parent in each child's header
(`metadata.subagent_of`: journal, node, call), and `waybook verify --store` can check both ends.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from waybook.model import Header, NewRecord, SubagentLink
from waybook.projections import SUBAGENT_OF, SubagentParent

__all__ = ["linked_both_ways", "naming_parent"]


def linked_both_ways(journals: Sequence[Sequence[NewRecord]]) -> list[tuple[NewRecord, ...]]:
    """`journals` (each a new journal's records, its header first), with the header of every journal a
    link of another names, and that names no parent yet, naming its parent: the first link to it."""
    parents: dict[str, SubagentParent] = {}
    for records in journals:
        if not records or not isinstance(records[0].body, Header):
            continue
        parent = records[0].body.journal
        for record in records:
            body = record.body
            if isinstance(body, SubagentLink) and body.journal != parent:
                parents.setdefault(body.journal, SubagentParent(parent, body.node, body.call_id))
    linked: list[tuple[NewRecord, ...]] = []
    for records in journals:
        header = records[0].body if records else None
        if isinstance(header, Header) and header.journal in parents:
            linked.append((naming_parent(records[0], parents[header.journal]), *records[1:]))
        else:
            linked.append(tuple(records))
    return linked


def naming_parent(header: NewRecord, parent: SubagentParent) -> NewRecord:
    """A sub-agent journal's header record naming `parent` as the session that started it (unchanged
    if it names one already, or is no header)."""
    body = header.body
    if not isinstance(body, Header) or SUBAGENT_OF in body.metadata:
        return header
    metadata = body.metadata | parent.metadata()
    return msgspec.structs.replace(header, body=msgspec.structs.replace(body, metadata=metadata))
