"""An eraser process for the crash tests: erases seqs 3 to 5 of a JSONL journal and SIGKILLs itself
when the erasure reaches step STEP (docs/erasure.md: planned, marked, appended, region 1 of 3, ...
region 3 of 3, overwritten, checkpoint removed, done). A real kill: no cleanup, no finally, no flush.

Usage: python -m tests.helpers.killed_eraser PATH STEP
"""

from __future__ import annotations

import os
import signal
import sys

from waybook import JsonlJournal
from waybook.journal._erasure import check_request
from waybook.journal._jsonl._erase import erase


def main() -> None:
    path, step = sys.argv[1], sys.argv[2]

    def on_step(name: str) -> None:
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)

    journal = JsonlJournal(path, create=False)
    request = check_request(path, [3, 4, 5], reason="the user asked", actor="test")
    journal._erasing(lambda: erase(journal, request, on_step=on_step))
    print("finished", flush=True)


if __name__ == "__main__":
    main()
