"""A tight-loop writer process for the SQLite fairness test.

Usage: python -m tests.stores.fair_writer URL JOURNAL_ID TARGET
Opens the store and its journal, prints `ready`, waits for a line on stdin (all writers start together),
then appends as fast as it can until the store's feed holds TARGET positions. Prints `appended N busy B`:
its own appends and the StoreBusyErrors it got.
"""

from __future__ import annotations

import sys

from waybook import Session
from waybook.stores import StoreBusyError, open_store


def main() -> None:
    url, journal_id, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open_store(url) as store:
        session = Session(store.open(journal_id))
        print("ready", flush=True)
        sys.stdin.readline()
        appended = busy = 0
        while store.feed_head() < target:
            try:
                session.user(f"{journal_id} {appended}")
                appended += 1
            except StoreBusyError:
                busy += 1
        print("appended", appended, "busy", busy, flush=True)


if __name__ == "__main__":
    main()
