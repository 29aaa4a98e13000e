"""Issue 42.7: a journal dropped without close() (the `Session(store.create(id))` pattern) gives its
descriptor back, and running out of descriptors is a typed error that says what to close. Each case runs
in a child process whose open-file limit is really lowered (RLIMIT_NOFILE), so the limit is the system's.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.cli_runner import installed_env

PRELUDE = """
import gc, os, resource, sys
from waybook import JsonlJournal, Session
from waybook.model import StorageError
from waybook.stores import open_store

def open_now() -> int:
    return len(os.listdir("/proc/self/fd"))

store = open_store(sys.argv[1])
limit = open_now() + 24
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
"""


def run_child(body: str, tmp_path: Path) -> str:
    script = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script, f"file:{tmp_path}/store"],
        env=installed_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_journals_dropped_without_close_never_exhaust_the_descriptors(tmp_path: Path) -> None:
    out = run_child(
        """
        before = open_now()
        for i in range(500):  # twenty times the descriptors left
            Session(store.create(f"s{i}")).user("hello")
        for i in range(500):
            Session(store.open(f"s{i}")).assistant("hi")
        for i in range(200):
            Session.create(JsonlJournal(store.directory / f"own{i}.jsonl"), journal_id=f"own{i}")
        gc.collect()
        print(open_now() - before)
        """,
        tmp_path,
    )
    assert out.split() == ["0"]


def test_a_store_at_the_descriptor_limit_raises_a_typed_error_saying_what_to_close(tmp_path: Path) -> None:
    out = run_child(
        """
        held = []
        try:
            for i in range(500):
                held.append(store.create(f"s{i}"))  # kept open: the limit is really reached
        except StorageError as exc:
            print("typed", type(exc).__name__)
            print(exc)
        held[0].close()
        held.append(store.create("after"))  # one closed: the next create works
        print("created after a close")
        """,
        tmp_path,
    )
    assert "typed StorageError" in out
    assert "ulimit -n" in out
    assert "journal.close()" in out
    assert "created after a close" in out
