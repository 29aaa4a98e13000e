"""`WaybookSession`: an OpenAI Agents SDK session on any waybook store (docs/openai-agents.md).

One journal per session id. Each item is a tree node extending the last one, so the items are the path
from the root to the leaf. Nothing is erased: `pop_item` moves the leaf back to the popped item's parent
(the item stays in the journal, on an abandoned branch), `clear_session` appends a reset, and the SDK's
compaction replaces history with one atomic append (a leaf move and the compacted items), never a
clear followed by an add.

Writes are compare-and-append: each decides from the journal as it is, appends with that head, and if
another writer got there first (another process on the same store), reads again and decides again.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs

from waybook._masking import Redact, secret_mask
from waybook._session import new_id, utc_now
from waybook.integrations._erased_nodes import ErasedNodes
from waybook.integrations._stores import StoreLike, journal_id_for, open_or_create
from waybook.integrations.openai_agents._items import body_of, erased_items, item_of
from waybook.journal import SessionJournal, next_leaf, read_seqs
from waybook.model import (
    GENESIS,
    AnyBody,
    Erasure,
    Head,
    LeafMoved,
    NewRecord,
    Record,
    Reset,
    StaleWriterError,
)
from waybook.projections import Provider, ProviderContext, provider_context

if TYPE_CHECKING:
    from agents.memory.session_settings import SessionSettings

RUNTIME: Final = "openai-agents"
RETRIES: Final = 32
"""How many times a write reads again after losing a race before it gives up with StaleWriterError."""

_T = TypeVar("_T")


@attrs.define
class ItemsState:
    """The fold of a session journal: every node (its parent and item), the leaf, and the path to it.

    An erased node's item is shown as `erased_items` shows it. An erasure folded after its records were
    read names them in `erasures.stale`: the session reads them again (`refresh`), so the items it held
    for them are dropped and their text is never shown again."""

    head: Head = GENESIS
    leaf: str | None = None
    nodes: dict[str, tuple[str | None, Any]] = attrs.field(factory=dict)
    path: list[str] = attrs.field(factory=list)
    """Record ids from the root to the leaf: the items `get_items` returns, in order."""
    erasures: ErasedNodes = attrs.field(factory=ErasedNodes)

    def apply(self, records: Sequence[Record] | Any) -> None:
        for record in records:
            body = record.body
            if body.IS_NODE:
                parent: str | None = body.parent  # type: ignore[union-attr]
                self._node(record, parent)
                if parent != self.leaf:  # pragma: no cover - the journal's rules forbid it
                    msg = f"node {record.id} does not extend the leaf"
                    raise AssertionError(msg)
                self.path.append(record.id)
            elif isinstance(body, LeafMoved | Reset):
                target = next_leaf(self.leaf, record.id, body)
                if len(self.path) >= 2 and self.path[-2] == target:
                    self.path.pop()
                else:
                    self.path = self._path_to(target)
            elif isinstance(body, Erasure):
                self.erasures.erasure(record, body)
            self.leaf = next_leaf(self.leaf, record.id, body)
            self.head = Head.of(record)

    def refresh(self, records: Sequence[Record]) -> None:
        """Take `records` (the `stale` ones, read again after their erasure) in place of what was held."""
        for record in records:
            self._node(record, self.nodes[record.id][0])
        self.erasures.stale.clear()

    def _node(self, record: Record, parent: str | None) -> None:
        erased = self.erasures.node(record)
        self.nodes[record.id] = (parent, None if erased else item_of(record.body))

    def _path_to(self, node: str | None) -> list[str]:
        path: list[str] = []
        while node is not None:
            path.append(node)
            node = self.nodes[node][0]
        path.reverse()
        return path

    def entries(self) -> list[tuple[str, Any]]:
        """Each item of the path with its record's id, in order (an erased record's as `erased_items`
        shows it: one record may show several)."""
        shown = self.erasures.shown(self.path)
        if shown is None:
            return [(rid, item) for rid in self.path if (item := self.nodes[rid][1]) is not None]
        found: list[tuple[str, Any]] = []
        for rid, record in zip(self.path, shown, strict=True):
            if rid in self.erasures.erased:
                found += [(rid, item) for item in erased_items(record)]
            elif (item := self.nodes[rid][1]) is not None:
                found.append((rid, item))
        return found

    def items(self) -> list[Any]:
        return [item for _, item in self.entries()]

    def item_ids(self) -> list[str]:
        return [rid for rid, _ in self.entries()]


class WaybookSession:
    """The SDK's `Session` protocol on a waybook store: `WaybookSession(session_id, store)`.

    Sessions with the same id on the same store share one history, across objects and processes.
    """

    def __init__(
        self,
        session_id: str,
        store: StoreLike,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        actor: str = "openai-agents",
        redact: Redact = False,
    ) -> None:
        """`redact` masks secrets in every item before it is stored: True with the built-in detector (the
        one `export --redact` uses), or a list of extra regular expressions to mask too (as `Session`'s;
        docs/erasure.md)."""
        self._mask = secret_mask(redact, who="WaybookSession")
        from agents.memory.session_settings import SessionSettings, coerce_session_settings

        self.session_id = session_id
        self.session_settings: SessionSettings | None = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )
        self.store = store
        self.actor = actor
        self.journal_id = journal_id_for(RUNTIME, session_id)
        self._journal: SessionJournal | None = None
        self._state = ItemsState()
        self._lock = threading.RLock()

    # --- the Session protocol -------------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items in order; with `limit` (or `session_settings.limit`), the latest N."""
        from agents.memory.session_settings import resolve_session_limit

        return await asyncio.to_thread(self.items_now, resolve_session_limit(limit, self.session_settings))

    async def add_items(self, items: list[Any]) -> None:
        """Append `items`, all or none, after whatever the session holds now."""
        if not items:
            return
        batch = list(items)
        await _settle(asyncio.to_thread(self.add_items_now, batch))

    async def pop_item(self) -> Any | None:
        """The latest item, removed from the session: the leaf moves back; the item stays recorded."""
        return await _settle(asyncio.to_thread(self.pop_item_now))

    async def clear_session(self) -> None:
        """Empty the session with a reset; every earlier item stays in the journal for auditors."""
        await _settle(asyncio.to_thread(self.clear_session_now))

    # --- the SDK's compaction hooks (OpenAIResponsesCompactionSession uses them when present) ----------

    async def _atomic_replace_items(self, items: list[Any]) -> bool:
        """Replace the whole history with `items` in one append (a leaf move to a new root, then them)."""
        batch = list(items)

        def replace() -> bool:
            self._write(lambda state: self._replace_plan(state, 0, batch, "compaction replaced the history"))
            return True

        return await _settle(asyncio.to_thread(replace))

    async def _get_compaction_snapshot(
        self, limit: int, *, prune_prefix: Callable[[Any], bool] | None = None
    ) -> Any:
        """The latest `limit` items and a `replace_suffix` that swaps a suffix of them for compacted
        items in one append, only if the session has not changed since this snapshot."""
        from agents.memory.session import _CompactionSnapshot

        def read() -> tuple[list[str], list[Any], bool, Head]:
            with self._lock:
                self._sync()
                state = self._state
                entries = state.entries()
                window = entries[-limit:] if limit > 0 else []
                ids, items = [rid for rid, _ in window], [item for _, item in window]
                return ids, items, len(entries) <= limit, state.head

        window, items, complete, seen = await asyncio.to_thread(read)

        async def replace_suffix(start: int, output: list[Any]) -> bool:
            suffix = window[start:]
            if not suffix:
                return False
            batch = list(output)

            def replace() -> bool:
                with self._lock:
                    self._sync()
                    if self._state.head != seen:
                        return False  # the session changed since the snapshot: keep it as it is
                    keep = len(self._state.item_ids()) - len(suffix)
                    plan = self._replace_plan(
                        self._state, keep, batch, "compaction replaced the latest items", prune_prefix
                    )
                    try:
                        self._append(plan)
                    except StaleWriterError:
                        return False
                    return True

            return await _settle(asyncio.to_thread(replace))

        return _CompactionSnapshot(items, complete, replace_suffix)

    # --- blocking twins (what the async methods run in a worker thread) --------------------------------

    def items_now(self, limit: int | None = None) -> list[Any]:
        with self._lock:
            self._sync()
            items = self._state.items()
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    def add_items_now(self, items: list[Any]) -> None:
        if items:
            self._write(lambda state: self._nodes_after(state.leaf, items))

    def pop_item_now(self) -> Any | None:
        popped: list[Any] = []

        def plan(state: ItemsState) -> list[AnyBody]:
            popped.clear()
            entries = state.entries()
            if not entries:
                return []
            last, item = entries[-1]
            parent = state.nodes[last][0]
            popped.append(item)
            return [
                LeafMoved(
                    from_leaf=state.leaf, to_leaf=parent, reason="openai-agents: pop_item", actor=self.actor
                )
            ]

        self._write(plan)
        return popped[0] if popped else None

    def clear_session_now(self) -> None:
        self._write(
            lambda state: (
                [Reset(reason="openai-agents: clear_session", actor=self.actor)] if state.path else []
            )
        )

    # --- internals -------------------------------------------------------------------------------------

    def _replace_plan(
        self,
        state: ItemsState,
        keep: int,
        output: list[Any],
        reason: str,
        prune_prefix: Callable[[Any], bool] | None = None,
    ) -> list[AnyBody]:
        """Keep the first `keep` items, then `output`: a leaf move back to the last kept item (or to a new
        root, re-adding the kept items when `prune_prefix` drops some from the front), then the nodes."""
        entries = state.entries()[:keep]
        ids, kept = [rid for rid, _ in entries], [item for _, item in entries]
        expired = 0
        if prune_prefix is not None:
            while expired < len(kept) and prune_prefix(kept[expired]):
                expired += 1
        if expired:
            target, again = None, kept[expired:]
        else:
            target, again = (ids[-1] if ids else None), []
        bodies: list[AnyBody] = []
        if state.leaf != target:
            bodies.append(
                LeafMoved(
                    from_leaf=state.leaf, to_leaf=target, reason=f"openai-agents: {reason}", actor=self.actor
                )
            )
        return bodies + self._nodes_after(target, again + output)

    @staticmethod
    def _nodes_after(parent: str | None, items: list[Any]) -> list[AnyBody]:
        """Nodes for `items`, the first after `parent`; `_append` chains the rest as it gives them ids."""
        return [body_of(item, parent) for item in items]

    def _write(self, plan: Callable[[ItemsState], list[AnyBody]]) -> None:
        """Decide from the journal as it is and append; after losing a race, read again and retry."""
        with self._lock:
            for attempt in range(RETRIES):
                self._sync()
                bodies = plan(self._state)
                if not bodies:
                    return
                try:
                    self._append(bodies)
                except StaleWriterError:
                    if attempt == RETRIES - 1:
                        raise
                else:
                    return

    def _append(self, bodies: list[AnyBody]) -> None:
        """Append `bodies` as one batch at the known head, chaining each node to the record before it."""
        records: list[NewRecord] = []
        leaf = self._state.leaf
        for body in bodies if self._mask is None else [self._mask.body(body) for body in bodies]:
            if body.IS_NODE:
                body = _with_parent(body, leaf)
            rid = new_id()
            records.append(NewRecord(id=rid, at=utc_now(), body=body))
            leaf = next_leaf(leaf, rid, body)
        result = self._journal_now().append(records, expected=self._state.head)
        self._state.apply(result.records)

    def _sync(self) -> None:
        journal = self._journal_now()
        self._state.apply(journal.read(after=self._state.head.seq))
        stale = self._state.erasures.stale
        if stale:  # records erased since they were read: never show what they held again
            self._state.refresh(read_seqs(journal, sorted(stale)))

    def _journal_now(self) -> SessionJournal:
        if self._journal is None:
            metadata = {"runtime": RUNTIME, "session_id": self.session_id}
            self._journal = open_or_create(self.store, self.journal_id, metadata)
        return self._journal

    def for_provider(self, provider: Provider) -> ProviderContext:
        """The session's items as a model context in `provider`'s request JSON, every repair reported
        (waybook.projections.for_provider: a call the run never answered gets a synthetic result)."""
        with self._lock:
            return provider_context(self._journal_now(), provider, blobs=getattr(self.store, "blobs", None))

    def close(self) -> None:
        with self._lock:
            if self._journal is not None:
                self._journal.close()
                self._journal = None
                self._state = ItemsState()


def _with_parent(body: AnyBody, parent: str | None) -> AnyBody:
    import msgspec

    return msgspec.structs.replace(body, parent=parent)


async def _settle(work: Awaitable[_T]) -> _T:
    """Await a write to the end even if the caller is cancelled meanwhile, then report the cancellation:
    a write that committed is never mistaken for one that did not."""
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    result = task.result()
    if cancelled is not None:
        raise cancelled
    return result
