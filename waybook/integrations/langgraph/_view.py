"""One thread's journal as a `WaybookSaver` sees it, and its channel values (stored whole or as additions)."""

from __future__ import annotations

import threading
from typing import Any, Final, cast

import attrs
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from waybook.integrations.langgraph._codec import dump, load, load_field
from waybook.integrations.langgraph._errors import ErasedCheckpointError
from waybook.integrations.langgraph._state import Entry, ThreadState
from waybook.journal import SessionJournal
from waybook.model import IntegrityError

MIN_COPY_GAP: Final = 64
"""A grown list is stored whole again once it gained more than max(this, its last whole length)."""
MAX_ADD_DEPTH: Final = 4096
"""At most this many `add` links lead back to a whole copy, bounding the work of one read."""


@attrs.define
class ThreadView:
    """One journal as this saver sees it: its fold, a lock, and what only this writer knows."""

    journal: SessionJournal
    journal_id: str
    thread_id: Any
    checkpoint_ns: str
    state: ThreadState
    lock: threading.RLock = attrs.field(factory=threading.RLock)
    parked: dict[str, list[dict[str, Any]]] = attrs.field(factory=dict)
    """Pending writes for checkpoints not put yet (LangGraph saves both in the background, in any
    order); they are written in the same batch as their checkpoint."""
    lists: dict[str, tuple[str, list[Any]]] = attrs.field(factory=dict)
    """channel -> (record, a copy of the list it stored): the base of the next put's `add`."""


def checkpoint_tuple(
    serde: SerializerProtocol, view: ThreadView, entry: Entry, config: RunnableConfig | None
) -> CheckpointTuple:
    state = view.state
    skeleton = dict(load_field(serde, entry.data, "checkpoint") or {})
    values: dict[str, Any] = {}
    for channel in skeleton.get("channel_versions", {}):
        record = state.value_record(entry, channel)
        if record is not None:
            present, value = channel_value(serde, view, record, channel)
            if present:
                values[channel] = value
    skeleton["channel_values"] = values
    thread_id, namespace = view.thread_id, view.checkpoint_ns
    parent_id = entry.parent_id
    return CheckpointTuple(
        config=config
        or {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": namespace,
                "checkpoint_id": entry.checkpoint_id,
            }
        },
        checkpoint=skeleton,  # type: ignore[arg-type]
        metadata=cast(CheckpointMetadata, load_field(serde, entry.data, "metadata") or {}),
        parent_config={
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": namespace,
                "checkpoint_id": parent_id,
            }
        }
        if parent_id
        else None,
        pending_writes=[(w.task_id, w.channel, load(serde, w.value)) for w in entry.ordered_writes()],
    )


def channel_value(
    serde: SerializerProtocol, view: ThreadView, record_id: str, channel: str
) -> tuple[bool, Any]:
    """The value of `channel` stored at `record_id`: (False, None) if the channel was empty there."""
    ref = view.state.ref(record_id, channel)
    additions = []
    while "add" in ref:
        additions.append(ref["add"])
        base = str(ref.get("base"))
        ref = view.state.ref(base, channel)
        if base in view.state.erased:
            record_seq, erasure_seq = view.state.erased[base]
            raise ErasedCheckpointError(
                thread_id=str(view.thread_id),
                checkpoint_ns=view.checkpoint_ns,
                channel=channel,
                record_seq=record_seq,
                erasure_seq=erasure_seq,
            )
        if "set" not in ref and "add" not in ref:
            msg = (
                f"{view.journal_id}: channel {channel!r} of record {record_id} extends record {base}, "
                "which holds no value for it; the journal is not one this saver wrote. "
                "Run `waybook verify`."
            )
            raise IntegrityError(msg)
    if "set" not in ref:
        return False, None
    value = load(serde, ref["set"])
    for blob in reversed(additions):
        value.extend(load(serde, blob))
    return True, value


def channel_ref(
    serde: SerializerProtocol, view: ThreadView, parent: Entry | None, channel: str, version: Any, value: Any
) -> dict[str, Any]:
    """What to store for `channel`: the elements a list gained since the parent, or the whole value."""
    whole: dict[str, Any] = {"v": version, "set": dump(serde, value)} if type(value) is not list else {}
    if whole:
        return whole
    base = view.state.value_record(parent, channel) if parent is not None else None
    stats = view.state.list_stats.get((base, channel)) if base is not None else None
    if base is not None and stats is not None and len(value) >= stats.length:
        added = len(value) - stats.length
        last_copy = stats.length - stats.since_copy
        if stats.since_copy + added <= max(MIN_COPY_GAP, last_copy) and stats.depth < MAX_ADD_DEPTH:
            known = view.lists.get(channel)
            if known is not None and known[0] == base:
                previous = known[1]
            else:
                previous = channel_value(serde, view, base, channel)[1]
            n = stats.length
            if len(previous) == n and all(a is b or a == b for a, b in zip(previous, value[:n], strict=True)):
                return {
                    "v": version,
                    "add": dump(serde, value[n:]),
                    "added": added,
                    "base": base,
                    "n": n,
                }
    return {"v": version, "set": dump(serde, value), "n": len(value)}
