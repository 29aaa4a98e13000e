"""An eraser process for the SQLite crash test: erases seq 4 of journal `chat` in the store at URL and
SIGKILLs itself once the erasure has committed, before the store scrubs its write-ahead log (the
engine's `scrub` is where it dies: the erased pages may still be in the log). A real kill.

Usage: python -m tests.helpers.killed_sqlite_eraser URL
"""

from __future__ import annotations

import os
import signal
import sys

from waybook.journal import erase
from waybook.stores import open_store


def main() -> None:
    store = open_store(sys.argv[1])
    store._engine.scrub = lambda: os.kill(os.getpid(), signal.SIGKILL)  # type: ignore[attr-defined]
    journal = store.open("chat")
    erase(journal, 4, reason="the user asked")
    print("finished", flush=True)


if __name__ == "__main__":
    main()
