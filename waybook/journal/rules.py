"""The session rules every journal enforces before it writes (docs/journal-contract.md, R8-R11).

`SessionRules` is the small state the rules need: which ids are used (and which of them are nodes),
whether the header is written, and the current leaf. `check` validates a whole batch against it without
changing it and returns the state change; `commit` applies that change once the batch is durable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from waybook.journal.errors import (
    DuplicateIdError,
    EmptyBatchError,
    InvalidLeafMoveError,
    InvalidRecordError,
    MisplacedHeaderError,
    ParentMismatchError,
    PartialAssistantError,
    UnknownNodeError,
)
from waybook.journal.records import (
    TERMINAL_STOP_REASONS,
    AnyBody,
    AssistantMessage,
    Compaction,
    ContextExclusion,
    CustomEntry,
    Header,
    LeafMoved,
    NewRecord,
    Record,
    Reset,
)

ID_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}$")
TIMESTAMP_PATTERN: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$")
CUSTOM_TYPE_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]*[.:/][A-Za-z0-9_.:/\-]+$")


def next_leaf(leaf: str | None, record_id: str, body: AnyBody) -> str | None:
    """Where the leaf is after `body`: a node becomes the leaf, a move goes where it says, reset clears."""
    if body.IS_NODE:
        return record_id
    if isinstance(body, LeafMoved):
        return body.to_leaf
    if isinstance(body, Reset):
        return None
    return leaf


@attrs.frozen
class RulesDelta:
    """What a validated batch changes: new ids (node or not), whether it writes the header, the leaf."""

    ids: tuple[tuple[str, bool], ...]
    header: bool
    leaf: str | None


@attrs.define
class SessionRules:
    """Rule state of one journal. O(1) per record to check; memory is one dict entry per id."""

    journal: str = ""
    count: int = 0
    has_header: bool = False
    leaf: str | None = None
    is_node: dict[str, bool] = attrs.field(factory=dict)

    def check(self, batch: Sequence[NewRecord]) -> RulesDelta:
        """Validate `batch` as the next records, raising a RecordValidationError; changes nothing."""
        if not batch:
            msg = "an append needs at least one record"
            raise EmptyBatchError(msg, journal=self.journal)
        new_ids: dict[str, bool] = {}
        header = self.has_header
        leaf = self.leaf
        for offset, record in enumerate(batch):
            position = self.count + offset + 1
            self._check_fields(record)
            if record.id in self.is_node or record.id in new_ids:
                msg = f"id {record.id!r} is already used in this journal; every record needs a fresh id"
                raise DuplicateIdError(msg, journal=self.journal, record_id=record.id)
            body = record.body
            if isinstance(body, Header) != (position == 1):
                msg = (
                    f"record {record.id!r} at seq {position}: the header must be the first record and "
                    "only the first; create a journal with its header, then append entries"
                )
                raise MisplacedHeaderError(msg, journal=self.journal, record_id=record.id)
            header = header or isinstance(body, Header)
            self._check_body(record, body, leaf, new_ids)
            new_ids[record.id] = body.IS_NODE
            leaf = next_leaf(leaf, record.id, body)
        return RulesDelta(ids=tuple(new_ids.items()), header=header, leaf=leaf)

    def commit(self, delta: RulesDelta) -> None:
        self.is_node.update(delta.ids)
        self.count += len(delta.ids)
        self.has_header = delta.header
        self.leaf = delta.leaf

    def apply_committed(self, records: Iterable[Record]) -> None:
        """Fold records already validated by their writer (a reopen, another process's tail)."""
        for record in records:
            self.is_node[record.id] = record.body.IS_NODE
            self.count += 1
            self.has_header = self.has_header or isinstance(record.body, Header)
            self.leaf = next_leaf(self.leaf, record.id, record.body)

    def _is_known_node(self, node_id: str, pending: Mapping[str, bool]) -> bool:
        return self.is_node.get(node_id, False) or pending.get(node_id, False)

    def _check_fields(self, record: NewRecord) -> None:
        if not isinstance(record, NewRecord):
            msg = f"append takes NewRecord values, got {type(record).__name__}"
            raise InvalidRecordError(msg, journal=self.journal)
        if not isinstance(record.id, str) or not ID_PATTERN.match(record.id):
            msg = (
                f"record id {record.id!r} is not valid: use 1-128 letters, digits, '_', '.', ':' or '-', "
                "starting with a letter or digit"
            )
            raise InvalidRecordError(msg, journal=self.journal, record_id=str(record.id))
        if not isinstance(record.at, str) or not TIMESTAMP_PATTERN.match(record.at):
            msg = (
                f"record {record.id!r}: timestamp {record.at!r} is not RFC 3339 UTC "
                "(like 2026-12-01T09:30:00.123Z); use waybook.utc_now()"
            )
            raise InvalidRecordError(msg, journal=self.journal, record_id=record.id)

    def _check_body(
        self, record: NewRecord, body: AnyBody, leaf: str | None, pending: Mapping[str, bool]
    ) -> None:
        rid = record.id
        if body.IS_NODE:
            parent = body.parent  # type: ignore[union-attr]
            if parent != leaf:
                msg = (
                    f"node {rid!r} names parent {parent!r} but the current leaf is {leaf!r}; a node "
                    "must extend the current leaf. To branch, move the leaf first (Session.branch_from)"
                )
                raise ParentMismatchError(msg, journal=self.journal, record_id=rid)
        if isinstance(body, AssistantMessage) and body.stop_reason not in TERMINAL_STOP_REASONS:
            msg = (
                f"assistant entry {rid!r} has stop reason {body.stop_reason!r}: only complete turns are "
                f"committed (one of {', '.join(sorted(TERMINAL_STOP_REASONS))}); never a streaming partial"
            )
            raise PartialAssistantError(msg, journal=self.journal, record_id=rid)
        if isinstance(body, LeafMoved):
            if body.from_leaf != leaf:
                msg = (
                    f"leaf move {rid!r} starts at {body.from_leaf!r} but the current leaf is {leaf!r}; "
                    "sync with the journal and move from the current leaf"
                )
                raise InvalidLeafMoveError(msg, journal=self.journal, record_id=rid)
            if body.to_leaf is not None and not self._is_known_node(body.to_leaf, pending):
                msg = f"leaf move {rid!r} goes to {body.to_leaf!r}, which is not a node of this journal"
                raise InvalidLeafMoveError(msg, journal=self.journal, record_id=rid)
        for ref in _node_refs(body):
            if not self._is_known_node(ref, pending):
                msg = f"record {rid!r} refers to {ref!r}, which is not a node of this journal"
                raise UnknownNodeError(msg, journal=self.journal, record_id=rid)
        if isinstance(body, CustomEntry) and not CUSTOM_TYPE_PATTERN.match(body.type):
            msg = (
                f"custom entry {rid!r} has type {body.type!r}; use a namespaced type such as "
                "'myext.note' so extensions cannot collide"
            )
            raise InvalidRecordError(msg, journal=self.journal, record_id=rid)


def _node_refs(body: AnyBody) -> tuple[str, ...]:
    if isinstance(body, Compaction) and body.first_kept is not None:
        return (body.first_kept,)
    if isinstance(body, ContextExclusion):
        return (body.target,)
    return ()
