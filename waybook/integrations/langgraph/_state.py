"""The fold of one LangGraph journal (one thread and namespace): checkpoints, their writes, what is hidden.

Pure: no I/O and no LangGraph import. The records it reads:

- `waybook.custom/1` of type `langgraph.checkpoint`: a checkpoint, as a tree node. Its `data` holds the
  checkpoint without its channel values, the metadata, the parent checkpoint id, the record of the
  parent checkpoint (`after`; older records have none: their tree parent is that record), and a value
  entry for each channel that changed (see `Entry`).
- Session nodes (user, assistant, system, tool result): the messages a checkpoint's `messages` channel
  gained, written in the checkpoint's batch just before it, so the checkpoint's path holds exactly its
  messages. Where the path to the parent does not lead on to them (a fork, an edited or removed
  message), a leaf move comes first, in the same batch: nothing is ever rewritten.
- `waybook.custom/1` of type `langgraph.derived`: the end of the messages `waybook langgraph derive`
  appended for a checkpoint saved before the saver wrote nodes; the checkpoint's messages end there.
- `waybook.annotation/1` of type `langgraph.writes`: pending writes attached to a checkpoint node.
- `waybook.annotation/1` of type `langgraph.hidden`: a checkpoint hidden by `delete_for_runs` or `prune`.
- `waybook.reset/1`: `delete_thread`; every checkpoint before it is gone from the thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

import attrs

from waybook.journal import next_leaf
from waybook.model import GENESIS, Annotation, CustomEntry, Head, Header, Node, Record, Reset

CHECKPOINT: Final = "langgraph.checkpoint"
DERIVED: Final = "langgraph.derived"
WRITES: Final = "langgraph.writes"
HIDDEN: Final = "langgraph.hidden"

Blob = list[str]
"""A serialized value on the wire: `[serde type, base64 of the bytes]`."""


@attrs.define
class Write:
    task_id: str
    channel: str
    idx: int
    value: Blob
    task_path: str


@attrs.define
class Entry:
    """One stored checkpoint. `values` maps each channel it wrote to a value reference:

    - `{"v": version, "set": blob, "n": length}`: the whole value (`n` only for lists);
    - `{"v": version, "add": blob, "added": k, "base": record id, "n": length}`: a list that extends,
      by the `k` elements in `add`, the value this channel had in checkpoint record `base` (of length
      `n`);
    - `{"v": version, "empty": true}`: the channel has no value.
    """

    checkpoint_id: str
    record_id: str
    seq: int
    tree_parent: str | None
    """The record of the checkpoint this one was put after."""
    data: dict[str, Any]
    writes: dict[tuple[str, int], Write] = attrs.field(factory=dict)
    hidden: bool = False

    @property
    def parent_id(self) -> str | None:
        parent = self.data.get("parent")
        return parent if isinstance(parent, str) else None

    @property
    def values(self) -> dict[str, dict[str, Any]]:
        values = self.data.get("values")
        return values if isinstance(values, dict) else {}

    def channel_versions(self) -> dict[str, Any]:
        skeleton = self.data.get("checkpoint")
        if isinstance(skeleton, dict) and isinstance(skeleton.get("channel_versions"), dict):
            return dict(skeleton["channel_versions"])
        return dict(self.data.get("versions") or {})

    def ordered_writes(self) -> list[Write]:
        """Writes in LangGraph's `writes_sort_key` order: (task_path, task_id, idx)."""
        return sorted(self.writes.values(), key=lambda w: (w.task_path, w.task_id, w.idx))


@attrs.frozen
class ListStats:
    """For a list value stored at a record: its length, how many elements were appended since the last
    whole copy, and how many `add` links lead back to that copy."""

    length: int
    since_copy: int
    depth: int


@attrs.define
class ThreadState:
    """Checkpoints of one thread and namespace, as of `head`."""

    head: Head = GENESIS
    leaf: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    by_id: dict[str, Entry] = attrs.field(factory=dict)
    by_record: dict[str, Entry] = attrs.field(factory=dict)
    list_stats: dict[tuple[str, str], ListStats] = attrs.field(factory=dict)
    written: dict[tuple[str, str], str] = attrs.field(factory=dict)
    """(channel, version) -> the last record that stored that version, for lookups off the path."""
    nodes: dict[str, tuple[str | None, int]] = attrs.field(factory=dict)
    """node -> (its parent, how many message nodes its path holds, itself included)."""
    ends: dict[str, str] = attrs.field(factory=dict)
    """checkpoint record -> the node its messages end at, where that is not the record itself (derived)."""
    erased: dict[str, tuple[int, int]] = attrs.field(factory=dict)
    """checkpoint record -> (its seq, the seq of the erasure that removed its content)."""

    def apply(self, records: Iterable[Record]) -> None:
        for record in records:
            self._apply(record)

    def _apply(self, record: Record) -> None:
        body = record.body
        if isinstance(body, Header):
            self.metadata = dict(body.metadata)
        if isinstance(body, CustomEntry) and body.type == CHECKPOINT and record.erased is not None:
            self.erased[record.id] = (record.seq, record.erased.by)
        elif isinstance(body, CustomEntry) and body.type == CHECKPOINT and isinstance(body.data, dict):
            self._checkpoint(record, body)
        elif isinstance(body, CustomEntry) and body.type == DERIVED and isinstance(body.data, dict):
            self.ends[str(body.data.get("checkpoint"))] = record.id
        elif isinstance(body, Annotation):
            self._annotation(body)
        elif isinstance(body, Reset):
            self.by_id.clear()
            self.by_record.clear()
            self.list_stats.clear()
            self.written.clear()
            self.nodes.clear()
            self.ends.clear()
            self.erased.clear()
        if isinstance(body, Node):
            counted = not (isinstance(body, CustomEntry) and body.type in (CHECKPOINT, DERIVED))
            self.nodes[record.id] = (body.parent, self.message_count(body.parent) + counted)
        self.leaf = next_leaf(self.leaf, record.id, body)
        self.head = Head.of(record)

    def _checkpoint(self, record: Record, body: CustomEntry) -> None:
        data: dict[str, Any] = body.data
        checkpoint_id = str(data.get("id"))
        after = data.get("after", body.parent)
        entry = Entry(checkpoint_id, record.id, record.seq, after if isinstance(after, str) else None, data)
        previous = self.by_id.get(checkpoint_id)
        if previous is not None:  # the same checkpoint put again: it keeps its pending writes
            entry.writes = dict(previous.writes)
        self.by_id[checkpoint_id] = entry
        self.by_record[record.id] = entry
        for channel, ref in entry.values.items():
            if not isinstance(ref, dict):
                continue
            self.written[(channel, version_key(ref.get("v")))] = record.id
            if "add" in ref:
                base = self.list_stats.get((str(ref.get("base")), channel))
                added = int(ref.get("added", 0))
                if base is not None:
                    self.list_stats[(record.id, channel)] = ListStats(
                        base.length + added, base.since_copy + added, base.depth + 1
                    )
            elif "set" in ref and isinstance(ref.get("n"), int):
                self.list_stats[(record.id, channel)] = ListStats(ref["n"], 0, 0)

    def _annotation(self, body: Annotation) -> None:
        entry = self.by_record.get(body.target)
        if entry is None:
            return
        if body.type == HIDDEN:
            entry.hidden = True
            return
        if body.type != WRITES or not isinstance(body.data, dict):
            return
        task_id = str(body.data.get("task_id", ""))
        task_path = str(body.data.get("task_path", ""))
        for channel, idx, value in body.data.get("writes", ()):
            entry.writes[(task_id, int(idx))] = Write(task_id, str(channel), int(idx), value, task_path)

    # --- questions ------------------------------------------------------------------------------------

    def visible(self) -> Iterator[Entry]:
        """Visible checkpoints, newest first (by checkpoint id, which LangGraph makes increasing)."""
        for checkpoint_id in sorted(self.by_id, reverse=True):
            entry = self.by_id[checkpoint_id]
            if not entry.hidden:
                yield entry

    def latest(self) -> Entry | None:
        return next(self.visible(), None)

    def find(self, checkpoint_id: str) -> Entry | None:
        entry = self.by_id.get(checkpoint_id)
        return None if entry is None or entry.hidden else entry

    def parent_of(self, entry: Entry) -> Entry | None:
        """The checkpoint `entry` was put after (hidden or not), if this journal holds it."""
        return None if entry.tree_parent is None else self.by_record.get(entry.tree_parent)

    def ancestors(self, entry: Entry) -> Iterator[Entry]:
        """`entry`'s parent, its parent, ... to the root (hidden checkpoints included)."""
        current = self.parent_of(entry)
        while current is not None:
            yield current
            current = self.parent_of(current)

    def value_record(self, entry: Entry, channel: str) -> str | None:
        """The record holding `channel`'s value at `entry`: the nearest checkpoint on the path that
        wrote the version `entry` names (else any record that wrote it); None if there is none."""
        versions = entry.channel_versions()
        if channel not in versions:
            return None
        wanted = version_key(versions[channel])
        current: Entry | None = entry
        while current is not None:
            ref = current.values.get(channel)
            if isinstance(ref, dict) and version_key(ref.get("v")) == wanted:
                return current.record_id
            current = self.parent_of(current)
        return self.written.get((channel, wanted))

    def end_of(self, entry: Entry | None) -> str | None:
        """The node whose path holds `entry`'s messages (its own record, unless derived ones end later)."""
        return None if entry is None else self.ends.get(entry.record_id, entry.record_id)

    def message_count(self, node: str | None) -> int:
        """How many message nodes the path to `node` holds."""
        return 0 if node is None else self.nodes.get(node, (None, 0))[1]

    def message_node(self, end: str | None, count: int) -> str | None:
        """The message node on `end`'s path that holds its `count`-th message (None for 0)."""
        node = end
        while node is not None and count > 0:
            parent, here = self.nodes[node]
            if here == count and self.message_count(parent) == count - 1:
                return node
            node = parent
        return None

    def ref(self, record_id: str, channel: str) -> dict[str, Any]:
        entry = self.by_record.get(record_id)
        ref = entry.values.get(channel) if entry is not None else None
        return ref if isinstance(ref, dict) else {"empty": True}


def version_key(version: Any) -> str:
    """Versions are str, int or float; the same version must compare equal after a JSON round trip."""
    if isinstance(version, float) and version.is_integer():
        return repr(int(version))
    return repr(version)
