"""The journal contract's R15 (docs/journal-contract.md): acknowledged means durable, by default.

An append that returns is on disk under the adapter's default options. The adapter shows its own
evidence through `acknowledged_durable(journal)`: for a file adapter, that every byte it wrote was
fsynced after it was written (count them through its system-call seam); for a database, that its
commits wait for the disk (SQLite `synchronous=FULL`, PostgreSQL `synchronous_commit=on`). An adapter
that keeps nothing on disk answers None and the requirement is skipped for it, saying so.
"""

from __future__ import annotations

import pytest

from waybook.journal import SessionJournal
from waybook.model import GENESIS
from waybook.testing._journal_base import JournalFactory
from waybook.testing._records import chat, reset


class DurabilityContract(JournalFactory):
    def acknowledged_durable(self, journal: SessionJournal) -> bool | None:
        """Whether everything `journal` has acknowledged is on disk now, by the adapter's own evidence;
        None for an adapter that keeps nothing on disk. Define it to prove R15."""
        msg = (
            f"{type(self).__name__} must define acknowledged_durable(journal) to prove R15: whether what "
            "the journal acknowledged is on disk now (an fsync after every write, a database's durable "
            "commit setting), or None for an adapter that keeps nothing on disk"
        )
        raise NotImplementedError(msg)

    def test_r15_an_append_that_returns_is_durable_under_the_default_options(
        self, journal: SessionJournal
    ) -> None:
        head = journal.append([self.header()], expected=GENESIS).head
        durable = self.acknowledged_durable(journal)
        if durable is None:
            pytest.skip(f"{type(self).__name__} keeps nothing on disk: R15 does not apply")
        assert durable, "the header's append returned before it was on disk"
        for n, new in enumerate(chat(4), start=2):
            head = journal.append([new], expected=head).head
            assert self.acknowledged_durable(journal), f"append {n} returned before it was on disk"
        head = journal.append(list(chat(3, start_parent="m3", prefix="b")), expected=head).head
        assert self.acknowledged_durable(journal), "a batch's append returned before it was on disk"
        journal.append([reset("r")], expected=head)
        assert self.acknowledged_durable(journal), "a leaf reset returned before it was on disk"
