"""Journals named by a runtime's key, and what each holds, kept current by reading only new records.

A runtime names its sessions with its own key (a project and a session id, an app, a user and a session
id). `KeyedJournals` maps a key to a journal of a store: the journal id is a digest of the key (journal
ids are restricted; keys are not), the key itself is the journal's metadata, and a key whose journal was
purged lives again in a new journal (a purged id is retired), so the current journal of a key is the
latest one listed for it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Generic, Literal, TypeVar

from waybook._masking import Redact, SecretMask, secret_mask
from waybook._session import new_id
from waybook.journal import SessionJournal, next_leaf
from waybook.model import (
    GENESIS,
    AnyBody,
    ConflictError,
    CustomEntry,
    Head,
    NewRecord,
    Record,
    Reset,
    StaleWriterError,
)
from waybook.stores import (
    JournalExistsError,
    JournalInfo,
    JournalPurgedError,
    JournalStore,
    NonBlockingStore,
    StoreArgumentError,
)

MAX_RETRIES: Final = 16
S = TypeVar("S")


class StorageClock:
    """UTC timestamps for records, strictly increasing in this process (the next millisecond on a tie).

    A runtime reads a record's `at` as its storage write time (an mtime), and orders by it: two writes
    in the same millisecond must not look simultaneous.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def __call__(self) -> str:
        with self._lock:
            now = max(time.time_ns() // 1_000_000, self._last + 1)
            self._last = now
        return datetime.fromtimestamp(now / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


CLOCK: Final = StorageClock()


def run_inline(store: JournalStore) -> bool:
    """Whether the store's calls never block on I/O (the memory store), so a coroutine may run them
    without a worker thread."""
    return isinstance(store, NonBlockingStore) and store.never_blocks


def epoch_ms(at: str) -> int:
    """A record's `at` (RFC 3339 UTC with milliseconds) as Unix epoch milliseconds."""
    return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)


class Tail(Generic[S]):
    """A fold over one journal's records, advanced by reading only what was committed since."""

    def __init__(
        self,
        journal: SessionJournal,
        initial: Callable[[], S],
        apply: Callable[[S, Record], S],
        *,
        mask: SecretMask | None = None,
    ) -> None:
        self.journal = journal
        self.mask = mask
        """Masks secrets in every body before it is appended (the integration's `redact=`)."""
        self.state = initial()
        self._apply = apply
        self.head: Head = GENESIS
        self.leaf: str | None = None
        self.last: Record | None = None

    def refresh(self) -> Tail[S]:
        for record in self.journal.read(after=self.head.seq):
            self._see(record)
        return self

    def append(self, bodies: Sequence[AnyBody], *, expected: Head | None = None) -> list[Record]:
        """Append `bodies` as one batch at `expected` (default: the head this tail last saw).

        Custom entries are chained as nodes from the current leaf; secrets are masked first (`mask`).
        StaleWriterError if another writer moved the head; nothing is written then.
        """
        batch, leaf, at = [], self.leaf, CLOCK()  # one storage time for the whole batch
        for body in masked(self.mask, bodies):
            record_id = new_id()
            if isinstance(body, CustomEntry):
                body = CustomEntry(parent=leaf, type=body.type, data=body.data, in_context=body.in_context)
            batch.append(NewRecord(id=record_id, at=at, body=body))
            leaf = next_leaf(leaf, record_id, body)
        result = self.journal.append(batch, expected=self.head if expected is None else expected)
        for record in result.records:
            self._see(record)
        return list(result.records)

    def _see(self, record: Record) -> None:
        self.state = self._apply(self.state, record)
        self.head = Head.of(record)
        self.leaf = next_leaf(self.leaf, record.id, record.body)
        self.last = record


def masked(mask: SecretMask | None, bodies: Sequence[AnyBody]) -> Sequence[AnyBody]:
    """`bodies` with their secrets masked and the record of it in their details (waybook._masking)."""
    return bodies if mask is None else [mask.body(body) for body in bodies]


def retrying(tail: Tail[Any], plan: Callable[[], Sequence[AnyBody] | None]) -> list[Record]:
    """Compare-and-append what `plan` decides from the current fold; on a lost race, re-read and decide
    again. `plan` returning None means nothing to write. A ConflictError after MAX_RETRIES lost races."""
    for _ in range(MAX_RETRIES):
        tail.refresh()
        bodies = plan()
        if not bodies:
            return []
        try:
            return tail.append(bodies)
        except StaleWriterError:
            continue
    msg = f"{tail.journal.name}: lost {MAX_RETRIES} append races in a row to other writers; retry later"
    raise ConflictError(msg)


class KeyedJournals(Generic[S]):
    """The journals of one runtime in a store, one per key, each with its fold. Thread-safe."""

    def __init__(
        self,
        store: JournalStore,
        *,
        runtime: str,
        prefix: str,
        fields: tuple[str, ...],
        initial: Callable[[], S],
        apply: Callable[[S, Record], S],
        mask: SecretMask | None = None,
    ) -> None:
        self.store = store
        self.mask = mask
        self._runtime = runtime
        self._prefix = prefix
        self._fields = fields
        self._initial = initial
        self._apply = apply
        self.lock = threading.RLock()
        self._ids: dict[tuple[str, ...], str] = {}
        self._tails: dict[str, Tail[S]] = {}

    def digest(self, key: tuple[str, ...]) -> str:
        return hashlib.sha256("\0".join(key).encode()).hexdigest()[:40]

    def current(self, key: tuple[str, ...]) -> str | None:
        """The id of the key's journal, or None if it has none (never created, or purged)."""
        with self.lock:
            known = self._ids.get(key)
            if known is not None and self.store.exists(known):
                return known  # a key gets a newer journal only once this one is purged
            if known is not None:  # purged, perhaps by another process: forget it and look again
                del self._ids[key]
                self._tails.pop(known, None)
            found = [info.journal_id for info in self.pages(key=self.digest(key))]
            if found:
                self._ids[key] = found[-1]
            return found[-1] if found else None

    def tail(self, key: tuple[str, ...], *, create: bool) -> Tail[S] | None:
        """The key's journal, folded up to its head; created if `create` and it has none."""
        with self.lock:
            journal_id = self.current(key)
            if journal_id is None:
                if not create:
                    return None
                journal_id = self._create(key)
            return self.tail_of(journal_id)

    def tail_of(self, journal_id: str) -> Tail[S]:
        with self.lock:
            tail = self._tails.get(journal_id)
            if tail is None:
                tail = self._tails[journal_id] = Tail(
                    self.store.open(journal_id), self._initial, self._apply, mask=self.mask
                )
            return tail.refresh()

    def purge(self, key: tuple[str, ...], *, reason: str) -> None:
        with self.lock:
            journal_id = self.current(key)
            if journal_id is not None:
                self.store.purge(journal_id, reason=reason)
                self._tails.pop(journal_id, None)
                self._ids.pop(key, None)

    def listed(self, **metadata: str) -> Iterator[tuple[tuple[str, ...], str]]:
        """(key, current journal id) of every key whose metadata matches, in creation order."""
        latest: dict[tuple[str, ...], str] = {}
        for info in self.pages(**metadata):
            latest[tuple(str(info.metadata[f]) for f in self._fields)] = info.journal_id
        yield from latest.items()

    def pages(self, **metadata: str) -> Iterator[JournalInfo]:
        after = None
        while True:
            page = self.store.list(metadata={"runtime": self._runtime, **metadata}, after=after, limit=500)
            yield from page
            if page.cursor is None:
                return
            after = page.cursor

    def _create(self, key: tuple[str, ...]) -> str:
        base = f"{self._prefix}-{self.digest(key)}"
        metadata = {
            "runtime": self._runtime,
            "key": self.digest(key),
            **dict(zip(self._fields, key, strict=True)),
        }
        generation = 0
        while True:
            journal_id = base if generation == 0 else f"{base}-{generation}"
            try:
                self.store.create(journal_id, metadata=metadata)
            except JournalPurgedError:
                generation += 1  # a purged id is retired: the key's next life gets the next id
                continue
            except JournalExistsError:
                pass  # another process created it first
            self._ids[key] = journal_id
            return journal_id


class KeyedRuntime(ABC):
    """A runtime's session store on `KeyedJournals` (ADK's session service, the Claude Agent SDK's
    session store): built from a store and the `delete=` and `redact=` options, which it checks, and
    whose journals `_open_journals` makes. Thread-safe; safe across processes wherever the store is
    (every write is a compare-and-append)."""

    def __init__(
        self, store: JournalStore, *, delete: Literal["purge", "reset"] = "purge", redact: Redact = False
    ) -> None:
        """`redact` masks secrets before anything is stored: True with the built-in detector (the one
        `export --redact` uses), or a list of extra regular expressions to mask too (as `Session`'s;
        docs/erasure.md). `delete` says what deleting a session does: 'purge' erases its journal,
        'reset' appends a reset and keeps its history."""
        self._mask = secret_mask(redact, who=type(self).__name__)
        if delete not in ("purge", "reset"):
            msg = f"delete={delete!r}: use 'purge' (erase the journal) or 'reset' (keep its history)"
            raise StoreArgumentError(msg)
        self._delete_mode = delete
        self._blocking: JournalStore = getattr(store, "blocking", store)  # a ThreadedStore's blocking store
        self._open_journals()

    @property
    def store(self) -> JournalStore:
        return self._blocking

    @abstractmethod
    def _open_journals(self) -> None:
        """Make this runtime's `KeyedJournals` (with `_journals`)."""

    def _journals(
        self,
        *,
        runtime: str,
        prefix: str,
        fields: tuple[str, ...],
        initial: Callable[[], S],
        apply: Callable[[S, Record], S],
    ) -> KeyedJournals[S]:
        """The journals of one kind of key in the store, secrets masked as `redact=` says."""
        return KeyedJournals(
            self._blocking,
            runtime=runtime,
            prefix=prefix,
            fields=fields,
            initial=initial,
            apply=apply,
            mask=self._mask,
        )

    def _delete_key(
        self, journals: KeyedJournals[S], key: tuple[str, ...], *, reason: str, live: Callable[[S], bool]
    ) -> None:
        """Delete the key's session as `delete=` says: purge its journal, or append a reset if the
        session is `live` (its history is kept)."""
        with journals.lock:
            if self._delete_mode == "purge":
                journals.purge(key, reason=reason)
                return
            tail = journals.tail(key, create=False)
            if tail is not None:
                retrying(tail, lambda: [Reset(reason=reason)] if live(tail.state) else None)
