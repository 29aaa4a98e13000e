"""A writer process for the multi-process tests: appends with compare-and-append, syncs on conflict.

Usage: python -m tests.process_writer PATH NAME ATTEMPTS
Prints `seq id` for every append that returned (an acknowledgement), flushed at once, so a parent that
kills this process knows exactly what was acknowledged. ATTEMPTS 0 means run until killed.
"""

from __future__ import annotations

import itertools
import sys

from waybook import JsonlJournal, Session, StaleWriterError


def main() -> None:
    path, name, attempts = sys.argv[1], sys.argv[2], int(sys.argv[3])
    journal = JsonlJournal(path, create=False)
    session = Session(journal)
    counter = itertools.count() if attempts == 0 else range(attempts)
    for i in counter:
        try:
            record = session.user(f"{name} says {i}")
        except StaleWriterError:
            session.sync()
            continue
        print(record.seq, record.id, flush=True)


if __name__ == "__main__":
    main()
