"""The typed errors of `WaybookSaver`: a stale thread, an unknown prune strategy, a copy onto a used one."""

from __future__ import annotations

from waybook.model._errors import JournalError, StaleWriterError
from waybook.model._head import Head


class StaleThreadError(StaleWriterError):
    """Another writer committed to this thread since this saver last read it. Nothing was written."""

    def __init__(self, *, thread_id: str, checkpoint_ns: str, journal: str, expected: Head, actual: Head):
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.journal = journal
        self.expected = expected
        self.actual = actual
        msg = (
            f"thread {thread_id!r} (namespace {checkpoint_ns!r}, journal {journal}): another writer "
            f"committed up to seq {actual.seq} since this saver last read the thread at seq {expected.seq}; "
            "nothing was written. Read the thread again (graph.get_state or get_tuple) and run from there."
        )
        JournalError.__init__(self, msg)


class UnknownPruneStrategyError(JournalError, ValueError):
    """`prune` was given a strategy other than "keep_latest" or "delete"."""


class ThreadExistsError(JournalError, ValueError):
    """`copy_thread` was asked to copy onto a thread that already has checkpoints."""
