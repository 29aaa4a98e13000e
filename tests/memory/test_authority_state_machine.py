"""A hypothesis state machine interleaves remember, nominate, adopt, advance and foreign canonical writes.

The model keeps three dicts: working memory, canonical memory, and canonical memory as of the pin,
plus whether the pin is at the canonical head. After every step the agent's query equals the pinned
model, and canonical memory equals the model.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from waybook.journal import Head, InMemoryJournal, MemoryWrite, NewRecord
from waybook.memory import AdoptionConflictError, MemoryProjection, Route, create_authority
from waybook.memory.receipts import derive_adoption_receipt
from waybook.memory.text import content_digest
from waybook.projections import replay

KEYS = ["/memories/a.md", "/memories/b.md", "/memories/c.md"]
TEXTS = st.sampled_from(["x", "y", "z"])


class AuthorityMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.working_journal = InMemoryJournal("w")
        self.canonical_journal = InMemoryJournal("c")
        self.pins_journal = InMemoryJournal("p")
        self.authority = create_authority(
            working=self.working_journal,
            canonical=self.canonical_journal,
            routes=[Route("shared", frozenset({"facts"}))],
            actor="host",
            pins=self.pins_journal,
        )
        self.working: dict[str, str] = {}
        self.canonical: dict[str, str] = {}
        self.pinned: dict[str, str] = {}
        self.requests = 0
        self.foreign = 0

    def pin(self) -> Head:
        return self.authority.agent.query().head  # type: ignore[attr-defined, no-any-return]

    def at_head(self) -> bool:
        return self.pin() == self.canonical_journal.head()

    @rule(key=st.sampled_from(KEYS), text=TEXTS)
    def remember(self, key: str, text: str) -> None:
        self.requests += 1
        self.authority.agent.remember(f"req-{self.requests}", {key: text})  # type: ignore[attr-defined]
        self.working[key] = text

    @rule(key=st.sampled_from(KEYS), text=TEXTS)
    def foreign_canonical_write(self, key: str, text: str) -> None:
        self.foreign += 1
        body = MemoryWrite(path=key, text=text, digest=content_digest(text), command="foreign")
        head = self.canonical_journal.head()
        self.canonical_journal.append(
            [NewRecord(id=f"f{self.foreign}", at="2026-12-01T09:00:00.000Z", body=body)], expected=head
        )
        self.canonical[key] = text

    @rule()
    def advance(self) -> None:
        receipt = self.authority.host.advance_canonical(self.pin(), self.canonical_journal.head())  # type: ignore[attr-defined]
        assert receipt.new == self.canonical_journal.head()
        self.pinned = dict(self.canonical)

    @precondition(lambda self: self.working)
    @rule(data=st.data())
    def nominate_and_adopt(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.working)))
        nomination = self.authority.agent.nominate([key], "shared", "facts")  # type: ignore[attr-defined]
        text = self.working[key]
        pin = self.pin()
        at_head = self.at_head()
        try:
            receipt = self.authority.host.adopt_nomination(pin, nomination)  # type: ignore[attr-defined]
        except AdoptionConflictError:
            assert self.canonical.get(key) != text
            assert not at_head or key in self.canonical
            return
        if self.canonical.get(key) == text:
            assert receipt.status == "already-present"
        else:
            assert at_head
            assert key not in self.canonical
            assert receipt.status == "adopted"
            self.canonical[key] = text
        self.pinned = dict(self.canonical)
        assert derive_adoption_receipt(self.canonical_journal, self.pins_journal, receipt) == receipt

    @invariant()
    def the_agent_reads_the_pinned_model_and_canonical_matches(self) -> None:
        seen = {r.key: r.text for r in self.authority.agent.query().records}  # type: ignore[attr-defined]
        assert seen == self.pinned
        canonical = replay(MemoryProjection(), self.canonical_journal)
        assert {p: f.text for p, f in canonical.files.items()} == self.canonical
        working = replay(MemoryProjection(), self.working_journal)
        assert {p: f.text for p, f in working.files.items()} == self.working


AuthorityMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
TestAuthorityMachine = AuthorityMachine.TestCase
