"""A writer process for the multi-process tests: appends with compare-and-append, syncs on conflict.

Usage: python -m tests.process_writer PATH NAME ATTEMPTS
Prints `seq id` for every append that returned (an acknowledgement), flushed at once, so a parent that
kills this process knows exactly what was acknowledged. ATTEMPTS 0 means run until killed.

A writer killed in the middle of its write can leave a torn tail; the host policy here is to repair it
on open, so a writer that meets one exits with status 3 and its replacement repairs it.
"""

from __future__ import annotations

import itertools
import sys

from waybook import JsonlJournal, Session, StaleWriterError
from waybook.journal import TornTailError

TORN_TAIL_EXIT = 3


def main() -> None:
    path, name, attempts = sys.argv[1], sys.argv[2], int(sys.argv[3])
    journal = JsonlJournal(path, create=False, on_torn_tail="repair")
    if journal.repair_receipt is not None and journal.repair_receipt.repaired:
        print(f"repaired {journal.repair_receipt.removed_bytes} torn bytes", file=sys.stderr)
    session = Session(journal)
    counter = itertools.count() if attempts == 0 else range(attempts)
    for i in counter:
        try:
            record = session.user(f"{name} says {i}")
        except StaleWriterError:
            session.sync()
            continue
        except TornTailError:
            sys.exit(TORN_TAIL_EXIT)
        print(record.seq, record.id, flush=True)


if __name__ == "__main__":
    main()
