"""What the four runtime integrations of issue 34 are checked with: the implementation a contract suite
runs on, a second writer in another process, and `waybook tree` on a journal.

A contract suite (tests/integrations/test_*_contract.py) runs on the runtime's own reference
implementation and on waybook's: both by default, one of them when WAYBOOK_CONTRACT is `reference` or
`waybook` (what scripts/runtime_suites/ do, so the two runs have the same test names to compare).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import msgspec

from waybook.stores import JournalStore

ROOT = Path(__file__).resolve().parents[2]
CHOSEN = os.environ.get("WAYBOOK_CONTRACT")
IMPLEMENTATIONS = [CHOSEN] if CHOSEN else ["reference", "waybook"]


def implementation_id(name: str) -> str:
    """The test id of an implementation: the same for both when one is chosen, so runs compare."""
    return "impl" if CHOSEN else name


def run_python(code: str) -> str:
    """Run `code` in another interpreter (another process, another writer) and return what it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def tree(store_dir: Path, journal_id: str) -> dict[str, Any]:
    """`waybook tree --json` of a journal of the directory store at `store_dir`, run as a command."""
    out = run_python(
        "import sys; from waybook.cli import main; "
        f"sys.exit(main(['tree', '--json', '--store', {'file:' + str(store_dir)!r}, {journal_id!r}]))"
    )
    result: dict[str, Any] = json.loads(out)
    return result


def recorded(store: JournalStore, journal_id: str) -> str:
    """Every record the journal holds, as JSON text: what an auditor can still read."""
    with store.open(journal_id) as journal:
        return "\n".join(msgspec.json.encode(record.body).decode() for record in journal.read())
