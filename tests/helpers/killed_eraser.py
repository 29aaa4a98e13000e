"""An eraser process for the crash tests: erases seqs 3 to 5 of a JSONL journal and SIGKILLs itself
when the erasure reaches step STEP (docs/erasure.md: planned, marked, appended, region 1 of 3, ...
region 3 of 3, overwritten, checkpoint removed, done). A real kill: no cleanup, no finally, no flush.

Usage: python -m tests.helpers.killed_eraser PATH STEP
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from waybook import JsonlJournal
from waybook.journal._erasure import check_request
from waybook.journal._jsonl._erase import erase


def leave_pending(path: Path) -> None:
    """Kill an eraser of seqs 3 to 5 of `path` right after its erasure record is appended, and lose its
    marker (removed by hand, or a restore that copied only the .jsonl): that erasure is then pending."""
    root = Path(__file__).resolve().parents[2]
    killed = subprocess.run(
        [sys.executable, "-m", "tests.helpers.killed_eraser", str(path), "appended"],
        cwd=root,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    Path(f"{path}.erasing").unlink()


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
