"""`waybook verify --store`: each journal's sub-agent links, both ends, against the journals they name.

A link whose target journal is missing, or whose target's header names another parent, and a sub-agent
session whose parent is missing or records no link back are problems (exit 1); a link to a session that
names no parent (written before links were two-way) is a note. The check itself is the pure
`waybook.projections.link_problems`; this module reads the facts from the store, each journal once
(one read long before is read again).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Final

from waybook.model import JournalError, Record
from waybook.projections import LinkFacts, LinkProblem, link_facts, link_problems, linked_journals
from waybook.stores import JournalStore

KEPT_FACTS: Final = 4096
"""How many journals' link facts a LinkCheck keeps (least recently used are read again if needed)."""


class LinkCheck:
    """Checks journals of one store, keeping the link facts of the last `KEPT_FACTS` journals it read (a
    sub-agent is checked right after its parent; one read long before is read again): a store of any
    size costs the same memory."""

    def __init__(self, store: JournalStore) -> None:
        self._store = store
        self._facts: OrderedDict[str, LinkFacts | None] = OrderedDict()

    def check(self, journal_id: str, records: Iterable[Record]) -> tuple[LinkFacts, tuple[LinkProblem, ...]]:
        """The link facts of `records` (journal `journal_id`'s), and their problems both ways."""
        facts = link_facts(journal_id, records)
        self._keep(journal_id, facts)
        others = {name: self._facts_of(name) for name in linked_journals(facts)}
        return facts, link_problems(facts, others)

    def _facts_of(self, journal_id: str) -> LinkFacts | None:
        if journal_id in self._facts:
            self._facts.move_to_end(journal_id)
            return self._facts[journal_id]
        facts = self._read(journal_id)
        self._keep(journal_id, facts)
        return facts

    def _keep(self, journal_id: str, facts: LinkFacts | None) -> None:
        self._facts[journal_id] = facts
        self._facts.move_to_end(journal_id)
        while len(self._facts) > KEPT_FACTS:
            self._facts.popitem(last=False)

    def _read(self, journal_id: str) -> LinkFacts | None:
        try:
            if not self._store.exists(journal_id):
                return None
            with self._store.open(journal_id) as journal:
                return link_facts(journal_id, journal.read())
        except JournalError:  # an id that is no journal id, or a journal that cannot be read: not there
            return None


def links_entry(facts: LinkFacts, problems: tuple[LinkProblem, ...]) -> dict[str, Any]:
    """The `links` member of a journal's `--json` object."""
    return {
        "links": len(facts.links),
        "parent": None if facts.parent is None else facts.parent.journal,
        "problems": [_as_json(p) for p in problems if p.is_problem],
        "notes": [_as_json(p) for p in problems if not p.is_problem],
    }


def _as_json(problem: LinkProblem) -> dict[str, Any]:
    return {"seq": problem.seq, "kind": problem.kind, "message": problem.message}
