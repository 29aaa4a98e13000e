"""PostgreSQL bench plumbing (bench/postgres.py): the throwaway server at each durability level, a
fresh schema per row, the row type of the table, and the rotation that pairs rounds fairly."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers.pg_server import Cluster, fresh_schema, with_schema  # noqa: E402

Row = tuple[str, str, float, str]
"""One line of the table: what, which system, the figure, a note (a ratio, a goal)."""


LEVELS = {
    # Commits wait for the WAL write, not the disk: what each system costs in CPU and round trips.
    "fsync off": ("listen_addresses=127.0.0.1", "max_connections=300", "fsync=off"),
    # PostgreSQL's defaults: every commit waits for the disk, so a smaller scenario.
    "fsync on": ("listen_addresses=127.0.0.1", "max_connections=300"),
}


@contextmanager
def server(level: str) -> Iterator[str]:
    url = os.environ.get("WAYBOOK_BENCH_POSTGRES")
    if url:
        yield url
        return
    cluster = Cluster.create(settings=LEVELS[level])
    try:
        yield cluster.url
    finally:
        cluster.stop()


def fresh(base: str) -> str:
    """A new empty schema on the server at `base`: its URL."""
    return with_schema(base, fresh_schema(base))


def rotated(keys: list[str], by: int) -> list[str]:
    """`keys` starting at a different one each round, so no system always runs first (or last)."""
    return keys[by % len(keys) :] + keys[: by % len(keys)]


@contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """`waybook/`, `bench/` and `tests/` of git revision `rev` in a temporary directory: the code a
    before/after row runs as "before", in the same run (`--against REV`)."""
    with tempfile.TemporaryDirectory(prefix="waybook-against-") as where:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "waybook", "bench", "tests"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", where], input=archive, check=True)
        yield Path(where)
