"""The session rules every journal enforces before it writes (docs/journal-contract.md, R8-R11).

`SessionRules` is the small state the rules need: which ids are used and which of them are nodes (an
`IdIndex`), whether the header is written, and the current leaf. `check` validates a whole batch against
it without changing it and returns the state change; `commit` applies that change once the batch is
durable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, get_args

import attrs
import msgspec

from waybook.journal._id_index import COMPACT_ABOVE, CompactIdIndex, DictIdIndex, IdIndex
from waybook.journal._roles.memory import RoleRules, role_rules
from waybook.model import (
    CONTENT_PARTS,
    JOURNAL_ROLES,
    SEALED_SCHEMA,
    TERMINAL_STOP_REASONS,
    Annotation,
    AnyBody,
    AssistantMessage,
    Compaction,
    ContextExclusion,
    CustomEntry,
    DuplicateIdError,
    EmptyBatchError,
    Erasure,
    Header,
    InvalidLeafMoveError,
    InvalidRecordError,
    LeafMoved,
    MisplacedHeaderError,
    NewRecord,
    ParentMismatchError,
    PartialAssistantError,
    Record,
    Reset,
    SubagentLink,
    SystemMessage,
    ToolResult,
    UnknownNodeError,
    UserMessage,
)

# Patterns are used with fullmatch: a `$` anchor would also accept a trailing newline.
ID_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}")
TIMESTAMP_PATTERN: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]{1,9})?Z"
)
"""The shape of a record timestamp; `is_timestamp` also checks that it names a real instant."""
_DAYS_IN_MONTH: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_timestamp(value: object) -> bool:
    """RFC 3339 UTC in waybook's form, naming a real instant: a month 01-12, a day that month has (leap
    years included), 00:00:00 to 23:59:59 (or :60, a leap second)."""
    if type(value) is not str:
        return False
    match = TIMESTAMP_PATTERN.fullmatch(value)
    if match is None:
        return False
    year, month, day, hour, minute, second = map(int, match.groups())
    if not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 60:
        return False
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= day <= _DAYS_IN_MONTH[month - 1] + leap


_MILLIS_Z: Final = frozenset(f"{milli:03d}Z" for milli in range(1000))
_NO_SECOND: Final = "-" * 25  # longer than any "YYYY-MM-DDTHH:MM:SS." prefix: no timestamp starts so
_valid_second = _NO_SECOND  # the last "YYYY-MM-DDTHH:MM:SS." that is_timestamp accepted (a writer's second)


def is_recent_timestamp(value: str) -> bool:
    """`is_timestamp` for a str, answered without the regex and the date arithmetic when `value` is in
    the millisecond form and its second is the one last accepted (a writer stamps many records a second):
    its last four characters are three ASCII digits and `Z` (so it is 24 long) and it starts with that
    second. `SessionRules.check_one` makes the same test inline before calling this."""
    global _valid_second
    if value[20:] in _MILLIS_Z and value.startswith(_valid_second):
        return True
    if not is_timestamp(value):
        return False
    if len(value) == 24:
        _valid_second = value[:20]
    return True


def is_valid_id(value: str) -> bool:
    """Whether a str is a record id (ID_PATTERN): letters and digits alone answered without the regex."""
    return (value.isascii() and value.isalnum() and len(value) <= 128) or _ID_MATCH(value) is not None


CUSTOM_TYPE_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*[.:/][A-Za-z0-9_.:/\-]+")


def next_leaf(leaf: str | None, record_id: str, body: AnyBody) -> str | None:
    """Where the leaf is after `body`: a node becomes the leaf, a move goes where it says, reset clears."""
    if body.IS_NODE:
        return record_id
    if isinstance(body, LeafMoved):
        return body.to_leaf
    if isinstance(body, Reset):
        return None
    return leaf


class RulesDelta(msgspec.Struct, frozen=True, gc=False):
    """What a validated batch changes: the new ids (and whether each is a node) and the leaf after it,
    and for a memory or pin journal its role rules with their own delta (`role_rules.check`)."""

    ids: dict[str, bool]
    leaf: str | None
    role: tuple[RoleRules, Any] | None = None


@attrs.define
class SessionRules:
    """Rule state of one journal. O(1) per record to check; memory is what its IdIndex holds per id."""

    journal: str = ""
    count: int = 0
    has_header: bool = False
    leaf: str | None = None
    ids: IdIndex = attrs.field(factory=DictIdIndex)
    compact_ids: Callable[[], CompactIdIndex] | None = None
    """Where the ids move once there are more than COMPACT_ABOVE (None: they stay in the dict)."""
    role_rules: RoleRules | None = None
    """The memory or pin rules the header's role adds (docs/memory.md); None for a session journal."""
    erasures: bool = False
    """Set once an erasure record is checked (a refused batch may set it too): it only tells `verify`
    that the journal's erasures need their deeper proof (docs/erasure.md)."""

    def check(self, batch: Sequence[NewRecord | Record], *, formats: bool = True) -> RulesDelta:
        """Validate `batch` as the next records, raising a RecordValidationError; changes nothing.

        This runs on every append and every replay, so a message extending the leaf (nearly every
        record) is decided inline; anything else, or any broken rule, goes through `_check_one`.
        `formats=False` skips the id and timestamp format checks, for replaying committed records
        whose bytes the digest chain has already proved are the ones their writer validated.
        """
        if not batch:
            msg = "an append needs at least one record"
            raise EmptyBatchError(msg, journal=self.journal)
        if not formats and self.role_rules is None:
            run = self._message_run(batch)
            if run is not None and self.ids.isdisjoint(run[1]):
                return RulesDelta(ids=run[1], leaf=run[0][-1])
        new_ids: dict[str, bool] = {}
        used = self.ids
        leaf = self.leaf
        position = self.count
        for record in batch:
            position += 1
            if type(record) is not NewRecord and type(record) is not Record:
                msg = f"append takes NewRecord values, got {type(record).__name__}"
                raise InvalidRecordError(msg, journal=self.journal)
            rid, body = record.id, record.body
            if formats:  # is_valid_id and is_recent_timestamp, their fast cases inline
                if type(rid) is not str or not (
                    (rid.isascii() and rid.isalnum() and len(rid) <= 128) or _ID_MATCH(rid)
                ):
                    msg = (
                        f"record id {rid!r} is not valid: use 1-128 letters, digits, '_', '.', ':' or '-', "
                        "starting with a letter or digit"
                    )
                    raise InvalidRecordError(msg, journal=self.journal, record_id=str(rid))
                at = record.at
                if type(at) is not str or not (
                    (at[20:] in _MILLIS_Z and at.startswith(_valid_second)) or is_recent_timestamp(at)
                ):
                    msg = (
                        f"record {rid!r}: timestamp {at!r} is not an RFC 3339 UTC date and time "
                        "(like 2026-12-01T09:30:00.123Z); use waybook.utc_now()"
                    )
                    raise InvalidRecordError(msg, journal=self.journal, record_id=rid)
            kind = type(body)
            if (  # the common case, a message extending the leaf, decided inline
                kind in _MESSAGE_NODES
                and body.parent == leaf  # type: ignore[union-attr]
                and position != 1
                and rid not in used
                and rid not in new_ids
                and (kind is not AssistantMessage or body.stop_reason in _TERMINAL)  # type: ignore[union-attr,operator]
            ):
                new_ids[rid] = True
                leaf = rid
            else:
                leaf = self._check_one(rid, body, position, leaf, new_ids)
        if self.role_rules is None and self.count:  # a session journal past its header: no role rules
            return RulesDelta(ids=new_ids, leaf=leaf)
        return RulesDelta(ids=new_ids, leaf=leaf, role=self._check_role(batch, appending=formats))

    def _check_role(
        self, batch: Sequence[NewRecord | Record], *, appending: bool
    ) -> tuple[RoleRules, Any] | None:
        """The header's role rules (memory_rules.py) for the records of `batch` after the header."""
        extra = self.role_rules
        if self.count == 0:  # the batch starts with the header (checked above)
            extra = role_rules(self.journal, batch[0].body)  # type: ignore[arg-type]
            batch = batch[1:]
        if extra is None:
            return None
        return extra, extra.check(batch, appending=appending) if batch else None

    def check_one(self, record: NewRecord) -> RulesDelta | None:
        """`check` for a batch of one. None means the common case, decided here without building a
        delta: a message that extends the leaf of a session journal (it becomes the leaf). Anything
        else goes through `check`, which returns the delta or names the broken rule. The id and
        timestamp tests are `is_valid_id` and `is_recent_timestamp`, their fast cases inline."""
        if type(record) is not NewRecord:
            self.check((record,))  # raises InvalidRecordError naming the type
        body = record.body
        kind = type(body)
        rid = record.id
        at = record.at
        if (
            kind in _MESSAGE_NODES
            and body.parent == self.leaf  # type: ignore[union-attr]
            and self.count
            and self.role_rules is None
            and type(rid) is str
            and type(at) is str
            and ((rid.isascii() and rid.isalnum() and len(rid) <= 128) or _ID_MATCH(rid))
            and ((at[20:] in _MILLIS_Z and at.startswith(_valid_second)) or is_recent_timestamp(at))
            and rid not in self.ids
            and (kind is not AssistantMessage or body.stop_reason in _TERMINAL)  # type: ignore[union-attr,operator]
        ):
            return None
        return self.check((record,))

    def commit_one(self, rid: str, delta: RulesDelta | None) -> None:
        """`commit` for a batch of one that `check_one` accepted (None: a message that is the new leaf)."""
        if delta is not None:
            self.commit(delta)
            return
        ids = self.ids
        if type(ids) is DictIdIndex:
            ids[rid] = True
        else:
            ids.add({rid: True}, self.count + 1)
        self.count += 1
        self.leaf = rid
        if self.count > COMPACT_ABOVE:
            self._compact_when_large()

    def replay(self, records: Sequence[Record]) -> None:
        """Check committed records (a reopen, another writer's tail) and take them in: `check` with
        `formats=False`, then `commit`, except that a run of messages is checked and indexed in one pass."""
        run = self._message_run(records) if self.role_rules is None else None
        if run is not None:
            ids, new = run
            index = self.ids
            if type(index) is DictIdIndex:
                taken = index.add_new_nodes(new, self.count + 1)  # the dict built once
            else:
                taken = index.add_new_nodes(ids, self.count + 1)
            if taken:
                self.count += len(ids)
                self.leaf = ids[-1]
                self._compact_when_large()
                return
        self.commit(self.check(records, formats=False))

    def _message_run(self, records: Sequence[NewRecord | Record]) -> tuple[list[str], dict[str, bool]] | None:
        """The ids of a replayed run of messages, each extending the one before and terminal, checked
        with set and list operations in C: as a list and as the dict an index takes (each a node), built
        once; None when `records` is anything else (the loop then names the problem). Whether the ids
        are new is left to the caller."""
        bodies = [record.body for record in records]
        if self.count == 0 or not _MESSAGE_NODES.issuperset(map(type, bodies)):
            return None
        ids = [record.id for record in records]
        if [body.parent for body in bodies] != [self.leaf, *ids[:-1]]:  # type: ignore[union-attr]
            return None
        new = dict.fromkeys(ids, True)
        if len(new) != len(ids):
            return None
        stops = [body.stop_reason for body in bodies if type(body) is AssistantMessage]
        if not _TERMINAL.issuperset(stops):
            return None
        return ids, new

    def _check_one(
        self, rid: str, body: AnyBody, position: int, leaf: str | None, new_ids: dict[str, bool]
    ) -> str | None:
        """Every rule for one record at `position` after `leaf`: records it in `new_ids`, returns the
        leaf after it, or raises the error that names the broken rule."""
        if rid in self.ids or rid in new_ids:
            msg = f"id {rid!r} is already used in this journal; every record needs a fresh id"
            raise DuplicateIdError(msg, journal=self.journal, record_id=rid)
        kind = type(body)
        if (kind is Header) != (position == 1):
            msg = (
                f"record {rid!r} at seq {position}: the header must be the first record and "
                "only the first; create a journal with its header, then append entries"
            )
            raise MisplacedHeaderError(msg, journal=self.journal, record_id=rid)
        extra = _BODY_CHECKS.get(kind)
        if extra is None:
            msg = f"record {rid!r} has a body of type {kind.__name__}, which is not a record body"
            raise InvalidRecordError(msg, journal=self.journal, record_id=rid)
        if body.IS_NODE:
            parent = body.parent  # type: ignore[union-attr]
            if parent != leaf:
                msg = (
                    f"node {rid!r} names parent {parent!r} but the current leaf is {leaf!r}; a node must "
                    "extend the current leaf. To branch, move the leaf first (Session.branch_from)"
                )
                raise ParentMismatchError(msg, journal=self.journal, record_id=rid)
        extra(self, rid, body, leaf, new_ids)
        new_ids[rid] = body.IS_NODE
        return next_leaf(leaf, rid, body)

    def commit(self, delta: RulesDelta) -> None:
        self.ids.add(delta.ids, self.count + 1)
        self.count += len(delta.ids)
        self.has_header = True  # a checked batch either starts with the header or follows it
        self.leaf = delta.leaf
        if delta.role is not None:
            self.role_rules, role_delta = delta.role
            if role_delta is not None:
                self.role_rules.commit(role_delta)
        self._compact_when_large()

    def compact_if_large(self) -> None:
        """Move the ids to the compact index if there are more than COMPACT_ABOVE (a restored state)."""
        self._compact_when_large()

    def _compact_when_large(self) -> None:
        """Past COMPACT_ABOVE ids, move them from the dict to the compact index, once.

        A dict answers in one C call but costs about 100 bytes per id; the compact index costs about
        11 and a Python call per question. Below the threshold the dict's speed wins and its memory is
        bounded; above it, memory per record is what matters (docs/jsonl.md, "The id index").
        """
        if type(self.ids) is DictIdIndex and self.compact_ids is not None and len(self.ids) > COMPACT_ABOVE:
            compact = self.compact_ids()
            compact.load(self.ids)  # the dict holds the ids in commit order, from seq 1
            self.ids = compact

    def is_known_node(self, node_id: str, pending: Mapping[str, bool]) -> bool:
        return self.ids.node(node_id) or pending.get(node_id, False)


_TERMINAL: Final = TERMINAL_STOP_REASONS
_MESSAGE_NODES: Final = frozenset({UserMessage, AssistantMessage, SystemMessage, ToolResult})
_ID_MATCH: Final = ID_PATTERN.fullmatch
BodyCheck = Callable[[SessionRules, str, Any, "str | None", Mapping[str, bool]], None]


def _no_check(
    rules: SessionRules, rid: str, body: Any, leaf: str | None, pending: Mapping[str, bool]
) -> None:
    return


def _check_assistant(
    rules: SessionRules, rid: str, body: AssistantMessage, leaf: str | None, pending: Mapping[str, bool]
) -> None:
    if body.stop_reason not in TERMINAL_STOP_REASONS:
        msg = (
            f"assistant entry {rid!r} has stop reason {body.stop_reason!r}: only complete turns are "
            f"committed (one of {', '.join(sorted(TERMINAL_STOP_REASONS))}); never a streaming partial"
        )
        raise PartialAssistantError(msg, journal=rules.journal, record_id=rid)


def _check_leaf_move(
    rules: SessionRules, rid: str, body: LeafMoved, leaf: str | None, pending: Mapping[str, bool]
) -> None:
    if body.from_leaf != leaf:
        msg = (
            f"leaf move {rid!r} starts at {body.from_leaf!r} but the current leaf is {leaf!r}; "
            "sync with the journal and move from the current leaf"
        )
        raise InvalidLeafMoveError(msg, journal=rules.journal, record_id=rid)
    if body.to_leaf is not None and not rules.is_known_node(body.to_leaf, pending):
        msg = f"leaf move {rid!r} goes to {body.to_leaf!r}, which is not a node of this journal"
        raise InvalidLeafMoveError(msg, journal=rules.journal, record_id=rid)


def _check_refs(
    rules: SessionRules,
    rid: str,
    body: Compaction | ContextExclusion,
    leaf: str | None,
    pending: Mapping[str, bool],
) -> None:
    ref = body.first_kept if isinstance(body, Compaction) else body.target
    if ref is not None and not rules.is_known_node(ref, pending):
        msg = f"record {rid!r} refers to {ref!r}, which is not a node of this journal"
        raise UnknownNodeError(msg, journal=rules.journal, record_id=rid)


def _check_link(
    rules: SessionRules, rid: str, body: SubagentLink, leaf: str | None, pending: Mapping[str, bool]
) -> None:
    if not rules.is_known_node(body.node, pending):
        msg = f"sub-agent link {rid!r} is at {body.node!r}, which is not a node of this journal"
        raise UnknownNodeError(msg, journal=rules.journal, record_id=rid)
    if not body.journal:
        msg = f"sub-agent link {rid!r} names no journal; give the sub-agent journal's id"
        raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)


def _check_namespaced(rules: SessionRules, what: str, rid: str, type_: object) -> None:
    """A custom entry's or an annotation's type is namespaced (`myext.note`)."""
    if type(type_) is not str or not CUSTOM_TYPE_PATTERN.fullmatch(type_):
        msg = (
            f"{what} has type {type_!r}; use a namespaced type such as 'myext.note' so extensions cannot "
            "collide"
        )
        raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)


def _check_custom(
    rules: SessionRules, rid: str, body: CustomEntry, leaf: str | None, pending: Mapping[str, bool]
) -> None:
    _check_namespaced(rules, f"custom entry {rid!r}", rid, body.type)


def _check_annotation(
    rules: SessionRules, rid: str, body: Annotation, leaf: str | None, pending: Mapping[str, bool]
) -> None:
    _check_namespaced(rules, f"annotation {rid!r}", rid, body.type)
    if not rules.is_known_node(body.target, pending):
        msg = f"annotation {rid!r} is attached to {body.target!r}, which is not a node of this journal"
        raise UnknownNodeError(msg, journal=rules.journal, record_id=rid)


def _check_header(
    rules: SessionRules, rid: str, body: Header, leaf: str | None, pending: Mapping[str, bool]
) -> None:
    if body.role not in JOURNAL_ROLES:
        roles = ", ".join(JOURNAL_ROLES)
        msg = f"header {rid!r} declares role {body.role!r}; a journal's role is one of {roles}"
        raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)
    if type(body.schema) is not int or not 1 <= body.schema <= SEALED_SCHEMA:
        msg = (
            f"header {rid!r} declares schema {body.schema!r}; this waybook writes and reads schemas 1 and "
            f"{SEALED_SCHEMA} (a newer schema needs a newer waybook)"
        )
        raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)


_HEX64: Final = re.compile(r"[0-9a-f]{64}")


def _check_erasure(
    rules: SessionRules, rid: str, body: Erasure, leaf: str | None, pending: Mapping[str, bool]
) -> None:
    """An erasure names earlier records of this journal (after the header, in increasing order), each
    with a 64-hex SHA-256 state, two blocks or more and known parts, and says why."""
    position = rules.count + len(pending) + 1
    rules.erasures = True
    if type(body.reason) is not str or not body.reason.strip():
        msg = f"erasure {rid!r} gives no reason; say why the content is erased (a request, a policy)"
        raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)
    if not body.records:
        msg = f"erasure {rid!r} names no record; an erasure takes the content of one record or more"
        raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)
    previous = 1
    for entry in body.records:
        seq = entry.seq
        if type(seq) is not int or not previous < seq < position:
            msg = (
                f"erasure {rid!r} names seq {seq!r}: an erasure names earlier records after the header, "
                "each once, in increasing order"
            )
            raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)
        previous = seq
        if type(entry.state) is not str or not _HEX64.fullmatch(entry.state) or entry.blocks < 2:
            msg = f"erasure {rid!r}: the commitment of seq {seq} is not a SHA-256 state and block count"
            raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)
        unknown = sorted(set(entry.parts) - set(CONTENT_PARTS))
        if unknown:
            msg = f"erasure {rid!r}: seq {seq} names unknown parts {unknown}; parts are {CONTENT_PARTS}"
            raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)
    unknown = sorted(set(body.parts) - set(CONTENT_PARTS))
    if unknown:
        msg = f"erasure {rid!r} names unknown parts {unknown}; parts are {', '.join(CONTENT_PARTS)}"
        raise InvalidRecordError(msg, journal=rules.journal, record_id=rid)


_BODY_CHECKS: Final[dict[type, BodyCheck]] = {
    **dict.fromkeys(get_args(AnyBody), _no_check),  # every record body type; these have rules of their own:
    Header: _check_header,
    AssistantMessage: _check_assistant,
    Compaction: _check_refs,
    ContextExclusion: _check_refs,
    CustomEntry: _check_custom,
    LeafMoved: _check_leaf_move,
    Annotation: _check_annotation,
    Erasure: _check_erasure,
    SubagentLink: _check_link,
}
