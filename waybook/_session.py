"""`Session`: the high-level writer an agent runtime holds for one conversation.

It knows the head and the leaf it last saw, builds records with fresh ids and UTC timestamps, and
presents its head on every append. If another writer won, the append raises StaleWriterError and the
session is unchanged; `sync()` catches up and the caller decides again.

The decisions are the session core's (waybook._session_core) and the methods are written once for both
writers (waybook._session_methods); this module is the blocking I/O around them.
"""

from __future__ import annotations

from collections.abc import Callable

from waybook._offload import offload
from waybook._session_core import (
    Batch,
    Entry,
    ForkTarget,
    SessionCore,
    SubagentRequest,
    ToolOutcome,
    WriterOptions,
    knows_position,
)
from waybook._session_methods import SessionMethods
from waybook.journal import JsonlJournal, SessionJournal, new_id, utc_now
from waybook.model import GENESIS, AppendResult, Content, Header, InvalidRecordError, Record
from waybook.projections import Provider, ProviderContext, provider_context

__all__ = ["Session", "ToolOutcome", "new_id", "utc_now"]


class Session(SessionMethods[SessionJournal, Record, AppendResult, "Session"]):
    """Writes one conversation into a journal. Not thread-safe: use one Session per writer.

    A journal with a `position()` method (head and leaf together; both waybook adapters have one) is
    joined at its head without reading it; any other is read from the start to find the leaf.
    """

    _WHO = "Session"

    @property
    def journal(self) -> SessionJournal:
        return self._journal

    def for_provider(self, provider: Provider) -> ProviderContext:
        """The model context at this session's leaf as `provider`'s request JSON, with every repair
        reported (waybook.projections.for_provider); the journal is not touched."""
        core = self._core
        return provider_context(self._journal, provider, leaf=core.leaf, blobs=core.blobs)

    def sync(self) -> int:
        """Catch up with records other writers committed; returns how many were read."""
        core = self._core
        count = 0
        record = None
        for record in self._journal.read(after=core.head.seq):
            core.saw(record)
            count += 1
        core.caught_up(record)
        return count

    def _attach(self, journal: SessionJournal) -> None:
        self._journal = journal
        if not knows_position(journal):
            self.sync()
            return
        # The journal knows its head and leaf: start there instead of reading every record.
        head, leaf = journal.position()
        seq = self._core.join(head, leaf)
        if seq is not None:
            for last in journal.read(after=seq - 1, limit=1):
                self._core.caught_up(last)

    @classmethod
    def _create(
        cls, journal: SessionJournal, options: WriterOptions, header: Callable[[SessionCore], Header]
    ) -> Session:
        session = cls._on(journal, options)
        if session.head == GENESIS:
            session.append(header(session._core))
        return session

    def _write(self, entry: Entry) -> Record:
        core = self._core
        if core.mask is None:
            content = self._offloaded(entry.content) if entry.offloads else entry.content
        else:
            content, big, found = core.masked_entry(entry)
            content = self._offloaded(content) if big else content
        history = self._journal.read(limit=core.head.seq) if entry.reads_history and core.head.seq else None
        body = entry.build(core, content, history)
        if core.mask is not None:
            body = core.masked_body(body, found)
        return core.committed_one(self._journal.append((core.stamp(body),), expected=core.head))

    def _write_batch(self, batch: Batch) -> AppendResult:
        contents, big, found = self._core.masked_contents(batch)
        final = [
            self._offloaded(content) if off else content for content, off in zip(contents, big, strict=True)
        ]
        records = self._core.masked_records(batch.build(final), final, found)
        result = self._journal.append(records, expected=self._core.head)
        self._core.committed(result)
        return result

    def _fork(self, node_id: str, journal: SessionJournal, journal_id: str | None) -> Session:
        core = self._core
        head = journal.head()
        header = next(iter(journal.read(limit=1))).body if head.seq == 1 else None
        fork = core.fork(
            node_id, into=journal.name, into_head=head, journal_id=journal_id, into_header=header
        )
        source = self._journal.read(limit=core.head.seq) if core.head.seq else iter(())
        journal.append(fork.records(source), expected=fork.expected)
        return Session._on(journal, core.fork_options())

    def _start_subagent(self, journal: SessionJournal, asked: SubagentRequest) -> Session:
        core = self._core
        own = next(iter(self._journal.read(limit=1)), None)
        child_id, node, named = core.subagent(asked, own.body if own else None)
        if journal.head() != GENESIS:
            msg = f"a sub-agent's session starts in an empty journal; {journal.name} has records already"
            raise InvalidRecordError(msg, journal=journal.name)
        child = Session._create(
            journal, core.fork_options(), lambda sub: sub.header(child_id, "waybook", named, "session")
        )
        self.link_subagent(child_id, at=node, call_id=asked.call_id, agent=asked.agent, reason=asked.reason)
        return child

    def _fork_to(self, node_id: str, target: ForkTarget) -> Session:
        core = self._core
        fork = core.fork(node_id, into=target.name, into_head=GENESIS, journal_id=target.journal_id)
        source = self._journal.read(limit=core.head.seq) if core.head.seq else iter(())
        records = fork.records(source)  # decided (the node found, every copy made) before anything exists
        if target.path is not None:
            journal: SessionJournal = JsonlJournal.create_holding(target.path, records)
        else:
            journal = target.store.create(target.journal_id, header=False)
            journal.append(records, expected=GENESIS)
        return Session._on(journal, core.fork_options())

    def _offloaded(self, content: Content) -> Content:
        """`content` with its blocks over the inline limit stored as blobs (waybook._offload)."""
        core = self._core
        content, _refs = offload(content, blobs=core.blobs, limit=core.inline_limit)
        return content  # the refs' leases expire on their own: see waybook.stores._blobs
