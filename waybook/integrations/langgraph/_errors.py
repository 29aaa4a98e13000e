"""The typed errors of `WaybookSaver`: a stale thread, an unknown prune strategy, a copy onto a used one, a
checkpoint built on erased content."""

from __future__ import annotations

from waybook.model import Head, JournalError, StaleWriterError


class StaleThreadError(StaleWriterError):
    """Another writer committed to this thread since this saver last read it. Nothing was written."""

    def __init__(self, *, thread_id: str, checkpoint_ns: str, journal: str, expected: Head, actual: Head):
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        super().__init__(journal=journal, expected=expected, actual=actual)

    def _describe(self) -> str:
        return (
            f"thread {self.thread_id!r} (namespace {self.checkpoint_ns!r}, journal {self.journal}): another "
            f"writer committed up to seq {self.actual.seq} since this saver last read the thread at seq "
            f"{self.expected.seq}; nothing was written. Read the thread again (graph.get_state or "
            "get_tuple) and run from there."
        )


class UnknownPruneStrategyError(JournalError, ValueError):
    """`prune` was given a strategy other than "keep_latest" or "delete"."""


class ThreadExistsError(JournalError, ValueError):
    """`copy_thread` was asked to copy onto a thread that already has checkpoints."""


class CheckpointValueError(JournalError, ValueError):
    """A value stored in a thread's journal that the saver's serializer cannot read back: a type it does
    not rebuild (pickle, an unknown name), bytes that are not what their type says, or a value nested
    past what a reader follows. The journal is outside data: nothing in it was run."""

    def __init__(self, kind: str, why: str) -> None:
        self.kind = kind
        self.why = why
        shown = " ".join(why.split())[:200]
        JournalError.__init__(
            self,
            f"a stored value of type {kind[:40]!r} cannot be read back ({shown}); the thread's journal holds "
            "data this saver's serializer does not rebuild: read it with the serializer that wrote it "
            "(WaybookSaver(store, serde=...))",
        )


class UnmaskedSecretError(JournalError, ValueError):
    """`WaybookSaver(redact=...)` found a secret in a value as serialized that its masking could not reach
    (a type it does not walk). Nothing was written."""

    def __init__(
        self, *, thread_id: str, checkpoint_ns: str, where: str, holder: str, kinds: tuple[str, ...]
    ) -> None:
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.where = where
        self.holder = holder
        self.kinds = kinds
        JournalError.__init__(
            self,
            f"thread {thread_id!r} (namespace {checkpoint_ns!r}), {where}: a value of type {holder} holds a "
            f"secret ({', '.join(kinds)}) that WaybookSaver(redact=...) cannot mask, since its masking does "
            "not walk that type; nothing was written. Make the value a type the saver masks (str, list, "
            "tuple, dict, set, deque, a namedtuple, a dataclass, a pydantic model: docs/langgraph.md), or "
            "mask the secret before it reaches the graph.",
        )


class ErasedCheckpointError(JournalError, ValueError):
    """A checkpoint's channel value extends one stored in a checkpoint record whose content was erased
    (`waybook erase`, `waybook retain --erase-content`): the saver cannot rebuild the value, so the graph
    cannot resume from that checkpoint. Nothing was changed."""

    def __init__(
        self, *, thread_id: str, checkpoint_ns: str, channel: str, record_seq: int, erasure_seq: int
    ) -> None:
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.channel = channel
        self.record_seq = record_seq
        self.erasure_seq = erasure_seq
        JournalError.__init__(
            self,
            f"thread {thread_id!r} (namespace {checkpoint_ns!r}): channel {channel!r} of this checkpoint "
            f"extends the value stored at seq {record_seq}, whose content erasure #{erasure_seq} removed; "
            "the value cannot be rebuilt, so the graph cannot resume from this checkpoint. A LangGraph "
            "thread keeps its messages in its checkpoints: to forget a thread, purge it (`waybook purge "
            "--store URL JOURNAL`, or WaybookSaver(store, purge_on_delete=True) and delete_thread), and "
            'go on in a new thread (docs/langgraph.md, "Erasing a thread\'s content")',
        )
