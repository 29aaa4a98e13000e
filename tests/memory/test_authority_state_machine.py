"""A hypothesis state machine against a simple model of canonical memory (issue 13).

It interleaves remember, nominate and adopt, advance, foreign canonical writes, faults injected into any
call of any journal (before the call, or after it as a lost reply), restarts (a new authority over the
same journals), async host calls cancelled after any number of event-loop steps, and 8 threads adopting
and advancing at once. The model keeps working and canonical memory and the pin; after every step the
agent reads exactly canonical memory at the pin, the pin is the one recorded in the pin journal, no pin
lies inside an adoption, and every recorded receipt re-derives from the journals.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import MemoryProjection, Route, create_async_authority, create_authority
from waybook.memory.canonical.receipts import check_receipts
from waybook.model import Head, JournalError, MemoryWrite, NewRecord, StorageError
from waybook.model._records import MemoryPinMoved
from waybook.projections import replay

KEYS = ["/memories/a.md", "/memories/b.md", "/memories/c.md"]
TEXTS = st.sampled_from(["x", "y", "z"])
ROUTES = [Route("shared", frozenset({"facts"}))]
METHODS = ["append", "read", "read_lines", "head"]


class Faulty:
    """A journal whose next call of one method fails: before it runs, or after it (a lost reply)."""

    def __init__(self, inner: InMemoryJournal) -> None:
        self.inner = inner
        self.fault: tuple[str, bool] | None = None

    @property
    def name(self) -> str:
        return self.inner.name

    def _maybe(self, method: str, after: bool) -> None:
        if self.fault == (method, after):
            self.fault = None
            msg = f"injected fault {'after' if after else 'before'} {method}"
            raise StorageError(msg)

    def head(self) -> Head:
        self._maybe("head", False)
        result = self.inner.head()
        self._maybe("head", True)
        return result

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> Any:
        self._maybe("append", False)
        result = self.inner.append(records, expected=expected)
        self._maybe("append", True)
        return result

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Any]:
        self._maybe("read", False)
        result = self.inner.read(after, limit)
        self._maybe("read", True)
        return result

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        self._maybe("read_lines", False)
        result = self.inner.read_lines(after, limit)
        self._maybe("read_lines", True)
        return result

    def flush(self) -> None: ...
    def close(self) -> None: ...


def files(journal: InMemoryJournal, at: int | None = None) -> dict[str, str]:
    return {p: f.text for p, f in replay(MemoryProjection(), journal, at=at).files.items()}


class AuthorityMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.inner = {name: InMemoryJournal(name) for name in ("working", "canonical", "pins")}
        self.faulty = {name: Faulty(journal) for name, journal in self.inner.items()}
        self.authority = self._authority()
        self.requests = 0
        self.foreign = 0

    def _authority(self) -> Any:
        return create_authority(
            working=self.faulty["working"],
            canonical=self.faulty["canonical"],
            routes=ROUTES,
            actor="host",
            pins=self.faulty["pins"],
        )

    def disarm(self) -> None:
        for journal in self.faulty.values():
            journal.fault = None

    def recorded_pin(self) -> Head:
        moves = [r.body for r in self.inner["pins"].read() if isinstance(r.body, MemoryPinMoved)]
        if moves:
            return Head(moves[-1].new_seq, moves[-1].new_digest)
        return Head.of(next(iter(self.inner["canonical"].read())))

    def pin(self) -> Head:
        return self.authority.agent.query().head  # type: ignore[no-any-return]

    def sync(self) -> None:
        """Let the authority catch up with a pin recorded behind its back (a lost reply, another
        authority): an unchanged advance reads the recorded pin."""
        self.disarm()
        recorded = self.recorded_pin()
        self.authority.host.advance_canonical(recorded, recorded)

    # --- rules ------------------------------------------------------------------------------------

    @rule(
        journal=st.sampled_from(["working", "canonical", "pins"]),
        method=st.sampled_from(METHODS),
        after=st.booleans(),
    )
    def arm_a_fault(self, journal: str, method: str, after: bool) -> None:
        self.faulty[journal].fault = (method, after)

    @rule(key=st.sampled_from(KEYS), text=TEXTS)
    def remember(self, key: str, text: str) -> None:
        self.requests += 1
        before = files(self.inner["working"])
        with contextlib.suppress(JournalError):
            self.authority.agent.remember(f"req-{self.requests}", {key: text})
        after = files(self.inner["working"])
        assert after in (before, {**before, key: text})  # all of the request, or nothing

    @rule(key=st.sampled_from(KEYS), text=TEXTS)
    def foreign_canonical_write(self, key: str, text: str) -> None:
        self.foreign += 1
        canonical = self.inner["canonical"]
        body = MemoryWrite(path=key, text=text, digest=content_digest(text), command="foreign")
        canonical.append(
            [NewRecord(id=f"f{self.foreign}", at="2026-12-01T09:00:00.000Z", body=body)],
            expected=canonical.head(),
        )

    @rule()
    def advance(self) -> None:
        pin, head = self.pin(), self.inner["canonical"].head()
        try:
            receipt = self.authority.host.advance_canonical(pin, head)
        except JournalError:
            # a failed call leaves the pin, except that every host call first catches up with the pin
            # recorded behind its back (a reply lost after the pin record committed)
            assert self.pin() in (pin, self.recorded_pin())
            event("advance failed")
            return
        event(f"advance {receipt.status}")
        assert receipt.new == head == self.pin()

    @precondition(lambda self: files(self.inner["working"]))
    @rule(data=st.data())
    def nominate_and_adopt(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(files(self.inner["working"]))))
        try:
            nomination = self.authority.agent.nominate([key], "shared", "facts")
        except JournalError:
            return
        pin = self.pin()
        before = files(self.inner["canonical"])
        try:
            receipt = self.authority.host.adopt_nomination(pin, nomination)
        except JournalError:
            assert self.pin() in (pin, self.recorded_pin())
            event("adopt failed")
            after = files(self.inner["canonical"])
            assert after in (before, {**before, key: nomination.records[0].text})
            return
        event(f"adopt {receipt.status}")
        assert receipt.new == self.pin()
        assert files(self.inner["canonical"], at=receipt.new.seq).get(key) == nomination.records[0].text

    @rule()
    def restart(self) -> None:
        self.disarm()
        self.authority = self._authority()
        assert self.pin() == self.recorded_pin()  # never the canonical head unless it was reviewed

    @rule(steps=st.integers(min_value=0, max_value=12))
    def cancel_an_async_advance(self, steps: int) -> None:
        self.disarm()
        recorded, head = self.recorded_pin(), self.inner["canonical"].head()

        async def scenario() -> None:
            other = create_async_authority(
                working=self.inner["working"],
                canonical=self.inner["canonical"],
                routes=ROUTES,
                actor="host",
                pins=self.inner["pins"],
            )
            task = other.host.advance_canonical(recorded, head)
            for _ in range(steps):
                await asyncio.sleep(0)
            task.cancel()
            try:
                receipt = await task
            except asyncio.CancelledError:
                event("async call cancelled")
            else:
                event("async call ran before the cancel")
                assert receipt.new == head
            assert self.recorded_pin() in (recorded, head)  # the call ran whole, or not at all
            assert (await other.agent.query()).head == self.recorded_pin()

        asyncio.run(scenario())
        self.sync()

    @precondition(lambda self: files(self.inner["working"]))
    @rule(key=st.sampled_from(KEYS))
    def eight_threads(self, key: str) -> None:
        self.disarm()
        if key not in files(self.inner["working"]):
            return
        self.sync()
        self.authority.host.advance_canonical(self.pin(), self.inner["canonical"].head())  # review first
        nomination = self.authority.agent.nominate([key], "shared", "facts")
        outcomes: list[str] = []

        def adopt() -> None:
            try:
                outcomes.append(self.authority.host.adopt_nomination(self.pin(), nomination).status)
            except JournalError as exc:
                outcomes.append(type(exc).__name__)

        def advance() -> None:
            try:
                self.authority.host.advance_canonical(self.pin(), self.inner["canonical"].head())
                outcomes.append("advance")
            except JournalError as exc:
                outcomes.append(type(exc).__name__)

        threads = [threading.Thread(target=adopt if i % 2 else advance) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(outcomes) == 8
        event(f"8 threads: {outcomes.count('adopted')} adopted")
        assert outcomes.count("adopted") <= 1
        adoptions = [r for r in self.inner["canonical"].read() if r.kind == "waybook.memory.adoption/1"]
        assert len({r.id for r in adoptions}) == len(adoptions)

    # --- invariants -------------------------------------------------------------------------------

    @invariant()
    def the_agent_reads_canonical_memory_at_the_pin(self) -> None:
        pin = self.pin()
        seen = {r.key: r.text for r in self.authority.agent.query().records}
        assert seen == files(self.inner["canonical"], at=pin.seq)
        assert replay(MemoryProjection(), self.inner["canonical"], at=pin.seq).open_adoption is None

    @invariant()
    def the_pin_is_the_recorded_pin_or_a_lost_reply_behind_it(self) -> None:
        recorded = self.recorded_pin()
        if self.pin() != recorded:  # only a lost reply of the pin record leaves the authority behind
            assert recorded.seq >= self.pin().seq

    @invariant()
    def every_recorded_receipt_rederives(self) -> None:
        by_id = {
            replay(MemoryProjection(), self.inner["canonical"]).journal_id or "": self.inner["canonical"],
        }
        checks = check_receipts(self.inner["pins"], by_id)
        assert all(check.ok for check in checks), [c.problem for c in checks if not c.ok]

    @invariant()
    def the_journals_keep_their_rules(self) -> None:
        for journal in self.inner.values():
            journal.check_invariants()


AuthorityMachine.TestCase.settings = settings(max_examples=80, stateful_step_count=25, deadline=None)
TestAuthorityMachine = AuthorityMachine.TestCase
