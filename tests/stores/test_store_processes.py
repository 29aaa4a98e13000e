"""Races and crashes across real processes, on every store that other processes can share."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.stores.conftest import STORES, StoreKind
from waybook import Session
from waybook.journal import verify
from waybook.stores import CATALOG_ID, open_store

SHARED = [kind for kind in STORES if kind.persistent]
ROOT = Path(__file__).resolve().parents[2]


def writer(url: str, name: str, attempts: int, *journal_ids: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.stores.store_writer", url, name, str(attempts), *journal_ids],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def acknowledged(output: str) -> list[tuple[str, int, str]]:
    """(journal, seq, id) of every complete acknowledgement line."""
    acks = []
    for line in output.splitlines(keepends=True):
        parts = line.split()
        if line.endswith("\n") and len(parts) == 3:
            acks.append((parts[0], int(parts[1]), parts[2]))
    return acks


@pytest.mark.parametrize("kind", SHARED, ids=lambda k: k.name)
def test_processes_racing_to_create_one_id_create_it_exactly_once(kind: StoreKind, tmp_path: Path) -> None:
    url = kind.url(tmp_path)
    open_store(url).close()
    ids = [f"s{i}" for i in range(10)]
    procs = [writer(url, "create", 0, *ids) for _ in range(4)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    won = sorted(line.split()[1] for out, _ in outputs for line in out.splitlines())
    assert won == ids
    with open_store(url) as store:
        assert [i.journal_id for i in store.list()] == ids


@pytest.mark.parametrize("kind", SHARED, ids=lambda k: k.name)
def test_processes_racing_on_shared_journals_feed_every_record_once_in_order(
    kind: StoreKind, tmp_path: Path
) -> None:
    url = kind.url(tmp_path)
    ids = ["a", "b", "c"]
    with open_store(url) as store:
        for journal_id in ids:
            store.create(journal_id)
    procs = [writer(url, f"w{n}", 40, *ids) for n in range(4)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    acks = [ack for out, _ in outputs for ack in acknowledged(out)]
    assert len(acks) == 160
    with open_store(url) as store:
        fed: dict[str, list[int]] = defaultdict(list)
        for entry in store.feed():
            if entry.journal_id != CATALOG_ID:
                fed[entry.journal_id].append(entry.seq)
        for journal_id in ids:
            head = store.open(journal_id).head().seq
            assert fed[journal_id] == list(range(1, head + 1))
        assert sorted((j, s) for j, s, _ in acks) == sorted((j, s) for j in ids for s in fed[j][1:])


@pytest.mark.parametrize("kind", SHARED, ids=lambda k: k.name)
def test_writers_killed_mid_stream_lose_nothing_they_acknowledged(kind: StoreKind, tmp_path: Path) -> None:
    url = kind.url(tmp_path)
    ids = ["a", "b"]
    with open_store(url) as store:
        for journal_id in ids:
            store.create(journal_id)
    acks: list[tuple[str, int, str]] = []
    for round_ in range(3):
        procs = [writer(url, f"r{round_}w{n}", 0, *ids) for n in range(2)]
        early: list[str] = []
        for p in procs:  # let each acknowledge a few appends; the kill then lands wherever they are
            assert p.stdout is not None
            early += [p.stdout.readline() for _ in range(5 + 20 * round_)]
        for p in procs:
            os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            out, _ = p.communicate(timeout=60)
            acks += acknowledged(out)
        acks += acknowledged("".join(early))
    with open_store(url) as store:
        for journal_id in ids:
            journal = store.open(journal_id)
            assert verify(journal).ok
            committed = {(r.seq, r.id) for r in journal.read()}
            assert {(s, i) for j, s, i in acks if j == journal_id} <= committed
            fed = [e.seq for e in store.feed() if e.journal_id == journal_id]
            assert fed == list(range(1, journal.head().seq + 1))  # opening fed what the killed left unfed
        Session(store.open("a")).user("the store still takes writes")
