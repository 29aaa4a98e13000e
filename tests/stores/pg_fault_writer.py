"""A writer process for the PostgreSQL fault tests.

Usage: python -m tests.stores.pg_fault_writer URL NAME JOURNAL_ID...
Round-robins over the journals until killed, appending either one user message or a turn batch (a user
message and the assistant reply, one append) with compare-and-append, catching up on conflict. Prints
`journal seq id` for every record of every append that returned, flushed at once, so a parent that
kills this process (or the server) knows exactly what was acknowledged. Connection failures are the
store's to absorb (it resends; R7 makes that safe): any error that escapes ends this process non-zero.
"""

from __future__ import annotations

import itertools
import sys

from waybook import StaleWriterError
from waybook.journal import SessionJournal
from waybook.journal._roles.session import next_leaf
from waybook.model import AssistantMessage, Head, NewRecord, UserMessage, text
from waybook.stores import open_store

AT = "2026-12-01T12:00:00.000Z"


class Writer:
    """One journal as this process knows it: the head and leaf it last saw."""

    def __init__(self, journal: SessionJournal) -> None:
        self.journal = journal
        self.head = Head(0, "")
        self.leaf: str | None = None
        self.catch_up()

    def catch_up(self) -> None:
        for record in self.journal.read(after=self.head.seq):
            self.head = Head.of(record)
            self.leaf = next_leaf(self.leaf, record.id, record.body)

    def append(self, key: str, turn: bool) -> list[tuple[int, str]]:
        question = NewRecord(id=f"{key}-q", at=AT, body=UserMessage(parent=self.leaf, content=text(key)))
        batch = [question]
        if turn:
            reply = AssistantMessage(parent=question.id, content=text("answer"), stop_reason="end_turn")
            batch.append(NewRecord(id=f"{key}-a", at=AT, body=reply))
        result = self.journal.append(batch, expected=self.head)
        for record in result.records:
            self.head = Head.of(record)
            self.leaf = next_leaf(self.leaf, record.id, record.body)
        return [(record.seq, record.id) for record in result.records]


def main() -> None:
    url, name, journal_ids = sys.argv[1], sys.argv[2], sys.argv[3:]
    store = open_store(url)
    writers = [Writer(store.open(journal_id)) for journal_id in journal_ids]
    for i in itertools.count():
        journal_id, writer = journal_ids[i % len(writers)], writers[i % len(writers)]
        while True:
            try:
                acknowledged = writer.append(f"{name}-{i}", turn=i % 3 == 0)
                break
            except StaleWriterError:
                writer.catch_up()
        for seq, record_id in acknowledged:
            print(journal_id, seq, record_id, flush=True)


if __name__ == "__main__":
    main()
