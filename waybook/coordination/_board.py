"""The blackboard: workers publish notes, wait for the notes they depend on, and never share a loop.

Two implementations of one port. `Blackboard` lives in one process: waiters sleep on a condition
variable that every publish notifies. `open_blackboard(url)` opens a board in a store (`sqlite:FILE`,
`postgresql://...`, any store URL) shared by processes: waiters sleep in the store's `wait` (PostgreSQL
wakes them with LISTEN/NOTIFY, no polling). Both record every publish in the board's coordination journal
with compare-and-append, so the first publish of a key wins everywhere and the run replays
(`replay_notes`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from waybook.coordination._notes import (
    NOTE_TYPE,
    DependencyFailedError,
    InvalidNoteError,
    Note,
    NoteExistsError,
    Status,
    WaitTimeoutError,
    make_note,
    note_of,
)
from waybook.journal import ClosedOnExit, InMemoryJournal, SessionJournal, check_timeout, new_id, utc_now
from waybook.model import GENESIS, CustomEntry, Head, Header, NewRecord, StaleWriterError

if TYPE_CHECKING:
    from waybook.stores import JournalStore


class _Board(ClosedOnExit):
    """What both boards share: the notes replayed from the journal, and publishing by compare-and-append."""

    def __init__(self, journal: SessionJournal, name: str) -> None:
        self._journal = journal
        self._name = name
        self._lock = threading.RLock()
        self._notes: dict[str, Note] = {}
        self._head = GENESIS
        self._leaf: str | None = None
        self._sync()
        if self._head == GENESIS:
            header = Header(
                journal=name, creator="waybook.coordination", metadata={"coordination": NOTE_TYPE}
            )
            with contextlib.suppress(StaleWriterError):  # another process wrote the header first
                self._journal.append([NewRecord(id=new_id(), at=utc_now(), body=header)], expected=GENESIS)
            self._sync()

    @property
    def journal(self) -> SessionJournal:
        """The coordination journal: one record per publish, in the order they won."""
        return self._journal

    def _sync(self) -> None:
        with self._lock:
            for record in self._journal.read(after=self._head.seq):
                self._head = Head.of(record)
                if record.body.IS_NODE:
                    self._leaf = record.id
                note = note_of(record)
                if note is not None and note.key not in self._notes:
                    self._notes[note.key] = note

    def publish(
        self,
        key: str,
        value: Any = None,
        *,
        writer: str = "",
        depends: Iterable[Note] = (),
        status: Status = "done",
        reason: str = "",
    ) -> Note:
        """Publish `key` once. `depends` are the notes this one was computed from (their receipts go into
        its own). Raises NoteExistsError if `key` was published already (nothing is written)."""
        note = make_note(key, status, value, writer=writer, reason=reason, depends=tuple(depends))
        while True:
            with self._lock:
                self._sync()
                if key in self._notes:
                    known = self._notes[key]
                    msg = (
                        f"note {key!r} was published already ({known.status}, by {known.writer or 'someone'})"
                    )
                    raise NoteExistsError(msg)
                body = CustomEntry(parent=self._leaf, type=NOTE_TYPE, data=note.wire())
                try:
                    self._journal.append(
                        [NewRecord(id=new_id(), at=utc_now(), body=body)], expected=self._head
                    )
                except StaleWriterError:
                    continue  # another process published first: look again
                self._sync()
                self._published()
                return self._notes[key]

    def fail(self, key: str, reason: str, *, writer: str = "", depends: Iterable[Note] = ()) -> Note:
        """Publish that `key` failed; every worker waiting for it gets DependencyFailedError."""
        return self.publish(key, None, writer=writer, depends=depends, status="failed", reason=reason)

    def cancel(self, key: str, reason: str = "cancelled", *, writer: str = "") -> Note:
        """Cancel `key` before it is published: its worker's publish is refused and its dependants stop."""
        return self.publish(key, None, writer=writer, status="cancelled", reason=reason)

    def get(self, key: str) -> Note | None:
        with self._lock:
            self._sync()
            return self._notes.get(key)

    def notes(self) -> dict[str, Note]:
        """Every note published so far, by key, in publish order."""
        with self._lock:
            self._sync()
            return dict(self._notes)

    def wait(self, keys: Sequence[str], timeout: float | None = None) -> dict[str, Note]:
        """Block until every key in `keys` is published; returns exactly those notes. Raises
        DependencyFailedError as soon as one of them failed or was cancelled, WaitTimeoutError after
        `timeout` seconds (None, or past a year: no limit; 0 or less: look once). A NaN or non-number
        timeout is refused (InvalidNoteError) before anything waits."""
        timeout = check_timeout(timeout, what="wait timeout", error=InvalidNoteError)
        wanted = list(dict.fromkeys(keys))
        if not all(isinstance(key, str) for key in wanted):
            msg = f"wait() takes note keys (strings), not {keys!r}"
            raise InvalidNoteError(msg)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            mark = self._mark()
            with self._lock:
                self._sync()
                found = {key: self._notes[key] for key in wanted if key in self._notes}
            for key in wanted:
                if key in found and not found[key].ok:
                    raise DependencyFailedError(found[key])
            if len(found) == len(wanted):
                return found
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                missing = [key for key in wanted if key not in found]
                msg = f"{self._name}: notes {missing} were not published within {timeout} s"
                raise WaitTimeoutError(msg)
            self._sleep(mark, left)

    # --- the two ways to wait -------------------------------------------------------------------

    def _mark(self) -> int:
        raise NotImplementedError

    def _sleep(self, mark: int, left: float | None) -> None:
        raise NotImplementedError

    def _published(self) -> None:
        """Called after each publish this board made."""

    def close(self) -> None:
        """Nothing to release here; a store board closes its store."""


class Blackboard(_Board):
    """A blackboard in this process: waiters sleep on a condition variable each publish notifies.

    `journal` (default: a new InMemoryJournal) is the coordination journal that records every publish.
    """

    def __init__(self, journal: SessionJournal | None = None, *, name: str = "blackboard") -> None:
        self._changed = threading.Condition()
        self._generation = 0
        super().__init__(journal if journal is not None else InMemoryJournal(name), name)

    def _mark(self) -> int:
        with self._changed:
            return self._generation

    def _sleep(self, mark: int, left: float | None) -> None:
        with self._changed:
            if self._generation == mark:
                self._changed.wait(left)

    def _published(self) -> None:
        with self._changed:
            self._generation += 1
            self._changed.notify_all()


class StoreBlackboard(_Board):
    """A blackboard in a store, shared by every process that opens it: waiters sleep in `store.wait`."""

    def __init__(self, store: JournalStore, name: str = "blackboard", *, owns_store: bool = False) -> None:
        from waybook.stores import JournalExistsError

        self._store = store
        self._owns_store = owns_store
        if store.exists(name):
            journal = store.open(name)
        else:
            try:
                journal = store.create(name, metadata={"coordination": NOTE_TYPE})
            except JournalExistsError:
                journal = store.open(name)
        super().__init__(journal, name)

    @property
    def store(self) -> JournalStore:
        return self._store

    def _mark(self) -> int:
        return self._store.feed_head()

    def _sleep(self, mark: int, left: float | None) -> None:
        self._store.wait(mark, left)  # PostgreSQL: LISTEN/NOTIFY wakes it; SQLite: its data version

    def close(self) -> None:
        self._journal.close()
        if self._owns_store:
            self._store.close()


def open_blackboard(url: str, *, name: str = "blackboard") -> StoreBlackboard:
    """The blackboard `name` in the store at `url` (created on first use), shared across processes:
    `sqlite:FILE`, `postgresql://...` (waiters woken by LISTEN/NOTIFY), `file:DIR`. Closing the board
    closes the store it opened."""
    from waybook.stores import open_store

    store = open_store(url)
    try:
        return StoreBlackboard(store, name, owns_store=True)
    except BaseException:
        store.close()
        raise


def run_worker(
    board: _Board,
    key: str,
    depends: Sequence[str],
    work: Callable[[Mapping[str, Any]], Any],
    *,
    writer: str | None = None,
    timeout: float | None = None,
) -> Note:
    """One worker: wait for the notes `depends` names, compute `work` from their values alone (a bounded
    context: nothing else on the board), and publish `key`. A dependency that failed or was cancelled
    makes this note fail or be cancelled the same way, naming it, without running `work`; an exception
    from `work` publishes a failure. If `key` was cancelled meanwhile, returns that note.
    """
    who = key if writer is None else writer
    try:
        try:
            inputs = board.wait(depends, timeout=timeout)
        except DependencyFailedError as exc:
            cause = exc.note
            reason = f"dependency {cause.key!r} {cause.status}"
            return board.publish(key, None, writer=who, depends=[cause], status=cause.status, reason=reason)
        try:
            value = work({name: note.value for name, note in inputs.items()})
        except Exception as exc:
            return board.fail(key, f"{type(exc).__name__}: {exc}", writer=who, depends=inputs.values())
        return board.publish(key, value, writer=who, depends=inputs.values())
    except NoteExistsError:
        existing = board.get(key)
        assert existing is not None
        return existing
