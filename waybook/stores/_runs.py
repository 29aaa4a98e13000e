"""The feed of a store whose journals are separate adapters: an ordered list of runs.

A run is `(journal id, first seq, last seq, digest of record last)`: consecutive records of one journal,
fed together. The feed is the runs in order; a record's position is its index in that flattening, from 1.
The last run of each journal is also what the store knows it committed to it (`committed`): a journal
whose storage holds less has lost records. After a commit,
the writer feeds every record of the journal from the last fed seq through its new head ("catch up"),
so a journal's records enter the feed in seq order even when two writers of one journal finish their
commits in the other order, and a record a crashed writer never fed is fed by the next commit.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import NamedTuple

from waybook.model import Head, IntegrityError
from waybook.stores._holding import Committed


class Run(NamedTuple):
    journal_id: str
    first: int
    last: int
    digest: str | None = None
    """The digest of record `last` (None in a run an older waybook fed)."""


class Runs:
    """Runs in feed order with their end positions. `locate` is O(log runs).

    Restored from the directory store's index (`pending`), it knows what was fed of each journal (maps
    that ask the index for a journal they were not told of) and the feed's head at once, and reads the
    runs of the index's prefix only when a feed read needs them (`load`)."""

    def __init__(self) -> None:
        self._runs: list[Run] = []
        self._ends: list[int] = []
        self.fed: MutableMapping[str, int] = {}
        self._digests: MutableMapping[str, str] = {}
        self._load: Callable[[], list[Run]] | None = None
        self._prefix_head = 0
        self._prefix_count = 0

    @classmethod
    def pending(
        cls,
        *,
        head: int,
        count: int,
        fed: MutableMapping[str, int],
        digests: MutableMapping[str, str],
        load: Callable[[], list[Run]],
    ) -> Runs:
        """The runs of a prefix of the feed known by its outcome (`count` runs through position `head`,
        `fed` and `digests` by journal), `load` giving the runs themselves when they are first needed."""
        runs = cls()
        runs.fed, runs._digests, runs._load = fed, digests, load
        runs._prefix_head, runs._prefix_count = head, count
        return runs

    @property
    def runs(self) -> list[Run]:
        self._take_prefix()
        return self._runs

    @property
    def ends(self) -> list[int]:
        self._take_prefix()
        return self._ends

    @property
    def count(self) -> int:
        """How many runs were fed (the prefix not read included)."""
        return self._prefix_count + len(self._runs)

    def _take_prefix(self) -> None:
        load = self._load
        if load is None:
            return
        prefix = load()
        ends = list(itertools.accumulate(last - first + 1 for _, first, last, _ in prefix))
        if len(prefix) != self._prefix_count or (ends[-1] if ends else 0) != self._prefix_head:
            msg = "the feed's runs no longer add up to what they did when the store opened; reopen the store"
            raise IntegrityError(msg)
        self._runs[:0], self._ends[:0], self._load = prefix, ends, None
        self._prefix_head = self._prefix_count = 0  # (the runs now hold the prefix)

    @property
    def head(self) -> int:
        return self._ends[-1] if self._ends else self._prefix_head

    def add(self, run: Run) -> None:
        """Take in a run read from storage or about to be written (it must follow what was fed)."""
        self._ends.append(self.head + run.last - run.first + 1)
        self._runs.append(run)
        if run.last >= self.fed.get(run.journal_id, 0):
            self.fed[run.journal_id] = run.last
            if run.digest is None:
                self._digests.pop(run.journal_id, None)
            else:
                self._digests[run.journal_id] = run.digest

    def extend(self, runs: Iterable[Run]) -> None:
        """`add` each of `runs` in turn (one loop: a store's whole feed is taken in when it opens)."""
        kept, ends, fed, digests = self._runs, self._ends, self.fed, self._digests
        head = self.head
        for run in runs:
            journal_id, first, last, digest = run
            head += last - first + 1
            kept.append(run)
            ends.append(head)
            if last >= fed.get(journal_id, 0):
                fed[journal_id] = last
                if digest is None:
                    digests.pop(journal_id, None)
                else:
                    digests[journal_id] = digest

    def catch_up(self, journal_id: str, head: Head) -> Run | None:
        """The run that feeds `journal_id` through `head`, or None when it is fed already."""
        fed = self.fed.get(journal_id, 0)
        return Run(journal_id, fed + 1, head.seq, head.digest) if head.seq > fed else None

    def committed(self, journal_id: str) -> Committed:
        """What was fed of `journal_id`: the head the store knows it committed."""
        return Committed(self.fed.get(journal_id, 0), self._digests.get(journal_id))

    def after(self, position: int) -> Iterator[tuple[int, Run]]:
        """(position of the run's first record, run) for every run holding a position > `position`,
        trimmed so that its first record is the first one after `position`. A position at or past the
        prefix not read yet reads only the runs fed since (what a reader that keeps up asks for)."""
        if self._load is not None and position >= self._prefix_head:
            runs, ends = self._runs, self._ends  # (their ends count from the prefix's head)
        else:
            runs, ends = self.runs, self.ends
        index = bisect.bisect_right(ends, position)
        for i in range(index, len(runs)):
            run = runs[i]
            start = ends[i] - (run.last - run.first)
            if start <= position:
                skip = position - start + 1
                run = Run(run.journal_id, run.first + skip, run.last)
                start += skip
            yield start, run
