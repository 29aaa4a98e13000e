"""A process that saves the directory store's snapshot over and over, for the crash test.

Usage: python -m tests.stores.snapshot_saver DIR PREFIX
Forever: opens DIR with snapshot_tail=0, creates journal `PREFIX{i}`, closes the store (which saves a fresh
snapshot), and prints `saved i`, flushed, after each close. The parent kills it at any point.
"""

from __future__ import annotations

import itertools
import sys

from waybook.stores._directory import DirectoryStore


def main() -> None:
    for i in itertools.count():
        with DirectoryStore(sys.argv[1], snapshot_tail=0) as store:
            store.create(f"{sys.argv[2]}{i}").close()
        print("saved", i, flush=True)


if __name__ == "__main__":
    main()
