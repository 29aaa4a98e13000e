"""Blobs bench: opening a journal of large tool outputs inline vs as blobs, and collecting many blobs.

  open     a directory-store journal of N tool results of S MiB each: written inline (as journals were
           before the 8 MiB record limit; the limit is lifted in this process to write them) against the
           same session written with `blobs=store.blobs` (each output a blob, each record small). Opening
           (checkpoint removed) proves the whole chain, so inline it hashes every output byte; with blobs
           it reads small lines. Replay: open and read every record.
  collect  `store.blobs.collect` over B blobs of which half are referenced, for the directory, SQLite and
           PostgreSQL stores (also the time to put the B blobs, one `put` each). PostgreSQL: the server
           in WAYBOOK_BENCH_POSTGRES, else a throwaway cluster (the tests' settings: fsync off, which a
           collection, a few large transactions, hardly notices).

    python bench/blobs.py                 # small: 10 x 2 MiB outputs, 2,000 blobs
    python bench/blobs.py --full          # the issue's size: 100 x 10 MiB outputs, 100,000 blobs
    python bench/blobs.py [--outputs N] [--mib S] [--blobs B] [--stores file,sqlite,postgresql] [--no-open]
Prints a table; writes bench/blobs.json. Ratios are within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import waybook.codecs._wire as wire
from waybook import Session
from waybook.journal._jsonl._checkpoint import SUFFIX as CHECKPOINT
from waybook.stores import open_store
from waybook.stores._blobs import BlobRef

RESULTS = Path(__file__).resolve().parent / "blobs.json"
ROOT = Path(__file__).resolve().parent.parent
SMALL = {"outputs": 10, "mib": 2, "blobs": 2_000}
FULL = {"outputs": 100, "mib": 10, "blobs": 100_000}
STORES = ("file", "sqlite", "postgresql")


def write_session(url: str, outputs: int, size: int, *, blobs: bool) -> None:
    with open_store(url) as store:
        session = Session.create(
            store.create("s"),
            blobs=store.blobs if blobs else None,
            inline_limit=size // 2 if blobs else size * 2,
        )
        for n in range(outputs):
            session.tool_result(f"c{n}", (f"{n:06d} " + "x" * 120 + "\n") * (size // 128), tool_name="bash")


def time_open(root: Path) -> float:
    """Open the journal and prove its whole chain: its checkpoint is removed first, so no open takes the
    shortcut a writer's close leaves (docs/stores.md); inline, that hashes every output byte."""
    (root / "journals" / f"s.jsonl{CHECKPOINT}").unlink(missing_ok=True)
    started = time.perf_counter()
    with open_store(f"file:{root}") as store, store.open("s") as journal:
        journal.head()
    return time.perf_counter() - started


def time_replay(root: Path) -> float:
    """Open the journal (with its checkpoint) and read every record, as a replay does."""
    started = time.perf_counter()
    with open_store(f"file:{root}") as store, store.open("s") as journal:
        for _ in journal.read():
            pass
    return time.perf_counter() - started


def bench_open(outputs: int, mib: int, root: Path) -> dict[str, Any]:
    size = mib * 1024 * 1024
    saved = wire.MAX_RECORD_BYTES
    wire.MAX_RECORD_BYTES = size * 2  # type: ignore[misc]  # journals as they were before the limit
    try:
        write_session(f"file:{root / 'inline'}", outputs, size, blobs=False)
        write_session(f"file:{root / 'blobs'}", outputs, size, blobs=True)
        inline = min(time_open(root / "inline") for _ in range(3))
        blobbed = min(time_open(root / "blobs") for _ in range(3))
        replay_inline = min(time_replay(root / "inline") for _ in range(3))
        replay_blobbed = min(time_replay(root / "blobs") for _ in range(3))
    finally:
        wire.MAX_RECORD_BYTES = saved  # type: ignore[misc]
    journal_bytes = {k: os.path.getsize(root / k / "journals" / "s.jsonl") for k in ("inline", "blobs")}
    return {
        "outputs": outputs,
        "mib_each": mib,
        "open_inline_s": inline,
        "open_blobs_s": blobbed,
        "speedup": inline / blobbed,
        "replay_inline_s": replay_inline,
        "replay_blobs_s": replay_blobbed,
        "replay_speedup": replay_inline / replay_blobbed,
        "journal_bytes": journal_bytes,
    }


@contextlib.contextmanager
def postgres_url() -> Iterator[str]:
    """A fresh schema on WAYBOOK_BENCH_POSTGRES's server, or on a throwaway cluster stopped after."""
    sys.path.insert(0, str(ROOT))
    from tests.helpers.pg_server import Cluster, fresh_schema, with_schema

    base = os.environ.get("WAYBOOK_BENCH_POSTGRES")
    if base:
        yield with_schema(base, fresh_schema(base))
        return
    cluster = Cluster.create()
    try:
        yield with_schema(cluster.url, fresh_schema(cluster.url))
    finally:
        cluster.stop()


@contextlib.contextmanager
def store_url(kind: str, root: Path) -> Iterator[str]:
    if kind == "postgresql":
        with postgres_url() as url:
            yield url
    else:
        yield f"file:{root / 'gc'}" if kind == "file" else f"sqlite:{root / 'gc.db'}"


def bench_collect(count: int, root: Path, kinds: list[str]) -> list[dict[str, Any]]:
    rows = []
    for kind in kinds:
        with store_url(kind, root) as url, open_store(url) as store:
            session = Session.create(store.create("s"))
            started = time.perf_counter()
            refs: list[BlobRef] = [
                store.blobs.put(f"blob {n}".encode(), media_type="text/plain") for n in range(count)
            ]
            put_s = time.perf_counter() - started
            for start in range(0, count // 2, 500):
                session.user([ref.block() for ref in refs[start : min(start + 500, count // 2)]])
            for ref in refs:
                store.blobs.release(ref)
            started = time.perf_counter()
            receipt = store.blobs.collect(grace=0)
            took = time.perf_counter() - started
        rows.append(
            {
                "store": kind,
                "blobs": count,
                "removed": len(receipt.removed),
                "put_s": put_s,
                "collect_s": took,
                "per_blob_us": took / count * 1e6,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--full", action="store_true", help="the issue's size: 100 x 10 MiB, 100,000 blobs")
    parser.add_argument("--outputs", type=int, help=f"tool outputs to open (default {SMALL['outputs']})")
    parser.add_argument("--mib", type=int, help=f"MiB per output (default {SMALL['mib']})")
    parser.add_argument("--blobs", type=int, help=f"blobs to collect over (default {SMALL['blobs']:,})")
    parser.add_argument("--stores", default=",".join(STORES), help="stores to collect on, comma-separated")
    parser.add_argument("--no-open", action="store_true", help="skip the open rows")
    args = parser.parse_args()
    size = FULL if args.full else SMALL
    outputs, mib, count = (
        args.outputs or size["outputs"],
        args.mib or size["mib"],
        args.blobs or size["blobs"],
    )
    kinds = [k for k in args.stores.split(",") if k]
    unknown = set(kinds) - set(STORES)
    if unknown:
        parser.error(f"--stores takes {', '.join(STORES)}, not {', '.join(sorted(unknown))}")
    root = Path(tempfile.mkdtemp(prefix="waybook-bench-blobs-"))
    try:
        opened = None if args.no_open else bench_open(outputs, mib, root)
        collected = bench_collect(count, root, kinds)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if opened is not None:
        print(f"open: {opened['outputs']} outputs x {opened['mib_each']} MiB")
        for kind in ("inline", "blobs"):
            took, size = opened[f"open_{kind}_s"], opened["journal_bytes"][kind]
            print(f"  {kind:7} {took:8.3f} s   journal {size:,} bytes")
        print(f"  blobs open {opened['speedup']:.0f}x faster (a full proof of the chain)")
        print(
            f"  replay (read every record): inline {opened['replay_inline_s']:.3f} s, blobs "
            f"{opened['replay_blobs_s']:.3f} s, {opened['replay_speedup']:.0f}x faster"
        )
    print("collect:")
    for row in collected:
        print(
            f"  {row['store']:10} {row['blobs']:,} blobs put in {row['put_s']:.1f} s; removed "
            f"{row['removed']:,} in {row['collect_s']:.2f} s ({row['per_blob_us']:.0f} us/blob)"
        )
    RESULTS.write_text(json.dumps({"open": opened, "collect": collected}, indent=2) + "\n")


if __name__ == "__main__":
    main()
