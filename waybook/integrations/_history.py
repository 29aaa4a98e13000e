"""A runtime's message list as the path from the root to the leaf of a journal's tree.

The shared core of the Pydantic AI, Strands, Agent Framework and LlamaIndex integrations. Each message is
a tree node extending the one before it, so a key's messages are the path from the root to the leaf:

- a message with parts waybook has blocks for becomes the matching waybook kind (user, assistant, system,
  tool result) with those blocks, so the journal renders, exports and searches like any conversation;
  the runtime's own JSON of the message rides along verbatim in `details[namespace]`, and that is what is
  read back, so every part (known or not) comes back exactly;
- a message with no part waybook knows is a `waybook.custom/1` entry of type `<namespace>.message`
  holding the JSON.

A message whose record's content was erased (docs/erasure.md) is shown in its place as the runtime's
`Placeholder` makes it from the record as `waybook.model.placeholder_records` shows it in its path (the
placeholder naming the erasure; an erased call's turn with the calls its results answer), so the history
a runtime sends its model keeps every call paired; a thread read before the erasure reads the erased
records again when it folds the erasure record.

Nothing else is erased: `truncated` moves the leaf back (the removed messages stay, on an abandoned branch);
`replaced` moves the leaf back to the last message both lists share and appends the rest; `cleared`
appends a reset. `waybook tree` shows every branch.

Writes are compare-and-append. An append (`Threads.write`) decides from the journal as it is and, on a
lost race, reads again and decides again. A write that rewrites history from what this object last read
(`checked=True`: set, delete, undo, a run's new messages) presents the head it read at, and raises
`StaleHistoryError` if another writer appended since.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Final, Literal, TypeVar

import attrs
import msgspec

from waybook import new_id
from waybook._masking import SecretMask
from waybook.integrations._erased_nodes import ErasedNodes
from waybook.integrations._keyed import CLOCK, MAX_RETRIES, KeyedJournals, Tail, masked, run_inline
from waybook.integrations.errors import StaleHistoryError
from waybook.journal import next_leaf, read_seqs
from waybook.model import (
    AnyBody,
    AssistantMessage,
    Block,
    ConflictError,
    CustomEntry,
    Erasure,
    Head,
    LeafMoved,
    NewRecord,
    NodeBody,
    Record,
    Reset,
    StaleWriterError,
    SystemMessage,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)
from waybook.projections import Provider, ProviderContext, for_provider, provider_context
from waybook.stores import JournalStore

Role = Literal["user", "assistant", "system", "tool"]
Key = tuple[str, ...]
Plan = Callable[["Thread"], Sequence[AnyBody] | None]
Placeholder = Callable[[Record, Any, Any], Any]
"""A runtime's message (its JSON) shown for an erased record: called with the record as
`placeholder_records` shows it in its path, the message shown before it and the one after it (None at an
end; the one after None too when it is erased); None to show nothing."""
_MESSAGE: Final = "message"
T = TypeVar("T")


@attrs.define
class Thread:
    """The fold of one key's journal: every node (its parent and message), the leaf, the path to it."""

    decode: Callable[[Any], Any]
    mask: SecretMask | None = None
    """What the writer masks secrets with (`redact=`): the stored messages are masked, so a message
    given to compare with them is masked the same way first (`as_stored`)."""
    placeholder: Placeholder | None = None
    nodes: dict[str, tuple[str | None, Any]] = attrs.Factory(dict)
    path: list[str] = attrs.Factory(list)
    leaf: str | None = None
    live: bool = True
    """False after a reset, until the next node or leaf move: a key its runtime deleted."""
    erasures: ErasedNodes = attrs.Factory(ErasedNodes)
    """The nodes' records for the placeholders of erased ones; `Threads` reads its `stale` ones again."""

    def messages(self) -> list[Any]:
        """The messages from the root to the leaf, in order (each the runtime's JSON)."""
        return [message for _, message in self.entries()]

    def as_stored(self, message: Any) -> Any:
        """`message` (the runtime's JSON) as the journal holds it: with its secrets masked."""
        return message if self.mask is None else self.mask.value(message)

    def message_ids(self) -> list[str]:
        return [rid for rid, _ in self.entries()]

    def entries(self) -> list[tuple[str, Any]]:
        """Each message of the path with its record's id, in order; an erased one as `placeholder`
        shows it."""
        shown = self.erasures.shown(self.path)
        if shown is None:
            return [(rid, message) for rid in self.path if (message := self.nodes[rid][1]) is not None]
        found: list[tuple[str, Any]] = []
        for at, (rid, record) in enumerate(zip(self.path, shown, strict=True)):
            if rid not in self.erasures.erased:
                if (message := self.nodes[rid][1]) is not None:
                    found.append((rid, message))
                continue
            if self.placeholder is None:
                continue
            before = found[-1][1] if found else None
            after = self.nodes[self.path[at + 1]][1] if at + 1 < len(self.path) else None
            if (message := self.placeholder(record, before, after)) is not None:
                found.append((rid, message))
        return found

    def apply(self, record: Record) -> Thread:
        body = record.body
        if body.IS_NODE:
            self._node(record, body.parent)  # type: ignore[union-attr]
            self.path.append(record.id)
        elif isinstance(body, LeafMoved | Reset):
            target = next_leaf(self.leaf, record.id, body)
            self.path = self.path[: self.path.index(target) + 1] if target in self.path else self._to(target)
        elif isinstance(body, Erasure):
            self.erasures.erasure(record, body)
        self.leaf = next_leaf(self.leaf, record.id, body)
        if body.IS_NODE or isinstance(body, LeafMoved | Reset):
            self.live = not isinstance(body, Reset)
        return self

    def refresh(self, records: Sequence[Record]) -> None:
        """Take `records` (the `stale` ones, read again after their erasure) in place of what was held."""
        for record in records:
            self._node(record, self.nodes[record.id][0])
        self.erasures.stale.clear()

    def _node(self, record: Record, parent: str | None) -> None:
        erased = self.erasures.node(record)
        self.nodes[record.id] = (parent, None if erased else self.decode(record.body))

    def _to(self, node: str | None) -> list[str]:
        path: list[str] = []
        while node is not None:
            path.append(node)
            node = self.nodes[node][0]
        return path[::-1]


# --- messages as nodes ----------------------------------------------------------------------------------


def node(namespace: str, role: Role | None, message: Any, blocks: Sequence[Block], **tool: Any) -> NodeBody:
    """The node recording `message` (the runtime's JSON, kept verbatim) as `role` with `blocks`.

    `role=None`, or no blocks, records it as a custom entry. A tool result takes `call_id` (and
    optionally `tool_name`, `is_error`) in `tool`.
    """
    details = {namespace: message}
    content = tuple(blocks)
    if role is None or not content:
        return CustomEntry(parent=None, type=f"{namespace}.{_MESSAGE}", data=message)
    if role == "user":
        return UserMessage(parent=None, content=content, details=details)
    if role == "system":
        return SystemMessage(parent=None, content=content, details=details)
    if role == "tool":
        return ToolResult(parent=None, content=content, details=details, **tool)
    stop = "tool_use" if any(isinstance(block, ToolCallBlock) for block in content) else "end_turn"
    return AssistantMessage(parent=None, content=content, stop_reason=stop, details=details)


def message_of(namespace: str, body: Any) -> Any:
    """The runtime's message a node records, or None for a node that is not one of this runtime's."""
    if isinstance(body, CustomEntry):
        return body.data if body.type == f"{namespace}.{_MESSAGE}" else None
    details = getattr(body, "details", None)
    return details.get(namespace) if isinstance(details, dict) else None


def result_text(value: Any) -> str:
    """A tool result or message content as text: a string as it is, anything else as sorted JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict for a `ToolCallBlock` (a JSON object in a string is parsed)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return dict(value) if isinstance(value, dict) else {}


# --- plans: what to append, decided from a thread -------------------------------------------------------


def extended(messages: Sequence[Any], encode: Callable[[Any], NodeBody]) -> list[AnyBody]:
    return [encode(message) for message in messages]


def truncated(thread: Thread, keep: int, reason: str) -> list[AnyBody]:
    """Keep the first `keep` messages: a leaf move back to the last kept one (nothing if none is dropped)."""
    ids = thread.message_ids()
    if keep >= len(ids):
        return []
    target = ids[keep - 1] if keep > 0 else None
    return [LeafMoved(from_leaf=thread.leaf, to_leaf=target, reason=reason)]


def replaced(
    thread: Thread, messages: Sequence[Any], encode: Callable[[Any], NodeBody], reason: str
) -> list[AnyBody]:
    """Make the messages `messages`: keep the prefix both share, move the leaf there, append the rest."""
    current = thread.messages()
    shared = 0
    while shared < min(len(current), len(messages)) and current[shared] == thread.as_stored(messages[shared]):
        shared += 1
    return truncated(thread, shared, reason) + extended(messages[shared:], encode)


def cleared(thread: Thread, reason: str) -> list[AnyBody]:
    return [Reset(reason=reason)] if thread.path else []


# --- the journals ---------------------------------------------------------------------------------------


def _fold(decode: Callable[[Any], Any], mask: SecretMask | None, placeholder: Placeholder | None) -> Thread:
    return Thread(decode, mask, placeholder)


def _apply(thread: Thread, record: Record) -> Thread:
    return thread.apply(record)


class Threads:
    """One runtime's threads in a store: a journal per key (`KeyedJournals`), folded to `Thread`s.

    Thread-safe; safe across processes wherever the store is (every write is a compare-and-append).
    """

    def __init__(
        self,
        store: JournalStore,
        *,
        runtime: str,
        prefix: str,
        fields: tuple[str, ...],
        decode: Callable[[Any], Any],
        mask: SecretMask | None = None,
        placeholder: Placeholder | None = None,
    ) -> None:
        """`mask` masks secrets in every message before it is appended (the integration's `redact=`);
        `placeholder` makes the message shown for an erased record (None: erased messages are left out)."""
        blocking: JournalStore = getattr(store, "blocking", store)  # a ThreadedStore's blocking store
        self.keyed = KeyedJournals(
            blocking,
            runtime=runtime,
            prefix=prefix,
            fields=fields,
            initial=partial(_fold, decode, mask, placeholder),
            apply=_apply,
            mask=mask,
        )
        self._seen: dict[Key, Head | None] = {}  # None: read when the key had no journal yet

    @property
    def store(self) -> JournalStore:
        return self.keyed.store

    def read(self, key: Key) -> Thread | None:
        """The key's thread as committed now (None if it has no journal); remembered for checked writes."""
        with self.keyed.lock:
            tail = self.keyed.tail(key, create=False)
            if tail is None:
                self._seen[key] = None
                return None
            self._seen[key] = tail.head
            return _current(tail)

    def journal_id(self, key: Key) -> str | None:
        return self.keyed.current(key)

    def for_provider(self, key: Key, provider: Provider) -> ProviderContext:
        """The key's messages as a model context in `provider`'s request JSON, every repair reported
        (waybook.projections.for_provider); empty when the key has no journal."""
        with self.keyed.lock:
            tail = self.keyed.tail(key, create=False)
            if tail is None:
                return for_provider((), provider)
            return provider_context(tail.journal, provider, blobs=getattr(self.store, "blobs", None))

    def write(self, key: Key, plan: Plan, *, checked: bool = False) -> Thread:
        """Append what `plan` decides from the key's thread, as one atomic batch.

        Unchecked, a lost race reads again and decides again. Checked, the batch is appended at the head
        this object last read or wrote for the key (the current head if it never did), and
        StaleHistoryError says another writer came first.
        """
        with self.keyed.lock:
            for _ in range(MAX_RETRIES):
                tail = self.keyed.tail(key, create=True)
                assert tail is not None
                known = self._known(key, tail)
                expected = known if checked and known is not None else tail.head
                bodies = plan(_current(tail))
                if not bodies:
                    return tail.state
                try:
                    _append(tail, bodies, expected)
                except StaleWriterError as stale:
                    if not checked:
                        continue
                    raise StaleHistoryError(
                        journal=tail.journal.name, key=" / ".join(key), expected=expected, actual=stale.actual
                    ) from None
                if checked or known == expected:  # this object has now seen every record up to its own
                    self._seen[key] = tail.head
                return tail.state
        msg = f"{' / '.join(key)}: lost {MAX_RETRIES} append races in a row to other writers; retry later"
        raise ConflictError(msg)

    def _known(self, key: Key, tail: Tail[Thread]) -> Head | None:
        """The head this object last read or wrote for `key` (its journal's first record if it had no
        journal then), or None if it never did: an unchecked append does not make a stale reader current."""
        if key not in self._seen:
            return None
        seen = self._seen[key]
        if seen is None:
            first = next(iter(tail.journal.read(limit=1)))
            return Head.of(first)
        return seen


def _current(tail: Tail[Thread]) -> Thread:
    """The tail's thread, the records an erasure took since they were read read again."""
    thread = tail.state
    if thread.erasures.stale:
        thread.refresh(read_seqs(tail.journal, sorted(thread.erasures.stale)))
    return thread


def _append(tail: Tail[Thread], bodies: Sequence[AnyBody], expected: Head) -> None:
    """Append `bodies` at `expected`, each node chained to the record before it; then read them back."""
    batch, leaf, at = [], tail.leaf, CLOCK()  # one storage time for the whole batch
    for body in masked(tail.mask, bodies):
        record_id = new_id()
        if body.IS_NODE:
            body = msgspec.structs.replace(body, parent=leaf)
        batch.append(NewRecord(id=record_id, at=at, body=body))
        leaf = next_leaf(leaf, record_id, body)
    tail.journal.append(batch, expected=expected)
    tail.refresh()


async def in_worker(store: JournalStore, action: Callable[[], T]) -> T:
    """Run blocking store work in a worker thread (inline for the memory store, which never blocks)."""
    if run_inline(store):
        return action()
    return await asyncio.to_thread(action)
