"""Sub-agent links, both ways: which nodes of a session started a sub-agent and which journal holds its
session (`waybook.subagent_link/1` records), and which session and call started a sub-agent's own
session (its header's `metadata.subagent_of`).

A link is two-way when each end names the other: the parent's link record names the child journal,
the node and the tool call; the child's header names the parent journal, the same node and call.
`link_problems` checks one journal's ends against the journals they name (a pure function of facts the
caller gathered): a link whose target is missing, or whose target names another parent journal, or a
child whose parent is missing or records no link to it from the node and call its header names (a
later link to the same child from another call of the parent, a resumed sub-agent, is fine). A child
that names no parent (journals written before links were two-way) is a note, not a problem.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

import attrs

from waybook.model import Header, Record, SubagentLink

SUBAGENT_OF: Final = "subagent_of"
"""The key of a sub-agent session's header metadata naming where it was started:
`{"journal": PARENT_ID, "node": NODE_ID, "call_id": CALL_ID}` (`call_id` left out when none)."""


@attrs.frozen
class LinkRef:
    """One `waybook.subagent_link/1` record: the node (and tool call) and the linked journal."""

    seq: int
    node: str
    journal: str
    call_id: str | None
    agent: str | None
    reason: str


@attrs.frozen
class SubagentParent:
    """What a sub-agent session's header says started it: the parent journal, its node and tool call."""

    journal: str
    node: str
    call_id: str | None = None

    def metadata(self) -> dict[str, Any]:
        """The header metadata entry that names this parent (`{SUBAGENT_OF: {...}}`)."""
        named: dict[str, Any] = {"journal": self.journal, "node": self.node}
        if self.call_id is not None:
            named["call_id"] = self.call_id
        return {SUBAGENT_OF: named}


@attrs.frozen
class LinkFacts:
    """What one journal says about sub-agent links: the parent its header names, the links it records."""

    journal: str
    parent: SubagentParent | None
    links: tuple[LinkRef, ...]


@attrs.frozen
class LinkProblem:
    """One end of a link that does not hold. `kind`: `missing` (the journal it names is not there),
    `different` (that journal does not name this one back as it should), `one-way` (a note: the
    sub-agent's header names no parent, as journals written before links were two-way)."""

    journal: str
    seq: int
    kind: Literal["missing", "different", "one-way"]
    message: str

    @property
    def is_problem(self) -> bool:
        return self.kind != "one-way"


def subagent_links(records: Iterable[Record]) -> tuple[LinkRef, ...]:
    """Every sub-agent link among `records`, in journal order. O(n) over the records given."""
    return tuple(
        LinkRef(r.seq, r.body.node, r.body.journal, r.body.call_id, r.body.agent, r.body.reason)
        for r in records
        if isinstance(r.body, SubagentLink)
    )


def subagent_parent(header: object) -> SubagentParent | None:
    """The parent a header's `metadata.subagent_of` names, or None (not a sub-agent, or not well formed)."""
    if not isinstance(header, Header):
        return None
    named = header.metadata.get(SUBAGENT_OF)
    if not isinstance(named, dict):
        return None
    journal, node, call_id = named.get("journal"), named.get("node"), named.get("call_id")
    if not isinstance(journal, str) or not isinstance(node, str) or not isinstance(call_id, str | None):
        return None
    return SubagentParent(journal, node, call_id)


def link_facts(journal: str, records: Iterable[Record]) -> LinkFacts:
    """The link facts of journal `journal` from its records (the header first)."""
    parent: SubagentParent | None = None
    links: list[LinkRef] = []
    for record in records:
        body = record.body
        if record.seq == 1:
            parent = subagent_parent(body)
        elif isinstance(body, SubagentLink):
            links.append(LinkRef(record.seq, body.node, body.journal, body.call_id, body.agent, body.reason))
    return LinkFacts(journal, parent, tuple(links))


def link_problems(facts: LinkFacts, others: Mapping[str, LinkFacts | None]) -> tuple[LinkProblem, ...]:
    """Each end of `facts`' links that does not hold, checked against `others` (the facts of every
    journal it names, None for a journal that is not there), in journal order."""
    found: list[LinkProblem] = []
    for link in facts.links:
        target = others.get(link.journal)
        where = f"seq {link.seq} links sub-agent journal {link.journal!r}"
        if target is None:
            found.append(LinkProblem(facts.journal, link.seq, "missing", f"{where}, which is not there"))
        elif target.parent is None:
            note = (
                f"{where}, whose header names no parent (a one-way link, written before links were two-way)"
            )
            found.append(LinkProblem(facts.journal, link.seq, "one-way", note))
        elif target.parent.journal != facts.journal:  # (another node or call of this journal: a resumption)
            named = _named(target.parent)
            found.append(
                LinkProblem(facts.journal, link.seq, "different", f"{where}, whose header names {named}")
            )
    parent = facts.parent
    if parent is not None:
        where = f"its header names {_named(parent)} as the session that started it"
        source = others.get(parent.journal)
        if source is None:
            found.append(LinkProblem(facts.journal, 1, "missing", f"{where}, which is not there"))
        elif not any(
            SubagentParent(source.journal, link.node, link.call_id) == parent
            and link.journal == facts.journal
            for link in source.links
        ):
            found.append(
                LinkProblem(facts.journal, 1, "different", f"{where}, which records no link back to it")
            )
    return tuple(found)


def linked_journals(facts: LinkFacts) -> tuple[str, ...]:
    """Every journal `facts` names: its links' targets and its parent."""
    named = [link.journal for link in facts.links]
    if facts.parent is not None:
        named.append(facts.parent.journal)
    return tuple(dict.fromkeys(named))


def _named(parent: SubagentParent) -> str:
    call = f", call {parent.call_id!r}" if parent.call_id is not None else ""
    return f"journal {parent.journal!r} (node {parent.node!r}{call})"
