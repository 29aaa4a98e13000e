"""One side of the 2-process memory contention run (issue 40): a writer of notes or of reflection cycles.

Usage: python -m tests.helpers.memory_contention PATH (notes|reflection) COUNT READY OTHER
Waits until the file OTHER exists (the other process is ready; READY is created first, so the two start
together), then runs COUNT writes: `notes` makes COUNT Memory port creates of independent notes,
`reflection` COUNT reflection cycles (reserve, start, finish). Prints one line of JSON: how many writes
went through and the code of every failure (for `reflection`, the error of a cycle that raised).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from waybook.journal import JsonlJournal
from waybook.memory import Memory
from waybook.memory.tools.reflection import ReflectionScheduler


def main() -> None:
    path, side, count, ready, other = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    journal = JsonlJournal(path, create=False, durability="none")
    Path(ready).touch()
    deadline = time.monotonic() + 60
    while not Path(other).exists():  # the other process's exact state, not a delay
        if time.monotonic() > deadline:
            sys.exit("the other process never became ready")
        time.sleep(0.001)
    failures: Counter[str] = Counter()
    done = 0
    if side == "notes":
        memory = Memory(journal, scope="agent")
        for i in range(count):
            result = memory.execute(
                {"command": "create", "path": f"/memories/n{i % 100}.md", "text": f"{i}\n"}
            )
            if result.ok:
                done += 1
            else:
                assert result.error is not None
                failures[result.error.code] += 1
    else:
        scheduler = ReflectionScheduler(journal, [], step_threshold=1)
        for _ in range(count):
            try:
                scheduler.request(reason="contention")
                run = scheduler.start()
                assert run is not None
                scheduler.finish(run, "no_changes")
                done += 1
            except Exception as exc:  # counted and reported: the run's figure
                failures[type(exc).__name__] += 1
    journal.close()
    print(json.dumps({"done": done, "failures": dict(failures)}))


if __name__ == "__main__":
    main()
