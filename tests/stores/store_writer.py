"""A writer process for the store race and crash tests.

Usage: python -m tests.stores.store_writer URL NAME ATTEMPTS JOURNAL_ID...
Round-robins over the journals, appending one user message per attempt with compare-and-append and
syncing on conflict. Prints `journal seq id` for every append that returned, flushed at once, so a
parent that kills this process knows exactly what was acknowledged. ATTEMPTS 0: run until killed.
With NAME `create`, instead races to create each journal and prints `created ID` for each it won.
"""

from __future__ import annotations

import itertools
import sys

from waybook import Session, StaleWriterError
from waybook.stores import JournalExistsError, open_store


def main() -> None:
    url, name, attempts, journal_ids = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    store = open_store(url)
    if name == "create":
        for journal_id in journal_ids:
            try:
                store.create(journal_id)
            except JournalExistsError:
                continue
            print("created", journal_id, flush=True)
        return
    sessions = [Session(store.open(journal_id)) for journal_id in journal_ids]
    counter = itertools.count() if attempts == 0 else range(attempts)
    for i in counter:
        session = sessions[i % len(sessions)]
        while True:
            try:
                record = session.user(f"{name} says {i}")
                break
            except StaleWriterError:
                session.sync()
        print(journal_ids[i % len(sessions)], record.seq, record.id, flush=True)
    store.close()


if __name__ == "__main__":
    main()
