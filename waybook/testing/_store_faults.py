"""What every store must survive beyond its journals' contract (issue 42): storage that lost records or
went away, bytes changed after a reader proved them, timeouts that are not plain numbers, and writers
that compete. Part of `StoreJournalContract`.

The damage is done behind the store's back by hooks the adapter defines, each on its own storage the way
a disk, an operator or another program would (truncate the file, delete rows, rewrite a byte):
`lose_tail`, `lose_storage` and `alter_record`. A store without them skips those tests, saying which
hook to define; a store that keeps nothing outside itself has nothing to lose.
"""

from __future__ import annotations

import math
import statistics
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from waybook.model import IntegrityError
from waybook.stores import JournalStore, LostRecordsError, StoreArgumentError, StoreBusyError, tail
from waybook.testing._records import assistant, chat, user


class StoreFaultsContract:
    """The store checks of issue 42. Needs `make_store` (and `reopen_store` where the store persists)."""

    fair_writers: ClassVar[int] = 8
    """How many writer threads the fairness check runs, each with a journal and a store object of its own."""
    fair_appends: ClassVar[int] = 40
    """Appends per writer, on average, before the check stops them all."""

    def make_store(self, directory: Path) -> JournalStore:
        raise NotImplementedError

    def reopen_store(self, store: JournalStore) -> JournalStore:
        raise NotImplementedError

    def persists(self) -> bool:
        raise NotImplementedError

    # --- the hooks: damage done on the store's own storage, never through waybook ---------------------

    def lose_tail(self, store: JournalStore, journal_id: str, keep: int) -> None:
        """Remove every record of `journal_id` after seq `keep` from the storage (truncate its file,
        delete its rows), leaving whatever else the store keeps as it is."""
        raise NotImplementedError

    def lose_storage(self, store: JournalStore, journal_id: str) -> None:
        """Lose all of `journal_id`'s storage (delete its file, every row)."""
        raise NotImplementedError

    def alter_record(self, store: JournalStore, journal_id: str, seq: int) -> None:
        """Change one byte of record `seq`'s stored text, keeping its length (its digest no longer holds)."""
        raise NotImplementedError

    def _damage(self, hook: str) -> None:
        if getattr(type(self), hook) is getattr(StoreFaultsContract, hook):
            pytest.skip(f"{type(self).__name__} does not define {hook}(store, journal_id, ...)")

    def _written(self, directory: Path) -> JournalStore:
        """A store with journals `lost` and `kept`, three records each."""
        store = self.make_store(directory)
        for journal_id in ("lost", "kept"):
            journal = store.create(journal_id)
            journal.append(list(chat(2)), expected=journal.head())
            journal.close()
        return store

    # --- a store knows what it holds ------------------------------------------------------------------

    def test_store_a_journal_that_lost_its_last_records_is_lost_records_and_the_others_still_read(
        self, tmp_path: Path
    ) -> None:
        self._damage("lose_tail")
        store = self._written(tmp_path)
        try:
            self.lose_tail(store, "lost", 1)
            with pytest.raises(LostRecordsError, match="lost"):
                list(store.open("lost").read())
            assert [r.seq for r in store.open("kept").read()] == [1, 2, 3]
            assert {entry.journal_id for entry in store.list()} >= {"kept"}
        finally:
            store.close()

    def test_store_a_journal_whose_storage_is_gone_is_lost_records_and_the_others_still_read(
        self, tmp_path: Path
    ) -> None:
        self._damage("lose_storage")
        store = self._written(tmp_path)
        try:
            self.lose_storage(store, "lost")
            with pytest.raises(LostRecordsError, match="lost"):
                list(store.open("lost").read())
            assert [r.seq for r in store.open("kept").read()] == [1, 2, 3]
        finally:
            store.close()

    def test_store_a_lost_tail_is_found_by_a_reopened_store_too(self, tmp_path: Path) -> None:
        self._damage("lose_tail")
        if not self.persists():
            pytest.skip(f"{type(self).__name__} does not reopen stores")
        store = self._written(tmp_path)
        store.close()
        self.lose_tail(store, "lost", 2)
        reopened = self.reopen_store(store)
        try:
            with pytest.raises(LostRecordsError, match="lost"):
                list(reopened.open("lost").read())
            assert [r.seq for r in reopened.open("kept").read()] == [1, 2, 3]
        finally:
            reopened.close()

    # --- reads prove what they serve --------------------------------------------------------------------

    def test_store_a_record_changed_after_a_reader_proved_it_is_never_served(self, tmp_path: Path) -> None:
        self._damage("alter_record")
        store = self._written(tmp_path)
        try:
            journal = store.open("lost")
            proved = list(journal.read())
            self.alter_record(store, "lost", 2)
            with pytest.raises(IntegrityError):
                list(journal.read())  # never the changed bytes
            assert list(journal.read(limit=1)) == proved[:1]  # the bytes before the change still read
            with pytest.raises(IntegrityError):
                list(store.feed())
        finally:
            store.close()

    # --- every timeout checked before anything waits ------------------------------------------------------

    @pytest.mark.parametrize("timeout", [math.nan, "1", True, [1]], ids=repr)
    def test_store_wait_refuses_a_timeout_that_is_not_a_number(self, tmp_path: Path, timeout: object) -> None:
        store = self.make_store(tmp_path)
        try:
            with pytest.raises(StoreArgumentError, match="timeout"):
                store.wait(0, timeout)  # type: ignore[arg-type]
            with pytest.raises(StoreArgumentError):
                tail(store, poll=timeout)  # type: ignore[arg-type]
        finally:
            store.close()

    @pytest.mark.parametrize("timeout", [math.inf, 1e300, 10**400, 86_400 * 366], ids=repr)
    def test_store_wait_takes_infinite_and_huge_timeouts_without_overflow(
        self, tmp_path: Path, timeout: float
    ) -> None:
        store = self._written(tmp_path)
        try:
            assert store.wait(0, timeout) is True  # something is committed after 0: it returns at once
        finally:
            store.close()

    @pytest.mark.parametrize("timeout", [0, 0.0, -1, -math.inf], ids=repr)
    def test_store_wait_with_no_time_left_does_not_block(self, tmp_path: Path, timeout: float) -> None:
        store = self._written(tmp_path)
        try:
            assert store.wait(store.feed_head(), timeout) is False
        finally:
            store.close()

    # --- writers take turns ---------------------------------------------------------------------------

    def test_store_competing_writers_each_make_progress_and_none_times_out(self, tmp_path: Path) -> None:
        """Writer threads append in a tight loop, each to its own journal through its own store object
        (where the store persists), until the store has committed `fair_writers * fair_appends`
        appends: the slowest made at least a quarter of the mean, and none got StoreBusyError.

        Only where the store persists: writers with store objects of their own compete as processes do.
        A store that lives in one object (the in-process store) appends in microseconds under the
        interpreter's lock, so the turns its threads get are the interpreter's, not the store's."""
        if not self.persists():
            pytest.skip(
                f"{type(self).__name__} lives in one object: its writers' turns are the interpreter's"
            )
        store = self.make_store(tmp_path)
        writers = self.fair_writers
        for i in range(writers):
            store.create(f"w{i}").close()
        start = store.feed_head()
        target = start + writers * self.fair_appends
        objects = [self.reopen_store(store) for _ in range(writers)]
        appended = [0] * writers
        failures: list[BaseException] = []
        go = threading.Barrier(writers)

        def write(i: int) -> None:
            own = objects[i]
            try:
                journal = own.open(f"w{i}")
                head, parent = journal.head(), None
                go.wait()
                while own.feed_head() < target:
                    n = appended[i]
                    rid = f"w{i}-{n}"
                    record = user(rid, parent) if n % 2 == 0 else assistant(rid, parent)
                    head = journal.append([record], expected=head).head
                    parent = rid
                    appended[i] += 1
            except StoreBusyError as exc:
                failures.append(exc)
            except BaseException as exc:
                failures.append(exc)
                go.abort()

        threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
        # The interpreter hands its lock over every 0.5 ms rather than 5: a thread back from the server
        # waits its turn at the lock, not behind another thread's whole slice (the store's turns are
        # measured, not the interpreter's).
        interval = sys.getswitchinterval()
        sys.setswitchinterval(0.0005)
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            sys.setswitchinterval(interval)
            for other in objects:
                other.close()
            store.close()
        assert failures == []
        assert min(appended) >= statistics.mean(appended) / 4, appended
