"""A process that brings the directory store's index forward over and over, for the crash test.

Usage: python -m tests.stores.index_saver DIR PREFIX
Forever: opens DIR with snapshot_tail=0, creates journal `PREFIX{i}`, closes the store (which brings its
index forward), and prints `saved i`, flushed, after each close; every third round it first deletes the
index, so that the open writes a whole new one. The parent kills it at any point.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from waybook.stores._directory import INDEX_FILE, DirectoryStore


def main() -> None:
    directory = Path(sys.argv[1])
    for i in itertools.count():
        if i % 3 == 2:
            (directory / INDEX_FILE).unlink(missing_ok=True)
        with DirectoryStore(directory, snapshot_tail=0) as store:
            store.create(f"{sys.argv[2]}{i}").close()
        print("saved", i, flush=True)


if __name__ == "__main__":
    main()
