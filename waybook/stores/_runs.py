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
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from waybook.model import Head
from waybook.stores._holding import Committed


class Run(NamedTuple):
    journal_id: str
    first: int
    last: int
    digest: str | None = None
    """The digest of record `last` (None in a run an older waybook fed)."""


class Runs:
    """Runs in feed order with their end positions. `locate` is O(log runs)."""

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self.ends: list[int] = []
        self.fed: dict[str, int] = {}
        self._digests: dict[str, str] = {}

    @property
    def head(self) -> int:
        return self.ends[-1] if self.ends else 0

    def add(self, run: Run) -> None:
        """Take in a run read from storage or about to be written (it must follow what was fed)."""
        self.runs.append(run)
        self.ends.append(self.head + run.last - run.first + 1)
        if run.last >= self.fed.get(run.journal_id, 0):
            self.fed[run.journal_id] = run.last
            if run.digest is None:
                self._digests.pop(run.journal_id, None)
            else:
                self._digests[run.journal_id] = run.digest

    def extend(self, runs: Iterable[Run]) -> None:
        """`add` each of `runs` in turn (one loop: a store's whole feed is taken in when it opens)."""
        kept, ends, fed, digests = self.runs, self.ends, self.fed, self._digests
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
        trimmed so that its first record is the first one after `position`."""
        index = bisect.bisect_right(self.ends, position)
        for i in range(index, len(self.runs)):
            run = self.runs[i]
            start = self.ends[i] - (run.last - run.first)
            if start <= position:
                skip = position - start + 1
                run = Run(run.journal_id, run.first + skip, run.last)
                start += skip
            yield start, run
