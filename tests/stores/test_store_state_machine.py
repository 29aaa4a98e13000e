"""A hypothesis state machine drives each store and a small model side by side.

Rules create, write, erase, hide and purge journals, reopen the store, and list and read the feed; after
every step the store's listing, feed and journals must be what the model says (an erased record keeps its
digest and feed position, its content is gone, and the journal verifies).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.stores.conftest import STORES, StoreKind
from waybook import Session
from waybook.journal import erase, verify
from waybook.model import InvalidRecordError
from waybook.stores import (
    CATALOG_ID,
    JournalExistsError,
    JournalPurgedError,
    JournalStore,
    UnknownJournalError,
    open_store,
)

IDS = st.sampled_from(["a", "b", "c", "d"])
ROLES = st.sampled_from(["session", "working_memory"])


@attrs.define
class StoreModel:
    """What a store must hold: live journals in creation order, and the feed as (journal, seq)."""

    live: dict[str, tuple[str, int, bool]] = attrs.Factory(dict)  # id -> (role, records, hidden)
    purged: set[str] = attrs.Factory(set)
    feed: list[tuple[str, int]] = attrs.Factory(list)
    texts: dict[str, dict[int, str]] = attrs.Factory(dict)  # id -> seq -> the text a user record holds
    digests: dict[str, dict[int, str]] = attrs.Factory(dict)  # id -> seq -> digest, as first written
    erased: dict[str, set[int]] = attrs.Factory(dict)  # id -> the seqs whose content was erased

    def commit(self, journal_id: str, count: int = 1) -> None:
        role, records, hidden = self.live[journal_id]
        for seq in range(records + 1, records + count + 1):
            self.feed.append((journal_id, seq))
        self.live[journal_id] = (role, records + count, hidden)


def machine_for(kind: StoreKind) -> type[RuleBasedStateMachine]:
    class StoreMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.tmp = Path(tempfile.mkdtemp(prefix="waybook-store-"))
            self.url = kind.url(self.tmp)
            self.store: JournalStore = open_store(self.url)
            self.model = StoreModel()

        def teardown(self) -> None:
            self.store.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

        @rule(journal_id=IDS, role=ROLES)
        def create(self, journal_id: str, role: str) -> None:
            if journal_id in self.model.purged:
                with pytest.raises(JournalPurgedError):
                    self.store.create(journal_id, role=role)
            elif journal_id in self.model.live:
                with pytest.raises(JournalExistsError):
                    self.store.create(journal_id, role=role)
            else:
                self.store.create(journal_id, role=role, metadata={"n": len(self.model.feed)}).close()
                self.model.live[journal_id] = (role, 0, False)
                self.model.commit(journal_id)

        @rule(journal_id=IDS, count=st.integers(1, 3))
        def write(self, journal_id: str, count: int) -> None:
            if journal_id not in self.model.live:
                error = JournalPurgedError if journal_id in self.model.purged else UnknownJournalError
                with pytest.raises(error):
                    self.store.open(journal_id)
                return
            with self.store.open(journal_id) as journal:
                session = Session(journal)
                if self.model.live[journal_id][0] != "session":  # memory journals hold memory records
                    with pytest.raises(InvalidRecordError):
                        session.user("not a memory record")
                    return
                for i in range(count):
                    text = f"message {journal_id} {len(self.model.feed)} {i}"
                    record = session.user(text)
                    self.model.texts.setdefault(journal_id, {})[record.seq] = text
                    self.model.digests.setdefault(journal_id, {})[record.seq] = record.digest
            self.model.commit(journal_id, count)

        @rule(journal_id=IDS, pick=st.integers(0, 20))
        def erase_a_record(self, journal_id: str, pick: int) -> None:
            if journal_id not in self.model.live or self.model.live[journal_id][0] != "session":
                return
            records = self.model.live[journal_id][1]
            if records < 2:
                return
            seq = 2 + pick % (records - 1)
            erased = self.model.erased.setdefault(journal_id, set())
            with self.store.open(journal_id) as journal:
                receipt = erase(journal, seq, reason="asked")
            if seq in self.model.texts.get(journal_id, {}) and seq not in erased:
                assert [entry.seq for entry in receipt.erased] == [seq]
                erased.add(seq)
                self.model.commit(journal_id)
            else:  # an erasure record, or content already erased: nothing to take
                assert receipt.erased == ()

        @rule(journal_id=IDS)
        def hide(self, journal_id: str) -> None:
            if journal_id not in self.model.live:
                return
            self.store.hide(journal_id, reason="tidy")
            role, records, _ = self.model.live[journal_id]
            self.model.live[journal_id] = (role, records, True)

        @rule(journal_id=IDS)
        def purge(self, journal_id: str) -> None:
            if journal_id not in self.model.live:
                if journal_id not in self.model.purged:
                    with pytest.raises(UnknownJournalError):
                        self.store.purge(journal_id, reason="erase")
                return
            receipt = self.store.purge(journal_id, reason="erase")
            assert receipt.records == self.model.live[journal_id][1]
            del self.model.live[journal_id]
            for kept in (self.model.texts, self.model.digests, self.model.erased):
                kept.pop(journal_id, None)
            self.model.purged.add(journal_id)
            self.model.feed = [(j, s) for j, s in self.model.feed if j != journal_id]

        @precondition(lambda self: kind.persistent)
        @rule()
        def reopen(self) -> None:
            self.store.close()
            self.store = open_store(self.url)

        @rule(limit=st.integers(1, 3))
        def list_in_pages(self, limit: int) -> None:
            seen: list[str] = []
            cursor = None
            while True:
                page = self.store.list(hidden=True, after=cursor, limit=limit)
                seen += [info.journal_id for info in page]
                if page.cursor is None:
                    break
                cursor = page.cursor
            assert seen == list(self.model.live)  # dicts keep creation order

        @rule(cut=st.integers(0, 30))
        def read_the_feed_after_a_position(self, cut: int) -> None:
            everything = [e for e in self.store.feed() if e.journal_id != CATALOG_ID]
            if not everything:
                return
            cut = min(cut, len(everything) - 1)
            after = everything[cut].position
            rest = [(e.journal_id, e.seq) for e in self.store.feed(after) if e.journal_id != CATALOG_ID]
            assert rest == [(e.journal_id, e.seq) for e in everything[cut + 1 :]]

        @invariant()
        def the_feed_and_listing_match_the_model(self) -> None:
            feed = list(self.store.feed())
            assert [(e.journal_id, e.seq) for e in feed if e.journal_id != CATALOG_ID] == self.model.feed
            assert [e.position for e in feed] == sorted({e.position for e in feed})
            listed = {i.journal_id: (i.role, i.hidden) for i in self.store.list(hidden=True, limit=100)}
            assert listed == {j: (role, hidden) for j, (role, _, hidden) in self.model.live.items()}
            visible = [i.journal_id for i in self.store.list()]
            assert visible == [j for j, (_, _, hidden) in self.model.live.items() if not hidden]

        @invariant()
        def erased_content_is_gone_and_every_digest_stays(self) -> None:
            for journal_id, erased in self.model.erased.items():
                if not erased:
                    continue
                with self.store.open(journal_id) as journal:
                    assert verify(journal).ok
                    records = list(journal.read())
                    lines = b"".join(journal.read_lines())
                for seq, digest in self.model.digests[journal_id].items():
                    assert records[seq - 1].digest == digest
                    assert (records[seq - 1].erased is not None) == (seq in erased)
                for seq in erased:
                    assert self.model.texts[journal_id][seq].encode() not in lines

    StoreMachine.__name__ = f"StoreMachine_{kind.name}"
    return StoreMachine


@pytest.mark.parametrize("kind", STORES, ids=lambda k: k.name)
def test_store_matches_a_model(kind: StoreKind) -> None:
    machine = machine_for(kind)
    machine.TestCase.settings = settings(
        max_examples=25, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    machine.TestCase().runTest()
