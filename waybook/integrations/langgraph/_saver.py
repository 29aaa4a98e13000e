"""`WaybookSaver`: a LangGraph checkpointer on any waybook store (docs/langgraph.md).

One journal per thread and checkpoint namespace. A checkpoint is a tree node holding only what changed
(a list that grew is stored as the elements it gained); pending writes are annotations on their
checkpoint; a put whose parent is not the latest checkpoint is a leaf move then a node (a fork);
`delete_thread` is a reset, `delete_for_runs` and `prune` hide checkpoints. Nothing is rewritten. The
messages a checkpoint's `messages` channel gained are session nodes written just before it, in its batch
(`_nodes`), so the thread reads as a session.

One saver is one writer: it presents, on every write, the journal head it last read or wrote. A
second writer that wrote to the thread in between makes the write fail with `StaleThreadError`, and
nothing is written (LangGraph's own savers let the later write win silently).
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Final

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from waybook._masking import Redact, secret_mask
from waybook._session import new_id, utc_now
from waybook.integrations._stores import StoreLike, journal_id_for, listed, open_or_create
from waybook.integrations.langgraph._codec import dump, dump_field, load, load_field
from waybook.integrations.langgraph._errors import (
    StaleThreadError,
    ThreadExistsError,
    UnknownPruneStrategyError,
    UnmaskedSecretError,
)
from waybook.integrations.langgraph._nodes import MESSAGES, MessagePlan, messages_of, node_body, plan
from waybook.integrations.langgraph._secrets import CheckedSerde, Leak, masked_value
from waybook.integrations.langgraph._serde import StrictSerializer
from waybook.integrations.langgraph._state import CHECKPOINT, DERIVED, HIDDEN, WRITES, Entry, ThreadState
from waybook.integrations.langgraph._view import ThreadView, channel_ref, channel_value, checkpoint_tuple
from waybook.journal import ClosedOnExit, SessionJournal
from waybook.model import (
    Annotation,
    AnyBody,
    CustomEntry,
    LeafMoved,
    NewRecord,
    Reset,
    StaleWriterError,
    text,
)

RUNTIME: Final = "langgraph"


def encrypts(serde: SerializerProtocol) -> bool:
    """Whether `serde` is LangGraph's encrypting serializer (its values must not be written in clear)."""
    try:
        from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    except ImportError:  # pragma: no cover - every LangGraph the extra installs has it
        return False
    return isinstance(serde, EncryptedSerializer)


class WaybookSaver(BaseCheckpointSaver[str], ClosedOnExit):
    """A LangGraph checkpointer whose every thread is a waybook journal in `store`.

    `store` is any `JournalStore` (`waybook.stores.open_store("file:DIR")`, `sqlite:FILE`, ...).
    `purge_on_delete=True` makes `delete_thread` erase the thread's journals (`store.purge`, leaving a
    receipt) instead of appending a reset; a purged thread id cannot be used again.

    Each checkpoint's new `messages` are also written as session nodes, in the checkpoint's batch, so
    waybook's own tools read the thread as a session (docs/langgraph.md). `session_nodes=False` turns
    that off; it is off by default with an encrypting serde, whose values the nodes would show in clear.

    A journal read back is outside data, so the default `serde` is LangGraph's serializer in its strict
    mode: it rebuilds only LangGraph's list of safe types (plus the state types a compiled graph adds
    with `with_allowlist`) and never unpickles; any other type a value names comes back as its plain
    payload. A value it cannot read back (pickle, an unknown type, broken bytes) is a
    `CheckpointValueError`. Pass `serde=JsonPlusSerializer(allowed_msgpack_modules=[...])` to allow more.
    """

    def __init__(
        self,
        store: StoreLike,
        *,
        serde: SerializerProtocol | None = None,
        purge_on_delete: bool = False,
        actor: str = "langgraph",
        session_nodes: bool | None = None,
        redact: Redact = False,
    ) -> None:
        self.mask = secret_mask(redact, who="WaybookSaver")
        """Masks secrets in channel values, pending writes, metadata and session nodes before they are
        serialized (`redact=`); None: nothing is masked."""
        super().__init__(serde=serde if serde is not None else StrictSerializer())
        self.store = store
        self.purge_on_delete = purge_on_delete
        self.actor = actor
        self.session_nodes = not encrypts(self.serde) if session_nodes is None else session_nodes
        self._views: dict[str, ThreadView] = {}
        self._views_lock = threading.Lock()

    # --- context manager (as LangGraph's savers): `with` comes from ClosedOnExit, `async with` here -----

    async def __aenter__(self) -> WaybookSaver:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every journal this saver opened (the store stays open: it is the caller's)."""
        with self._views_lock:
            views, self._views = list(self._views.values()), {}
        for view in views:
            view.journal.close()

    def journal_id(self, thread_id: Any, checkpoint_ns: str = "") -> str:
        """The id of the journal that holds `thread_id`'s checkpoints in `checkpoint_ns` (for auditing:
        `waybook tree`, `waybook export`, `store.open`)."""
        return journal_id_for(RUNTIME, str(thread_id), checkpoint_ns)

    # --- reads -------------------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        conf = config["configurable"]
        view = self._view(conf["thread_id"], conf.get("checkpoint_ns", ""), create=False)
        if view is None:
            return None
        checkpoint_id = get_checkpoint_id(config)
        with view.lock:
            self._refresh(view)
            entry = view.state.find(checkpoint_id) if checkpoint_id else view.state.latest()
            if entry is None:
                return None
            return checkpoint_tuple(self.serde, view, entry, config if checkpoint_id else None)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        only_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        for view in self._views_for(config):
            with view.lock:
                self._refresh(view)
                entries = list(view.state.visible())
            for entry in entries:
                if only_id and entry.checkpoint_id != only_id:
                    continue
                if before_id and entry.checkpoint_id >= before_id:
                    continue
                metadata = load_field(self.serde, entry.data, "metadata") or {}
                if filter and not all(metadata.get(key) == value for key, value in filter.items()):
                    continue
                if remaining is not None:
                    if remaining <= 0:
                        return
                    remaining -= 1
                with view.lock:
                    item = checkpoint_tuple(self.serde, view, entry, None)
                yield item

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        """Each channel's writes along the checkpoint's ancestors back to the nearest stored value.

        Walks hidden ancestors too: hiding (`prune`, `delete_for_runs`) never breaks a delta channel.
        """
        if not channels:
            return {}
        conf = config["configurable"]
        view = self._view(conf["thread_id"], conf.get("checkpoint_ns", ""), create=False)
        collected: dict[str, list[PendingWrite]] = {c: [] for c in channels}
        seeds: dict[str, Any] = {}
        if view is not None:
            with view.lock:
                self._refresh(view)
                state = view.state
                checkpoint_id = get_checkpoint_id(config)
                target = state.by_id.get(checkpoint_id) if checkpoint_id else state.latest()
                remaining = set(channels)
                for ancestor in state.ancestors(target) if target is not None else ():
                    if not remaining:
                        break
                    found: dict[str, Any] = {}
                    for channel in remaining:
                        record = state.value_record(ancestor, channel)
                        if record is not None:
                            present, value = channel_value(self.serde, view, record, channel)
                            if present:
                                found[channel] = value
                    for write in reversed(ancestor.ordered_writes()):
                        if write.channel in remaining:
                            collected[write.channel].append(
                                (write.task_id, write.channel, load(self.serde, write.value))
                            )
                    for channel, value in found.items():
                        seeds[channel] = value
                        remaining.discard(channel)
        result: dict[str, Any] = {}
        for channel in channels:
            history: dict[str, Any] = {"writes": list(reversed(collected[channel]))}
            if channel in seeds:
                history["seed"] = seeds[channel]
            result[channel] = history
        return result

    # --- writes ------------------------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        conf = config["configurable"]
        thread_id, namespace = conf["thread_id"], conf.get("checkpoint_ns", "")
        parent_id: str | None = conf.get("checkpoint_id")
        view = self._view(thread_id, namespace, create=False)
        if view is None:  # a new thread: a refused value must not leave its journal made
            values = checkpoint["channel_values"]
            self._check_first(
                thread_id,
                namespace,
                [(f"channel {c!r}", values[c]) for c in new_versions if c in values]
                + [("the checkpoint's metadata", get_checkpoint_metadata(config, metadata))],
            )
            view = self._view(thread_id, namespace, create=True)
        assert view is not None
        with view.lock:
            state = view.state
            parent = state.by_id.get(parent_id) if parent_id else None
            parent_record = parent.record_id if parent is not None else None
            given = checkpoint["channel_values"]
            values = self._masked(given)
            messages = messages_of(values) if self.session_nodes else None
            if messages is None:
                where = MessagePlan(state.end_of(parent), (), "")
            else:
                where = plan(state, parent, self._messages_at(view, parent), messages)
            records: list[NewRecord] = []
            if state.leaf != where.base:
                reason = f"langgraph: checkpoint {checkpoint['id']} continues from " + (
                    f"checkpoint {parent_id}" if parent_record else "a new root"
                )
                reason += f" ({where.why})" if where.why else ""
                records.append(
                    self._record(
                        LeafMoved(from_leaf=state.leaf, to_leaf=where.base, reason=reason, actor=self.actor)
                    )
                )
            node_parent = where.base
            for message in self._unmasked(where.new, given):
                node = self._record(self._masked_node(node_body(message, node_parent)))
                records.append(node)
                node_parent = node.id
            refs = {
                channel: channel_ref(
                    self._checked(view, f"channel {channel!r}"),
                    view,
                    parent,
                    channel,
                    version,
                    values[channel],
                )
                if channel in values
                else {"v": version, "empty": True}
                for channel, version in new_versions.items()
            }
            data: dict[str, Any] = {
                "id": checkpoint["id"],
                "parent": parent_id,
                "after": parent_record,
                "values": refs,
            }
            skeleton = {key: value for key, value in checkpoint.items() if key != "channel_values"}
            dump_field(self.serde, data, "checkpoint", skeleton)
            dump_field(
                self._checked(view, "the checkpoint's metadata"),
                data,
                "metadata",
                self._masked(get_checkpoint_metadata(config, metadata)),
            )
            label = _label(metadata, new_versions)
            node = self._record(
                CustomEntry(parent=node_parent, type=CHECKPOINT, data=data, content=text(label))
            )
            records.append(node)
            for writes in view.parked.pop(checkpoint["id"], []):
                records.append(self._record(Annotation(target=node.id, type=WRITES, data=writes)))
            self._append(view, records)
            for channel, ref in refs.items():
                if "n" in ref:
                    view.lists[channel] = (node.id, list(values[channel]))
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": namespace,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        conf = config["configurable"]
        checkpoint_id = conf["checkpoint_id"]
        thread_id, namespace = conf["thread_id"], conf.get("checkpoint_ns", "")
        view = self._view(thread_id, namespace, create=False)
        if view is None:  # a new thread: a refused write must not leave its journal made
            where = f"a pending write to channel {{}} (task {task_id})"
            self._check_first(thread_id, namespace, [(where.format(repr(c)), v) for c, v in writes])
            view = self._view(thread_id, namespace, create=True)
        assert view is not None
        with view.lock:
            entry = view.state.by_id.get(checkpoint_id)
            known = set(entry.writes) if entry is not None else set()
            for parked in view.parked.get(checkpoint_id, []):
                known.update((parked["task_id"], idx) for _, idx, _ in parked["writes"])
            new = []
            for position, (channel, value) in enumerate(writes):
                idx = WRITES_IDX_MAP.get(channel, position)
                if idx >= 0 and (task_id, idx) in known:
                    continue  # a retried write: the first one stands, as in LangGraph's savers
                serde = self._checked(view, f"a pending write to channel {channel!r} (task {task_id})")
                new.append([channel, idx, dump(serde, self._masked(value))])
            if not new:
                return
            data = {"checkpoint": checkpoint_id, "task_id": task_id, "task_path": task_path, "writes": new}
            if entry is None:
                view.parked.setdefault(checkpoint_id, []).append(data)
                return
            self._append(view, [self._record(Annotation(target=entry.record_id, type=WRITES, data=data))])

    def delete_thread(self, thread_id: str) -> None:
        """Every checkpoint of the thread, in every namespace, is gone from the thread: a reset is
        appended (the history stays for auditors), or, with `purge_on_delete`, the journals are purged."""
        for view in self._thread_views(thread_id):
            with view.lock:
                self._refresh(view)
                view.parked.clear()
                view.lists.clear()
                if self.purge_on_delete:
                    self.store.purge(view.journal_id, reason="langgraph: delete_thread", actor=self.actor)
                    self._forget(view)
                elif view.state.by_id:
                    self._append(
                        view, [self._record(Reset(reason="langgraph: delete_thread", actor=self.actor))]
                    )

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Hide every checkpoint (and so its writes) that one of `run_ids` created, in every thread."""
        wanted = set(run_ids)
        if not wanted:
            return
        for info in listed(self.store, {"runtime": RUNTIME}):
            view = self._view_of(info)
            with view.lock:
                self._refresh(view)
                doomed = [
                    entry
                    for entry in view.state.visible()
                    if (load_field(self.serde, entry.data, "metadata") or {}).get("run_id") in wanted
                ]
                self._hide(view, doomed, "delete_for_runs")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every record of every namespace of the source thread into the target thread's journals,
        verbatim (same checkpoints, writes, forks and hidden marks), one atomic append per namespace."""
        for source in self._thread_views(source_thread_id):
            with source.lock:
                self._refresh(source)
                records = list(source.journal.read(after=1))
            target = self._view(target_thread_id, source.checkpoint_ns, create=True)
            assert target is not None
            with target.lock:
                self._refresh(target)
                if target.state.by_id:
                    msg = (
                        f"copy_thread: thread {target_thread_id!r} (namespace {source.checkpoint_ns!r}) "
                        "already "
                        "has checkpoints; delete it first or copy to a new thread id"
                    )
                    raise ThreadExistsError(msg)
                if records:
                    copies = [NewRecord(id=r.id, at=r.at, body=r.body) for r in records]
                    self._append(target, copies)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`keep_latest` hides all but each namespace's latest checkpoint; `delete` resets the thread.

        Hidden checkpoints stay in the journal, so delta channels still rebuild across them.
        """
        if strategy not in ("keep_latest", "delete"):
            msg = f"prune strategy {strategy!r} is not known; use 'keep_latest' or 'delete'"
            raise UnknownPruneStrategyError(msg)
        for thread_id in thread_ids:
            for view in self._thread_views(thread_id):
                with view.lock:
                    self._refresh(view)
                    if strategy == "delete":
                        if view.state.by_id:
                            self._append(
                                view, [self._record(Reset(reason="langgraph: prune", actor=self.actor))]
                            )
                        continue
                    self._hide(view, list(view.state.visible())[1:], "prune keep_latest")

    # --- threads saved before the saver wrote session nodes ---------------------------------------

    def derive_sessions(self, thread_id: Any, checkpoint_ns: str = "") -> int:
        """Append the session nodes of every checkpoint of the thread saved without them (by a saver
        before this one wrote nodes), and return how many checkpoints gained them (0: nothing to do).

        One append, after the records that are there: nothing is rewritten. Each such checkpoint's
        new messages hang where the saver would have put them, and end at a `langgraph.derived` entry
        naming the checkpoint, from which the saver continues the thread. The leaf ends at the latest
        checkpoint's messages. `waybook langgraph derive` runs this over a store.
        """
        view = self._view(thread_id, checkpoint_ns, create=False)
        if view is None:
            return 0
        with view.lock:
            self._refresh(view)
            try:
                return self._derive(view)
            except BaseException:
                view.state = ThreadState()  # planning counted nodes that may not be committed: re-read
                view.state.apply(view.journal.read())
                raise

    def _derive(self, view: ThreadView) -> int:
        state = view.state
        pending = sorted(
            (e for e in state.by_id.values() if "after" not in e.data and e.record_id not in state.ends),
            key=lambda e: e.seq,
        )
        records: list[NewRecord] = []
        leaf = state.leaf
        derived = 0
        for entry in pending:
            messages = self._messages_at(view, entry)
            if not messages and state.message_count(state.end_of(state.parent_of(entry))) == 0:
                continue
            parent = state.parent_of(entry)
            where = plan(state, parent, self._messages_at(view, parent), messages)
            if leaf != where.base:
                reason = f"langgraph: the messages of checkpoint {entry.checkpoint_id}, derived" + (
                    f" ({where.why})" if where.why else ""
                )
                records.append(
                    self._record(
                        LeafMoved(from_leaf=leaf, to_leaf=where.base, reason=reason, actor=self.actor)
                    )
                )
            leaf = where.base
            for message in where.new:
                node = self._record(node_body(message, leaf))
                records.append(node)
                state.nodes[node.id] = (leaf, state.message_count(leaf) + 1)
                leaf = node.id
            marker = self._record(
                CustomEntry(
                    parent=leaf,
                    type=DERIVED,
                    data={"checkpoint": entry.record_id, "checkpoint_id": entry.checkpoint_id},
                )
            )
            records.append(marker)
            state.nodes[marker.id] = (leaf, state.message_count(leaf))
            state.ends[entry.record_id] = leaf = marker.id
            derived += 1
        latest = state.end_of(state.latest())
        if records and latest is not None and latest != leaf:
            reason = "langgraph: the latest checkpoint's messages, where LangGraph resumes"
            records.append(
                self._record(LeafMoved(from_leaf=leaf, to_leaf=latest, reason=reason, actor=self.actor))
            )
        if records:
            self._append(view, records)
        return derived

    # --- async twins: the same calls in a worker thread ----------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in items:
            yield item

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Versions as LangGraph's in-memory saver makes them: a counter and a random tiebreak, so two
        forks from one checkpoint never give one channel the same version."""
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"

    # --- internals ---------------------------------------------------------------------------------

    def _messages_at(self, view: ThreadView, parent: Entry | None) -> Sequence[Any]:
        """The parent checkpoint's messages (none without a parent), from this saver's copy if it has it."""
        record = view.state.value_record(parent, MESSAGES) if parent is not None else None
        if record is None:
            return []
        known = view.lists.get(MESSAGES)
        if known is not None and known[0] == record:
            return known[1]
        present, value = channel_value(self.serde, view, record, MESSAGES)
        return value if present and type(value) is list else []

    def _masked(self, value: Any) -> Any:
        return value if self.mask is None else masked_value(self.mask, value)

    def _checked(self, view: ThreadView, where: str) -> SerializerProtocol:
        """The serde to write a value with: with `redact`, one that refuses a value still holding a secret
        once serialized (`UnmaskedSecretError`, naming `where`), before anything is written."""
        return self._checked_for(view.thread_id, view.checkpoint_ns, where)

    def _checked_for(self, thread_id: Any, namespace: str, where: str) -> SerializerProtocol:
        if self.mask is None:
            return self.serde

        def refuse(leak: Leak) -> None:
            raise UnmaskedSecretError(
                thread_id=str(thread_id),
                checkpoint_ns=namespace,
                where=where,
                holder=leak.holder,
                kinds=leak.kinds,
            )

        return CheckedSerde(self.serde, self.mask, refuse)

    def _check_first(self, thread_id: Any, namespace: str, values: Sequence[tuple[str, Any]]) -> None:
        """With `redact`, the check of a new thread's first write, before its journal is made: a value
        the saver would refuse (`UnmaskedSecretError`) leaves no journal behind. The values are
        serialized twice on a thread's first write only."""
        if self.mask is None:
            return
        for where, value in values:
            self._checked_for(thread_id, str(namespace), where).dumps_typed(self._masked(value))

    def _masked_node(self, body: AnyBody) -> AnyBody:
        return body if self.mask is None else self.mask.body(body)

    def _unmasked(self, new: Sequence[Any], given: Mapping[str, Any]) -> Sequence[Any]:
        """The checkpoint's new messages as given (the plan compares masked ones), so a node's masking
        records what it masked where; the new messages are always the last of the channel's list."""
        if self.mask is None or not new:
            return new
        original = messages_of(dict(given)) or []
        return original[len(original) - len(new) :] if len(original) >= len(new) else new

    def _record(self, body: AnyBody) -> NewRecord:
        return NewRecord(id=new_id(), at=utc_now(), body=body)

    def _append(self, view: ThreadView, records: Sequence[NewRecord]) -> None:
        try:
            result = view.journal.append(records, expected=view.state.head)
        except StaleWriterError as exc:
            raise StaleThreadError(
                thread_id=str(view.thread_id),
                checkpoint_ns=view.checkpoint_ns,
                journal=view.journal_id,
                expected=exc.expected,
                actual=exc.actual,
            ) from exc
        view.state.apply(result.records)

    def _refresh(self, view: ThreadView) -> None:
        """Read what other writers committed: after this, this saver may write on top of it."""
        view.state.apply(view.journal.read(after=view.state.head.seq))

    def _hide(self, view: ThreadView, entries: Sequence[Entry], reason: str) -> None:
        if entries:
            records = [
                self._record(Annotation(target=e.record_id, type=HIDDEN, data={"reason": reason}))
                for e in entries
            ]
            self._append(view, records)

    def _view(self, thread_id: Any, namespace: str, *, create: bool) -> ThreadView | None:
        journal_id = self.journal_id(thread_id, namespace)
        with self._views_lock:
            view = self._views.get(journal_id)
        if view is not None:
            return view
        if not create and not self.store.exists(journal_id):
            return None
        metadata = {
            "runtime": RUNTIME,
            "langgraph_thread": str(thread_id),
            "thread_id": thread_id if isinstance(thread_id, str | int) else str(thread_id),
            "checkpoint_ns": namespace,
        }
        journal = open_or_create(self.store, journal_id, metadata)
        return self._adopt(journal_id, journal, thread_id, namespace)

    def _view_of(self, info: Any) -> ThreadView:
        with self._views_lock:
            view = self._views.get(info.journal_id)
        if view is not None:
            return view
        journal = self.store.open(info.journal_id)
        return self._adopt(
            info.journal_id, journal, info.metadata.get("thread_id"), info.metadata.get("checkpoint_ns", "")
        )

    def _adopt(self, journal_id: str, journal: SessionJournal, thread_id: Any, namespace: str) -> ThreadView:
        state = ThreadState()
        state.apply(journal.read())
        fresh = ThreadView(journal, journal_id, thread_id, str(namespace), state)
        with self._views_lock:
            view = self._views.setdefault(journal_id, fresh)
        if view is not fresh:
            journal.close()
        return view

    def _forget(self, view: ThreadView) -> None:
        with self._views_lock:
            self._views.pop(view.journal_id, None)
        view.journal.close()

    def _thread_views(self, thread_id: Any) -> Sequence[ThreadView]:
        return [self._view_of(info) for info in listed(self.store, {"langgraph_thread": str(thread_id)})]

    def _views_for(self, config: RunnableConfig | None) -> Sequence[ThreadView]:
        if config is None:
            return [self._view_of(info) for info in listed(self.store, {"runtime": RUNTIME})]
        conf = config["configurable"]
        namespace = conf.get("checkpoint_ns")
        if namespace is None:
            return self._thread_views(conf["thread_id"])
        view = self._view(conf["thread_id"], namespace, create=False)
        return [] if view is None else [view]


def _label(metadata: CheckpointMetadata, new_versions: ChannelVersions) -> str:
    """What `waybook tree` shows for a checkpoint: its step, its source and the channels it changed."""
    channels = sorted(str(c) for c in new_versions if not str(c).startswith(("branch:", "__")))
    shown = ", ".join(channels[:4]) + (f" and {len(channels) - 4} more" if len(channels) > 4 else "")
    changed = f": {shown}" if shown else ""
    return f"step {metadata.get('step', '?')} ({metadata.get('source', '?')}){changed}"
