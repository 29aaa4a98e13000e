"""One journal of the store fed by one growing import: what `waybook watch` appends, and the check that
what it appended still agrees with the source.

A lane knows how far its journal goes: `final` records that no later source line can change, then
`extra` records written when the source settled (the message it ended on, closed), which a later line
must agree with. Each `write` gets the import's records as they are now: it checks that the journal's
records are still their start (else `JournalDivergedError`: the watcher starts a new journal) and appends
the rest, one record an append. Only records are compared (id, time, body): a journal written before
imports appended one record at a time keeps its digests and grows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from waybook._offload import images_as_blobs
from waybook.commands.growth import JournalDivergedError, batches, held_prefix, same_record
from waybook.journal import SessionJournal
from waybook.model import GENESIS, BatchPlace, Head, Header, NewRecord
from waybook.stores import JournalStore

Prepare = Callable[[NewRecord], NewRecord]
"""What a record becomes in the store (a sub-agent's header names its session)."""


class Lane:
    def __init__(
        self,
        store: JournalStore,
        journal_id: str,
        *,
        prepare: Prepare | None = None,
        catalog: Mapping[str, Any] | None = None,
    ) -> None:
        self.store = store
        self.journal_id = journal_id
        self._prepare = prepare
        self._catalog = dict(catalog or {})
        self.head = GENESIS
        self.final = 0
        self.extra: list[NewRecord] = []
        self._journal: SessionJournal | None = None
        self.attached = False

    # --- finding where the journal stands ------------------------------------------------------------

    def attach(
        self,
        *,
        head: Head | None,
        final: int,
        records: Sequence[NewRecord],
        pending: Callable[[], Sequence[NewRecord]],
    ) -> None:
        """Open the journal (if it exists) and learn where it stands: as the cursor says (its `head`, of
        which the first `final` records are final) when the journal's head is that one; else by comparing
        it, record by record, with the import's `records` and what the source's end adds (`pending`).
        Raises JournalDivergedError."""
        self.attached = True
        if not self.store.exists(self.journal_id):
            self.head, self.final, self.extra = GENESIS, 0, []
            return
        journal = self._open()
        actual = journal.head()
        if head is not None and actual == head and final <= head.seq:
            self.head, self.final = actual, final
            self.extra = [NewRecord(id=r.id, at=r.at, body=r.body) for r in journal.read(after=final)]
            return
        every = [self.prepared(r) for r in [*records, *pending()]]
        held = held_prefix(journal, self.journal_id, every)
        self.head = journal.head()
        self.final = min(held, len(records))
        self.extra = every[self.final : held]

    # --- writing --------------------------------------------------------------------------------------

    def write(
        self,
        final: Sequence[NewRecord],
        pending: Sequence[NewRecord] | None = None,
        *,
        places: Sequence[BatchPlace | None] | None = None,
    ) -> int:
        """Bring the journal up to `final`, and to `pending` too when it is given (the source settled):
        check that the records written past the final ones agree with the import as it is now, then
        append the rest. Returns the records appended; raises JournalDivergedError."""
        every = [*final, *(pending or ())]
        written = self.head.seq
        for index in range(self.final, min(written, len(every))):
            held = self.extra[index - self.final]
            if not same_record(held, self.prepared(every[index])):
                why = f"record {held.id!r} changed since it was written (the source went on differently)"
                raise JournalDivergedError(self.journal_id, index + 1, why)
        if pending is not None and written > len(every):
            why = f"it holds {written} records, the source's import {len(every)}"
            raise JournalDivergedError(self.journal_id, len(every) + 1, why)
        settled = max(self.final, min(len(final), written))
        self.extra = self.extra[settled - self.final :]
        self.final = settled
        if written >= len(every):
            return 0  # the journal is ahead: its settled records are still open in the source
        appended = self._append(every[written:], places=places[written:] if places else None)
        self.final = max(self.final, len(final))
        self.extra = [self.prepared(r) for r in every[self.final :]]
        return appended

    def prepared(self, record: NewRecord) -> NewRecord:
        """`record` as the store keeps it: images as blobs, and what `prepare` makes of it."""
        record = record if self._prepare is None else self._prepare(record)
        return images_as_blobs([record])[0][0]

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    # --- the rest -------------------------------------------------------------------------------------

    def _append(self, records: Sequence[NewRecord], *, places: Sequence[BatchPlace | None] | None) -> int:
        if not records:
            return 0
        prepared = [r if self._prepare is None else self._prepare(r) for r in records]
        records, blobs = images_as_blobs(prepared)
        for data, media_type in blobs.values():  # a blob is stored before the record that references it
            self.store.blobs.put(data, media_type=media_type)
        journal = self._open(create_with=records[0])
        head = self.head
        for batch in batches(records, places):
            head = journal.append(batch, expected=head).head
        journal.flush()
        appended = head.seq - self.head.seq
        self.head = head
        return appended

    def _open(self, create_with: NewRecord | None = None) -> SessionJournal:
        if self._journal is None:
            if create_with is not None and not self.store.exists(self.journal_id):
                header = create_with.body
                metadata = dict(header.metadata) if isinstance(header, Header) else {}
                role = header.role if isinstance(header, Header) else "session"
                self._journal = self.store.create(
                    self.journal_id, role=role, metadata=metadata | self._catalog, header=False
                )
            else:
                self._journal = self.store.open(self.journal_id)
        return self._journal
