"""The four-worker diamond as four processes on one SQLite blackboard: A; B and C need A; D needs B and C."""

import subprocess
import sys
import tempfile
from pathlib import Path

from waybook.coordination import check_receipts, open_blackboard, replay_notes, run_worker

DEPENDS = {"A": [], "B": ["A"], "C": ["A"], "D": ["B", "C"]}
WORKS = {
    "A": lambda inputs: {"rows": 3},
    "B": lambda inputs: {"doubled": inputs["A"]["rows"] * 2},
    "C": lambda inputs: {"squared": inputs["A"]["rows"] ** 2},
    "D": lambda inputs: {"sum": inputs["B"]["doubled"] + inputs["C"]["squared"]},
}

if len(sys.argv) == 3:  # one worker: python coordination_diamond.py URL KEY
    url, key = sys.argv[1], sys.argv[2]
    with open_blackboard(url) as board:
        note = run_worker(board, key, DEPENDS[key], WORKS[key], timeout=60)
    sys.exit(0 if note.ok else 1)

url = f"sqlite:{Path(tempfile.mkdtemp()) / 'board.db'}"
workers = [subprocess.Popen([sys.executable, __file__, url, key]) for key in "DCBA"]  # no central order
assert all(worker.wait(timeout=120) == 0 for worker in workers)
with open_blackboard(url) as board:
    notes = replay_notes(board.journal.read())  # the run, replayed from its coordination journal
    print("published in order:", " ".join(notes))
    print("D =", notes["D"].value, "from", sorted(dict(notes["D"].depends)))
    print("receipts check:", check_receipts(notes) or "ok")
