"""The catalog journal every store keeps, and the pure fold that lists journals from it.

The catalog is an ordinary journal (role "catalog", id CATALOG_ID) whose entries are custom records:
`waybook.store.created`, `waybook.store.hidden` and `waybook.store.purged` (the purge receipt). Listing,
hiding and the purge trail are therefore records, replayable like everything else.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any, Final

import attrs

from waybook.journal import ID_PATTERN
from waybook.journal import check_timeout as check_timeout_argument
from waybook.model import JOURNAL_ROLES, SEALED_SCHEMA, CustomEntry, Head, Header, NewRecord, Record
from waybook.stores._errors import InvalidJournalIdError, ReservedJournalError, StoreArgumentError
from waybook.stores._journal_table import JournalTable
from waybook.stores._protocol import CATALOG_ID
from waybook.stores._values import JournalInfo, JournalPage, PurgeReceipt

CREATED: Final = "waybook.store.created"
HIDDEN: Final = "waybook.store.hidden"
PURGED: Final = "waybook.store.purged"


def check_journal_id(journal_id: object) -> str:
    """`journal_id` if it is a valid user journal id (it names files too), else InvalidJournalIdError."""
    if journal_id == CATALOG_ID:
        msg = f"{CATALOG_ID!r} is the store's catalog journal; it is written by the store only"
        raise ReservedJournalError(msg)
    if type(journal_id) is not str or not ID_PATTERN.fullmatch(journal_id):
        msg = (
            f"journal id {journal_id!r} is not valid: use 1-128 letters, digits, '_', '.', ':' or '-', "
            "starting with a letter or digit"
        )
        raise InvalidJournalIdError(msg)
    return journal_id


def check_role(role: object) -> str:
    if role not in JOURNAL_ROLES or role == "catalog":
        roles = ", ".join(r for r in JOURNAL_ROLES if r != "catalog")
        msg = f"role {role!r} is not a journal role a caller can create; use one of {roles}"
        raise StoreArgumentError(msg)
    return str(role)


def header_record(
    journal_id: str, role: str, metadata: Mapping[str, Any], *, record_id: str, at: str
) -> NewRecord:
    body = Header(
        journal=journal_id, creator="waybook", metadata=dict(metadata), role=role, schema=SEALED_SCHEMA
    )
    return NewRecord(id=record_id, at=at, body=body)


def catalog_entry(kind: str, data: dict[str, Any], leaf: str | None, *, record_id: str, at: str) -> NewRecord:
    """A catalog record extending `leaf` (the catalog's last entry, None right after its header)."""
    return NewRecord(id=record_id, at=at, body=CustomEntry(parent=leaf, type=kind, data=data))


def leaf_of(last: Record | None) -> str | None:
    """The catalog's leaf: every entry after the header extends the one before."""
    return None if last is None or isinstance(last.body, Header) else last.id


SHARED_TEXT: Final = 1024
"""A metadata string at least this long is held once by the catalog, whatever the journals carrying it."""


def shared_metadata(metadata: Mapping[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    """A copy of `metadata` (its dicts and lists new) whose long strings are the copies in `texts` (each
    one added the first time it is met). A store lists every journal's metadata from memory, and agents
    repeat long texts in every session's header (a Codex rollout carries its ~21 KB base instructions):
    held once per journal, they grew a home's import with its size."""

    def shared(value: Any) -> Any:
        if type(value) is str:
            return texts.setdefault(value, value) if len(value) >= SHARED_TEXT else value
        if type(value) is dict:
            return {key: shared(item) for key, item in value.items()}
        if type(value) is list:
            return [shared(item) for item in value]
        return value

    return {key: shared(value) for key, value in metadata.items()}


@attrs.define
class Catalog:
    """The fold of a catalog journal: which journals exist, in creation order, hidden, or purged.

    Beside the journals by id it keeps their creation seqs in order (and the hidden ones'), so a page
    after a cursor, the count and the cursor of the n-th journal cost O(log journals), not a walk."""

    store: str
    seq: int = 0
    last: Record | None = None
    journals: JournalTable = attrs.field(factory=JournalTable)
    purged: MutableMapping[str, PurgeReceipt] = attrs.field(factory=dict)
    _created: list[int] = attrs.field(factory=list)
    """The creation seqs of `journals`, ascending (a catalog appends them in that order)."""
    _ids: list[str] = attrs.field(factory=list)
    """The ids of `journals`, in the order of `_created`."""
    _hidden: list[int] = attrs.field(factory=list)
    """The creation seqs of the hidden journals, ascending."""
    _texts: dict[str, str] = attrs.field(factory=dict, repr=False, eq=False)
    """One copy of each long text the journals' metadata carries (`shared_metadata`)."""

    def apply(self, records: Iterable[Record]) -> None:
        """Fold in the records after `seq` (records already folded in are skipped)."""
        for record in records:
            if record.seq > self.seq:
                self._apply_one(record)

    def _apply_one(self, record: Record) -> None:
        self.seq, self.last = record.seq, record
        body = record.body
        if not isinstance(body, CustomEntry) or not isinstance(body.data, dict):
            return
        data: dict[str, Any] = body.data
        journal_id = str(data.get("journal", ""))
        if body.type == CREATED:
            if journal_id in self.journals:  # (a catalog names each journal once; a second replaces it)
                self._forget(journal_id, at=record.seq)
            self.journals[journal_id] = JournalInfo(
                journal_id=journal_id,
                role=str(data.get("role", "session")),
                metadata=shared_metadata(dict(data.get("metadata") or {}), self._texts),
                created=record.seq,
                created_at=record.at,
            )
            self._created.append(record.seq)
            self._ids.append(journal_id)
        elif body.type == HIDDEN and journal_id in self.journals:
            info = self.journals[journal_id]
            if not info.hidden:
                self._hide(info, at=record.seq)
            self.journals[journal_id] = attrs.evolve(info, hidden=True)
        elif body.type == PURGED:
            self._forget(journal_id, at=record.seq)
            self.purged[journal_id] = receipt_of(self.store, record)

    def _forget(self, journal_id: str, *, at: int) -> None:
        """Drop a journal (purged at catalog seq `at`, or created again there)."""
        info = self.journals.pop(journal_id)
        if info is not None:
            self._unlist(info, at=at)

    def _hide(self, info: JournalInfo, *, at: int) -> None:
        """Note that a shown journal was hidden at catalog seq `at`."""
        bisect.insort(self._hidden, info.created)

    def _unlist(self, info: JournalInfo, *, at: int) -> None:
        """Take a forgotten journal out of the creation order (and the hidden ones)."""
        place = bisect.bisect_left(self._created, info.created)
        del self._created[place], self._ids[place]
        if info.hidden:
            del self._hidden[bisect.bisect_left(self._hidden, info.created)]

    @property
    def leaf(self) -> str | None:
        return leaf_of(self.last)

    def count(self, *, hidden: bool) -> int:
        """How many journals a listing shows (hidden ones too with `hidden`). O(1)."""
        return len(self._created) - (0 if hidden else len(self._hidden))

    def cursor_at(self, index: int, *, hidden: bool) -> str | None:
        """The cursor after which a listing starts at its `index`-th journal (from 0; None for 0; past the
        last journal, a cursor after every journal)."""
        if index <= 0:
            return None
        if hidden:
            return str(self._created[index - 1]) if index <= len(self._created) else str(POSITION_MAX)
        # the first position whose shown journals up to and including it number `index`
        low, high = 0, len(self._created)
        while low < high:
            middle = (low + high) // 2
            shown = middle + 1 - bisect.bisect_right(self._hidden, self._created[middle])
            if shown < index:
                low = middle + 1
            else:
                high = middle
        return str(self._created[low]) if low < len(self._created) else str(POSITION_MAX)

    def in_order(self, after: int) -> Iterator[JournalInfo]:
        """The journals created after catalog seq `after`, in creation order."""
        for at in range(bisect.bisect_right(self._created, after), len(self._created)):
            yield self.journals[self._ids[at]]

    def page(
        self,
        *,
        role: str | None,
        metadata: Mapping[str, Any] | None,
        hidden: bool,
        after: str | None,
        limit: int,
    ) -> JournalPage:
        start = parse_cursor(after)
        return select_page(
            self.in_order(start), role=role, metadata=metadata, hidden=hidden, after=after, limit=limit
        )


POSITION_MAX = 2**63 - 1
"""The largest feed position, cursor or limit any store can hold (a signed 64-bit integer)."""


def parse_cursor(after: object) -> int:
    if after is None:
        return 0
    value = -1
    if type(after) is int or (type(after) is str and after.isascii() and after.isdigit() and len(after) < 20):
        value = int(after)
    if not 0 <= value <= POSITION_MAX:
        msg = f"list cursor {after!r} is not one this store returned; pass a JournalPage.cursor or None"
        raise StoreArgumentError(msg)
    return value


def check_index(index: object) -> int:
    if type(index) is not int or not 0 <= index <= POSITION_MAX:
        msg = f"journal index {index!r:.40} must be a whole number from 0 (the first journal listed)"
        raise StoreArgumentError(msg)
    return index


def check_limit(limit: int) -> int:
    if type(limit) is not int or limit < 1:
        msg = f"list limit {limit!r} must be a whole number of at least 1"
        raise StoreArgumentError(msg)
    return limit


def select_page(
    journals: Iterable[JournalInfo],
    *,
    role: str | None,
    metadata: Mapping[str, Any] | None,
    hidden: bool,
    after: str | None,
    limit: int,
) -> JournalPage:
    """One page of `journals` (in creation order) after the cursor, filtered: O(the journals it passes)."""
    start = parse_cursor(after)
    limit = check_limit(limit)
    wanted = dict(metadata or {})
    chosen: list[JournalInfo] = []
    for info in journals:
        if info.created <= start or (info.hidden and not hidden) or (role is not None and info.role != role):
            continue
        if any(info.metadata.get(key, _MISSING) != value for key, value in wanted.items()):
            continue
        if len(chosen) == limit:
            return JournalPage(tuple(chosen), str(chosen[-1].created))
        chosen.append(attrs.evolve(info, metadata=dict(info.metadata)))  # the caller's own copy
    return JournalPage(tuple(chosen), None)


_MISSING: Final = object()


def receipt_of(store: str, record: Record) -> PurgeReceipt:
    """The purge receipt a `waybook.store.purged` catalog record holds."""
    body = record.body
    assert isinstance(body, CustomEntry)
    data: dict[str, Any] = body.data
    return PurgeReceipt(
        store=store,
        journal_id=str(data["journal"]),
        role=str(data["role"]),
        head=Head(int(data["head_seq"]), str(data["head_digest"])),
        records=int(data["records"]),
        reason=str(data["reason"]),
        actor=data.get("actor"),
        at=record.at,
        catalog_seq=record.seq,
    )


def purge_data(journal_id: str, role: str, head: Head, reason: str, actor: str | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "journal": journal_id,
        "role": role,
        "head_seq": head.seq,
        "head_digest": head.digest,
        "records": head.seq,
        "reason": reason,
    }
    if actor is not None:
        data["actor"] = actor
    return data


def check_position(after: object, limit: object = None) -> int:
    """A feed position (a whole number, 0 for the start) and an optional limit, checked."""
    if type(after) is not int or not 0 <= after <= POSITION_MAX:
        msg = (
            f"feed position {after!r:.40} must be a whole number from 0 to {POSITION_MAX} "
            "(0 reads from the start)"
        )
        raise StoreArgumentError(msg)
    if limit is not None and (type(limit) is not int or not 0 <= limit <= POSITION_MAX):
        msg = f"feed limit {limit!r:.40} must be a whole number from 0 to {POSITION_MAX}, or None (no limit)"
        raise StoreArgumentError(msg)
    return after


def check_timeout(timeout: object) -> float | None:
    """A wait's timeout in seconds (None: no limit, as is anything past a year, infinity included; at
    most 0: do not block), checked: NaN and anything that is not a number are refused."""
    return check_timeout_argument(timeout, what="wait timeout", error=StoreArgumentError)


def check_reason(reason: object) -> str:
    if type(reason) is not str or not reason.strip():
        msg = "hide and purge need a reason (a short text the catalog keeps for auditors)"
        raise StoreArgumentError(msg)
    return reason


IdSource = Callable[[], str]
